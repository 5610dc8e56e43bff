#!/usr/bin/env bash
# Runs the unit tests of the parts Miri can execute (deque, join counter, mailbox;
# fibers need inline assembly and stacks need mmap guard pages, which Miri cannot run).
# Needs a nightly toolchain with the miri and rust-src components.
set -euo pipefail
cd "$(dirname "$0")/../.."
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri"
cargo +nightly miri test -p snet-forkjoin --lib -- deque latch mailbox stack "$@"
