import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(47)
ins, outs = [], []
for i in range(60):
    f, t = {}, {'id': i}
    for lab in ('x', 'y'):
        if random.random() < 0.85: f[lab] = random.randrange(-1000, 1000)
    for tg in ('dx', 'dy', 'lane'):
        if random.random() < 0.5: t[tg] = random.randrange(-5, 6)
    ins.append(in_record({k: fval('int', v) for k, v in f.items()}, t))
    f, t = dict(f), dict(t)
    if 'x' in f and 'y' in f and ('dx' in t or 'dy' in t):          # shift (declared signature)
        if 'dx' in t: d, m = t.pop('dx'), 1                            # tie: leftmost
        else: d, m = t.pop('dy') * 16, 16
        f['x'] += d; t['moved'] = m
    elif 'x' in f and 'y' in f:                                        # still
        t['moved'] = 0
    if 'x' in f and 'y' in f and 'lane' in t:                          # norm
        d2 = f.pop('x') ** 2 + f.pop('y') ** 2
        outs.append(rec({'d2': fval('long', d2)}, t))
    else:
        outs.append(rec({k: fval('int', v) for k, v in f.items()}, t))
write_input('input.xml', ins); write_output('expected.xml', outs)
