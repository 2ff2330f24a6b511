#!/usr/bin/env bash
# The per-call cost of examples/system-tools' `execute_command echo` through the server over
# stdio, release build, three sandbox layouts in the same run, calls interleaved: without
# namespaces (the baseline), through the sandbox holder (the default), and with one bubblewrap
# per call (`command_holder = false`). Needs bubblewrap (scripts/setup-bubblewrap.sh).
#
# usage: scripts/perf/system-tools-exec.sh [CALLS]   (default 200, at most 2000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
calls=${1:-200}
target=${CARGO_TARGET_DIR:-target}
cargo build --release --locked -p system-tools-mcp >&2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
mkdir "$dir/base"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$dir/base"
for layout in off holder per-call; do
    {
        echo 'allowed_paths = ["base"]'
        echo 'allowed_commands = ["echo"]'
        case $layout in
            off) echo 'command_namespaces = "off"' ;;
            per-call) echo 'command_holder = false' ;;
        esac
    } >"$dir/$layout.toml"
done
python3 scripts/perf/system-tools-exec.py "$target/release/system-tools-mcp" "$calls" \
    "namespaces-off=$dir/off.toml" "holder=$dir/holder.toml" "per-call-bwrap=$dir/per-call.toml"
