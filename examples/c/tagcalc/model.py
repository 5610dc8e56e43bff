import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(5)
def w(v): return (v + 2**31) % 2**32 - 2**31
def cdiv(a, b): q = abs(a) // abs(b); return w(q if (a < 0) == (b < 0) else -q)
def cmod(a, b): return w(a - cdiv(a, b) * b)
pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (3, 0), (0, 0), (5, 5), (2147483647, 1), (-2147483648, -1 + 0 * 0),
         (-2147483648, 3), (1, 2147483647), (100, 7), (-1, -1), (0, 9)]
for _ in range(20): pairs.append((random.randrange(-50, 50), random.randrange(-9, 9)))
ins, outs = [], []
for n, (a, b) in enumerate(pairs):
    x = random.randrange(-32768, 32768)
    ins.append(in_record({'x': fval('short', x)}, {'a': a, 'b': b, 'n': n}))
    X = fval('short', x)
    if b == 0:
        outs.append(rec({'x': X}, {'a': a, 'zero': 0, 'n': n}))   # -> []
        continue
    if a == -2147483648 and b == -1: q, r = a, 0          # C: overflow; model wraps
    else: q, r = cdiv(a, b), cmod(a, b)
    o1 = dict(a=a, b=b, q=q, r=r, lo=min(a, b), hi=max(a, b), d=w(abs(w(a - b))), p=w(a + min(b, 3) * 2), n=n)
    # pair: {y, <qr>, <a>=0} (+ b lo hi d p n) ; {x} (+ a b lo hi d p n)
    rest = {k: o1[k] for k in ('b', 'lo', 'hi', 'd', 'p', 'n')}
    outs.append(rec({'y': X}, {'qr': w(q * 1000 + r), 'a': 0, **rest}))
    outs.append(rec({'x': X}, {'a': a, **rest}))
    k = w(a * 2 + b)
    c = w(a - b) if a > b else w(w(b - a) * 2)
    l = 1 if ((a > 0 and b > 0) or not (a == b)) else 0
    t = 7 if (True if a < 0 else b < 0) else 8
    inh = dict(c=c, l=l, t=t, n=n)
    # keyed out 1 -> show
    txt = fval('char', 'k=%d x=%d' % (k, x))
    outs.append(rec({'txt': txt}, inh, {'k': k} if k % 2 == 0 else {}))
    # keyed out 2 -> filter kb
    outs.append(rec({}, {'kb': w(cdiv(k, 2) - 1), 'half': 0, **inh}))
write_input('input.xml', ins); write_output('expected.xml', outs)
