#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, golden, engine agreement).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
