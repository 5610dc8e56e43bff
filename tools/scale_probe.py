#!/usr/bin/env python3
"""Scaling probe: runs S-Net workloads at sizes N, 2N, 4N, 8N on every engine and flags
performance pathologies.

For each workload and size it runs `snet run` under `/usr/bin/time` (wall time and peak
RSS) with `ulimit -v` and a timeout, compares every engine's output multiset (or order,
for deterministic workloads) with the `seq` engine's, and flags

  * GROWTH   time or peak RSS growing faster than ~linearly with N (fitted exponent),
  * SLOW     an engine >= 10x slower than seq on the same input,
  * FAIL     a crash, non-zero exit, timeout or wrong output.

Usage:
  tools/scale_probe.py                       # every workload
  tools/scale_probe.py fb_counter star_deep  # selected workloads (prefix match)
  tools/scale_probe.py -l                    # list workloads
  options: -e seq,front1,front2,lpel1,lpel2,threads2  engines (default: all six)
           -s 4        number of sizes (N, 2N, ...); -x 2.0 size factor; -b 1.0 scale
                       every workload's base size
           --stats     print the engines' --stats 'peak in flight' / 'entities created'
The binary is $CARGO_TARGET_DIR/release/snet (default /work/target-conf).
"""
import os, sys, math, subprocess, tempfile, time, re, collections, argparse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import snetx  # noqa: E402

SNET = os.path.join(os.environ.get('CARGO_TARGET_DIR', '/work/target-conf'), 'release', 'snet')
ENGINES = {
    'seq': ['--engine', 'seq'],
    'front1': ['--engine', 'front', '-w', '1'],
    'front2': ['--engine', 'front', '-w', '2'],
    'lpel1': ['--engine', 'lpel', '-w', '1'],
    'lpel2': ['--engine', 'lpel', '-w', '2'],
    'threads2': ['--engine', 'threads', '-w', '2'],
}

BOXES_C = r'''
#include <C4SNet.h>
#include <stdlib.h>
#include <string.h>

/* dec((<c>) -> (<c>) | (<done>)) */
void *dec(void *hnd, int c)
{
    if (c > 0) C4SNetOut(hnd, 1, c - 1); else C4SNetOut(hnd, 2, 1);
    return hnd;
}
/* fan((<k>) -> (<j>)): k records */
void *fan(void *hnd, int k)
{
    for (int j = 0; j < k; j++) C4SNetOut(hnd, 1, j);
    return hnd;
}
/* halve((<n>) -> (<n>) | (<leaf>)): n > 1 splits into two halves */
void *halve(void *hnd, int n)
{
    if (n > 1) { C4SNetOut(hnd, 1, n / 2); C4SNetOut(hnd, 1, n - n / 2); }
    else C4SNetOut(hnd, 2, 1);
    return hnd;
}
/* reload((<done>, <r>) -> (<c>, <r>) | (<fin>)) */
void *reload(void *hnd, int done, int r)
{
    (void)done;
    if (r > 0) C4SNetOut(hnd, 1, 3, r - 1); else C4SNetOut(hnd, 2, 1);
    return hnd;
}
/* outer((<done>, <r>) -> (<c>, <r>) | (<fin>)) */
void *outer(void *hnd, int done, int r)
{
    (void)done;
    if (r > 0) C4SNetOut(hnd, 1, 4, r - 1); else C4SNetOut(hnd, 2, 1);
    return hnd;
}
/* tpass((<k>) -> (<k>)) */
void *tpass(void *hnd, int k) { C4SNetOut(hnd, 1, k); return hnd; }
/* tinc((<k>) -> (<k>)) */
void *tinc(void *hnd, int k) { C4SNetOut(hnd, 1, k + 1); return hnd; }
/* fpass((x) -> (x)) */
void *fpass(void *hnd, c4snet_data_t *x) { C4SNetOut(hnd, 1, x); return hnd; }
/* mk((<sz>) -> (x)): int array of sz elements, x[i] = i */
void *mk(void *hnd, int sz)
{
    int *p;
    c4snet_data_t *d = C4SNetAlloc(CTYPE_int, sz, (void **)&p);
    for (int i = 0; i < sz; i++) p[i] = i;
    C4SNetOut(hnd, 1, d);
    return hnd;
}
/* sum((x) -> (<s>)) */
void *sum(void *hnd, c4snet_data_t *x)
{
    int *p = C4SNetGetData(x);
    size_t n = C4SNetArraySize(x);
    unsigned s = 0;
    for (size_t i = 0; i < n; i += 4096) s += (unsigned)p[i];
    s += (unsigned)n;
    C4SNetFree(x);
    C4SNetOut(hnd, 1, (int)(s & 0x7fffffff));
    return hnd;
}
/* mkfast((<sz>) -> (x)): int array of sz elements, all set to 1 (memset) */
void *mkfast(void *hnd, int sz)
{
    int *p;
    c4snet_data_t *d = C4SNetAlloc(CTYPE_int, sz, (void **)&p);
    memset(p, 1, (size_t)sz * sizeof(int));
    C4SNetOut(hnd, 1, d);
    return hnd;
}
/* slowsum((x) -> (<s>)): reads every element 8 times */
void *slowsum(void *hnd, c4snet_data_t *x)
{
    int *p = C4SNetGetData(x);
    size_t n = C4SNetArraySize(x);
    unsigned s = 0;
    for (int r = 0; r < 8; r++)
        for (size_t i = 0; i < n; i++) s += (unsigned)p[i] * (unsigned)(r + 1);
    C4SNetFree(x);
    C4SNetOut(hnd, 1, (int)(s & 0x7fffffff));
    return hnd;
}
/* mkpair((<k>) -> (a, <k>) | (b, <k>)): emits a and b for k */
void *mkpair(void *hnd, int k)
{
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &k), k);
    C4SNetOut(hnd, 2, C4SNetCreate(CTYPE_int, 1, &k), k);
    return hnd;
}
/* add((a, b) -> (<s>)) */
void *add(void *hnd, c4snet_data_t *a, c4snet_data_t *b)
{
    int s = *(int *)C4SNetGetData(a) + *(int *)C4SNetGetData(b);
    C4SNetFree(a); C4SNetFree(b);
    C4SNetOut(hnd, 1, s);
    return hnd;
}
'''

IN_HEAD = '<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
IN_TERM = '<record xmlns="snet-home.org" type="terminate"/>\n'


def rec(tags=(), fields=()):
    s = '<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">'
    for k, v in fields:
        s += '<field label="%s">%s</field>' % (k, v)
    for k, v in tags:
        s += '<tag label="%s">%d</tag>' % (k, v)
    return s + '</record>\n'


def ints(n, v=0):
    return '(int[%d])' % n + ','.join([str(v)] * n)


# ---- workloads: name -> (source, input(N) -> list of records, base N, ordered?, note) ----
def chain(n, stage):
    return ' .. '.join([stage] * n)


W = collections.OrderedDict()


def wl(name, base, ordered=False, engines=None, note=''):
    def deco(f):
        W[name] = dict(f=f, base=base, ordered=ordered, engines=engines, note=note)
        return f
    return deco


@wl('fb_many', 20000, note='N records circulating 10 rounds each in dec \\ {<c>}')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec \\ {<c>};',
            [rec([('c', 10), ('id', i)]) for i in range(n)])


@wl('fb_count', 100000, note='one record counting down N in dec \\ {<c>}')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec \\ {<c>};',
            [rec([('c', n)])])


@wl('fb_tree', 50000, note='halve \\ {<n>}: one record n=N splits into N leaves')
def _(n):
    return ('net p { box halve((<n>) -> (<n>) | (<leaf>)); } connect halve \\ {<n>};',
            [rec([('n', n)])])


@wl('fb_nested', 2000, note='((dec \\ {<c>}) .. reload) \\ {<c>}: N records x 10 outer x 4 inner')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); '
            'box reload((<done>, <r>) -> (<c>, <r>) | (<fin>)); } '
            'connect ((dec \\ {<c>}) .. reload) \\ {<c>};',
            [rec([('c', 3), ('r', 10), ('id', i)]) for i in range(n)])


@wl('star_records', 20000, note='dec * {<done>}: N records depth 10')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec * {<done>};',
            [rec([('c', 10), ('id', i)]) for i in range(n)])


@wl('star_depth', 5000, note='dec * {<done>}: 4 records depth N')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec * {<done>};',
            [rec([('c', n), ('id', i)]) for i in range(4)])


@wl('dstar_depth', 5000, ordered=True, note='dec ** {<done>}: 4 records depth N')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec ** {<done>};',
            [rec([('c', n), ('id', i)]) for i in range(4)])


@wl('dstar_records', 20000, ordered=True, note='dec ** {<done>}: N records, depth id%8')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec ** {<done>};',
            [rec([('c', i % 8), ('id', i)]) for i in range(n)])


@wl('star_star', 200, note='((dec*{<done>}) .. outer) * {<fin>}: 4 records, N outer x 4 inner')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); '
            'box outer((<done>, <r>) -> (<c>, <r>) | (<fin>)); } '
            'connect ((dec * {<done>}) .. outer) * {<fin>};',
            [rec([('c', 4), ('r', n), ('id', i)]) for i in range(4)])


@wl('star_in_split', 2000, note='(dec * {<done>}) ! <k>: N distinct k, depth 5')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect (dec * {<done>}) ! <k>;',
            [rec([('c', 5), ('k', i)]) for i in range(n)])


@wl('split_many', 10000, note='tpass ! <k>: N distinct k')
def _(n):
    return ('net p { box tpass((<k>) -> (<k>)); } connect tpass ! <k>;',
            [rec([('k', i)]) for i in range(n)])


@wl('dsplit_many', 10000, ordered=True, note='tpass !! <k>: N distinct k')
def _(n):
    return ('net p { box tpass((<k>) -> (<k>)); } connect tpass !! <k>;',
            [rec([('k', i)]) for i in range(n)])


@wl('dsplit_few', 50000, ordered=True, note='(tinc .. tinc) !! <g>: N records, 4 values of g')
def _(n):
    return ('net p { box tinc((<k>) -> (<k>)); } connect (tinc .. tinc) !! <g>;',
            [rec([('k', i), ('g', i % 4)]) for i in range(n)])


@wl('dpar', 50000, ordered=True, note='tinc || fpass: N records alternating branches')
def _(n):
    return ('net p { box tinc((<k>) -> (<k>)); box fpass((x) -> (x)); } connect tinc || fpass;',
            [rec([('k', i)]) if i % 2 else rec([('id', i)], [('x', '(int)%d' % i)])
             for i in range(n)])


@wl('sync_split', 5000, note='[|{a,<k>},{b,<k>}|] ! <k>: N a first, then N b')
def _(n):
    return ('net p connect [| {a, <k>}, {b, <k>} |] ! <k>;',
            [rec([('k', i)], [('a', '(int)1')]) for i in range(n)] +
            [rec([('k', i)], [('b', '(int)2')]) for i in range(n)])


@wl('sync_star', 10000, note='[|{a},{b}|] * {a,b}: N interleaved pairs a,b')
def _(n):
    r = []
    for i in range(n):
        r.append(rec([('i', i)], [('a', '(int)%d' % i)]))
        r.append(rec([], [('b', '(int)%d' % i)]))
    return 'net p connect [| {a, <i>}, {b} |] * {a, b};', r


@wl('sync_star_blocks', 2000, note='[|{a},{b}|] * {a,b}: N pairs in blocks of 8 a then 8 b')
def _(n):
    r = []
    for blk in range(0, n, 8):
        for i in range(blk, blk + 8):
            r.append(rec([('i', i)], [('a', '(int)%d' % i)]))
        for i in range(blk, blk + 8):
            r.append(rec([], [('b', '(int)%d' % i)]))
    return 'net p connect [| {a, <i>}, {b} |] * {a, b};', r


@wl('sync_state_fb', 5000, note='state idiom with feedback: ([|{s},{v}|] * {s,v} .. add) \\ {s}')
def _(n):
    return ('net p connect ([| {s}, {v} |] * {s, v} .. [{s, v} -> {s}; {out = v}]) \\ {s};',
            [rec([], [('s', '(int)0')])] + [rec([('i', i)], [('v', '(int)%d' % i)])
                                            for i in range(n)])


@wl('big_pipe', 4, note='mk .. fpass x10 .. sum: N records of 4 MB arrays')
def _(n):
    return ('net p { box mk((<sz>) -> (x)); box fpass((x) -> (x)); box sum((x) -> (<s>)); } '
            'connect mk .. %s .. sum;' % chain(10, 'fpass'),
            [rec([('sz', 1 << 20), ('id', i)]) for i in range(n)])


@wl('big_dup', 4, note='mk .. [{x}->{x};{x};{x};{x}] .. fpass x10 .. sum: 4 MB arrays shared 4x')
def _(n):
    return ('net p { box mk((<sz>) -> (x)); box fpass((x) -> (x)); box sum((x) -> (<s>)); } '
            'connect mk .. [{x} -> {x}; {x}; {x}; {x}] .. %s .. sum;' % chain(10, 'fpass'),
            [rec([('sz', 1 << 20), ('id', i)]) for i in range(n)])


@wl('big_many', 16, note='mk .. fpass x10 .. sum: N records of 16 MB arrays (RSS must not grow with N)')
def _(n):
    return ('net p { box mk((<sz>) -> (x)); box fpass((x) -> (x)); box sum((x) -> (<s>)); } '
            'connect mk .. %s .. sum;' % chain(10, 'fpass'),
            [rec([('sz', 1 << 22), ('id', i)]) for i in range(n)])


@wl('big_slow', 16, note='mkfast .. slowsum: N records of 4 MB, producer faster than consumer')
def _(n):
    return ('net p { box mkfast((<sz>) -> (x)); box slowsum((x) -> (<s>)); } connect mkfast .. slowsum;',
            [rec([('sz', 1 << 20), ('id', i)]) for i in range(n)])


@wl('big_input', 100000, note='one input field of N ints through fpass x10, summed')
def _(n):
    return ('net p { box fpass((x) -> (x)); box sum((x) -> (<s>)); } connect %s .. sum;'
            % chain(10, 'fpass'), [rec([], [('x', ints(n, 7))])])


@wl('big_output', 100000, note='one input field of N ints through fpass x10, written out')
def _(n):
    return ('net p { box fpass((x) -> (x)); } connect %s;' % chain(10, 'fpass'),
            [rec([], [('x', ints(n, 7))])])


@wl('small_many', 100000, note='N small records through tinc .. [] .. tinc')
def _(n):
    return ('net p { box tinc((<k>) -> (<k>)); } connect tinc .. [{<k>} -> {<k = k * 2>}] .. tinc;',
            [rec([('k', i)]) for i in range(n)])


@wl('many_labels', 200, note='1 x 200 records with N tags each through tinc x10')
def _(n):
    return ('net p { box tinc((<k>) -> (<k>)); } connect %s;' % chain(10, 'tinc'),
            [rec([('k', i)] + [('t%d' % j, j) for j in range(n)]) for i in range(200)])


@wl('filter_fan', 2000, note='N records x 64 outputs from one filter, then tinc')
def _(n):
    outs = '; '.join('{<k>, <j = %d>}' % j for j in range(64))
    return ('net p { box tinc((<k>) -> (<k>)); } connect [{<k>} -> %s] .. tinc;' % outs,
            [rec([('k', i)]) for i in range(n)])


@wl('filter_tree', 200, note='10 duplicating filters in series: N x 1024 outputs')
def _(n):
    return ('net p connect %s;' % chain(10, '[{<k>} -> {<k>}; {<k = k + 1>}]'),
            [rec([('k', i)]) for i in range(n)])


@wl('box_fan', 2000, note='fan: N records x 64 outputs, then tinc .. tinc')
def _(n):
    return ('net p { box fan((<k>) -> (<j>)); box tinc((<k>) -> (<k>)); } '
            'connect fan .. [{<j>} -> {<k = j>}] .. tinc .. tinc;',
            [rec([('k', 64), ('id', i)]) for i in range(n)])


@wl('serial_long', 250, note='N stages of [{<c>} -> {<c = c + 1>}] written out, 2000 records')
def _(n):
    return ('net p connect %s;' % chain(n, '[{<c>} -> {<c = c + 1>}]'),
            [rec([('c', i)]) for i in range(2000)])


@wl('serial_boxes', 250, note='N tinc boxes written out, 2000 records')
def _(n):
    return ('net p { box tinc((<k>) -> (<k>)); } connect %s;' % chain(n, 'tinc'),
            [rec([('k', i)]) for i in range(2000)])


@wl('nest_choice', 50, note='N-deep nesting tinc | (tinc .. (tinc | (...))), 2000 records')
def _(n):
    e = 'tinc'
    for i in range(n):
        e = '(tinc | (tinc .. %s))' % e if i % 2 else '(tinc .. %s)' % e
    return 'net p { box tinc((<k>) -> (<k>)); } connect %s;' % e, [rec([('k', i)]) for i in range(2000)]


@wl('nest_star', 20, note='N nested stars (((dec*{<done>})*{<done>})...)')
def _(n):
    e = 'dec'
    for _ in range(n):
        e = '(%s) * {<done>}' % e
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect %s;' % e,
            [rec([('c', 5), ('id', i)]) for i in range(200)])


@wl('nest_nets', 50, note='N nested net definitions each wrapping the previous in .. tinc')
def _(n):
    s = 'net p { box tinc((<k>) -> (<k>)); net n0 connect tinc; '
    for i in range(1, n + 1):
        s += 'net n%d connect (n%d .. tinc) | [{<z>} -> {<z>}]; ' % (i, i - 1)
    s += '} connect n%d;' % n
    return s, [rec([('k', i)]) for i in range(2000)]


@wl('dstar_wide', 50, ordered=True, note='dec ** {<done>}: 200 records, depth N (records share the stages)')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec ** {<done>};',
            [rec([('c', n if i % 2 else n // 2), ('id', i)]) for i in range(200)])


@wl('det_nest', 25, ordered=True, note='N-deep alternating nesting ((X .. tinc) !! <g>) and (X || [{<z>} -> {<z>}]), 5000 records')
def _(n):
    e = 'tinc'
    for i in range(n):
        e = '((%s) || [{<z>} -> {<z>}])' % e if i % 2 else '((%s) .. tinc) !! <g>' % e
    return ('net p { box tinc((<k>) -> (<k>)); } connect %s;' % e,
            [rec([('k', i), ('g', i % 3)]) for i in range(5000)])


@wl('dsplit_dstar', 2000, ordered=True, note='(dec ** {<done>}) !! <g>: N records, 8 values of g, depth id%16')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect (dec ** {<done>}) !! <g>;',
            [rec([('c', i % 16), ('g', i % 8), ('id', i)]) for i in range(n)])


@wl('fb_in_det', 2000, ordered=True, note='(dec \\ {<c>}) !! <g>: N records, 4 values of g, 8 rounds')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect (dec \\ {<c>}) !! <g>;',
            [rec([('c', 8), ('g', i % 4), ('id', i)]) for i in range(n)])


@wl('fb_in_dstar', 1000, ordered=True, note='((dec \\ {<c>}) .. outer) ** {<fin>}: N records, 3 stages of loops')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); '
            'box outer((<done>, <r>) -> (<c>, <r>) | (<fin>)); } '
            'connect ((dec \\ {<c>}) .. outer) ** {<fin>};',
            [rec([('c', 4), ('r', 3), ('id', i)]) for i in range(n)])


@wl('dstar_hol', 2000, ordered=True, note='dec ** {<done>}: first record depth 2000, then N shallow records')
def _(n):
    return ('net p { box dec((<c>) -> (<c>) | (<done>)); } connect dec ** {<done>};',
            [rec([('c', 2000), ('id', 0)])] + [rec([('c', 2), ('id', i)]) for i in range(1, n)])


@wl('sync_det', 5000, ordered=True, note='[|{a,<k>},{b,<k>}|] !! <k> after mkpair !! <g>: N pairs')
def _(n):
    return ('net p { box mkpair((<k>) -> (a, <k>) | (b, <k>)); box add((a, b) -> (<s>)); } '
            'connect (mkpair .. ([| {a, <k>}, {b, <k>} |] !! <k>) .. add) !! <g>;',
            [rec([('k', i), ('g', i % 4)]) for i in range(n)])


def parse_stats(err):
    d = {}
    for line in err.splitlines():
        m = re.match(r'(peak in flight|entities created)\s+(\d+)', line)
        if m:
            d[m.group(1)] = int(m.group(2))
    return d


def run(prog, cfile, inp, eng, tmo, stats):
    out = inp + '.' + eng + '.out'
    cmd = ['/usr/bin/time', '-f', 'TIME %e %M', 'timeout', str(tmo), SNET, 'run', prog, cfile,
           '-i', inp, '-o', out] + ENGINES[eng] + (['--stats'] if stats else [])
    p = subprocess.run(['bash', '-c', 'ulimit -v 8000000; exec "$@"', 'x'] + cmd,
                       capture_output=True, text=True)
    m = re.search(r'TIME ([\d.]+) (\d+)', p.stderr)
    t, rss = (float(m.group(1)), int(m.group(2)) // 1024) if m else (float('nan'), 0)
    err = p.stderr if p.returncode else ''
    if p.returncode == 124:
        err = 'TIMEOUT'
    return t, rss, p.returncode, err, out, parse_stats(p.stderr)


def norm(path, ordered):
    with open(path) as f:
        text = f.read()
    if ordered:
        return text
    recs = text.split('<record')
    recs.sort()
    return recs


def exponent(xs, ys):
    if ys[0] <= 0 or ys[-1] <= 0:
        return 0.0
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('names', nargs='*')
    ap.add_argument('-l', action='store_true')
    ap.add_argument('-e', default=','.join(ENGINES))
    ap.add_argument('-s', type=int, default=4)
    ap.add_argument('-x', type=float, default=2.0)
    ap.add_argument('-b', type=float, default=1.0)
    ap.add_argument('--stats', action='store_true')
    a = ap.parse_args()
    if a.l:
        for k, v in W.items():
            print('%-18s base %-7d %s' % (k, v['base'], v['note']))
        return
    names = [k for k in W if not a.names or any(k.startswith(n) for n in a.names)]
    engines = a.e.split(',')
    tmp = tempfile.mkdtemp(prefix='scale_probe.')
    cfile = os.path.join(tmp, 'boxes.c')
    with open(cfile, 'w') as f:
        f.write(BOXES_C)
    flags = []
    for name in names:
        w = W[name]
        sizes = [max(1, int(w['base'] * a.b * a.x ** i)) for i in range(a.s)]
        print('== %s: %s' % (name, w['note']), flush=True)
        res = collections.defaultdict(list)
        for n in sizes:
            src, recs = w['f'](n)
            prog = os.path.join(tmp, name + '.snet')
            with open(prog, 'w') as f:
                f.write('<metadata><boxdefault><interface value="C4SNet"/></boxdefault></metadata>\n'
                        + src + '\n')
            inp = os.path.join(tmp, '%s.%d.xml' % (name, n))
            with open(inp, 'w') as f:
                f.write(IN_HEAD + ''.join(recs) + IN_TERM)
            ref = None
            seq_t = None
            line = '  N=%-8d' % n
            for eng in engines:
                tmo = 120 if seq_t is None else int(min(120, max(30, 20 * seq_t)))
                t, rss, rc, err, out, st = run(prog, cfile, inp, eng, tmo, a.stats)
                status = ''
                if rc != 0:
                    status = 'FAIL(rc=%d %s)' % (rc, err.strip().splitlines()[-1][:100] if err.strip() else '')
                    flags.append('%s N=%d %s: %s' % (name, n, eng, status))
                else:
                    got = norm(out, w['ordered'])
                    if ref is None:
                        ref = got
                        nout = len(got) - 1 if not w['ordered'] else got.count('<record') - 1
                    elif got != ref:
                        status = 'WRONG'
                        flags.append('%s N=%d %s: output differs from %s' % (name, n, eng, engines[0]))
                if eng == 'seq' or seq_t is None:
                    seq_t = t
                elif rc == 0 and t > 10 * seq_t and t > 0.5:
                    status += ' SLOW'
                    flags.append('%s N=%d %s: %.2fs vs seq %.2fs' % (name, n, eng, t, seq_t))
                res[eng].append((n, t, rss, rc))
                ex = ''
                if st:
                    ex = ' [%s]' % ','.join('%d' % v for v in st.values())
                line += ' %s %.2fs %dM%s%s |' % (eng, t, rss, ex, (' ' + status) if status else '')
                try:
                    os.remove(out)
                except OSError:
                    pass
            print(line + ' out=%s' % (nout if ref is not None else '?'), flush=True)
            os.remove(inp)
        for eng in engines:
            ok = [r for r in res[eng] if r[3] == 0]
            if len(ok) < 2:
                continue
            xs = [r[0] for r in ok]
            te = exponent(xs, [r[1] for r in ok])
            re_ = exponent(xs, [r[2] for r in ok])
            bad = []
            if te > 1.35 and ok[-1][1] > 0.5:
                bad.append('time^%.2f' % te)
            if re_ > 1.3 and ok[-1][2] > 200:
                bad.append('rss^%.2f' % re_)
            if bad:
                flags.append('%s %s: GROWTH %s' % (name, eng, ' '.join(bad)))
                print('  GROWTH %s: %s' % (eng, ' '.join(bad)), flush=True)
    print('\n== flags (%d)' % len(flags))
    for f in flags:
        print('  ' + f)


if __name__ == '__main__':
    main()
