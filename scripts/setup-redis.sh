#!/usr/bin/env bash
# Makes sure a Redis server (the shared task store of tests/tests/redis_replicas.rs and
# `serve --task-store redis://…`) is installed: Debian's `redis-server` package (7.0 on
# bookworm). Idempotent: when a redis-server binary of version 6.2 or later is already
# there, it only prints its path. The package's service is not started: the tests start
# their own servers on loopback.
#
# Usage: scripts/setup-redis.sh [--quiet]
#   --quiet  print only the binary's path at the end
# Environment: MCP_TOOLBELT_REDIS names a redis-server binary to use instead (then nothing
# is installed). Exit 1 with the reason when redis-server is missing and cannot be installed.
set -euo pipefail

# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_begin setup-redis "$@"

bin="$(find_or_install redis-server redis-server MCP_TOOLBELT_REDIS /usr/bin)"
# "Redis server v=7.0.15 sha=…": 6.2 or later has SET … PXAT, which the task store uses.
version="$("$bin" --version | sed -n 's/.* v=\([0-9]*\.[0-9]*\).*/\1/p')"
case "$version" in
    [0-5].* | 6.[01]) die "$bin is Redis $version; the task store needs 6.2 or later" ;;
    "") die "cannot read the version of $bin" ;;
esac
log "using Redis $version at $bin"
echo "$bin"
