#!/usr/bin/env bash
# Front-end benchmark: parse + check of a generated 10,000-line program.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p snet-lang --bench front_end "$@"
