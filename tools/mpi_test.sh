#!/usr/bin/env bash
# MPI tests of crates/snet-dist (spec §16): builds the MPI transport (cargo feature
# `mpi`; needs libopenmpi-dev, openmpi-bin, libclang-dev) and runs the mpi_ring example
# under mpirun with 2, 3 and 4 ranks (records of 100 B and 1 MiB around a ring, checked
# bit for bit; 64 MiB sent by every rank at once; idle CPU < 5 %), then checks that a
# rank that dies or aborts ends the whole job quickly with a non-zero status.
# Prints the RESULT lines (benchmark figures). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mpirun >/dev/null 2>&1; then
    echo "mpi_test.sh: mpirun not found (apt-get install libopenmpi-dev openmpi-bin libclang-dev)" >&2
    exit 1
fi
# The tests' `fast` profile (no fat LTO) unless SNET_PROFILE says otherwise.
profile=${SNET_PROFILE:-fast}
export SNET_PROFILE=$profile
dir=$profile; [ "$profile" = dev ] && dir=debug
cargo build --profile "$profile" -p snet-dist --features mpi --example mpi_ring
bin="${CARGO_TARGET_DIR:-target}/$dir/examples/mpi_ring"

mpirun_flags=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "== local transport, 3 ranks"
timeout 120 "$bin" local 3 | grep -E '^(RESULT|OK)'

for n in 2 3 4; do
    echo "== mpirun -n $n"
    out=$(timeout 120 mpirun "${mpirun_flags[@]}" -n "$n" "$bin" 2>&1) || {
        echo "$out" >&2
        echo "mpi_test.sh: mpi_ring failed with $n ranks" >&2
        exit 1
    }
    echo "$out" | grep -E '^(RESULT|OK)'
    echo "$out" | grep -qx "OK mpi $n ranks" || { echo "$out" >&2; echo "mpi_test.sh: no OK line" >&2; exit 1; }
done

# Faults: the job must end within 30 s and exit non-zero.
for how in die crash abort; do
    echo "== mpirun -n 3, last rank: $how"
    start=$(date +%s)
    set +e
    out=$(timeout 60 mpirun "${mpirun_flags[@]}" -n 3 "$bin" "$how" 2>&1)
    rc=$?
    set -e
    took=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$took" -gt 30 ]; then
        echo "$out" >&2
        echo "mpi_test.sh: '$how' ended with status $rc after ${took}s (want non-zero within 30 s)" >&2
        exit 1
    fi
    echo "job ended with status $rc after ${took}s"
done
# snet itself under mpirun: placed programs, node_location, faults.
bash tools/mpi_snet_test.sh
echo "mpi_test.sh: all MPI tests passed"
