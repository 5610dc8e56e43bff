#!/usr/bin/env python3
"""Side-by-side comparison of two snet binaries on the benchmarks of bench/run.py, runs
interleaved (old, new, old, new, ...) so that both see the same machine load; prints the
minimum and median of each and the ratio new/old of the minima. Outputs are checked once
per binary and configuration.

usage: bench/ab.py OLD_SNET NEW_SNET [--runs N] [--engines seq,front,...] [--quick] [NAME ...]
(NAME as for bench/run.py; default: deep1000 deep10000 synchro10000 fibtree25 pipe1 pipe)
"""
import argparse
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('runpy_bench', os.path.join(HERE, 'run.py'))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--engines', default='seq,front,lpel')
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('names', nargs='*')
    a = ap.parse_args()
    names = a.names or ['deep1000', 'deep10000', 'synchro10000', 'fibtree25', 'pipe1', 'pipe']
    workdir = os.path.join(HERE, 'out')
    os.makedirs(workdir, exist_ok=True)
    mins = {}
    print(f'{"benchmark":14} {"engine":8} {"w":>2}  {"old min":>8} {"new min":>8} {"new/old":>7}  '
          f'{"old med":>8} {"new med":>8}')
    for name in names:
        prog, sources, inp, check = bench.config(name, workdir, a.quick)
        for engine in a.engines.split(','):
            for w in ([1] if engine == 'seq' else [1, 2]):
                out = os.path.join(workdir, f'check-{os.getpid()}.xml')
                for b in (a.old, a.new):
                    bench.run(b, prog, sources, inp, engine, w, out)
                    with open(out) as f:
                        check(bench.records(f.read()))
                t = {a.old: [], a.new: []}
                for _ in range(a.runs):
                    for b in (a.old, a.new):
                        t[b].append(bench.run(b, prog, sources, inp, engine, w, os.devnull))
                lo, ln = min(t[a.old]), min(t[a.new])
                mins[(name, engine, w)] = (lo, ln)
                print(f'{name:14} {engine:8} {w:>2}  {lo:8.3f} {ln:8.3f} {ln / lo:7.2f}  '
                      f'{statistics.median(t[a.old]):8.3f} {statistics.median(t[a.new]):8.3f}', flush=True)
    if 'pipe' in names and 'pipe1' in names:
        count = 100_000 if a.quick else 1_000_000
        print('\nmarginal cost of a hop, (pipe - pipe1) / (9 N), from the minima:')
        for (name, engine, w), (lo, ln) in mins.items():
            if name == 'pipe' and ('pipe1', engine, w) in mins:
                fo, fn = mins[('pipe1', engine, w)]
                print(f'  {engine:8} -w{w}: old {(lo - fo) / count / 9 * 1e9:6.1f} ns, '
                      f'new {(ln - fn) / count / 9 * 1e9:6.1f} ns')


if __name__ == '__main__':
    sys.exit(main())
