import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(7)
def fib(n):
    a, b = 0, 1
    for _ in range(n): a, b = b, a + b
    return a
ins = [(48, 18), (18, 48), (2**64 - 1, 2**32 - 1), (fib(60), fib(59)), (fib(30), fib(31)), (0, 5), (5, 0), (7, 7), (1, 2**63)]
for _ in range(25):
    ins.append((random.randrange(1, 10**random.randrange(1, 19)), random.randrange(1, 10**random.randrange(1, 19))))
inputs, outs = [], []
for i, (a, b) in enumerate(ins):
    lane = i % 3
    inputs.append(in_record({'a': '(unsigned long)%d' % a, 'b': '(unsigned long)%d' % b}, {'lane': lane}))
    it, sw = 0, 0
    while True:
        # step
        if b == 0:
            g = a; it += 1
            while sw > 0: sw -= 1; it += 1
            outs.append(rec({'g': fval('unsigned long', g)}, {'sw': sw, 'it': it, 'lane': lane}))
            break
        elif a < b: a, b, sw = b, a, sw + 1
        else: a, b = b, a % b
        it += 1
        if not it < 40:
            outs.append(rec({'a': fval('unsigned long', a), 'b': fval('unsigned long', b)}, {'sw': sw, 'it': it, 'lane': lane}))
            break
write_input('input.xml', inputs); write_output('expected.xml', outs)
