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

bin="$(find_or_install nginx nginx MCP_TOOLBELT_NGINX /usr/sbin /usr/local/sbin)"
log "using $("$bin" -v 2>&1 | head -n 1) at $bin"
echo "$bin"
