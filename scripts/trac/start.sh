#!/usr/bin/env bash
# Create two fresh Trac environments and serve each with its own tracd on
# 127.0.0.1 (runs setup.sh first; that is instant once the venv is built).
#
#   anon env  http://127.0.0.1:$TRAC_ANON_PORT   RPC at /rpc; anonymous holds
#             XML_RPC TICKET_ADMIN WIKI_ADMIN MILESTONE_ADMIN
#   auth env  http://127.0.0.1:$TRAC_AUTH_PORT   HTTP basic auth at /login/rpc;
#             anonymous has no XML_RPC, user $TRAC_AUTH_USER holds only XML_RPC
#             (plus Trac's defaults for authenticated users)
#
# Environment (all optional):
#   TRAC_RUN_DIR        where envs, logs and pid files go (default <repo>/.cache/trac-run)
#   TRAC_ANON_PORT      default 8124
#   TRAC_AUTH_PORT      default 8125
#   TRAC_AUTH_USER      default bob
#   TRAC_AUTH_PASSWORD  default bobpw
#   TRAC_REUSE_ENVS=1   keep existing environments (restart instead of recreate)
#   TRAC_WATCH_PID      stop both tracd as soon as this process has exited
#   TRAC_START_TIMEOUT  seconds to wait for both servers to answer (default 60)
#
# Any tracd already started from the same run dir is stopped first.  Exits
# non-zero with a clear message when a port is taken or a tracd does not come
# up (its log is shown).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUN=${TRAC_RUN_DIR:-$ROOT/.cache/trac-run}
ANON_PORT=${TRAC_ANON_PORT:-8124}
AUTH_PORT=${TRAC_AUTH_PORT:-8125}
AUTH_USER=${TRAC_AUTH_USER:-bob}
AUTH_PASSWORD=${TRAC_AUTH_PASSWORD:-bobpw}
TIMEOUT=${TRAC_START_TIMEOUT:-60}

die() { echo "start.sh: $*" >&2; exit 1; }

for p in "$ANON_PORT" "$AUTH_PORT"; do
    [[ "$p" =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le 65535 ] ||
        die "invalid port '$p' (TRAC_ANON_PORT / TRAC_AUTH_PORT must be 1..65535)"
done
[ "$ANON_PORT" != "$AUTH_PORT" ] || die "TRAC_ANON_PORT and TRAC_AUTH_PORT are both $ANON_PORT"
[[ "$AUTH_USER" =~ ^[A-Za-z0-9_.-]+$ ]] || die "TRAC_AUTH_USER '$AUTH_USER' must be [A-Za-z0-9_.-]+"

VENV=$("$HERE/setup.sh" | tail -n 1)
export PYTHONWARNINGS=ignore
mkdir -p "$RUN"
RUN=$(cd "$RUN" && pwd)
TRAC_RUN_DIR="$RUN" "$HERE/stop.sh" >/dev/null

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$ANON_PORT" "$AUTH_PORT"; do
    if port_busy "$p"; then
        holder=$(ss -Hltnp "sport = :$p" 2>/dev/null | grep -o 'users:.*' | head -n 1 || true)
        die "port $p on 127.0.0.1 is already in use${holder:+ ($holder)}; choose another with TRAC_ANON_PORT / TRAC_AUTH_PORT"
    fi
done

# ---- environments -----------------------------------------------------------
make_env() { # NAME TITLE PERMISSION-ARGS...
    local name=$1 env="$RUN/$1" title=$2
    shift 2
    if [ "${TRAC_REUSE_ENVS:-}" = 1 ] && [ -f "$env/VERSION" ]; then return; fi
    rm -rf "$env"
    cat >"$RUN/$name.ini" <<EOF
[components]
tracrpc.* = enabled

[logging]
log_type = file
log_level = INFO
EOF
    "$VENV/bin/trac-admin" "$env" initenv "$title" sqlite:db/trac.db --config="$RUN/$name.ini" >/dev/null ||
        die "trac-admin initenv failed for $env"
    "$VENV/bin/trac-admin" "$env" permission add "$@" ||
        die "trac-admin permission add failed for $env"
}
# both environments at once (each is a few seconds of trac-admin start-up)
make_env anon "trac-mcp anonymous admin" anonymous XML_RPC TICKET_ADMIN WIKI_ADMIN MILESTONE_ADMIN &
ANON_JOB=$!
make_env auth "trac-mcp basic auth" "$AUTH_USER" XML_RPC &
AUTH_JOB=$!
wait "$ANON_JOB" || die "could not create the anon environment in $RUN/anon"
wait "$AUTH_JOB" || die "could not create the auth environment in $RUN/auth"

# htpasswd with a {SHA} hash, a format tracd --basic-auth reads
"$VENV/bin/python" - "$RUN/htpasswd" "$AUTH_USER" "$AUTH_PASSWORD" <<'EOF'
import base64, hashlib, sys
path, user, password = sys.argv[1:4]
digest = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()
with open(path, "w") as fh:
    fh.write("%s:{SHA}%s\n" % (user, digest))
EOF

# ---- servers ----------------------------------------------------------------
launch() { # NAME PORT EXTRA-ARGS...
    local name=$1 port=$2
    shift 2
    "$VENV/bin/tracd" --single-env --hostname 127.0.0.1 --port "$port" "$@" "$RUN/$name" \
        </dev/null >"$RUN/$name.log" 2>&1 &
    echo $! >"$RUN/$name.pid"
}
launch anon "$ANON_PORT"
launch auth "$AUTH_PORT" --basic-auth="*,$RUN/htpasswd,trac-mcp"

# Wait until both answer an HTTP request (or one of them has died).
if ! "$VENV/bin/python" - "$TIMEOUT" "anon:$ANON_PORT:$(cat "$RUN/anon.pid")" \
    "auth:$AUTH_PORT:$(cat "$RUN/auth.pid")" <<'EOF'; then
import os, sys, time, urllib.request, urllib.error
deadline = time.monotonic() + float(sys.argv[1])
pending = [a.split(":") for a in sys.argv[2:]]
while pending:
    for name, port, pid in list(pending):
        try:
            with open("/proc/%s/stat" % pid) as fh:   # zombie counts as dead
                dead = fh.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            dead = True
        if dead:
            sys.stderr.write("start.sh: tracd for %s (port %s) exited\n" % (name, port))
            sys.exit(1)
        try:
            urllib.request.urlopen("http://127.0.0.1:%s/" % port, timeout=2).read()
            pending.remove([name, port, pid])
        except urllib.error.HTTPError:
            pending.remove([name, port, pid])   # it answered
        except OSError:
            pass
    if pending and time.monotonic() > deadline:
        sys.stderr.write("start.sh: no answer from %s within %ss\n"
                         % (", ".join(p[0] for p in pending), sys.argv[1]))
        sys.exit(1)
    time.sleep(0.1)
EOF
    for n in anon auth; do
        echo "---- $RUN/$n.log (tail)" >&2
        tail -n 15 "$RUN/$n.log" >&2 || true
    done
    TRAC_RUN_DIR="$RUN" "$HERE/stop.sh" >/dev/null
    die "tracd did not start (ports $ANON_PORT, $AUTH_PORT)"
fi

# Optional watchdog: stop the servers once the watched process is gone.
if [ -n "${TRAC_WATCH_PID:-}" ]; then
    [[ "$TRAC_WATCH_PID" =~ ^[0-9]+$ ]] || die "TRAC_WATCH_PID must be a pid"
    TRAC_RUN_DIR="$RUN" nohup bash -c '
        while kill -0 "$1" 2>/dev/null; do sleep 1; done
        rm -f "$TRAC_RUN_DIR/watcher.pid"
        exec "$2" # trac-mcp-watcher
    ' trac-mcp-watcher "$TRAC_WATCH_PID" "$HERE/stop.sh" </dev/null >/dev/null 2>&1 &
    echo $! >"$RUN/watcher.pid"
fi

echo "anon http://127.0.0.1:$ANON_PORT pid $(cat "$RUN/anon.pid")"
echo "auth http://127.0.0.1:$AUTH_PORT pid $(cat "$RUN/auth.pid") user $AUTH_USER"
