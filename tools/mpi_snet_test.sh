#!/usr/bin/env bash
# `snet run --distrib mpi` under mpirun (spec §16): placed programs give the output of
# one process on 2-5 ranks, C boxes see node_location = rank, and faults (a box that
# crashes on node 2, a rank killed with SIGKILL, an `!@` value that names no node, a
# rank running another program) end every process quickly, non-zero, with a message.
# Needs Open MPI and libclang (see tools/mpi_test.sh). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p snet --features mpi
snet="${CARGO_TARGET_DIR:-target}/release/snet"
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi=(timeout 120 mpirun --oversubscribe)
d=tests/dist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "mpi_snet_test.sh: $*" >&2; exit 1; }
# The records of an output, one per line, sorted (replicas run in parallel).
recs() { tr -d '\n' < "$1" | sed 's/<record/\n<record/g' | grep 'type="data"' | sort; }

echo "== placed programs: one process vs mpirun -n 2..5"
"$snet" run "$d/chain.snet" -i "$d/chain.xml" -o "$tmp/chain1.xml"
for n in 2 3 4 5; do
    [ "$n" -ge 3 ] && {
        "${mpi[@]}" -n "$n" "$snet" run --distrib mpi "$d/chain.snet" -i "$d/chain.xml" -o "$tmp/chain.xml" --stats 2> "$tmp/err" \
            || { cat "$tmp/err" >&2; fail "chain on $n ranks"; }
        diff <(recs "$tmp/chain1.xml") <(recs "$tmp/chain.xml") > /dev/null || fail "chain on $n ranks: output differs"
        grep -q "node 2: .*records sent [1-9]" "$tmp/err" || fail "chain on $n ranks: nothing ran on node 2"
    }
    "$snet" run "$d/split.snet" -i "$d/split$n.xml" -o "$tmp/split1.xml"
    "${mpi[@]}" -n "$n" "$snet" run --distrib mpi "$d/split.snet" -i "$d/split$n.xml" -o "$tmp/split.xml" 2> "$tmp/err" \
        || { cat "$tmp/err" >&2; fail "split on $n ranks"; }
    diff <(recs "$tmp/split1.xml") <(recs "$tmp/split.xml") > /dev/null || fail "split on $n ranks: output differs"
    echo "ok: $n ranks"
done

echo "== every engine: mpirun -n 3"
for e in seq lpel threads; do
    for p in chain split; do
        in="$d/$p.xml"; [ "$p" = split ] && in="$d/split3.xml"
        "$snet" run "$d/$p.snet" -i "$in" -o "$tmp/${p}1.xml"
        "${mpi[@]}" -n 3 "$snet" run --engine "$e" -w 2 --distrib mpi "$d/$p.snet" -i "$in" -o "$tmp/$p.xml" 2> "$tmp/err" \
            || { cat "$tmp/err" >&2; fail "$p on the $e engine"; }
        diff <(recs "$tmp/${p}1.xml") <(recs "$tmp/$p.xml") > /dev/null || fail "$p on the $e engine: output differs"
    done
    echo "ok: $e"
done

echo "== C boxes: node_location is the rank"
w=examples/dist/where
"${mpi[@]}" -n 3 "$snet" run --distrib mpi "$w/where.snet" "$w/where.c" -i "$w/input.xml" -o "$tmp/where.xml" 2> "$tmp/err" \
    || { cat "$tmp/err" >&2; fail "where on 3 ranks"; }
diff <(recs "$w/expected-3-nodes.xml") <(recs "$tmp/where.xml") || fail "where: node_location is not the rank"

# A fault must end the whole job within 10 s, non-zero, naming the node and the cause.
fault() {
    local what=$1 want=$2; shift 2
    local start rc took
    start=$(date +%s)
    set +e
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    set -e
    took=$(( $(date +%s) - start ))
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 10 ] \
        || { cat "$tmp/err" >&2; fail "$what: status $rc after ${took}s (want non-zero within 10 s)"; }
    grep -Eq "$want" "$tmp/err" || { cat "$tmp/err" >&2; fail "$what: no message matching '$want'"; }
    echo "ok: $what (status $rc after ${took}s)"
}
echo "== faults"
fault "a box crashing on node 2" 'node 2: box .crash. crashed: SIGSEGV' \
    "${mpi[@]}" -n 3 "$snet" run --distrib mpi "$d/crash.snet" "$d/crash.c" -i "$d/k.xml"
fault "an !@ value naming no node" 'index value 7.*2 nodes' \
    "${mpi[@]}" -n 2 "$snet" run --distrib mpi "$d/split.snet" -i "$d/bad_tag.xml"
fault "a placement beyond the ranks" 'node 2 does not exist' \
    "${mpi[@]}" -n 2 "$snet" run --distrib mpi "$d/chain.snet" -i "$d/chain.xml"
fault "ranks running different programs" 'fingerprints differ' \
    timeout 120 mpirun --oversubscribe -n 2 "$snet" run --distrib mpi "$d/split.snet" -i "$d/split2.xml" \
    : -n 1 "$snet" run --distrib mpi "$d/chain.snet" -i "$d/chain.xml"
# SIGKILL of rank 1 while the run waits for input that never ends.
mkfifo "$tmp/never"
( sleep 600 > "$tmp/never" ) &
holder=$!
start=$(date +%s)
set +e
timeout 60 mpirun --oversubscribe -n 3 "$snet" run --distrib mpi "$d/split.snet" -i "$tmp/never" > /dev/null 2> "$tmp/err" &
job=$!
sleep 3
victim=$(pgrep -f "^$snet run --distrib mpi $d/split.snet" | sed -n 2p)
[ -n "$victim" ] && kill -9 "$victim"
wait "$job"
rc=$?
set -e
kill "$holder" 2>/dev/null || true
took=$(( $(date +%s) - start - 3 ))
[ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 10 ] \
    || { cat "$tmp/err" >&2; fail "a killed rank: status $rc after ${took}s"; }
grep -Eiq "signal 9|killed" "$tmp/err" || { cat "$tmp/err" >&2; fail "a killed rank: no message"; }
echo "ok: a rank killed with SIGKILL (status $rc after ${took}s)"
echo "mpi_snet_test.sh: all distributed snet tests passed"
