import os, sys, random, struct; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(43)
def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
ins, outs = [], []
for i in range(40):
    n = random.choice([0, 1, 3, 5, 8, 12])
    data = [f32(random.random()) for _ in range(n)]
    if i == 0: data = [f32(0.99999997), f32(0.5), 0.0]
    nb = random.choice([-1, 0, 1, 2, 3, 5])
    ins.append(in_record({'data': fval('float', data)}, {'nb': nb, 'id': i}))
    if len(data) == 0:
        outs.append(rec({}, {'id': i})); continue
    if nb <= 0: continue
    h = [0] * nb
    for v in data:
        b = int(f32(v * nb)); b = min(max(b, 0), nb - 1); h[b] += 1
    m = max(h)
    for b in range(nb):
        if h[b] == m: outs.append(rec({}, {'bin': b, 'cnt': m, 'id': i}))
    outs.append(rec({'hist': fval('unsigned short', h, array=nb != 1) if nb != 1 else fval('unsigned short', h[0], array=False)}, {'total': sum(h), 'id': i}))
write_input('input.xml', ins); write_output('expected.xml', outs)
print(len(outs), 'outputs')
