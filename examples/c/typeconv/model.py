import os, sys, random, struct, math; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(9)
TYPES = ['unsigned char', 'char', 'unsigned short', 'short', 'unsigned int', 'int', 'unsigned long', 'long', 'float', 'double']
SIZE = [1, 1, 2, 2, 4, 4, 8, 8, 4, 8]
def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def wrap(v, bits, signed):
    v %= 2**bits
    return v - 2**bits if signed and v >= 2**(bits - 1) else v
def conv(v, floating, to):
    if to == 8: return f32(float(v))
    if to == 9: return float(v)
    if floating: v = int(math.trunc(v))
    bits = [8, 8, 16, 16, 32, 32, 64, 64][to]
    return wrap(v, bits, to % 2 == 1)
def parse_src(t, v):
    return v
cases = [
    ('int', [65, 44, 60, 38, 122, 33]),          # letters , < & z !
    ('int', [-1, 255, 256, -129, 70000, -70000, 2**31 - 1, -2**31]),
    ('short', [-32768, 32767, 0, -1, 12345]),
    ('unsigned short', [0, 65535, 40000]),
    ('unsigned char', list(b'a,<&b')),
    ('char', list(b'Hi, &<!')),
    ('unsigned int', [0, 4294967295, 2147483648, 7]),
    ('long', [-9000000000, 9000000000, -1, 16777215]),
    ('unsigned long', [18446744073709551615, 0, 2**63, 12]),
    ('float', [1.5, -2.25, 100.125, 0.1]),
    ('double', [3.999, -3.999, 1e9, -0.5, 2.5e-3]),
    ('int', 7),                                  # scalar
    ('double', [42.75]),                         # an array of one
]
ins, outs = [], []
id = 0
for src_t, vals in cases:
    scalar = not isinstance(vals, list)
    floating = src_t in ('float', 'double')
    if src_t == 'float': vals = [f32(v) for v in vals]
    if src_t == 'unsigned long': pass
    lst = [vals] if scalar else vals
    targets = list(range(10)) + [-1, 10, 11]
    for to in targets:
        if floating and to not in (5, 7, 8, 9, -1, 10, 11) : continue
        if src_t == 'unsigned long' and to in (8,):
            continue
        if to in (0, 1) and not (src_t in ('char', 'unsigned char') or all(32 <= v < 127 for v in lst)):
            continue
        src = fval(src_t, vals) if not scalar else fval(src_t, vals, array=False)
        ins.append(in_record({'src': src}, {'to': to, 'id': id}))
        if not 0 <= to <= 9:
            outs.append(rec({'bad': fval('char', 'no conversion to type %d' % to)}, {'id': id}))
        else:
            # ulong source is read as (long) in conv's get_l
            lv = [wrap(v, 64, True) if src_t == 'unsigned long' else v for v in lst]
            dst = [conv(v, floating, to) for v in lv]
            t = TYPES[to]
            if to == 8: key = lambda x: x
            lo, hi = min(dst), max(dst)
            # first minimum / first maximum: values equal anyway
            ch = lambda x: chr(x % 256) if to in (0, 1) else x
            fields = {'lo': fval(t, ch(lo), array=False), 'hi': fval(t, ch(hi), array=False)}
            keep = fval(src_t, vals, array=False) if scalar else fval(src_t, list(reversed(vals)))
            orig = fval(src_t, vals, array=False) if scalar else fval(src_t, vals)
            if src_t in ('char', 'unsigned char'):
                keep = fval(src_t, [chr(c) for c in reversed(vals)]); orig = fval(src_t, [chr(c) for c in vals])
            fields.update(keep=keep, orig=orig)
            outs.append(rec(fields, {'n': len(dst), 'sz': SIZE[to], 'ty': to, 'id': id}))
        id += 1
write_input('input.xml', ins); write_output('expected.xml', outs)
print(len(ins), 'inputs')
