#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of two selections of mcp-toolbelt, chosen with
# MUTANTS_SELECTION:
# - `access` (default): the code that decides who sees and calls which tool: permission
#   sets (permissions.rs), admission (registry/admission.rs), visibility in the registry and
#   its per-caller views (registry.rs: the catalog, build, register, enable, views), and
#   argument validation (call/validate.rs). 111 mutants.
# - `validator`: the JSON Schema validator arguments go through (call/json_schema/: compile,
#   check, formats, values, nodes; call/flat.rs). 781 mutants: about two hours on a quiet
#   2-core machine, so it is its own run.
# Each mutant is built and the mcp-toolbelt unit and integration tests run against it. Left
# out: doctests (each mutant would compile dozens of standalone doctest crates) and the
# uri_template unit tests (they never reach this code, and their pathological-input test
# alone takes ~15 s here).
#
# Fails when a mutant survives that is not in EQUIVALENT below: every entry there is a
# mutant no test can kill because the program behaves the same, with the reason.
#
# Not part of scripts/test.sh: it builds mcp-toolbelt once per mutant. Last runs (shared
# 2-core machine, cargo-mutants 27.1.0):
# - access, 2026-11-28 (beside the validator run): 111 mutants in 41 min, 87 caught,
#   24 unviable, 0 missed. (2026-11-27: 105, 84 caught, 21 unviable, 0 missed; before the
#   registry test of issue 34 it had 3 missed: LazyValidator::problem replaced by None,
#   Some("") and Some("xyzzy").)
# - validator, complete as of 2026-11-28: all 781 mutants, 741 caught, 6 timeouts (hangs,
#   which count as caught), 23 unviable, 11 missed, each listed in EQUIVALENT. Run in
#   parts: 137 on 2026-11-27 (5 missed, then killed or listed), then with `--iterate` the
#   650 not yet caught or unviable, with the unit tests only (`-C --lib`, a subset of what
#   the script runs, so stricter; about 10 s a mutant instead of 15): 63 missed, 6 timeouts.
#   After the json_schema tests added then (messages cut at their limits, older drafts'
#   forms, anchors, formats' edges, quoted e-mail local parts, IPvFuture hosts, template
#   escapes) those 69 were run again: 52 caught, 6 hang, 11 missed, the listed
#   equivalents. To go on after a change: the
#   same MUTANTS_OUT with `--iterate` (it skips what was caught or unviable).
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
# file:line:col prefix), one per line, each with why it cannot change behaviour.
EQUIVALENT=(
    # types() sets a bit only after checking it is not set yet (bits & next == 0), so
    # `bits | next` and `bits ^ next` are the same number.
    'replace | with ^ in types'
    # The same in json_schema/node.rs: Types::with's one caller (compile.rs, types()) adds a
    # bit only after has_any said it is not set.
    'replace | with ^ in Types::with'
    # string(): a long text is copied only up to SHOWN_BYTES + 8 bytes before `shown` cuts
    # it to SHOWN_BYTES and says so; copying up to SHOWN_BYTES * 8 bytes gives the same
    # message (only a larger copy).
    "replace + with * in Checker<'_>::string"
    # string(): the copy's end moves back to a character boundary; moving it forward instead
    # copies one character more, which `shown` cuts off again (the copy is longer than
    # SHOWN_BYTES either way).
    "replace -= with += in Checker<'_>::string"
    # oneOf stops at the second branch that passes only to save work: the outcome (valid
    # under more than one) and its message are the same however many branches pass, and the
    # branch remembered for unevaluated* is used only when exactly one passed.
    "replace > with < in Checker<'_>::in_place"
    # all_distinct: up to 16 items are compared pairwise, more through their canonical texts;
    # both decide the same (value.rs's equality_and_canonical_text_agree), only the cost
    # differs, so swapping which size gets which is not observable but in time.
    'replace <= with > in all_distinct'
    # pointer(): escaping a key that holds neither `~` nor `/` changes nothing; the guard
    # only skips two allocations.
    "replace match guard key.contains(['~', '/']) with true in pointer"
    # shown_items/shown_map take the first SHOWN_BYTES / 2 items (/ 4 entries) before
    # serializing: those already make more than SHOWN_BYTES bytes (an item is at least one
    # byte and a comma, an entry `"":0,`), so taking more shows the same first bytes.
    'replace / with * in shown_items'
    'replace / with * in shown_map'
    # reference(): with no root `$id` the base is empty, and stripping an empty prefix gives
    # the reference back unchanged, which is what the other arm takes.
    "replace match guard !self.base.is_empty() with true in Compiler<'s>::reference"
    # value.rs canonical(): a whole float below 1e38 is written as an integer (so 1.0 and 1
    # read alike); at exactly 1e38 the i128 text and serde_json's "1e38" are both
    # consistent, as every value equal to it is that same f64 (no integer type reaches it).
    'replace < with <= in canonical'
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

# The selection: `access` (default) is who sees and calls which tool; `validator` is the
# JSON Schema validator the arguments go through (call/json_schema/, call/flat.rs).
selection=${MUTANTS_SELECTION:-access}
case $selection in
    access)
        files=(permissions.rs call/validate.rs registry.rs registry/admission.rs)
        filters=(
            'src/permissions\.rs:'
            'src/call/validate\.rs:'
            'src/registry/admission\.rs:'
            "src/registry\.rs:.*($registry_fns)"
        )
        ;;
    validator)
        files=(call/flat.rs)
        for module in check compile format mod node value; do
            files+=("call/json_schema/$module.rs")
        done
        filters=('src/call/flat\.rs:' 'src/call/json_schema/(check|compile|format|mod|node|value)\.rs:')
        ;;
    *)
        echo "MUTANTS_SELECTION must be access or validator, not $selection" >&2
        exit 2
        ;;
esac
args=()
for file in "${files[@]}"; do
    args+=(--file "mcp-tools/src/$file")
done
for filter in "${filters[@]}"; do
    args+=(--re "$filter")
done

status=0
CARGO_TARGET_DIR=$target cargo mutants \
    --package mcp-toolbelt \
    "${args[@]}" \
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
