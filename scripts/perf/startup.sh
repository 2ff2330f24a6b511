#!/usr/bin/env bash
# Start-up of stdio servers, side by side: one whole session per run — spawn, `initialize`,
# `notifications/initialized`, `tools/list`, end of input, exit — timed by hyperfine (runs
# interleaved by hyperfine's own order, warm-up first), plus the instructions the same
# session costs under callgrind (repeatable when the machine is loaded).
#
# usage: scripts/perf/startup.sh LABEL=COMMAND...
#   e.g. scripts/perf/startup.sh rmcp="target/release/rmcp-echo --pipes" \
#          ours="target/release/quickstart-mcp serve --stdio"
# Needs hyperfine and valgrind (Debian packages).
set -euo pipefail
[ $# -gt 0 ] || { sed -n 2,10p "$0"; exit 2; }
session=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$session" "$out"' EXIT
cat >"$session" <<'JSON'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"startup","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
JSON
commands=()
for spec in "$@"; do
    label=${spec%%=*}
    cmd=${spec#*=}
    # The reply to tools/list must come back, or the run does not count.
    replies=$(sh -c "exec $cmd" <"$session" 2>/dev/null | grep -c '"id":2' || true)
    [ "$replies" = 1 ] || { echo "$label: no tools/list reply" >&2; exit 1; }
    commands+=(-n "$label" "exec $cmd < $session > /dev/null 2>&1")
    rm -f "$out"/cg.*
    sh -c "exec valgrind --tool=callgrind --callgrind-out-file=$out/cg.%p $cmd" <"$session" >/dev/null 2>&1
    echo "$label: $(awk '/^summary:/ { s += $2 } END { print s }' "$out"/cg.*) instructions per session"
done
# hyperfine runs each command through a shell and subtracts the shell's own start-up.
hyperfine --warmup 3 --runs "${RUNS:-30}" "${commands[@]}" 2>&1 | grep -v '^ *$'
