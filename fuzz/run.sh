#!/usr/bin/env bash
# Coverage-guided fuzzing of memprompt's pure-Rust core (cargo-fuzz / libFuzzer).
#
#   fuzz/run.sh SECONDS    build; replay the committed corpus (fuzz/corpus/<target>/) through
#                          every target; then fuzz each target for SECONDS / (number of targets)
#   fuzz/run.sh export     rewrite fuzz/replay/<target>.jsonl.gz from the committed corpus (for
#                          tests/test_fuzz_corpus.py, which replays it through Python and the reference)
#
# A target fails on a panic, a failed invariant (fuzz/src/check.rs, fuzz/src/targets.rs), an
# input that runs longer than 20 s, or more than 4 GB of memory; the script then exits non-zero
# and leaves the input in fuzz/artifacts/<target>/. New inputs found go to fuzz/.corpus-work/
# (not committed); to keep one, minimise it (`cargo fuzz tmin`) and copy it to fuzz/corpus/<target>/.
#
# Needs the stable Rust toolchain and Python 3 (the core links libpython, as `cargo test` does).
# cargo-fuzz is installed into ~/.cargo/bin when missing. No sanitizer (`-s none`): a sanitizer
# would need a nightly compiler. The core's only unsafe code is SIMD loads and stores in `text`,
# inside bounds its loops check. Debug assertions and overflow checks are on.
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$FUZZ_DIR")"
TARGETS=(compile git_memory skills tree_view prompt tool_rules)
CARGO_FUZZ_VERSION=0.13.2

cd "$ROOT"

if [[ "${1:-}" == "export" ]]; then
    cargo run --quiet --release --manifest-path fuzz/Cargo.toml --example export_corpus -- "$FUZZ_DIR"
    # Compressed (-n: no name or time stamp, so the same corpus gives the same bytes).
    for target in "${TARGETS[@]}"; do
        gzip -n -9 -f "fuzz/replay/$target.jsonl"
    done
    exit 0
fi

SECONDS_TOTAL="${1:?usage: fuzz/run.sh SECONDS | fuzz/run.sh export}"
PER_TARGET=$(( SECONDS_TOTAL / ${#TARGETS[@]} ))
(( PER_TARGET >= 1 )) || PER_TARGET=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz $CARGO_FUZZ_VERSION into ~/.cargo/bin"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

cargo fuzz build -s none
BIN="$FUZZ_DIR/target/$(rustc -vV | sed -n 's/^host: //p')/release"

status=0
for target in "${TARGETS[@]}"; do
    mkdir -p "fuzz/corpus/$target" "fuzz/.corpus-work/$target" "fuzz/artifacts/$target"
    options=(-rss_limit_mb=4096 -timeout=20 -artifact_prefix="fuzz/artifacts/$target/" -print_final_stats=1)

    # 1. Every committed input, once.
    echo "== $target: replaying $(find "fuzz/corpus/$target" -type f | wc -l) committed inputs"
    if ! "$BIN/$target" -runs=0 "${options[@]}" "fuzz/corpus/$target" > "fuzz/artifacts/$target/replay.log" 2>&1; then
        tail -n 40 "fuzz/artifacts/$target/replay.log"
        status=1
        continue
    fi

    # 2. Fuzz from the committed corpus; what is found goes to the work corpus only.
    echo "== $target: fuzzing for ${PER_TARGET}s"
    if ! "$BIN/$target" -max_total_time="$PER_TARGET" -max_len=4096 -len_control=0 "${options[@]}" \
        "fuzz/.corpus-work/$target" "fuzz/corpus/$target" > "fuzz/artifacts/$target/fuzz.log" 2>&1; then
        tail -n 40 "fuzz/artifacts/$target/fuzz.log"
        status=1
        continue
    fi
    grep -aE '^stat::number_of_executed_units|^Done' "fuzz/artifacts/$target/fuzz.log" | tr '\n' ' '
    echo
done

if (( status != 0 )); then
    echo "fuzzing found a failure: see fuzz/artifacts/<target>/ (crash-*, timeout-*, oom-*)" >&2
fi
exit "$status"
