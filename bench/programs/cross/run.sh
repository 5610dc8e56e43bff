#!/usr/bin/env bash
# Cost of a node crossing and of a compute-bound !@ split over 1 and 2 MPI processes
# (issue 23's benchmarks). Needs a snet built with --features mpi (SNET=path, default
# target/release/snet) and Open MPI. Prints one line per measurement.
set -euo pipefail
cd "$(dirname "$0")"
snet=${SNET:-../../../target/release/snet}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
gen() { # gen SIZE COUNT > file
    python3 -c "
import sys
R='<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" interface=\"C4SNet\"><tag label=\"size\">%d</tag></record>\n' % $1
sys.stdout.write('<?xml version=\"1.0\" ?>\n' + R * $2 + '<record type=\"terminate\" />\n')"
}
best() { # best RUNS CMD... : the minimum wall time in seconds
    local runs=$1; shift; local best=
    for _ in $(seq "$runs"); do
        local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
        best=$(python3 -c "t=$t1-$t0; b='$best'; print(min(t, float(b)) if b else t)")
    done
    echo "$best"
}
"$snet" run cross.snet cross.c -i /dev/null > /dev/null 2>&1 || true   # compile the boxes once
# mpirun's own start and end (an empty input), subtracted from the MPI runs: with
# 20 000 records it was most of what the crossing figure measured.
printf '<?xml version="1.0" ?>\n<record type="terminate" />\n' > "$tmp/empty.xml"
startup=$(best 3 mpirun --oversubscribe -n 2 "$snet" run -w 1 --distrib mpi cross.snet cross.c -i "$tmp/empty.xml" -o /dev/null)
echo "mpirun -n 2 with an empty input: ${startup} s (subtracted below)"
for spec in "100 200000" "1048576 400"; do
    set -- $spec; size=$1; n=$2
    gen "$size" "$n" > "$tmp/in.xml"
    one=$(best 3 "$snet" run -w 1 cross.snet cross.c -i "$tmp/in.xml" -o /dev/null)
    loc=$(best 3 "$snet" run -w 1 --distrib local:2 cross.snet cross.c -i "$tmp/in.xml" -o /dev/null)
    mpi=$(best 3 mpirun --oversubscribe -n 2 "$snet" run -w 1 --distrib mpi cross.snet cross.c -i "$tmp/in.xml" -o /dev/null)
    mpi=$(python3 -c "print($mpi - $startup)")
    python3 -c "
one,loc,mpi,n,size=$one,$loc,$mpi,$n,$size
for name,t in (('local',loc),('mpi',mpi)):
    per=(t-one)/n/2
    print(f'crossing {name:5} field {size:>8} B: {per*1e6:8.1f} us/record, {size/per/1e6 if per>0 else float(\"inf\"):8.1f} MB/s  (one process {one:.3f} s, distributed {t:.3f} s, {n} records, 2 crossings each)')"
done
# fan split over nodes: `work !@ <T>` with T in 0..1 (BENCHMARKS.md fan, ~50 us box).
fan=../fan
python3 ../../gen.py fan 100000 2 > "$tmp/fan.xml"
sed 's/work ! <T>/work !@ <T>/; s/^net fan /net fanat /' "$fan/fan.snet" > "$tmp/fanat.snet"
one=$(best 3 mpirun --oversubscribe -n 1 "$snet" run -w 1 --distrib mpi "$tmp/fanat.snet" "$fan/work.c" -i "$tmp/fan.xml" -o /dev/null)
two=$(best 3 mpirun --oversubscribe -n 2 "$snet" run -w 1 --distrib mpi "$tmp/fanat.snet" "$fan/work.c" -i "$tmp/fan.xml" -o /dev/null)
python3 -c "print(f'fan 100000 over !@: 1 process {$one:.3f} s, 2 processes {$two:.3f} s, speed-up {$one/$two:.2f}x')"
