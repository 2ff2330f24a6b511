#!/usr/bin/env bash
# Install a real Trac 1.6 with a Python-3 port of the TracXMLRPC plugin into a
# virtualenv under the repository's .cache/ (git-ignored).
#
#   scripts/trac/setup.sh            # prints the venv path on the last line
#
# Environment:
#   TRAC_VENV    venv directory        (default: <repo>/.cache/trac-venv)
#   TRAC_PYTHON  interpreter to use    (default: python3.11, else python3.12/3.10/python3)
#
# Idempotent: a stamp file records a fingerprint of this script and of the
# port script; when it matches, the run ends at once.  Concurrent runs are
# serialised with flock.  Only PyPI is contacted; the TracXMLRPC sdist is
# checked against a pinned sha256.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${TRAC_VENV:-$ROOT/.cache/trac-venv}
STAMP="$VENV/.trac-mcp-setup"

XMLRPC_VERSION=1.1.9
XMLRPC_SHA256=4c1c95193577ef67b293ae44bd0c7d063ba5e999b87247634d4b1552c9086f52
# Trac 1.6 imports pkg_resources (gone in setuptools 81); >= 70.1 builds wheels
# by itself, which the no-build-isolation install below relies on
TRAC_REQS=('trac==1.6' 'setuptools>=70.1,<81')

fingerprint() {
    cat "$HERE/setup.sh" "$HERE/port_tracxmlrpc.py" | sha256sum | cut -d' ' -f1
}

ready() {
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(fingerprint)" ] &&
        [ -x "$VENV/bin/tracd" ] && [ -x "$VENV/bin/trac-admin" ]
}

pick_python() {
    if [ -n "${TRAC_PYTHON:-}" ]; then echo "$TRAC_PYTHON"; return; fi
    local c
    for c in python3.11 python3.12 python3.10 python3; do
        if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi
    done
    echo "setup.sh: no python3 interpreter found (set TRAC_PYTHON)" >&2
    exit 1
}

if ready; then echo "$VENV"; exit 0; fi

mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if ready; then echo "$VENV"; exit 0; fi # another run finished it meanwhile

PY_HOST=$(pick_python)
"$PY_HOST" -c 'import sys; assert (3, 8) <= sys.version_info[:2], sys.version' ||
    { echo "setup.sh: $PY_HOST is too old (need Python >= 3.8)" >&2; exit 1; }

echo "setup.sh: building Trac venv in $VENV with $PY_HOST" >&2
rm -rf "$VENV"
"$PY_HOST" -m venv "$VENV"
PY="$VENV/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONWARNINGS=ignore
# keep pip's download cache inside the repository's cache too
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$ROOT/.cache/pip}
"$PY" -m pip install -q "${TRAC_REQS[@]}"

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/tracxmlrpc-build.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
"$PY" -m pip download -q --no-deps --no-binary :all: -d "$BUILD" "TracXMLRPC==$XMLRPC_VERSION"
SDIST="$BUILD/TracXMLRPC-$XMLRPC_VERSION.tar.gz"
echo "$XMLRPC_SHA256  $SDIST" | sha256sum -c --quiet - ||
    { echo "setup.sh: checksum mismatch for $SDIST" >&2; exit 1; }
tar xzf "$SDIST" -C "$BUILD"
SRC="$BUILD/TracXMLRPC-$XMLRPC_VERSION"
# stale egg-info and the Python-2 twill test-suite are not shipped
rm -rf "$SRC/TracXMLRPC.egg-info" "$SRC/tracrpc/tests"

# 1. mechanical Python 2 -> 3 rewrite: stdlib lib2to3 up to 3.12, else fissix
#    (the PyPI fork of lib2to3, identical output on this sdist)
if "$PY" -c 'import lib2to3.main' 2>/dev/null; then
    "$PY" -m lib2to3 -w -n --no-diffs "$SRC/tracrpc" >"$BUILD/2to3.log" 2>&1
else
    "$PY" -m pip install -q --target "$BUILD/fissix" 'fissix==24.4.24'
    PYTHONPATH="$BUILD/fissix" "$PY" -m fissix -w -n --no-diffs "$SRC/tracrpc" >"$BUILD/2to3.log" 2>&1
fi

# 2. what 2to3 cannot know: Trac 1.6 API, Genshi removal, bytes vs str
"$PY" "$HERE/port_tracxmlrpc.py" "$SRC" >&2

# 3. nothing Python-2-only may be left that breaks at import time
"$PY" -m py_compile "$SRC"/tracrpc/*.py
LEFTOVERS=$(grep -nE '^\s*(import|from)\s+(genshi|xmlrpclib|cStringIO|StringIO)\b|\.iteritems\(|\bbasestring\b|\bizip\b|(^|[^_])\bunicode\(|\bunichr\(|\bwiki_to_(html|oneliner)\(|\.has_key\(|\bgenshi\.(builder|core|template)\b' \
    "$SRC"/tracrpc/*.py | grep -vE '^[^:]+:[0-9]+:\s+[0-9]\. ' || true)
if [ -n "$LEFTOVERS" ]; then
    printf 'setup.sh: Python 2 / Genshi leftovers after the port:\n%s\n' "$LEFTOVERS" >&2
    exit 1
fi

# 4. install into the venv (its own setuptools builds the wheel)
"$PY" -m pip install -q --no-deps --no-build-isolation "$SRC"
"$PY" -c 'import tracrpc, trac, sys; sys.stderr.write("setup.sh: tracrpc %s on Trac %s\n" % (tracrpc.__version__, trac.__version__))'

fingerprint >"$STAMP"
echo "$VENV"
