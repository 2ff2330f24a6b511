#!/usr/bin/env bash
# The three library crates package and build as crates.io would take them: `cargo publish
# --dry-run` packages mcp-toolbelt-names, mcp-toolbelt-derive and mcp-toolbelt in
# dependency order, resolves each against the ones before it (cargo >= 1.90 keeps the
# unpublished chain in a local registry), and builds each from its packaged sources. It
# fails on a file a package needs but does not ship, a dependency the registry cannot
# resolve (a dev-dependency cycle with a version), and missing metadata. Nothing is
# uploaded. Part of scripts/test.sh; needs the crates.io index (a registry this project's
# machines reach).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# CI checks out a clean tree; a developer's dirty tree is packaged as it is.
dirty=()
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
    dirty=(--allow-dirty)
fi
cargo publish --dry-run --locked "${dirty[@]}" \
    -p mcp-toolbelt-names -p mcp-toolbelt-derive -p mcp-toolbelt
