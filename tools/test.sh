#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, golden, engine agreement, the
# guide's shell blocks, doc tests) and the Rust-box examples.
#
#   bash tools/test.sh          # the tests (README: the time it takes here)
#   bash tools/test.sh --full   # also loom's interleavings and the mutation campaign
#                               # (what .ci/run runs)
#
# Built with the `fast` profile (Cargo.toml: release optimisation, no fat LTO) into
# target/fast; each crate's integration tests are one binary (tests/all.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
for arg in "$@"; do
    case $arg in
        --full) full=1 ;;
        *) echo "usage: bash tools/test.sh [--full]" >&2; exit 2 ;;
    esac
done
cargo test --workspace --profile fast
# The Rust-box examples check their own results (assertions) and must run as written.
cargo run --profile fast -q -p snet --example mandelbrot -- --engine threads > /dev/null
cargo run --profile fast -q -p snet --example wordstats > /dev/null
[ "$full" -eq 1 ] || exit 0
# Exhaustive interleaving tests (loom) of the lock-free protocols: FRONT's licences,
# ownership and sleep, the fork-join deque and join, LPEL's streams and mailbox.
# cfg(loom) rebuilds every dependency, hence a target directory of its own.
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom" \
    cargo test --profile fast --lib -p snet-front -p snet-forkjoin -p snet-lpel
# A bounded mutation campaign (programs through `snet check`, records through
# `snet run`): no panic, no hang, no silently lost record (tools/fuzz_campaign.sh), on
# the snet binary the tests above built. A fixed seed, whose cases were run well past
# this budget when it was set, so that the test command (and CI) passes or fails with
# the code, not the day; `bash tools/fuzz_campaign.sh 90` alone explores the day's seed.
if command -v python3 >/dev/null 2>&1; then
    SNET="${CARGO_TARGET_DIR:-target}/fast/snet" bash tools/fuzz_campaign.sh \
        "${SNET_FUZZ_SECONDS:-90}" "${SNET_FUZZ_SEED:-20261129}"
else
    echo "note: python3 not found: the mutation campaign (tools/fuzz_campaign.sh) was not run; apt-get install python3" >&2
fi
