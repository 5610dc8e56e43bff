import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(21)
ins, outs = [], []
created = set()          # (stage, j, i)
def exits(r):
    f, t = r
    return 'w' in f or 'greet' in f or ('v' in f and t['i'] >= 3)
def run(r, stage):
    while True:
        if exits(r):
            outs.append(r); return
        stage += 1
        f, t = r
        key = (stage, t['j'], t['i'])
        if key not in created:
            created.add(key)
            run(({'greet': 'hi'}, {}), stage)       # initialiser output leaves this stage
        x = f['v']; i, j = t['i'], t['j']
        rest = {k: v for k, v in t.items() if k not in ('i', 'j')}
        if x % 2 == 0:
            run(({'w': ('long', int(x / 2))}, {**rest, 'j': j + i}), stage)
        r = ({'v': x + i + j}, {**rest, 'i': i + 1, 'j': j})
for n in range(30):
    v = random.randrange(-50, 50); i = random.randrange(0, 4); j = random.randrange(-1, 3)
    ins.append(in_record({'v': fval('int', v)}, {'i': i, 'j': j, 'n': n}))
    run(({'v': v}, {'i': i, 'j': j, 'n': n}), 0)
def fmt(f):
    o = {}
    for k, v in f.items():
        if k == 'greet': o[k] = fval('char', v)
        elif k == 'w': o[k] = fval('long', v[1])
        else: o[k] = fval('int', v)
    return o
write_input('input.xml', ins); write_output('expected.xml', [rec(fmt(f), t) for f, t in outs])
print(len(outs), 'outputs', sum(1 for f, t in outs if 'greet' in f), 'greetings')
