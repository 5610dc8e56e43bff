import os, sys, random; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../tools')); from snetx import *
random.seed(11)
# records: dict with 'f' (fields name->str), 't' (tags)
names = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jo']
orders = []
for i in range(60):
    item = random.randrange(4)
    kind = random.choice(['buy', 'buy', 'sell', 'sell', 'both'])
    f, t = {}, {'item': item, 'id': i}
    if kind in ('buy', 'both'):
        f['buy'] = random.choice(names); t['px'] = random.randrange(5, 30)
    if kind in ('sell', 'both'):
        f['sell'] = random.choice(names); t['qty'] = random.randrange(-2, 6)
    orders.append((f, t))

def matches(r, fields, tags, guard=None):
    f, t = r
    return all(x in f for x in fields) and all(x in t for x in tags) and (guard is None or guard(t))

Q = [(('buy',), ('px',), lambda t: t['px'] >= 10), (('sell',), ('qty',), lambda t: t['qty'] > 0)]
EXIT = [(('deal',), (), None), (('buy',), ('px',), lambda t: t['px'] < 10), (('sell',), ('qty',), lambda t: t['qty'] <= 0)]

def cell(st, r):
    if st['fired']: return [r]
    M = [i for i in range(2) if st['slots'][i] is None and matches(r, *Q[i])]
    if not M: return [r]
    st['slots'][M[0]] = r
    for i in M[1:]: st['slots'][i] = 'side'
    if any(s is None for s in st['slots']): return []
    st['fired'] = True
    f, t = dict(st['slots'][0][0]), dict(st['slots'][0][1])
    y = st['slots'][1]
    if y != 'side':
        f['sell'] = y[0]['sell']; t['qty'] = y[1]['qty']
    return [(f, t)]

def tradebox(r):
    f, t = r
    if all(x in f for x in ('buy', 'sell')) and all(x in t for x in ('px', 'qty')):
        f2 = {k: v for k, v in f.items() if k not in ('buy', 'sell')}
        t2 = {k: v for k, v in t.items() if k not in ('px', 'qty')}
        f2['deal'] = '%s<-%s:%dx%d' % (f['buy'], f['sell'], t['qty'], t['px'])
        t2['px'] = t['px'] * t['qty']; t2['qty'] = t['qty']
        return (f2, t2)
    return r

books = {}
outs = []
def outer(r):
    f, t = r
    if 'buy' in f and 'px' in t:          # cheap (leftmost on a tie with drop)
        f2 = {k: v for k, v in f.items() if k != 'buy'}
        t2 = {k: v for k, v in t.items() if k != 'px'}
        f2 = {'rejected': '%s@%d' % (f['buy'], t['px']), **f2}
        return (f2, t2)
    if 'sell' in f and 'qty' in t:
        f2 = {k: v for k, v in f.items() if k != 'sell'}
        t2 = {k: v for k, v in t.items() if k != 'qty'}
        t2['void'] = t['qty']
        return (f2, t2)
    return r

for f, t in orders:
    stages = books.setdefault(t['item'], [])
    r = (dict(f), dict(t)); k = 0
    while True:
        if any(matches(r, *e) for e in EXIT):
            outs.append(outer(r)); break
        if k == len(stages): stages.append({'fired': False, 'slots': [None, None]})
        res = cell(stages[k], r)
        if not res: break
        r = tradebox(res[0]); k += 1

inputs = [in_record({k: fval('char', v) for k, v in f.items()}, t) for f, t in orders]
write_input('input.xml', inputs)
write_output('expected.xml', [rec({k: fval('char', v) for k, v in f.items()}, t) for f, t in outs])
print(len(outs), 'outputs')
