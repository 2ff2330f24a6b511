#!/usr/bin/env bash
# Makes sure nginx (the balancer of deploy/nginx.conf, run by tests/tests/deploy_docs.rs) is
# installed: Debian's `nginx` package (1.22 on bookworm). Idempotent: when an nginx binary
# is already there, it only prints its path.
#
# Usage: scripts/setup-nginx.sh [--quiet]
#   --quiet  print only the binary's path at the end
# Installing needs root (or password-less sudo) and Debian's package mirrors; the package's
# service is not started. Exit 1 with the reason when nginx is missing and cannot be
# installed: the test needs the real balancer and fails without it.
# Environment: MCP_TOOLBELT_NGINX names a binary to use instead (then nothing is installed).
set -euo pipefail

# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_begin setup-nginx "$@"

# The binary: MCP_TOOLBELT_NGINX, else nginx on PATH or in /usr/sbin (not on a user's PATH).
find_nginx() {
    if [ -n "${MCP_TOOLBELT_NGINX:-}" ]; then
        [ -x "$MCP_TOOLBELT_NGINX" ] || die "MCP_TOOLBELT_NGINX=$MCP_TOOLBELT_NGINX is not an executable"
        echo "$MCP_TOOLBELT_NGINX"
        return
    fi
    command -v nginx 2>/dev/null && return
    for candidate in /usr/sbin/nginx /usr/local/sbin/nginx; do
        [ -x "$candidate" ] && echo "$candidate" && return
    done
    return 0
}

bin="$(find_nginx)"
if [ -z "$bin" ]; then
    log "installing Debian's nginx package"
    apt_install nginx nginx
    bin="$(find_nginx)"
    [ -n "$bin" ] || die "the nginx package installed no nginx binary"
fi
log "using $("$bin" -v 2>&1 | head -n 1) at $bin"
echo "$bin"
