#!/usr/bin/env python3
"""S-Net benchmark driver (BENCHMARKS.md §1): whole process — parse the program, read
XML, run, write XML — for every engine at 1 and 2 workers, after checking each
configuration's output. Prints a table and writes it to --out (default
$TMPDIR/snet-bench-run.md; rows of earlier runs in that file are kept). Figures worth
keeping go into bench/RESULTS.md by hand.

usage: bench/run.py [--runs N] [--engines seq,threads,...] [--quick] [--out FILE] [NAME ...]
NAME: deep0 deep100 deep1000 deep10000 synchro100 synchro1000 synchro10000
      fibtree15 fibtree20 fibtree25 pipe1 pipe fan boxconc pipework
      (default: all but pipework, which takes about a minute per engine; --quick: 10^5
      records for pipe and pipework)
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, 'bench')
PROGS = os.path.join(BENCH, 'programs')
GEN = os.path.join(BENCH, 'gen.py')

# Classic runtime reference figures (BENCHMARKS.md §1): best of FRONT/LPEL/threads.
CLASSIC_BEST = {
    'deep0': 0.015, 'deep1000': 0.261, 'deep10000': 2.39, 'synchro10000': 0.975,
    'fibtree20': 0.059, 'fibtree25': 0.924,
}


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def records(text):
    """(fields, tags) of every data record in an output file."""
    out = []
    for m in re.finditer(r'<record xmlns="snet-home.org" type="data"[^>]*>(.*?)</record>', text, re.S):
        body = m.group(1)
        fields = dict(re.findall(r'<field label="([^"]+)"[^>]*>\(int\)(-?\d+)</field>', body))
        tags = dict(re.findall(r'<tag label="([^"]+)">(-?\d+)</tag>', body))
        out.append(({k: int(v) for k, v in fields.items()}, {k: int(v) for k, v in tags.items()}))
    return out


def config(name, workdir, quick):
    """(program, sources, input file, checker) for a benchmark name."""
    def gen(args, fname):
        path = os.path.join(workdir, fname)
        if not os.path.exists(path):
            with open(path, 'w') as f:
                subprocess.run([sys.executable, GEN] + args, stdout=f, check=True)
        return path
    m = re.fullmatch(r'deep(\d+)', name)
    if m:
        d = int(m.group(1))
        inp = gen(['deep', str(d)], f'deep{d}.xml')

        def check(recs):
            assert len(recs) == 1000, f'{len(recs)} records'
            assert all(f == {'B': 0} for f, _ in recs), 'every output is {B=0}'
        return (os.path.join(PROGS, 'deep', 'deep.snet'), [os.path.join(PROGS, 'deep', 'foo.c')], inp, check)
    m = re.fullmatch(r'synchro(\d+)', name)
    if m:
        n = int(m.group(1))
        inp = gen(['synchro', str(n)], f'synchro{n}.xml')

        def check(recs):
            assert len(recs) == 5 * n, f'{len(recs)} records'
            assert all(f['A'] == f['B'] for f, _ in recs), 'A == B in every pair'
        return (os.path.join(PROGS, 'synchro', 'synchro.snet'), [], inp, check)
    m = re.fullmatch(r'fibtree(\d+)', name)
    if m:
        n = int(m.group(1))
        inp = gen(['fibtree', str(n)], f'fibtree{n}.xml')

        def check(recs):
            assert [t.get('F') for _, t in recs] == [fib(n)], f'fib({n})'
        return (os.path.join(ROOT, 'examples', 'compute', 'fibtree', 'fibtree.snet'), [], inp, check)
    if name in ('pipe', 'pipe1'):
        # pipe: 10 identity boxes; pipe1: one (its time is the I/O and set-up floor, so
        # (pipe - pipe1) / (9 N) is the marginal cost of a hop).
        count = 100_000 if quick else 1_000_000
        k = 10 if name == 'pipe' else 1
        prog = os.path.join(workdir, f'pipe{k}.snet')
        if not os.path.exists(prog):
            with open(prog, 'w') as f:
                subprocess.run([sys.executable, GEN, 'pipe-program', str(k)], stdout=f, check=True)
        inp = gen(['pipe', str(count)], f'pipe{count}.xml')

        def check(recs):
            assert len(recs) == count, f'{len(recs)} records'
        return (prog, [os.path.join(PROGS, 'pipe', 'id.c')], inp, check)
    if name == 'pipework':
        # issue 26: 10 boxes in a row, each spinning about 1 us per record: the pipeline
        # parallelism a second worker gives (target >= 1.8x at 2 workers).
        count = 100_000 if quick else 1_000_000
        inp = gen(['pipe', str(count)], f'pipe{count}.xml')

        def check(recs):
            assert [f['A'] for f, _ in recs] == list(range(count)), 'input order kept'
        return (os.path.join(PROGS, 'pipework', 'pipework.snet'), [os.path.join(PROGS, 'pipework', 'work.c')],
                inp, check)
    if name == 'fan':
        count = 10_000
        inp = gen(['fan', str(count), '64'], 'fan.xml')

        def check(recs):
            assert len(recs) == count
        return (os.path.join(PROGS, 'fan', 'fan.snet'), [os.path.join(PROGS, 'fan', 'work.c')], inp, check)
    if name == 'boxconc':
        count = 10_000
        inp = gen(['fan', str(count), '64'], 'fan.xml')

        def check(recs):
            assert [f['A'] for f, _ in recs] == list(range(count)), 'input order kept'
        return (os.path.join(PROGS, 'boxconc', 'boxconc.snet'), [os.path.join(PROGS, 'fan', 'work.c')], inp, check)
    raise SystemExit(f'unknown benchmark {name}')


def run(snet, prog, sources, inp, engine, workers, out):
    extra = []
    m = re.fullmatch(r'front-bc(\d+)', engine)
    if m:
        # front with concurrent invocations of each box (seed 003 §4.7).
        engine, extra = 'front', ['--box-concurrency', m.group(1)]
    cmd = [snet, 'run', prog] + sources + ['-i', inp, '-o', out, '--engine', engine, '-w', str(workers)] + extra
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f'{" ".join(cmd)} failed:\n{r.stderr}')
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--engines', default=None)
    ap.add_argument('--quick', action='store_true', help='smaller pipe input')
    ap.add_argument('--slow', type=float, default=10.0,
                    help='a configuration whose checked run takes longer is timed only once')
    ap.add_argument('--snet', default=os.path.join(ROOT, 'target', 'release', 'snet'))
    ap.add_argument('--out', default=os.path.join(tempfile.gettempdir(), 'snet-bench-run.md'),
                    help='the table of this and earlier runs (default: $TMPDIR/snet-bench-run.md)')
    ap.add_argument('names', nargs='*')
    a = ap.parse_args()
    names = a.names or ['deep0', 'deep100', 'deep1000', 'deep10000', 'synchro100', 'synchro1000',
                        'synchro10000', 'fibtree15', 'fibtree20', 'fibtree25', 'pipe1', 'pipe', 'fan',
                        'boxconc']
    if a.engines:
        engines = a.engines.split(',')
    else:
        help_text = subprocess.run([a.snet, 'run', '--help'], capture_output=True, text=True).stdout
        engines = ['seq', 'threads', 'front', 'lpel']
        engines = [e for e in engines if subprocess.run(
            [a.snet, 'run', '/dev/null', '--engine', e], capture_output=True).returncode != 2]
        del help_text
    workdir = os.path.join(BENCH, 'out')
    os.makedirs(workdir, exist_ok=True)
    rows = []
    for name in names:
        prog, sources, inp, check = config(name, workdir, a.quick)
        base = None
        for engine in engines + (['front-bc2'] if name == 'boxconc' else []):
            for w in ([1] if engine == 'seq' else [1, 2]):
                out = os.path.join(workdir, 'check.xml')
                try:
                    first = run(a.snet, prog, sources, inp, engine, w, out)
                    with open(out) as f:
                        check(records(f.read()))
                    # Slow configurations (the thread-per-entity baseline on deep stars)
                    # are timed once: the checked run is the measurement.
                    runs = a.runs if first < a.slow else 0
                    times = [run(a.snet, prog, sources, inp, engine, w, os.devnull) for _ in range(runs)] or [first]
                except (RuntimeError, AssertionError) as e:
                    print(f'{name} {engine} -w{w}: FAILED: {e}', file=sys.stderr)
                    rows.append((name, engine, w, None, None))
                    continue
                med = statistics.median(times)
                if engine == 'seq':
                    base = med
                ratio = base / med if base else None
                rows.append((name, engine, w, med, ratio))
                extra = ''
                if name == 'pipe':
                    count = 100_000 if a.quick else 1_000_000
                    extra = f'  ({med / count / 10 * 1e9:.1f} ns/record/hop incl. I/O)'
                    floor = next((r[3] for r in rows if r[0] == 'pipe1' and r[1] == engine and r[2] == w
                                  and r[3] is not None), None)
                    if floor is not None:
                        extra += f', marginal {(med - floor) / count / 9 * 1e9:.1f} ns/hop vs pipe1'
                vs_seq = f'  x{ratio:5.2f} vs seq' if ratio is not None else ''
                print(f'{name:14} {engine:8} -w{w}  {med:8.3f} s{vs_seq}{extra}', flush=True)
    cpu = 'unknown'
    try:
        with open('/proc/cpuinfo') as f:
            cpu = next(l.split(':', 1)[1].strip() for l in f if l.startswith('model name'))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
    # Merge with the rows of earlier runs (keyed by benchmark, engine, workers), so that
    # runs of different benchmarks build up one table.
    path = a.out
    table = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip('|').split('|')]
                if len(cells) == 8 and cells[0] not in ('benchmark', '---'):
                    table[(cells[0], cells[1], cells[2])] = cells
    for name, engine, w, med, ratio in rows:
        cb = CLASSIC_BEST.get(name)
        when = time.strftime('%Y-%m-%d %H:%M')
        load = f'{os.getloadavg()[0]:.0f}'
        if med is None:
            table[(name, engine, str(w))] = [name, engine, str(w), 'FAILED', '', '', '', f'{commit} {when}']
            continue
        vs = f'{cb / med:.1f}x' if cb else ''
        # (No ratio when seq was not among the engines run.)
        rel = f'{ratio:.2f}' if ratio is not None else ''
        table[(name, engine, str(w))] = [name, engine, str(w), f'{med:.3f}', rel, str(cb or ''), vs,
                                         f'{commit} {when} load {load}']
    order = {n: i for i, n in enumerate(['deep0', 'deep100', 'deep1000', 'deep10000', 'synchro100', 'synchro1000',
                                         'synchro10000', 'fibtree15', 'fibtree20', 'fibtree25', 'pipe1', 'pipe',
                                         'fan', 'boxconc', 'pipework'])}
    eorder = {e: i for i, e in enumerate(['seq', 'threads', 'front', 'front-bc2', 'lpel'])}
    keys = sorted(table, key=lambda k: (order.get(k[0], 99), eorder.get(k[1], 9), k[2]))
    lines = [
        '# S-Net benchmarks (bench/run.py)', '',
        f'Machine: {os.cpu_count()} cores, {cpu}; {platform.system()} {platform.release()}. '
        'Whole process (parse, XML in, run, XML out to /dev/null), outputs checked before timing; '
        f'median of {a.runs} runs (configurations slower than {a.slow:.0f} s: the checked run). '
        '"speed vs seq" is the ratio to the seq engine in the same run; "classic best" is the best '
        'classic-runtime figure of BENCHMARKS.md §1. pipe: 10 identity C boxes, pipe1: one '
        '(the I/O floor; the marginal hop cost is (pipe - pipe1) / (9 x 10^6)); fan: 64 tag values, '
        'a C box spinning 50 us; boxconc: that box alone on the same input (output order checked), '
        'front-bc2 = front --box-concurrency 2. The last column records commit, time and load average '
        '(the machine is shared; high load makes wall times and 2-worker figures unreliable).', '',
        '| benchmark | engine | workers | median s | speed vs seq | classic best | vs classic | run |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for k in keys:
        lines.append('| ' + ' | '.join(table[k]) + ' |')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print(f'\nwritten to {path}')


if __name__ == '__main__':
    main()
