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

quiet=0
for arg in "$@"; do
    case "$arg" in
        --quiet) quiet=1 ;;
        -h | --help)
            awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *)
            echo "setup-haproxy: unknown argument '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done

log() { [ "$quiet" = 1 ] || echo "setup-haproxy: $*" >&2; }
die() {
    echo "setup-haproxy: error: $*" >&2
    exit 1
}

# The binary: MCP_TOOLBELT_HAPROXY, else haproxy on PATH or in /usr/sbin (not on a user's PATH).
find_haproxy() {
    if [ -n "${MCP_TOOLBELT_HAPROXY:-}" ]; then
        [ -x "$MCP_TOOLBELT_HAPROXY" ] || die "MCP_TOOLBELT_HAPROXY=$MCP_TOOLBELT_HAPROXY is not an executable"
        echo "$MCP_TOOLBELT_HAPROXY"
        return
    fi
    command -v haproxy 2>/dev/null && return
    for candidate in /usr/sbin/haproxy /usr/local/sbin/haproxy; do
        [ -x "$candidate" ] && echo "$candidate" && return
    done
    return 0
}

# The major version printed by `haproxy -v` ("HAProxy version 2.6.12-1+deb12u1 …").
major_of() { "$1" -v 2>/dev/null | sed -n 's/^HA-\{0,1\}Proxy version \([0-9]*\)\..*/\1/p' | head -n 1; }

bin="$(find_haproxy)"
if [ -z "$bin" ]; then
    as_root=()
    if [ "$(id -u)" != 0 ]; then
        sudo -n true 2>/dev/null || die "haproxy is not installed and installing it needs root: run 'sudo apt-get install haproxy' (Debian/Ubuntu) or set MCP_TOOLBELT_HAPROXY"
        as_root=(sudo -n)
    fi
    command -v apt-get >/dev/null || die "haproxy is not installed and there is no apt-get here: install HAProxy 2.x and set MCP_TOOLBELT_HAPROXY to its binary"
    log "installing Debian's haproxy package"
    # Keep the package from starting its service: the tests start their own instances.
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
        "${as_root[@]}" chmod 755 "$policy"
        own_policy=1
    fi
    cleanup() { [ "$own_policy" = 1 ] && "${as_root[@]}" rm -f "$policy"; return 0; }
    trap cleanup EXIT
    "${as_root[@]}" apt-get update -qq >&2 || die "apt-get update failed (no network to the Debian mirrors?)"
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends haproxy >&2 ||
        die "apt-get install haproxy failed"
    bin="$(find_haproxy)"
    [ -n "$bin" ] || die "the haproxy package installed no haproxy binary"
fi
major="$(major_of "$bin")"
[ -n "$major" ] && [ "$major" -ge 2 ] || die "$bin is not HAProxy 2.x or later ($("$bin" -v 2>&1 | head -n 1))"
log "using $("$bin" -v | head -n 1) at $bin"
echo "$bin"
