#!/usr/bin/env bash
# Instructions per tools/call of servers over streamable HTTP, counted by callgrind (user
# space, every thread of the server; repeatable on a shared machine, unlike CPU time): each
# server runs under `valgrind --tool=callgrind` twice, serving `http-load` with 64 clients
# making A and then B calls each; the difference divided by the 64 × (B − A) calls between
# the two runs is the cost of one call, with start-up, the sequential phase and shutdown
# taken out. Valgrind hides some CPU features (SHA-NI among them), so code that uses them
# counts its software fallback.
#
# usage: scripts/perf/instructions-per-call-http.sh [-a A] [-b B] LABEL=COMMAND...
#   COMMAND serves HTTP on 127.0.0.1:0 and prints `serving MCP over HTTP at URL` on
#   stderr; it must exit on SIGTERM (callgrind writes its counts at exit). e.g.
#   scripts/perf/instructions-per-call-http.sh \
#     off="target/release/observed-tools serve --http 127.0.0.1:0 --stateless" \
#     audit="target/release/observed-tools serve --http 127.0.0.1:0 --stateless --audit-log /tmp/a.log"
# Needs valgrind and a release `http-load` (HTTP_LOAD, default target/release/http-load).
set -euo pipefail
low=10
high=40
while getopts "a:b:" opt; do
    case $opt in
        a) low=$OPTARG ;;
        b) high=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] && [ "$high" -gt "$low" ] || { sed -n 2,16p "$0"; exit 2; }
load=${HTTP_LOAD:-${CARGO_TARGET_DIR:-target}/release/http-load}
clients=64
out=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill -KILL "$server" 2>/dev/null; rm -rf "$out"' EXIT

# Instructions of one run of COMMAND serving CALLS calls per client.
count() {
    local label=$1 cmd=$2 calls=$3 url="" waited
    rm -f "$out"/cg.* "$out/server.log"
    # shellcheck disable=SC2086 # COMMAND is a command line
    valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$out/cg.%p" \
        $cmd 2>"$out/server.log" &
    server=$!
    for waited in $(seq 1 600); do
        url=$(sed -n 's/.*serving MCP over HTTP at \(http[^ ]*\).*/\1/p' "$out/server.log" | head -1)
        [ -n "$url" ] && break
        kill -0 "$server" 2>/dev/null || { cat "$out/server.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$url" ] || { echo "$label: no URL after ${waited} waits" >&2; exit 1; }
    # The target only names the running server; http-load measures it over HTTP.
    "$load" --target "$label=echo 'serving MCP over HTTP at $url' >&2; exec sleep 3600" \
        --runs 1 --clients "$clients" --calls-per-client "$calls" --calls 10 \
        --sessions 0 --idle-connections 0 --deadline 1200 >/dev/null 2>"$out/load.log" \
        || { cat "$out/load.log" >&2; exit 1; }
    kill -TERM "$server"
    wait "$server" || true
    server=""
    awk '/^summary:/ { s += $2 } END { printf "%d\n", s }' "$out"/cg.*
}

for spec in "$@"; do
    label=${spec%%=*}
    cmd=${spec#*=}
    first=$(count "$label" "$cmd" "$low")
    last=$(count "$label" "$cmd" "$high")
    echo "$label: $(( (last - first) / (clients * (high - low)) )) instructions per call"
done
