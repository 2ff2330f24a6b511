#!/usr/bin/env bash
# Makes sure bubblewrap is installed: Debian's `bubblewrap` package (0.8 on bookworm), which
# builds the namespaces every command of examples/system-tools runs in (its tests need it:
# with command_namespaces = "required", the default, commands are refused without it).
# Idempotent: when a bwrap binary is already there, it only prints its path.
#
# Usage: scripts/setup-bubblewrap.sh [--quiet]
#   --quiet  print only the binary's path at the end
# Installing needs root (or password-less sudo) and Debian's package mirrors. Exit 1 with the
# reason when bwrap is missing and cannot be installed, or when it cannot create a user
# namespace here (the kernel or the container forbids unprivileged user namespaces).
# Environment: MCP_TOOLBELT_BWRAP names a binary to use instead (then nothing is installed).
set -euo pipefail

# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_begin setup-bubblewrap "$@"

bin="$(find_or_install bwrap bubblewrap MCP_TOOLBELT_BWRAP /usr/bin /usr/local/bin)"
# Commands run in a user namespace created by an unprivileged uid (a root server switches to
# one, 65534 by default, before starting bwrap): check that this kernel allows it.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi
"${as_user[@]}" "$bin" --unshare-user --unshare-pid --unshare-net --ro-bind / / -- /bin/true ||
    die "$bin cannot create a user namespace as an unprivileged user here (check the sysctls kernel.unprivileged_userns_clone and user.max_user_namespaces, and the container's seccomp profile)"
log "using $("$bin" --version) at $bin"
echo "$bin"
