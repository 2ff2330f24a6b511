#!/usr/bin/env bash
# Creates the Python virtualenv the test suite drives, at <repo>/.cache/py (git-ignored), with
# the fully pinned packages of scripts/python/requirements.txt (the official MCP Python SDK,
# mcp==2.3.0, and its dependencies), then into the same venv the debug adapter of
# scripts/python/requirements-debugger.txt (debugpy, for examples/debugger) and the
# Kubernetes schema check of scripts/python/requirements-deploy.txt (kubernetes-validate, for
# tests/tests/deploy_docs.rs) and the OTLP protobuf definitions of
# scripts/python/requirements-otel.txt (opentelemetry-proto, for tests/peers/otlp_receiver.py).
# Idempotent: each part is skipped while its stamp (hash of its requirements file, + the
# interpreter version for the venv) matches; a new pin of one of the other files installs on
# top of the venv without rebuilding it.
#
# Usage: scripts/setup-python.sh [--force] [--quiet]
#   --force  recreate the venv even if the stamp matches
#   --quiet  print only the interpreter path at the end
# Environment: PYTHON (default: python3) is the interpreter the venv is made from (>= 3.10);
# MCP_TOOLBELT_CACHE overrides the cache root (default <repo>/.cache).
# Prints the venv's python path on stdout; `source scripts/env.sh` exports it as MCP_TOOLBELT_PYTHON.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MCP_TOOLBELT_CACHE:-$ROOT/.cache}"
VENV="$CACHE/py"
REQS="$ROOT/scripts/python/requirements.txt"
DEBUG_REQS="$ROOT/scripts/python/requirements-debugger.txt"
DEPLOY_REQS="$ROOT/scripts/python/requirements-deploy.txt"
OTEL_REQS="$ROOT/scripts/python/requirements-otel.txt"
BASE_PY="${PYTHON:-python3}"

force=0
quiet=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        --quiet) quiet=1 ;;
        -h | --help)
            awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *)
            echo "setup-python: unknown argument '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done

log() { [ "$quiet" = 1 ] || echo "setup-python: $*" >&2; }
die() {
    echo "setup-python: error: $*" >&2
    exit 1
}

command -v "$BASE_PY" >/dev/null 2>&1 || die "'$BASE_PY' not found (set PYTHON to a Python >= 3.10)"
command -v sha256sum >/dev/null 2>&1 || die "'sha256sum' is needed on PATH"
[ -f "$REQS" ] || die "missing $REQS"
[ -f "$DEBUG_REQS" ] || die "missing $DEBUG_REQS"
[ -f "$DEPLOY_REQS" ] || die "missing $DEPLOY_REQS"
base_ver="$("$BASE_PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" ||
    die "'$BASE_PY' does not run"
case "$base_ver" in
    3.[0-9].* | [0-2].*) die "Python >= 3.10 is needed (mcp 2.x); '$BASE_PY' is $base_ver" ;;
esac

mkdir -p "$CACHE"
exec 9>"$CACHE/.setup-python.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

stamp="$VENV/.stamp"
want="$(sha256sum <"$REQS" | cut -d' ' -f1) python=$base_ver"
if [ "$force" = 0 ] && [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    log "venv: cached ($VENV)"
else
    log "creating venv $VENV (Python $base_ver)"
    rm -rf "$VENV"
    "$BASE_PY" -m venv "$VENV" || die "python -m venv failed"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        -r "$REQS" >&2 || die "pip install -r $REQS failed"
    "$VENV/bin/python" -m pip check >&2 || die "pip check found inconsistent packages"
    "$VENV/bin/python" -c 'from mcp import Client' || die "'from mcp import Client' fails in the venv"
    echo "$want" >"$stamp"
fi

# install_on_top NAME REQUIREMENTS IMPORT: pip install (--no-deps: every pin is listed)
# REQUIREMENTS into the venv unless its stamp matches, then check that IMPORT imports.
install_on_top() {
    local name="$1" reqs="$2" module="$3"
    local stamp="$VENV/.stamp-$name" want
    want="$(sha256sum <"$reqs" | cut -d' ' -f1)"
    if [ "$force" = 0 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        log "$name: cached"
        return
    fi
    log "installing $name ($(basename "$reqs"))"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
        -r "$reqs" >&2 || die "pip install -r $reqs failed"
    "$VENV/bin/python" -c "import $module" || die "'import $module' fails in the venv"
    echo "$want" >"$stamp"
}
install_on_top debugger "$DEBUG_REQS" debugpy.adapter
install_on_top deploy "$DEPLOY_REQS" kubernetes_validate
install_on_top otel "$OTEL_REQS" opentelemetry.proto.collector.trace.v1.trace_service_pb2

[ "$quiet" = 1 ] || log "ready: $("$VENV/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp") + ",", "debugpy", m.version("debugpy"))')"
echo "$VENV/bin/python"
