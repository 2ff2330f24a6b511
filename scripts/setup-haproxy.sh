#!/usr/bin/env bash
# Makes sure HAProxy (the load balancer of tests/tests/replicas.rs and deploy/haproxy.cfg)
# is installed: Debian's `haproxy` package (2.6 on bookworm). Idempotent: when an haproxy
# binary of version 2.x or later is already there, it only prints its path.
#
# Usage: scripts/setup-haproxy.sh [--quiet]
#   --quiet  print only the binary's path at the end
# Installing needs root (or password-less sudo) and Debian's package mirrors; the package's
# service is not started (a policy-rc.d refusal is in place for the install only when none
# exists). Exit 1 with the reason when haproxy is missing and cannot be installed: the
# multi-replica test needs the real balancer and fails without it.
# Environment: MCP_TOOLBELT_HAPROXY names a binary to use instead (then nothing is installed).
set -euo pipefail

# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_begin setup-haproxy "$@"

# The major version printed by `haproxy -v` ("HAProxy version 2.6.12-1+deb12u1 …").
major_of() { "$1" -v 2>/dev/null | sed -n 's/^HA-\{0,1\}Proxy version \([0-9]*\)\..*/\1/p' | head -n 1; }

bin="$(find_or_install haproxy haproxy MCP_TOOLBELT_HAPROXY /usr/sbin /usr/local/sbin)"
major="$(major_of "$bin")"
[ -n "$major" ] && [ "$major" -ge 2 ] || die "$bin is not HAProxy 2.x or later ($("$bin" -v 2>&1 | head -n 1))"
log "using $("$bin" -v | head -n 1) at $bin"
echo "$bin"
