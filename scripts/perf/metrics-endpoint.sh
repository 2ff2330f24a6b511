#!/usr/bin/env bash
# The Prometheus endpoint with 1,000 tools (docs/operations.md): the many-tools fixture
# (1,000 tools) over stateless HTTP with `--metrics-addr`; each tool is called once (so
# the exposition has a series per tool), then `/metrics` is fetched N times one after
# another; prints the exposition's size and the p50/p99/max of curl's total time.
# The issue's target is <= 10 ms.
#
# usage: scripts/perf/metrics-endpoint.sh [-n SCRAPES] [-r ROUNDS] [-s SERVER]...
# Needs a release build: cargo build --release -p mcp-toolbelt-tests --bin many-tools-fixture
# (the default SERVER). With several -s, each server is measured in turn, in the same run,
# the whole series repeated -r ROUNDS times (default 1), A B A B …
set -euo pipefail
scrapes=200
rounds=1
servers=()
while getopts "n:s:r:" opt; do
    case $opt in
        n) scrapes=$OPTARG ;;
        s) servers+=("$OPTARG") ;;
        r) rounds=$OPTARG ;;
        *) exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
[ ${#servers[@]} -gt 0 ] || servers=("${CARGO_TARGET_DIR:-$here/../../target}/release/many-tools-fixture")
work=$(mktemp -d)
pid=""
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
measure() {
server=$1
echo "== $server"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" serve --http 127.0.0.1:0 --stateless --metrics-addr "127.0.0.1:$port" 2>"$work/stderr" &
pid=$!
for _ in $(seq 100); do
    grep -q 'serving MCP over HTTP at' "$work/stderr" && break
    sleep 0.1
done
url=$(sed -n 's/^serving MCP over HTTP at //p' "$work/stderr")
[ -n "$url" ] || { cat "$work/stderr" >&2; exit 1; }
python3 - "$url" <<'PY'
import http.client, json, sys, urllib.parse
url = urllib.parse.urlparse(sys.argv[1])
conn = http.client.HTTPConnection(url.hostname, url.port)
for i in range(1000):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": f"echo_{i:04}", "arguments": {"message": "hi"}}})
    conn.request("POST", url.path, body, {"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
    reply = conn.getresponse().read()
    assert b'"hi"' in reply, reply
PY
curl -s "http://127.0.0.1:$port/metrics" >"$work/exposition"
echo "exposition: $(wc -c <"$work/exposition") bytes, $(wc -l <"$work/exposition") lines, $(grep -c '_count{mcp_method_name="tools/call"' "$work/exposition") tools/call series"
for _ in $(seq "$scrapes"); do
    curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"
done | sort -n | awk '{ t[NR] = $1 } END {
    printf "scrapes: %d  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", NR, t[int(NR * 0.5)] * 1000, t[int(NR * 0.99)] * 1000, t[NR] * 1000 }'
kill "$pid"
wait "$pid" 2>/dev/null || true
}
for _ in $(seq "$rounds"); do
    for server in "${servers[@]}"; do
        measure "$server"
    done
done
