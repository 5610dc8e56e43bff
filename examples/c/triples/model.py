import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(31)
TY = {'a': 'int', 'b': 'short', 'c': 'unsigned int'}
Q = [(('a',), ('t',), lambda t: t['t'] > 0), (('b',), (), None), (('c',), ('u',), lambda t: t['u'] % 2 == 0)]
EXIT = [(('a', 'b', 'c'), (), None), (('a',), ('t',), lambda t: t['t'] <= 0), (('c',), ('u',), lambda t: t['u'] % 2 != 0)]
def m(r, p):
    f, t = r; fs, ts, g = p
    return all(x in f for x in fs) and all(x in t for x in ts) and (g is None or g(t))
groups = {}
ins, outs = [], []
def cell(st, r):
    if st['fired']: return r
    M = [i for i in range(3) if st['slots'][i] is None and m(r, Q[i])]
    if not M: return r
    for i in M: st['slots'][i] = ('own' if i == M[0] else 'side', r)
    if any(s is None for s in st['slots']): return None
    st['fired'] = True
    f, t = dict(st['slots'][0][1][0]), dict(st['slots'][0][1][1])
    done = {id(st['slots'][0][1])}
    for i in (1, 2):
        y = st['slots'][i][1]
        if id(y) in done: continue
        # copy the labels of every pattern y filled (q_i and any later one it also filled)
        for j in range(i, 3):
            if st['slots'][j][1] is y:
                for x in Q[j][0]: f[x] = y[0][x]
                for x in Q[j][1]: t[x] = y[1][x]
        done.add(id(y))
    return (f, t)
for n in range(80):
    g = random.randrange(3)
    f, t = {}, {'g': g, 'id': n}
    for lab in random.sample(['a', 'b', 'c'], random.choice([1, 1, 1, 2, 2, 3])):
        f[lab] = {'a': random.randrange(-99, 100), 'b': random.randrange(-999, 1000), 'c': random.randrange(0, 1000)}[lab]
        if lab == 'a': t['t'] = random.choice([1, 2, 3, 5, -1, 0])
        if lab == 'c': t['u'] = random.choice([0, 2, 4, 6, 8, 1])
    ins.append((f, t))
    stages = groups.setdefault(g, [])
    r, k = (dict(f), dict(t)), 0
    while r is not None:
        if any(m(r, e) for e in EXIT):
            rf, rt = r
            if all(x in rf for x in 'abc') and 't' in rt and 'u' in rt:
                of = {x: v for x, v in rf.items() if x not in 'abc'}
                ot = {x: v for x, v in rt.items() if x not in ('t', 'u')}
                of['abc'] = ('long', rf['a'] * 1000000 + rf['b'] * 1000 + rf['c'])
                of['note'] = ('char', 't=%d u=%d' % (rt['t'], rt['u']))
                r = (of, ot)
            outs.append(r); break
        if k == len(stages): stages.append({'fired': False, 'slots': [None, None, None]})
        r = cell(stages[k], r); k += 1
def enc(f):
    return {k: (fval(v[0], v[1]) if isinstance(v, tuple) else fval(TY[k], v)) for k, v in f.items()}
write_input('input.xml', [in_record(enc(f), t) for f, t in ins])
write_output('expected.xml', [rec(enc(f), t) for f, t in outs])
print(len(outs), 'outputs', sum('abc' in f for f, t in outs), 'joined')
