#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, golden, engine agreement).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
# The Rust-box examples check their own results (assertions) and must run as written.
cargo run --release -q -p snet --example mandelbrot -- --engine threads > /dev/null
cargo run --release -q -p snet --example wordstats > /dev/null
# Exhaustive interleaving tests (loom) of the lock-free protocols: FRONT's licences,
# ownership and sleep, the fork-join deque and join, LPEL's streams and mailbox.
# cfg(loom) rebuilds every dependency, hence a target directory of its own.
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom" \
    cargo test --release --lib -p snet-front -p snet-forkjoin -p snet-lpel
# A bounded mutation campaign (programs through `snet check`, records through
# `snet run`): no panic, no hang, no silently lost record (tools/fuzz_campaign.sh).
if command -v python3 >/dev/null 2>&1; then
    bash tools/fuzz_campaign.sh "${SNET_FUZZ_SECONDS:-90}"
else
    echo "note: python3 not found: the mutation campaign (tools/fuzz_campaign.sh) was not run; apt-get install python3" >&2
fi
