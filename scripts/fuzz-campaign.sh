#!/usr/bin/env bash
# Coverage-guided fuzz campaigns of the targets in fuzz/ (bodies in tests/src/fuzz.rs),
# with libFuzzer built by the nightly toolchain directly (no cargo-fuzz needed): the same
# instrumentation cargo-fuzz uses (8-bit counters, PC table, compare tracing), no ASan
# (the code under test has no unsafe of its own), debug assertions and overflow checks on.
#
# Usage: scripts/fuzz-campaign.sh [SECONDS] [TARGET...]
#   SECONDS  per target (default 600); 0 builds only.
#   TARGET   names from fuzz/fuzz_targets/ (default: all of them).
# Environment:
# - FUZZ_JOBS: campaigns at once (default 2; each is one process).
# - FUZZ_BUILD_DIR: cargo's target directory for the instrumented build (default
#   ${CARGO_TARGET_DIR:-target}/fuzzbuild; a cold build takes 15-40 min on 2 busy cores).
# - FUZZ_WORK: where each campaign keeps its corpus, crashes and log (default
#   $FUZZ_BUILD_DIR/campaign). A campaign reads fuzz/corpus/TARGET as seeds and never
#   writes there; what it finds goes to $FUZZ_WORK/corpus/TARGET.
# - CARGO_NET_OFFLINE=true builds from the local registry cache only.
#
# Everything runs under `nice -n 19`, each campaign with -rss_limit_mb=2048 and -timeout=10
# (an input slower than 10 s is a finding). At the end a Markdown table: runs, exec/s, edges
# (libFuzzer's `cov`), features, peak RSS and findings per target. Exits 1 when a campaign
# found a crash, timeout or OOM; its input is in $FUZZ_WORK/artifacts/TARGET/. Reproduce
# one with `$FUZZ_BUILD_DIR/x86_64-unknown-linux-gnu/release/TARGET FILE`, shrink it with
# `... -minimize_crash=1 -runs=20000 FILE`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/fuzz"

seconds="${1:-600}"
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for file in fuzz_targets/*.rs; do
        targets+=("$(basename "$file" .rs)")
    done
fi
for target in "${targets[@]}"; do
    [ -f "fuzz_targets/$target.rs" ] || { echo "no fuzz target $target" >&2; exit 2; }
done

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz-campaign: libFuzzer instrumentation needs the nightly toolchain" \
        "(rustup toolchain install nightly)" >&2
    exit 2
fi

build_dir="${FUZZ_BUILD_DIR:-${CARGO_TARGET_DIR:-$root/target}/fuzzbuild}"
work="${FUZZ_WORK:-$build_dir/campaign}"
jobs_at_once="${FUZZ_JOBS:-2}"
triple=x86_64-unknown-linux-gnu
mkdir -p "$work"

# The workspace's versions (fuzz/ is a workspace of its own; its lock is git-ignored).
cp "$root/Cargo.lock" Cargo.lock
# `--target` keeps the instrumentation off build scripts and proc macros.
echo "fuzz-campaign: building ${targets[*]} in $build_dir" >&2
bins=()
for target in "${targets[@]}"; do
    bins+=(--bin "$target")
done
CARGO_TARGET_DIR="$build_dir" \
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions \
-Coverflow-checks" \
    nice -n 19 cargo +nightly build --release --target "$triple" "${bins[@]}"
[ "$seconds" -gt 0 ] || exit 0

campaign() {
    local target="$1"
    local corpus="$work/corpus/$target" artifacts="$work/artifacts/$target/"
    mkdir -p "$corpus" "$artifacts"
    local started=$SECONDS
    # The first directory receives what the campaign finds; the seeds are read only.
    nice -n 19 "$build_dir/$triple/release/$target" "$corpus" "$root/fuzz/corpus/$target" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$artifacts" -print_final_stats=1 \
        >"$work/$target.log" 2>&1 || true
    echo $((SECONDS - started)) >"$work/$target.seconds"
}

for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do
        wait -n || true
    done
    echo "fuzz-campaign: $target for ${seconds}s ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))" >&2
    campaign "$target" &
done
wait

found=0
echo
echo "| target | seconds | runs | exec/s | edges (cov) | features (ft) | peak RSS MB | findings |"
echo "|---|---|---|---|---|---|---|---|"
for target in "${targets[@]}"; do
    log="$work/$target.log"
    final_stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
    last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
    findings="$(find "$work/artifacts/$target" -type f | wc -l)"
    [ "$findings" -eq 0 ] || found=1
    echo "| $target | $(cat "$work/$target.seconds") | $(final_stat number_of_executed_units)" \
        "| $(final_stat average_exec_per_sec) | $cov | $ft | $(final_stat peak_rss_mb) | $findings |"
done
exit "$found"
