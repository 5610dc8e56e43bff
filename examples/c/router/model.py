import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(23)
# labels: ('f', name) field, ('t', name) tag, ('b', name) binding tag
F = lambda *n: {('f', x) for x in n}
T = lambda *n: {('t', x) for x in n}
B = lambda *n: {('b', x) for x in n}
BR = [  # routing types of the nine branches (spec 8)
    [F('a')],
    [F('a', 'b'), F('out')],
    [F('a', 'b') | T('t')],
    [F('b', 'c')],
    [F('c') | T('t'), F('d'), F('c', 'd') | T('t')],
    [F('a') | B('k')],
    [T('n')],
    [set()],
    [B('k')],
]
def route(labels):
    best, bi = -1, None
    bt = {l for l in labels if l[0] == 'b'}
    for i, vs in enumerate(BR):
        for v in vs:
            if {l for l in v if l[0] != 'b'} <= labels and bt <= v:
                s = len([l for l in v if l[0] != 'b']) + len(bt)
                if s > best: best, bi = s, i
    return bi
cell = {'slots': [None, None], 'fired': False}
outs, ins = [], []
def emit(f, t, b=None): outs.append((f, t, b or {}))
for i in range(70):
    f, t, b = {'x': 0.5 * i}, {'id': i}, {}
    for name in random.sample(['a', 'b', 'c', 'd', 'out', 'tf'], random.randrange(0, 4)):
        if name == 'tf': f['t'] = -i
        elif name == 'out': f['out'] = 'in %d' % i
        else: f[name] = random.randrange(-9, 10)
    for name in random.sample(['t', 'n'], random.randrange(0, 3)):
        t[name] = random.randrange(-2, 4)
    if random.random() < 0.2: b['k'] = random.randrange(1, 5)
    ins.append((dict(f), dict(t), dict(b)))
    labels = {('f', k) for k in f} | {('t', k) for k in t} | {('b', k) for k in b}
    br = route(labels)
    rest_f = lambda *c: {k: v for k, v in f.items() if k not in c}
    rest_t = lambda *c: {k: v for k, v in t.items() if k not in c}
    if br == 0: emit({'out': 'pa %d' % f['a'], **rest_f('a', 'out')}, t)
    elif br == 1:
        if 'out' in f: emit(f, t, b)
        else: emit({'out': 'pab %d' % (f['a'] + f['b']), **rest_f('a', 'b')}, t)
    elif br == 2: emit({'out': 'pabt %d' % (f['a'] * f['b'] + t['t']), **rest_f('a', 'b', 'out')}, rest_t('t'))
    elif br == 3: emit({'out': 'pbc %d' % (f['b'] - f['c']), **rest_f('b', 'c', 'out')}, t)
    elif br == 4:
        Q = [(F('c') | T('t')), F('d')]
        if cell['fired']: emit(f, t, b); continue
        M = [j for j in range(2) if cell['slots'][j] is None and Q[j] <= labels]
        if not M: emit(f, t, b); continue
        cell['slots'][M[0]] = (f, t, b)
        for j in M[1:]: cell['slots'][j] = 'side'
        if None in cell['slots']: continue
        cell['fired'] = True
        f1, t1, b1 = cell['slots'][0]
        f1 = dict(f1)
        if cell['slots'][1] != 'side': f1['d'] = cell['slots'][1][0]['d']
        emit(f1, t1, b1)
    elif br == 5: emit({'out': 'kb %d' % (f['a'] * b['k']), **rest_f('a', 'out')}, t)
    elif br == 8: emit(f, {**t, 'kk': b['k']})
    elif br == 6:
        n = t['n']
        while n > 0: n -= 1
        emit({'out': 'ctr %d' % n, **rest_f('out')}, rest_t('n'))
    else: emit(f, t, b)
def enc(f):
    o = {}
    for k, v in f.items():
        o[k] = fval('double', v) if k == 'x' else fval('char', v) if k == 'out' else fval('int', v)
    return o
write_input('input.xml', [in_record(enc(f), t, b) for f, t, b in ins])
write_output('expected.xml', [rec(enc(f), t, b) for f, t, b in outs])
import collections
print(collections.Counter(route({('f', k) for k in f} | {('t', k) for k in t} | {('b', k) for k in b}) for f, t, b in ins))
