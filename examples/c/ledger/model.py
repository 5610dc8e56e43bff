import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(3)
workers = [0, 1, 2, 5, 9, -3]
ins = []
opened = set()
vals = []
for seq in range(45):
    w = random.choice(workers)
    if w not in opened and random.random() < 0.4:
        opened.add(w); ins.append(('open', w))
    v = random.randrange(-2**31, 2**31) if seq % 7 == 0 else random.randrange(-500, 500)
    ins.append(('val', w, v, seq))
for w in workers:
    if w not in opened: ins.append(('open', w))
acc = {w: 1000 * w for w in workers}
outs, recs = [], []
for r in ins:
    if r[0] == 'open':
        recs.append(in_record({}, {'n': r[1]}))
    else:
        _, w, v, seq = r
        recs.append(in_record({'v': fval('int', v)}, {'seq': seq}, {'w': w}))
        acc[w] += v
        outs.append(rec({'stamp': fval('char', 'ok'), 'sum': fval('long', acc[w])}, {'k': w, 'seq': seq}))
write_input('input.xml', recs); write_output('expected.xml', outs)
