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

# One version: the workspace's (Cargo.toml) is the CHANGELOG's newest section, which is
# either dated (`## [X.Y.Z] — YYYY-MM-DD`, once released) or `## [Unreleased] — X.Y.Z`, and
# the README's dependency line asks for its X.Y.
version="$(sed -n 's/^version = "\([0-9][0-9.]*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || { echo "publish-check: no workspace version in Cargo.toml" >&2; exit 1; }
newest="$(grep -m 1 '^## ' CHANGELOG.md)"
case "$newest" in
    "## [Unreleased] — $version" | "## [$version] — "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
    *)
        echo "publish-check: CHANGELOG.md's newest section is '$newest'; Cargo.toml says $version" >&2
        exit 1
        ;;
esac
grep -q "^mcp-toolbelt = \"${version%.*}\"$" README.md || {
    echo "publish-check: README.md does not ask for mcp-toolbelt = \"${version%.*}\"" >&2
    exit 1
}

# CI checks out a clean tree; a developer's dirty tree is packaged as it is.
dirty=()
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
    dirty=(--allow-dirty)
fi
cargo publish --dry-run --locked "${dirty[@]}" \
    -p mcp-toolbelt-names -p mcp-toolbelt-derive -p mcp-toolbelt
