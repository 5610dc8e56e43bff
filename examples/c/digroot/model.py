import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(17)
def w(v): return (v + 2**31) % 2**32 - 2**31
def cdiv(a, b): q = abs(a) // abs(b); return q if (a < 0) == (b < 0) else -q
def cmod(a, b): return a - cdiv(a, b) * b
names = ['alpha', 'beta', 'Gamma', 'delta-9', 'eps']
ins, outs = [], []
for i in range(30):
    num = random.choice([random.randrange(0, 100), random.randrange(-10**6, 10**9), 2**31 - 1, 0])
    base = random.choice([2, 2, 3, 4, 7, 10, 16])
    name = random.choice(names)
    ins.append(in_record({'name': fval('char', name)}, {'num': num, 'base': base, 'id': i}))
    nm, ntype = name, 'char'
    s, rounds, again = num, 0, None
    while True:
        while not (s < base) and not (rounds >= 1):
            n, acc, rounds = s, 0, rounds + 1
            while n != 0:
                acc += cmod(n, base); n = cdiv(n, base)
            s = acc; nm, ntype = nm.upper(), 'unsigned char'
        if s < base:
            outs.append(rec({'name': fval(ntype, nm)}, {'root': s, 'base': base, 'rounds': rounds, 'id': i})); break
        if again is not None and again >= 2:
            outs.append(rec({'name': fval(ntype, nm)}, {'gaveup': s, 'base': base, 'id': i})); break
        base, rounds, again = (base if again is None else base + 1), 0, 1 if again is None else again + 1
outs.insert(0, rec({'greet': fval('char', 'hello')}))
write_input('input.xml', ins); write_output('expected.xml', outs)
print(sum('gaveup' in o for o in outs), 'gave up', sum('"again"' in o for o in outs))
