import os, sys, random, collections; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(41)
ins, outs = [], []
for i in range(40):
    n, k = random.randrange(1, 60), random.randrange(3)
    ins.append(in_record({}, {'n': n, 'k': k, 'id': i}))
    q = collections.deque([(n, 0, 1)])
    while q:
        n1, d, p = q.popleft()
        leaves = []
        if n1 > 1 and d < 5:
            if n1 % 3 == 0: leaves.append((-n1, d))
            q.append((n1 // 2, d + 1, 2 * p)); q.append((n1 - n1 // 2, d + 1, 2 * p + 1))
        else:
            leaves.append((p * 100 + n1, d))
        for v, d1 in leaves:
            if d1 % 2 == 0:
                outs.append(rec({'txt': fval('char', 'leaf %d' % v)}, {'d': d1, 'k': k, 'id': i}))
            else:
                outs.append(rec({'leaf': fval('int', v)}, {'d': d1, 'k': k, 'id': i}))
write_input('input.xml', ins); write_output('expected.xml', outs)
print(len(outs), 'outputs')
