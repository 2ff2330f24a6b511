#!/usr/bin/env bash
# Many tools over stdio: `tools/call` and `tools/list` of the many-tools fixture
# (tests/fixtures/many-tools) serving 1 tool and 1,000 tools, the same binary, measured in
# the same runs (docs/performance.md, "Many tools").
#   1. wall-clock, interleaved rounds: calls of echo_0000; list pages of one tool each
#      (--page-size 1: the 1,000-tool list takes 1,000 such pages), from a server that has
#      served none of them yet and from one that has served each once; whole 1,000-tool lists;
#   2. callgrind instructions per call and per page (scripts/perf/instructions-per-call.sh).
# Set BEFORE=path/to/an/older/many-tools to measure it beside the current one.
#
# usage: scripts/perf/many-tools.sh [-r ROUNDS]
# Needs release builds: cargo build --release -p many-tools -p mcp-toolbelt-tests \
#   --bin many-tools --bin stdio-load; and valgrind.
set -euo pipefail
rounds=5
while getopts "r:" opt; do
    case $opt in
        r) rounds=$OPTARG ;;
        *) exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
bin=${CARGO_TARGET_DIR:-$here/../../target}/release
load=$bin/stdio-load
server=$bin/many-tools
export STDIO_LOAD=$load
uptime
summary() { # label and median rate of each server of a stdio-load summary
    python3 -c 'import json, sys; s = json.load(sys.stdin); print(" ".join(
        "%s=%s/s (errors %d)" % (v["label"], v["median_rps"], v["errors"] + v["unanswered"])
        for v in s["servers"]))'
}

echo "== tools/call of echo_0000, $rounds rounds of 20,000 pipelined calls (req/s)"
"$load" --runs "$rounds" -n 20000 -w 20000 --tool echo_0000 --expect-text hello \
    --cmd "1-tool=exec $server --tools 1 serve --stdio" \
    --cmd "1000-tools=exec $server serve --stdio" 2>/dev/null | summary

echo "== tools/list pages of one tool, $rounds rounds of 20,000 pages (pages/s)"
"$load" --runs "$rounds" --method list -n 20000 -w 16 \
    --cmd "1-tool=exec $server --tools 1 serve --stdio --page-size 1" \
    --cmd "1000-tools=exec $server serve --stdio --page-size 1" 2>/dev/null | summary

echo "== the same, every page served once before timing (one whole walk first)"
"$load" --runs "$rounds" --method list -n 20000 -w 16 --warm-up-walks 1 \
    --cmd "1-tool=exec $server --tools 1 serve --stdio --page-size 1" \
    --cmd "1000-tools=exec $server serve --stdio --page-size 1" 2>/dev/null | summary

echo "== whole tools/list of 1,000 tools, $rounds rounds of 500 lists (lists/s)"
"$load" --runs "$rounds" --method list -n 500 -w 4 --expect-tools 1000 \
    --cmd "1000-tools=exec $server serve --stdio" \
    ${BEFORE:+--cmd "1000-tools-before=exec $BEFORE serve --stdio"} 2>/dev/null | summary

echo "== instructions (callgrind)"
"$here/instructions-per-call.sh" -n 2000 -a "--tool echo_0000 --expect-text hello" \
    call-1-tool="$server --tools 1 serve --stdio" call-1000-tools="$server serve --stdio"
"$here/instructions-per-call.sh" -n 2000 -w 16 -a "--method list" \
    page-1-tool="$server --tools 1 serve --stdio --page-size 1" \
    page-1000-tools="$server serve --stdio --page-size 1"
"$here/instructions-per-call.sh" -n 2000 -w 16 -a "--method list --warm-up-walks 1" \
    warm-page-1-tool="$server --tools 1 serve --stdio --page-size 1" \
    warm-page-1000-tools="$server serve --stdio --page-size 1"
"$here/instructions-per-call.sh" -n 50 -w 4 -a "--method list --expect-tools 1000" \
    whole-list="$server serve --stdio" ${BEFORE:+whole-list-before="$BEFORE serve --stdio"}
