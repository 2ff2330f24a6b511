#!/usr/bin/env bash
# Starts N replicas of an mcp-toolbelt server behind HAProxy (deploy/haproxy.cfg as shipped) on
# loopback, prints `listening on http://127.0.0.1:PORT/mcp` on stderr once HAProxy listens,
# and waits. The processes it starts die with it, also on SIGKILL (a watchdog kills them
# within 0.2 s), so it can be a target of the HTTP load harness. Known gap: after the
# harness's last round the replicas and HAProxy of that round were seen still running;
# check for leftovers (`pgrep -a haproxy`) after a measurement:
#   http-load --target 'lb3=exec scripts/replicas-up.sh --replicas 3 -- target/release/quickstart-mcp serve --stateless'
#
# Usage: scripts/replicas-up.sh [--replicas N] [--cpu-log FILE] -- SERVER [ARG...]
#   --replicas N   1, 2 or 3 (default 3); the config's three `server` lines are filled in turn,
#                  so with fewer replicas some lines name the same one
#   --cpu-log FILE every 250 ms, overwrite FILE with the CPU time (clock ticks, user+system)
#                  used so far by HAProxy and by each replica
#   SERVER ARG...  the server command; `--http 127.0.0.1:0 --replica-id replica-K` is appended
# Needs HAProxy (scripts/setup-haproxy.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
replicas=3
cpu_log=""
while [ $# -gt 0 ]; do
    case "$1" in
        --replicas) replicas="$2"; shift 2 ;;
        --cpu-log) cpu_log="$2"; shift 2 ;;
        --) shift; break ;;
        -h | --help)
            awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *) echo "replicas-up: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "replicas-up: give the server command after --" >&2; exit 2; }
case "$replicas" in 1 | 2 | 3) ;; *) echo "replicas-up: --replicas takes 1, 2 or 3" >&2; exit 2 ;; esac

haproxy="$("$ROOT/scripts/setup-haproxy.sh" --quiet)"
work="$(mktemp -d "${TMPDIR:-/tmp}/replicas-up.XXXXXX")"
pids=()
names=()

# Start `$@` in the background (the watchdog below ends it with this script).
child() { "$@" & pids+=("$!"); }
cleanup() { kill -9 "${pids[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

addrs=()
for n in $(seq 1 "$replicas"); do
    child "$@" --http 127.0.0.1:0 --replica-id "replica-$n" 2>"$work/replica-$n.log"
    names+=("replica-$n")
    for _ in $(seq 1 600); do
        url="$(sed -n 's/^serving MCP over HTTP at http:\/\/\([^/]*\)\/.*/\1/p' "$work/replica-$n.log" | head -n 1)"
        [ -n "$url" ] && break
        kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/replica-$n.log" >&2; exit 1; }
        sleep 0.05
    done
    [ -n "$url" ] || { echo "replicas-up: replica-$n did not announce its address" >&2; exit 1; }
    addrs+=("$url")
done

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
MCP_LB_BIND="127.0.0.1:$port" MCP_HEALTH_PATH=/readyz \
    MCP_REPLICA_1="${addrs[0]}" MCP_REPLICA_2="${addrs[1 % replicas]}" MCP_REPLICA_3="${addrs[2 % replicas]}" \
    child "$haproxy" -db -f "$ROOT/deploy/haproxy.cfg" 2>"$work/haproxy.log"
names+=(haproxy)
for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/haproxy.log" >&2; exit 1; }
    sleep 0.05
done

# The watchdog: while this script lives (a killed one is gone or a zombie), write the CPU
# log if asked; then kill everything started here. /proc/PID/stat fields 14 and 15 are
# user and system time in clock ticks.
launcher=$$
alive() { local s; read -r s <"/proc/$1/stat" 2>/dev/null || return 1; s="${s##*) }"; [ "${s%% *}" != Z ]; }
(
    trap '' TERM
    while alive "$launcher"; do
        if [ -n "$cpu_log" ]; then
            out=""
            for i in "${!pids[@]}"; do
                read -r -a f <"/proc/${pids[$i]}/stat" 2>/dev/null || continue
                out+="${names[$i]} $((f[13] + f[14]))"$'\n'
            done
            printf '%s' "$out" >"$cpu_log.tmp" && mv "$cpu_log.tmp" "$cpu_log"
        fi
        sleep 0.2
    done
    cleanup
) &

echo "listening on http://127.0.0.1:$port/mcp" >&2
wait "${pids[0]}"
