#!/usr/bin/env bash
# Instructions per tools/call of stdio servers, counted by callgrind (repeatable under load,
# unlike wall-clock): each server runs under `valgrind --tool=callgrind` twice through
# `stdio-load`, once with 1 call and once with N+1 calls; (Ir(N+1) - Ir(1)) / N is the
# cost of one call with start-up and shutdown taken out. Server threads are summed.
#
# usage: scripts/perf/instructions-per-call.sh [-n N] [-w WINDOW] [-a "STDIO-LOAD ARGS"] LABEL=COMMAND...
#   e.g. scripts/perf/instructions-per-call.sh -n 5000 \
#          ours="target/release/quickstart-mcp serve --stdio" rmcp="target/release/rmcp-echo --pipes"
# Needs valgrind and a release `stdio-load` (STDIO_LOAD, default target/release/stdio-load).
set -euo pipefail
n=5000
window=1000
extra=""
while getopts "n:w:a:" opt; do
    case $opt in
        n) n=$OPTARG ;;
        w) window=$OPTARG ;;
        a) extra=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n 2,10p "$0"; exit 2; }
load=${STDIO_LOAD:-${CARGO_TARGET_DIR:-target}/release/stdio-load}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

total_ir() { # sum of the "summary:" lines of every callgrind file given
    awk '/^summary:/ { s += $2 } END { printf "%d\n", s }' "$@"
}

for spec in "$@"; do
    label=${spec%%=*}
    cmd=${spec#*=}
    for calls in 1 $((n + 1)); do
        rm -f "$out"/cg.*
        # shellcheck disable=SC2086 # $extra is a list of arguments
        "$load" -n "$calls" -w "$window" --deadline 600 $extra \
            --cmd "$label=exec valgrind --tool=callgrind --trace-children=no --callgrind-out-file=$out/cg.%p $cmd" \
            >/dev/null 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
        eval "ir_$calls=$(total_ir "$out"/cg.*)"
    done
    eval "first=\$ir_1 last=\$ir_$((n + 1))"
    echo "$label: $(( (last - first) / n )) instructions per call (start-up + 1 call: $first)"
done
