#!/usr/bin/env bash
# Model-checks the lock-free leaf modules (deque, join counter, mailbox, the join
# hand-shake) with loom. Uses its own target dir: cfg(loom) rebuilds every dependency.
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
cargo test -p snet-forkjoin --profile fast --lib "$@"
