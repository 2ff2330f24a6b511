#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the code that decides who sees and calls which tool:
# permission sets (permissions.rs), admission (registry/admission.rs), visibility in the
# registry and its per-caller views (registry.rs: the catalog, build, register, enable,
# views), and argument validation (call/validate.rs). Each mutant is built and the mcp-toolbelt
# unit and integration tests run against it. Left out: doctests (each mutant would compile
# dozens of standalone doctest crates) and the uri_template unit tests (they never reach
# this code, and their pathological-input test alone takes ~15 s here).
#
# Fails when a mutant survives that is not in EQUIVALENT below: every entry there is a
# mutant no test can kill because the program behaves the same, with the reason.
#
# Not part of scripts/test.sh: it builds mcp-toolbelt once per mutant. On the shared 2-core
# machine (cargo-mutants 27.1.0, others building at the same time) the 102 mutants take
# ~15 min with the dependencies already built (~18 min in a fresh directory): 82 caught,
# 0 missed, 20 unviable (the replacement does not compile, e.g. a Default::default() for
# a type without Default). Before the tests of issue 17 the same selection (then 107
# mutants) had 15 missed.
#
# Usage: scripts/mutants.sh [extra cargo-mutants args, e.g. --list]
# Installs cargo-mutants (crates.io, --locked) when absent. cargo-mutants copies the source
# tree (without git-ignored files) to a scratch directory it removes when done.
# - MUTANTS_TARGET_DIR: where to build; default a fresh directory under ${TMPDIR:-/tmp},
#   removed at the end. Set it to keep the dependencies built between runs, but never run
#   two at once on one directory: cargo hashes a workspace member by its path inside the
#   workspace, so two copies of the tree would overwrite each other's artifacts.
# - MUTANTS_OUT: where cargo-mutants writes mutants.out (one log per mutant, caught.txt,
#   missed.txt, ...); default target/ of this repository (git-ignored).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Equivalent mutants: "replace ... in function" as cargo-mutants names them (without the
# file:line:col prefix), one per line, each with why it cannot change behaviour. None
# today: every mutant of this code that compiles is caught.
EQUIVALENT=(
)

if ! cargo mutants --version >/dev/null 2>&1; then
    cargo install cargo-mutants --locked
fi

keep_target=${MUTANTS_TARGET_DIR:+yes}
target=${MUTANTS_TARGET_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcp-toolbelt-mutants.XXXXXX")}
mkdir -p "$target"
out=${MUTANTS_OUT:-target}
mkdir -p "$out"
if [[ -z $keep_target ]]; then
    trap 'rm -rf "$target"' EXIT
fi

registry_fns='Catalog::|ToolRegistryBuilder::(build|definitions)'
registry_fns+='|ToolRegistry::(set_enabled|enable|register|view|get|list_tools|call_tool)( |$)'

status=0
CARGO_TARGET_DIR=$target cargo mutants \
    --package mcp-toolbelt \
    --file mcp-tools/src/permissions.rs \
    --file mcp-tools/src/call/validate.rs \
    --file mcp-tools/src/registry.rs \
    --file mcp-tools/src/registry/admission.rs \
    --file mcp-tools/src/call/flat.rs \
    --file mcp-tools/src/call/json_schema/check.rs \
    --file mcp-tools/src/call/json_schema/compile.rs \
    --file mcp-tools/src/call/json_schema/format.rs \
    --file mcp-tools/src/call/json_schema/mod.rs \
    --file mcp-tools/src/call/json_schema/node.rs \
    --file mcp-tools/src/call/json_schema/value.rs \
    --re 'src/permissions\.rs:' \
    --re 'src/call/validate\.rs:' \
    --re 'src/registry/admission\.rs:' \
    --re 'src/call/flat\.rs:' \
    --re 'src/call/json_schema/(check|compile|format|mod|node|value)\.rs:' \
    --re "src/registry\.rs:.*($registry_fns)" \
    --jobs 1 \
    --minimum-test-timeout 60 \
    --output "$out" \
    "$@" \
    -- --lib --tests -- --skip uri_template:: || status=$?

for arg in "$@"; do
    if [[ $arg == --list* ]]; then
        exit "$status"
    fi
done
# cargo-mutants exits 2 when mutants survived and 3 when some timed out (a hang counts as
# caught); anything else but 0 is its own failure, e.g. 4: the unmutated tree fails.
case $status in
    0 | 2 | 3) ;;
    *) exit "$status" ;;
esac
missed="$out/mutants.out/missed.txt"
unexplained=$(sed -E 's/^[^ ]+:[0-9]+:[0-9]+: //' "$missed" | sort -u |
    grep -vxF -f <(printf '%s\n' "${EQUIVALENT[@]}" | sed '/^$/d') || true)
if [[ -n $unexplained ]]; then
    echo "Surviving mutants that are not explained as equivalent in scripts/mutants.sh:" >&2
    echo "$unexplained" >&2
    exit 1
fi
echo "Every surviving mutant is a known equivalent one (${#EQUIVALENT[@]} listed)."
