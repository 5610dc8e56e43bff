#!/usr/bin/env bash
# The S-Net benchmark suite of BENCHMARKS.md §1 in one command: builds the release
# binary, then runs bench/run.py (outputs checked before timing; table printed and
# written to $TMPDIR/snet-bench-run.md, or run.py's --out FILE; figures worth keeping go
# into bench/RESULTS.md by hand).
# Arguments go to run.py, e.g. `bench/run.sh --runs 3 deep10000 fibtree25`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p snet
exec python3 bench/run.py --snet "${CARGO_TARGET_DIR:-target}/release/snet" "$@"
