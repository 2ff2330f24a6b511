#!/usr/bin/env bash
# Makes sure a Prometheus server (the real scraper of tests/tests/observability.rs, which
# reads the server's /metrics) is installed: Debian's `prometheus` package (2.42 on
# bookworm). Idempotent: when a prometheus binary of version 2.x or later is already
# there, it only prints its path. The package's service is not started: the test starts
# its own Prometheus on loopback with a configuration of its own.
#
# Usage: scripts/setup-prometheus.sh [--quiet]
#   --quiet  print only the binary's path at the end
# Environment: MCP_TOOLBELT_PROMETHEUS names a prometheus binary to use instead (then
# nothing is installed). Exit 1 with the reason when prometheus is missing and cannot be
# installed.
set -euo pipefail

# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_begin setup-prometheus "$@"

bin="$(find_or_install prometheus prometheus MCP_TOOLBELT_PROMETHEUS /usr/bin)"
# "prometheus, version 2.42.0+ds (branch: …)": 2.x reads bearer tokens from
# `authorization.credentials_file`, which the test's configuration uses.
version="$("$bin" --version 2>&1 | sed -n 's/^prometheus, version \([0-9]*\.[0-9]*\).*/\1/p' | head -n 1)"
case "$version" in
    "") die "cannot read the version of $bin" ;;
    [01].*) die "$bin is Prometheus $version; the test needs 2.x or later" ;;
esac
log "using Prometheus $version at $bin"
echo "$bin"
