#!/usr/bin/env python3
"""Deterministic input generators for bench/ (BENCHMARKS.md §1). Fixed seed 42.

usage: gen.py deep D [COUNT] | synchro N | pipe COUNT | fan COUNT W | fibtree N
       gen.py pipe-program K      (writes the pipe program with K identity boxes)
       gen.py graph-chain N | graph-par N | graph-nest D
                                  (programs for `snet graph` timings: a chain of N boxes,
                                  N parallel boxes, D nested combinator levels)
Writes to standard output.
"""
import random
import sys

HEAD = '<?xml version="1.0" encoding="ISO-8859-1" ?>\n'
TERM = '<record xmlns="snet-home.org" type="terminate"/>\n'


def rec(fields=(), tags=()):
    s = ['<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">']
    for k, v in fields:
        s.append(f'<field label="{k}">(int){v}</field>')
    for k, v in tags:
        s.append(f'<tag label="{k}">{v}</tag>')
    s.append('</record>\n')
    return ''.join(s)


def main(argv):
    out = sys.stdout
    kind = argv[1]
    rng = random.Random(42)
    if kind == 'deep':
        d = int(argv[2])
        count = int(argv[3]) if len(argv) > 3 else 1000
        out.write(HEAD)
        for _ in range(count):
            out.write(rec(fields=[('A', rng.randint(0, d))]))
        out.write(TERM)
    elif kind == 'synchro':
        n = int(argv[2])
        out.write(HEAD)
        k = 0
        for _ in range(n):
            for j in range(5):
                out.write(rec(fields=[('A', k + j)]))
            for j in range(5):
                out.write(rec(fields=[('B', k + j)]))
            k += 5
        out.write(TERM)
    elif kind == 'pipe':
        count = int(argv[2])
        out.write(HEAD)
        for i in range(count):
            out.write(rec(fields=[('A', i)]))
        out.write(TERM)
    elif kind == 'fan':
        count, w = int(argv[2]), int(argv[3])
        out.write(HEAD)
        for i in range(count):
            out.write(rec(fields=[('A', i)], tags=[('T', i % w)]))
        out.write(TERM)
    elif kind == 'fibtree':
        out.write(HEAD + rec(tags=[('N', int(argv[2]))]) + TERM)
    elif kind == 'pipe-program':
        k = int(argv[2])
        out.write('<metadata><default><interface value="C4SNet"/></default></metadata>\n')
        out.write('net stage { box id((A) -> (A)); } connect id;\n')
        out.write(f'net pipe connect {" .. ".join(["stage"] * k)};\n')
    elif kind == 'graph-chain':
        n = int(argv[2])
        out.write('<metadata><default><interface value="C4SNet"/></default></metadata>\n')
        out.write('net chain {\n')
        for i in range(n):
            out.write(f'  box b{i}((x) -> (x));\n')
        out.write('} connect ' + ' .. '.join(f'b{i}' for i in range(n)) + ';\n')
    elif kind == 'graph-par':
        n = int(argv[2])
        out.write('<metadata><default><interface value="C4SNet"/></default></metadata>\n')
        out.write('net par {\n')
        for i in range(n):
            out.write(f'  box b{i}((x{i}) -> (y));\n')
        out.write('} connect ' + ' | '.join(f'b{i}' for i in range(n)) + ';\n')
    elif kind == 'graph-nest':
        # Level k wraps level k-1 in a choice, a star, a split or a placement in turn.
        d = int(argv[2])
        out.write('<metadata><default><interface value="C4SNet"/></default></metadata>\n')
        out.write('net nest {\n  box step((x) -> (x) | (y));\n  box side((z) -> (y));\n')
        out.write('} connect ')
        e = 'step'
        for k in range(d):
            m = k % 4
            if m == 0:
                e = f'({e} .. [{{y}} -> {{x = y}}]) | side'
            elif m == 1:
                e = f'({e}) * {{y}}'
            elif m == 2:
                e = f'({e}) ! <t>'
            else:
                e = f'({e}) @ {k % 7}'
        out.write(e + ';\n')
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
