#!/usr/bin/env bash
# `snet run --distrib mpi` under mpirun (spec §16): placed programs give the output of
# one process on 2-5 ranks, C boxes see node_location = rank, and faults (a box that
# crashes on node 2, a rank killed with SIGKILL, an `!@` value that names no node, a
# rank running another program) end every process quickly, non-zero, with a message.
# Needs Open MPI and libclang (see tools/mpi_test.sh). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# Built with the tests' `fast` profile (no fat LTO) unless SNET_PROFILE says otherwise.
profile=${SNET_PROFILE:-fast}
cargo build --profile "$profile" -q -p snet --features mpi
dir=$profile; [ "$profile" = dev ] && dir=debug
snet="${CARGO_TARGET_DIR:-target}/$dir/snet"
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi=(timeout 300 mpirun --oversubscribe)
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

# Scale (issue 32): more than 2^16 records in flight to one rank were delivered out of
# order or hung. 10^6 records (SNET_MPI_RECORDS) through a one-hop pipeline (2 ranks) and a 3-node C-box
# pipeline, 5 runs each: complete, in input order, every record counted.
echo "== scale: 10^6 records, 5 runs each"
N=${SNET_MPI_RECORDS:-1000000}
python3 - "$N" "$tmp/big.xml" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write('<?xml version="1.0" ?>\n')
    f.write("".join(f'<record type="data" mode="textual"><tag label="n">{i}</tag></record>\n' for i in range(n)))
    f.write('<record type="terminate" />\n')
PY
cat > "$tmp/hop.snet" <<'SNET'
net hop connect [{<n>} -> {<n = n + 1>}] .. ([{<n>} -> {<n>}] @ 1);
SNET
cat > "$tmp/pipe3.snet" <<'SNET'
<metadata><boxdefault><interface value="C4SNet"/></boxdefault></metadata>
net pipe3 {
    box add1((<n>) -> (<n>));
    box add2((<n>) -> (<n>));
} connect (add1 @ 1) .. (add2 @ 2) .. [{<n>} -> {<n = n - 3>}];
SNET
cat > "$tmp/pipe3.c" <<'C'
#include "C4SNet.h"
void *add1(void *hnd, int n) { C4SNetOut(hnd, 1, n + 1); return hnd; }
void *add2(void *hnd, int n) { C4SNetOut(hnd, 1, n + 2); return hnd; }
C
# The n tags of an output, one per line.
tags() { grep -o 'label="n">[-0-9]*' "$1" | cut -d'>' -f2; }
seq 1 "$N" > "$tmp/want_hop"
seq 0 $((N - 1)) > "$tmp/want_pipe3"
for run in 1 2 3 4 5; do
    for p in hop pipe3; do
        n=2; src=(); [ "$p" = pipe3 ] && { n=3; src=("$tmp/pipe3.c"); }
        start=$(date +%s%N)
        "${mpi[@]}" -n "$n" "$snet" run --distrib mpi "$tmp/$p.snet" "${src[@]}" -i "$tmp/big.xml" -o "$tmp/$p.out" --stats 2> "$tmp/err" \
            || { cat "$tmp/err" >&2; fail "$p on $n ranks, run $run"; }
        took=$(( ($(date +%s%N) - start) / 1000000 ))
        tags "$tmp/$p.out" | cmp -s - "$tmp/want_$p" || fail "$p on $n ranks, run $run: records lost, duplicated or out of order"
        grep -q "balance .*(ok)" "$tmp/err" || { cat "$tmp/err" >&2; fail "$p: the record balance (totals of every node) is not ok"; }
        echo "ok: $p, $N records on $n ranks, run $run: complete and in order (${took} ms)"
    done
done

echo "== only node 0 does global I/O"
# A FIFO input is read once, by node 0 (other ranks opening it stole records).
mkfifo "$tmp/fifo"
head -1001 "$tmp/big.xml" > "$tmp/k1000.xml"; echo '<record type="terminate" />' >> "$tmp/k1000.xml"
( cat "$tmp/k1000.xml" > "$tmp/fifo" ) &
"${mpi[@]}" -n 2 "$snet" run --distrib mpi "$tmp/hop.snet" -i "$tmp/fifo" -o "$tmp/fifo.out" 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "FIFO input"; }
[ "$(tags "$tmp/fifo.out" | wc -l)" -eq 1000 ] || fail "FIFO input: $(tags "$tmp/fifo.out" | wc -l) of 1000 records"
echo "ok: a FIFO input, every record"
# The output to a TCP peer: one connection (node 0's), the whole output.
python3 - "$tmp/tcp.out" > "$tmp/port" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
print(s.getsockname()[1], flush=True)
s.settimeout(60)
c, _ = s.accept()
data = b""
while True:
    b = c.recv(65536)
    if not b: break
    data += b
open(sys.argv[1], "wb").write(data)
PY
listener=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
"${mpi[@]}" -n 3 "$snet" run --distrib mpi "$tmp/hop.snet" -i "$tmp/k1000.xml" -O "127.0.0.1:$(cat "$tmp/port")" 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "-O output"; }
wait "$listener"
[ "$(tags "$tmp/tcp.out" | wc -l)" -eq 1000 ] || fail "-O output: $(tags "$tmp/tcp.out" | wc -l) of 1000 records"
echo "ok: -O HOST:PORT, the whole output on one connection"

echo "== observers and traces of every node"
cat > "$tmp/obs.snet" <<SNET
<metadata><box name="add1"><observer /><observer_type value="after"/><observer_file value="$tmp/obs.log"/></box>
<box name="add2"><observer /><observer_type value="after"/><observer_file value="$tmp/obs.log"/></box>
<boxdefault><interface value="C4SNet"/></boxdefault></metadata>
net obs {
    box add1((<n>) -> (<n>));
    box add2((<n>) -> (<n>));
} connect (add1 @ 1) .. (add2 @ 2);
SNET
"${mpi[@]}" -n 3 "$snet" run --distrib mpi "$tmp/obs.snet" "$tmp/pipe3.c" -i "$tmp/k1000.xml" -o /dev/null --trace "$tmp/trace.json" --profile "$tmp/prof.json" 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "observers"; }
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
c = [b['calls'] for b in d['boxes']]
n = [[(x['node'], x['calls']) for x in b['nodes']] for b in d['boxes']]
sys.exit(0 if c == [1000, 1000] and n == [[(1, 1000)], [(2, 1000)]] else 'profile: calls %s on nodes %s, want [1000, 1000] on 1 and 2' % (c, n))" "$tmp/prof.json" || fail "--profile lacks another node's boxes"
[ "$(grep -c '<observer ' "$tmp/obs.log")" -eq 2000 ] || fail "file observer: $(grep -c '<observer ' "$tmp/obs.log") of 2000 reports"
for f in trace.json trace.node1.json trace.node2.json; do [ -s "$tmp/$f" ] || fail "no trace $f"; done
echo "ok: a file observer has every node's reports; one trace per node; the profile has every node's boxes"

# --progress on node 0 shows every node's boxes while the run goes on.
"${mpi[@]}" -n 3 "$snet" run --distrib mpi --progress "$tmp/pipe3.snet" "$tmp/pipe3.c" -i "$tmp/big.xml" -o /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "--progress"; }
grep -q "^progress: .*add1.*nodes busy: 0 [0-9]*%, 1 [0-9]*%, 2 [0-9]*%" "$tmp/err" || { cat "$tmp/err" >&2; fail "--progress does not show every node's boxes"; }
echo "ok: --progress on node 0 shows every node's boxes and busy share"

echo "== fingerprint: other compiler flags are another program"
fault "ranks compiling with other flags" 'fingerprints differ' \
    timeout 120 mpirun --oversubscribe -n 1 "$snet" run --distrib mpi "$tmp/pipe3.snet" "$tmp/pipe3.c" -i "$tmp/k1000.xml" -o /dev/null \
    : -n 2 "$snet" run --distrib mpi "$tmp/pipe3.snet" "$tmp/pipe3.c" --cflags "-DOTHER=1" -i "$tmp/k1000.xml" -o /dev/null

echo "== one rank runs every placement"
"${mpi[@]}" -n 1 "$snet" run --distrib mpi "$tmp/pipe3.snet" "$tmp/pipe3.c" -i "$tmp/k1000.xml" -o "$tmp/one.out" 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "-n 1 with @ 1, @ 2"; }
[ "$(tags "$tmp/one.out" | wc -l)" -eq 1000 ] || fail "-n 1: records lost"
echo "ok: mpirun -n 1 runs @ 1 and @ 2 on node 0"

echo "mpi_snet_test.sh: all distributed snet tests passed"
