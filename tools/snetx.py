"""Helpers for the Python models of the examples: write input records (spec 11.2) and
expected output (the exact 11.3 layout), format C4SNet values (12.6), and compare two
outputs as multisets or in order (11.4)."""
import re, sys, collections

def fmt_elem(t, v):
    if t in ('char', 'unsigned char'):
        c = chr(v) if isinstance(v, int) else v
        return c.replace('&', '&amp;').replace('<', '&lt;')
    if t in ('float',):
        return '%.32f' % v
    if t in ('double',):
        return '%.32e' % v
    return '%d' % v

def fval(t, vals, array=None):
    """vals: list (array) or scalar."""
    if isinstance(vals, (list, tuple, bytes, str)) and (array is None or array):
        vals = list(vals)
        return '(%s[%d])%s' % (t, len(vals), ','.join(fmt_elem(t, v) for v in vals))
    return '(%s)%s' % (t, fmt_elem(t, vals))

def record(fields=(), tags=(), btags=()):
    s = '<?xml version="1.0" ?>\n<record xmlns="snet-home.org" type="data" mode="textual" >\n'
    for k, v in fields:
        s += '<field label="%s" interface="C4SNet">%s</field>\n' % (k, v)
    for k, v in tags:
        s += '<tag label="%s">%d</tag>\n' % (k, v)
    for k, v in btags:
        s += '<btag label="%s">%d</btag>\n' % (k, v)
    return s + '</record>\n'

TERM = '<?xml version="1.0" ?>\n<record type="terminate" />\n'

def rec(fields=None, tags=None, btags=None):
    return record(list((fields or {}).items()), list((tags or {}).items()), list((btags or {}).items()))

def write_output(path, recs):
    with open(path, 'w') as f:
        f.write(''.join(recs) + TERM)

def in_record(fields=None, tags=None, btags=None):
    s = '<record xmlns="snet-home.org" type="data" mode="textual" interface="C4SNet">\n'
    for k, v in (fields or {}).items():
        s += '  <field label="%s">%s</field>\n' % (k, v)
    for k, v in (tags or {}).items():
        s += '  <tag label="%s">%d</tag>\n' % (k, v)
    for k, v in (btags or {}).items():
        s += '  <btag label="%s">%d</btag>\n' % (k, v)
    return s + '</record>\n'

def write_input(path, recs):
    with open(path, 'w') as f:
        f.write('<?xml version="1.0" encoding="ISO-8859-1" ?>\n' + ''.join(recs) +
                '<record xmlns="snet-home.org" type="terminate"/>\n')

# ---- parsing outputs for comparison ----
def parse_out(text):
    out = []
    for m in re.finditer(r'<record([^>]*?)(/?)>', text):
        attrs, selfclose = m.group(1), m.group(2)
        typ = re.search(r'type="(\w+)"', attrs).group(1)
        if selfclose:
            out.append((typ, (), (), ()))
            continue
        end = text.index('</record>', m.end())
        body = text[m.end():end]
        fields = tuple(sorted(re.findall(r'<field label="([^"]*)"[^>]*>(.*?)</field>', body, re.S)))
        tags = tuple(sorted(re.findall(r'<tag label="([^"]*)">(-?\d*)</tag>', body)))
        btags = tuple(sorted(re.findall(r'<btag label="([^"]*)">(-?\d*)</btag>', body)))
        out.append((typ, fields, tags, btags))
    return out

def compare(exp_text, act_text, ordered):
    e, a = parse_out(exp_text), parse_out(act_text)
    if ordered:
        if e == a: return None
        for i, (x, y) in enumerate(zip(e, a)):
            if x != y: return 'record %d differs: exp %s act %s' % (i + 1, x, y)
        return 'lengths differ exp %d act %d' % (len(e), len(a))
    ce, ca = collections.Counter(e), collections.Counter(a)
    if ce == ca: return None
    return 'multiset differs: missing %s extra %s' % (list((ce - ca).items())[:3], list((ca - ce).items())[:3])
