#!/usr/bin/env bash
# Stop what start.sh started from the same run dir: its watchdog and both
# tracd processes, each by the pid recorded in the run dir.  A pid is only
# signalled if its command line still shows it is that process (pids get
# reused).  Safe to run when nothing is running.
#
#   TRAC_RUN_DIR   default <repo>/.cache/trac-run
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUN=${TRAC_RUN_DIR:-$ROOT/.cache/trac-run}
[ -d "$RUN" ] || exit 0
RUN=$(cd "$RUN" && pwd)

# alive PID: true while PID exists and is not a zombie (an orphaned tracd is
# reaped by init, which may take a while after it has exited)
alive() {
    local state
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# stop_pid FILE MARKER: kill the pid in FILE if its cmdline contains MARKER
stop_pid() {
    local file=$1 marker=$2 pid
    [ -f "$file" ] || return 0
    pid=$(cat "$file")
    rm -f "$file"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    [ -r "/proc/$pid/cmdline" ] || return 0
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker" || return 0
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do # up to 5 s for a clean exit
        alive "$pid" || { echo "stopped $pid"; return 0; }
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    echo "killed $pid"
}

stop_pid "$RUN/watcher.pid" trac-mcp-watcher
stop_pid "$RUN/anon.pid" "$RUN/anon"
stop_pid "$RUN/auth.pid" "$RUN/auth"
exit 0
