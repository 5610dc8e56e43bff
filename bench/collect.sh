#!/usr/bin/env bash
# Assembles bench/RESULTS.md from the per-part result files (each benchmark command
# writes its own RESULTS-<part>.md; see the sections for the commands).
set -euo pipefail
cd "$(dirname "$0")"
{
    echo "# snet — benchmark results"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); commit $(git rev-parse --short HEAD)."
    echo "This machine is shared: while these figures were taken, other builds and benchmarks"
    echo "ran beside them (load averages from 2 to several thousand are recorded in the"
    echo "sections), so absolute times are noisy; ratios taken in the same run are the"
    echo "meaningful figures, as BENCHMARKS.md says."
    echo
    for part in targets record hostile dist snet front lpelengine fjfront c4snet io lang lpel forkjoin observe; do
        f="RESULTS-$part.md"
        [ -f "$f" ] || continue
        echo
        echo "---"
        echo
        sed 's/^# /## /' "$f"
    done
} > RESULTS.md
echo "wrote bench/RESULTS.md"
