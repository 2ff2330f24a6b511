#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs).
# Installs everything the tests need, cached under .cache/ (git-ignored) so a second run is
# fast: the Python venv with the official MCP client, Node 22 with the conformance suite,
# Inspector and supergateway, a real Trac with the XML-RPC plugin, Debian's HAProxy and
# nginx (the load balancers of the multi-replica tests and deploy/), Debian's Redis (the
# shared task store), Debian's Prometheus (the scraper of the metrics test) and Debian's
# bubblewrap (the namespaces of examples/system-tools'
# commands). Then checks
# formatting and lints, runs every
# test of the workspace (unit, integration, doc and compile-fail tests; tracd and the servers
# under test are started by the tests themselves, on 127.0.0.1 only), builds the library
# docs with warnings denied and packages the library crates (a publish dry run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup-python.sh
scripts/setup-node.sh
scripts/trac/setup.sh
scripts/setup-haproxy.sh >/dev/null
scripts/setup-nginx.sh >/dev/null
scripts/setup-redis.sh >/dev/null
scripts/setup-prometheus.sh >/dev/null
scripts/setup-bubblewrap.sh >/dev/null
# shellcheck source=scripts/env.sh
source scripts/env.sh

# Formatting first: it takes a second and fails before anything is built.
cargo fmt --all -- --check
# Lints with warnings denied, on every target and feature.
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
# The library alone with no feature, and with each feature on its own: an item gated by the
# wrong feature, or code left unused by one, fails here rather than in a user's build (the
# line above and the tests build everything at once).
for features in "" server http oauth tls axum redis otel testing cli audit; do
    cargo clippy -p mcp-toolbelt --lib --no-default-features --features "$features" --locked \
        -- -D warnings
done
# A library of tools built on its own, as its users build it: without the server feature
# (the workspace's builds unify features, so only a build of it alone shows an item its
# macros or its hook need that a feature hides).
cargo clippy -p tool-lib --all-targets --locked -- -D warnings
cargo test --workspace --locked --no-fail-fast
# The benches compile and run each measurement once (criterion's test mode); `oauth` is the
# feature benches/oauth.rs needs.
cargo test -p mcp-toolbelt --benches --features oauth --locked --no-fail-fast
# The library crates' docs build without a warning (broken links, missing docs), every feature on.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --locked \
    -p mcp-toolbelt -p mcp-toolbelt-derive -p mcp-toolbelt-names
# The library crates package and build as crates.io would take them (nothing is uploaded).
scripts/publish-check.sh
