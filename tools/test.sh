#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, golden, engine agreement).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
# The Rust-box examples check their own results (assertions) and must run as written.
cargo run --release -q -p snet --example mandelbrot -- --engine threads > /dev/null
cargo run --release -q -p snet --example wordstats > /dev/null
