#!/usr/bin/env bash
# Bounded mutation campaign (issue 24): mutated programs through `snet check`
# (tools/fuzz_front.py) and mutated record inputs through `snet run` on seq and on
# front with 2 workers (tools/fuzz_records.py). Each part stops starting new cases
# after its share of the time budget; every failure is printed with the input kept.
#
#   bash tools/fuzz_campaign.sh [SECONDS] [SEED]     (defaults: 90 s, today's date)
#
# Runs $SNET, else target/fast/snet (`bash tools/test.sh` builds it), else
# target/release/snet. Exits 1 if any case failed
# (a panic, a signal, a hang, a diagnostic without position, a lost record).
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-90}
seed=${2:-$(date +%Y%m%d)}
share=$((budget / 3))
target=${CARGO_TARGET_DIR:-target}
snet=${SNET:-$target/fast/snet}
if [ -z "${SNET:-}" ] && [ ! -x "$snet" ]; then
    snet=$target/release/snet
fi
echo "fuzz campaign: seed $seed, ${budget} s (rerun: bash tools/fuzz_campaign.sh $budget $seed)"
status=0
python3 tools/fuzz_front.py --snet "$snet" --seed "$seed" --cases 1000000 --seconds "$share" \
    --out "${TMPDIR:-/tmp}/snet-fuzz-front" || status=1
python3 tools/fuzz_records.py --snet "$snet" --seed "$seed" --cases 1000000 --seconds "$share" \
    --out "${TMPDIR:-/tmp}/snet-fuzz-records" || status=1
python3 tools/fuzz_records.py --snet "$snet" --seed "$((seed + 1))" --cases 1000000 --seconds "$share" \
    --engine front:2 --out "${TMPDIR:-/tmp}/snet-fuzz-records-front" || status=1
exit $status
