"""Differential test of the semantics: random pure S-Net programs (filters with guards
and tag expressions, synchrocells with guards, [], .., |, *, !, \\) run by `snet run
--engine seq` and by an independent interpreter of spec 7 written here (routing types
by spec 8). With --det the combinators are the deterministic ones (no feedback) and
each program seq accepts is also run on the concurrent engines at -w 2, whose output
must equal seq's.

    python3 tools/fuzz_pure.py SEED COUNT [DEPTH] [--det]

Prints every disagreement and a summary: ok (same output), err (both stop with a
run-time error), loop (both run forever or out of memory). A program that both loops
and fails can do either, depending on the order records are taken in ("LOOP
MISMATCH"); that is not a disagreement. Needs target/release/snet (or $SNET)."""
import random, subprocess, sys, collections
import os, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); import snetx
DET = '--det' in sys.argv
if DET: sys.argv.remove('--det')
SNET = os.environ.get('SNET') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '../target/release/snet')
TMP = tempfile.mkdtemp(prefix='snet-fuzz-')
sys.setrecursionlimit(100000)
FL, TG = ['a', 'b'], ['t', 'u']
class Err(Exception): pass
class Loop(Exception): pass
def W(v): return (v + 2**31) % 2**32 - 2**31
# ---------- generation ----------
def rnd_pat(minn=0):
    while True:
        p = set()
        for f in FL:
            if random.random() < 0.35: p.add(('f', f))
        for t in TG:
            if random.random() < 0.35: p.add(('t', t))
        if len(p) >= minn: return frozenset(p)
def rnd_expr(tags):
    tags = sorted(tags)
    if not tags or random.random() < 0.2: return ('c', random.randint(-2, 3))
    t = random.choice(tags)
    r = random.random()
    if r < 0.3: return ('v', t)
    if r < 0.6: return ('+', ('v', t), ('c', random.randint(-2, 2)))
    if r < 0.8: return ('?', ('>', ('v', t), ('c', 0)), ('v', random.choice(tags)), ('c', 7))
    return ('%', ('v', t), ('c', random.choice([2, 3])))
def rnd_guard(tags):
    tags = sorted(tags)
    t = random.choice(tags)
    return random.choice([('>', ('v', t), ('c', 0)), ('==', ('%', ('v', t), ('c', 2)), ('c', 0)), ('<', ('v', t), ('c', 2))])
def rnd_action(p):
    outs = []
    for _ in range(random.choice([0, 1, 1, 1, 2])):
        items = []
        for (k, n) in sorted(p):
            if k == 'f' and random.random() < 0.6: items.append(('f', n, n))
        if ('f', 'a') in p and random.random() < 0.2: items.append(('f', 'b', 'a')) if not any(i[1] == 'b' for i in items) else None
        ptags = {n for k, n in p if k == 't'}
        for t in TG:
            r = random.random()
            if r < 0.15: items.append(('t', t, None))
            elif r < 0.3: items.append(('t', t, rnd_expr(ptags)))
        outs.append(items)
    return outs
def gen(d):
    r = random.random()
    if d == 0 or r < 0.25:
        r = random.random()
        if r < 0.6:
            p = rnd_pat()
            ptags = {n for k, n in p if k == 't'}
            guards = [(rnd_guard(ptags), rnd_action(p))] if ptags and random.random() < 0.4 else []
            return ('filter', p, guards, rnd_action(p))
        if r < 0.85:
            pats = []
            for _ in range(random.choice([2, 2, 3])):
                q = rnd_pat(1); qt = {n for k, n in q if k == 't'}
                pats.append((q, rnd_guard(qt) if qt and random.random() < 0.3 else None))
            return ('sync', pats)
        return ('id',)
    r = random.random()
    if r < 0.3: return ('ser', gen(d - 1), gen(d - 1))
    if r < 0.55: return ('par', [gen(d - 1) for _ in range(random.choice([2, 2, 3]))])
    if r < 0.75:
        pats = []
        for _ in range(random.choice([1, 1, 2])):
            q = rnd_pat(1); qt = {n for k, n in q if k == 't'}
            pats.append((q, rnd_guard(qt) if qt and random.random() < 0.4 else None))
        return ('star', gen(d - 1), pats)
    if r < 0.88: return ('split', gen(d - 1), random.choice(TG))
    if DET: return gen(d - 1)
    q = rnd_pat(1); qt = {n for k, n in q if k == 't'}
    return ('fb', gen(d - 1), [(q, rnd_guard(qt) if qt and random.random() < 0.4 else None)])
# ---------- source ----------
def lab(l): return l[1] if l[0] == 'f' else '<%s>' % l[1]
def spat(p): return '{' + ', '.join(lab(l) for l in sorted(p)) + '}'
def sx(e):
    k = e[0]
    if k == 'c': return str(e[1]) if e[1] >= 0 else '-%d' % -e[1]
    if k == 'v': return e[1]
    if k == '?': return '(%s ? %s : %s)' % (sx(e[1]), sx(e[2]), sx(e[3]))
    return '(%s %s %s)' % (sx(e[1]), k, sx(e[2]))
def sgp(gp): return spat(gp[0]) + (' if <%s>' % sx(gp[1]) if gp[1] else '')
def sact(a):
    outs = []
    for items in a:
        s = []
        for it in items:
            if it[0] == 'f': s.append(it[1] if it[1] == it[2] else '%s = %s' % (it[1], it[2]))
            else: s.append('<%s>' % it[1] if it[2] is None else '<%s = %s>' % (it[1], sx(it[2])))
        outs.append('{' + ', '.join(s) + '}')
    return ' ; '.join(outs)
def src(e):
    k = e[0]
    if k == 'id': return '[]'
    if k == 'filter':
        g = ''.join('if <%s> then %s else ' % (sx(c), sact(a)) for c, a in e[2])
        return '[%s -> %s%s]' % (spat(e[1]), g, sact(e[3]))
    if k == 'sync': return '[| %s |]' % ', '.join(sgp(q) for q in e[1])
    if k == 'ser': return '(%s .. %s)' % (src(e[1]), src(e[2]))
    if k == 'par': return '(%s)' % (' || ' if DET else ' | ').join(src(b) for b in e[1])
    if k == 'star': return '(%s %s %s)' % (src(e[1]), '**' if DET else '*', ', '.join(sgp(q) for q in e[2]))
    if k == 'split': return '(%s %s <%s>)' % (src(e[1]), '!!' if DET else '!', e[2])
    if k == 'fb': return '(%s \\ %s)' % (src(e[1]), ', '.join(sgp(q) for q in e[2]))
# ---------- spec 8 routing types ----------
def dd(l):
    o = []
    for x in l:
        if x not in o: o.append(x)
    return o
def is_idfilter(e): return e[0] == 'filter' and not e[1] and not e[2] and e[3] == [[]]
def IN(e):
    k = e[0]
    if k == 'id' or is_idfilter(e): return [frozenset()]
    if k == 'filter': return [e[1]]
    if k == 'sync': return dd([q for q, g in e[1]] + [frozenset().union(*[q for q, g in e[1]])])
    if k == 'par': return dd(sum((IN(b) for b in e[1]), []))
    if k == 'star': return dd(IN(e[1]) + [q for q, g in e[2]])
    if k == 'split': return dd([v | {('t', e[2])} for v in IN(e[1])])
    if k == 'fb': return IN(e[1])
    if k == 'ser':
        res = []
        for v in IN(e[1]):
            oa = OUT(e[1], v)
            if not oa: res.append(v); continue
            for o in oa:
                for w in (IN(e[2]) or [frozenset()]): res.append(v | (w - o))
        return dd(res)
def OUT(e, v):
    k = e[0]
    if k == 'id' or is_idfilter(e): return [v]
    if k == 'filter': return dd([frozenset((('f', it[1]) if it[0] == 'f' else ('t', it[1])) for it in o) for a in [a for c, a in e[2]] + [e[3]] for o in a])
    if k == 'sync': return dd([v, frozenset().union(*[q for q, g in e[1]])])
    if k == 'par': return dd(sum((OUT(b, v) for b in e[1]), []))
    if k == 'star': return dd([q for q, g in e[2]])
    if k in ('split', 'fb'): return OUT(e[1], v)
    if k == 'ser':
        ib = IN(e[2]); oa = OUT(e[1], v)
        if not ib: return oa
        return dd([p | (o - w) for o in (oa or [frozenset()]) for w in ib for p in OUT(e[2], w)])
# ---------- interpreter ----------
def labels(r): return {('f', x) for x in r[0]} | {('t', x) for x in r[1]}
def ev(e, r):
    k = e[0]
    if k == 'c': return e[1]
    if k == 'v':
        if e[1] not in r[1]: raise Err('tag')
        return r[1][e[1]]
    if k == '?': return ev(e[2], r) if ev(e[1], r) else ev(e[3], r)
    a, b = ev(e[1], r), ev(e[2], r)
    if k == '+': return W(a + b)
    if k == '%':
        q = abs(a) // abs(b); q = q if (a < 0) == (b < 0) else -q
        return a - q * b
    return {'>': a > b, '<': a < b, '==': a == b}[k]
def match(r, gp):
    q, g = gp
    return q <= labels(r) and (g is None or ev(g, r))
STEPS = [0]
class Inst:
    def __init__(self, e):
        self.e = e; k = e[0]
        if k == 'sync': self.slots = [None] * len(e[1]); self.fired = False
        if k == 'ser': self.a, self.b = Inst(e[1]), Inst(e[2])
        if k == 'par': self.br = [Inst(b) for b in e[1]]; self.routes = [IN(b) for b in e[1]]
        if k == 'star': self.stages = []
        if k == 'split': self.reps = {}
        if k == 'fb': self.a = Inst(e[1])
    def run(self, r):
        STEPS[0] += 1
        if STEPS[0] > 200000: raise Loop()
        e, k = self.e, self.e[0]
        if k == 'id' or is_idfilter(e): return [r]
        if k == 'filter':
            if not e[1] <= labels(r): raise Err('filter')
            act = e[3]
            for c, a in e[2]:
                if ev(c, r): act = a; break
            outs = []
            for items in act:
                f, t = {}, {}
                for it in items:
                    if it[0] == 'f': f[it[1]] = r[0][it[2]]
                    elif it[2] is None: t[it[1]] = r[1][it[1]] if ('t', it[1]) in e[1] else 0
                    else: t[it[1]] = ev(it[2], r)
                for x, v in r[0].items():
                    if ('f', x) not in e[1] and x not in f: f[x] = v
                for x, v in r[1].items():
                    if ('t', x) not in e[1] and x not in t: t[x] = v
                outs.append((f, t))
            return outs
        if k == 'sync':
            if self.fired: return [r]
            M = [i for i, q in enumerate(e[1]) if self.slots[i] is None and match(r, q)]
            if not M: return [r]
            for i in M: self.slots[i] = ('own' if i == M[0] else 'side', r)
            if None in self.slots: return []
            self.fired = True
            f, t = dict(self.slots[0][1][0]), dict(self.slots[0][1][1])
            for i in range(1, len(e[1])):
                y = self.slots[i][1]
                if y is self.slots[0][1]: continue
                for (kk, n) in e[1][i][0]:
                    if kk == 'f': f[n] = y[0][n]
                    else: t[n] = y[1][n]
            return [(f, t)]
        if k == 'ser':
            return [o for x in self.a.run(r) for o in self.b.run(x)]
        if k == 'par':
            best, bi = -1, None
            L = labels(r)
            for i, vs in enumerate(self.routes):
                for v in vs:
                    if v <= L and len(v) > best: best, bi = len(v), i
            if bi is None: raise Err('route')
            return self.br[bi].run(r)
        if k == 'star':
            return self.star(0, r)
        if k == 'split':
            if e[2] not in r[1]: raise Err('split')
            i = r[1][e[2]]
            if i not in self.reps: self.reps[i] = Inst(e[1])
            return self.reps[i].run(r)
        if k == 'fb':
            outs = []
            for x in self.a.run(r):
                if any(match(x, q) for q in e[2]): outs += self.run(x)
                else: outs.append(x)
            return outs
    def star(self, k, r):
        if any(match(r, q) for q in self.e[2]): return [r]
        if k > 300: raise Loop()
        if k == len(self.stages): self.stages.append(Inst(self.e[1]))
        return [o for x in self.stages[k].run(r) for o in self.star(k + 1, x)]
# ---------- driver ----------
def run(engine):
    return subprocess.run(['bash', '-c', 'ulimit -v 1000000; cd "$1"; exec timeout 4 "$2" run x.snet -i x.xml --engine "$3" -w 2',
                           'x', TMP, SNET, engine], capture_output=True, text=True)
def rnd_rec():
    f = {x: random.randint(-3, 3) for x in FL if random.random() < 0.5}
    t = {x: random.randint(-2, 3) for x in TG if random.random() < 0.9}
    return (f, t)
def enc(r): return snetx.rec({x: '(int)%d' % v for x, v in r[0].items()}, r[1])
seed = int(sys.argv[1]); n = int(sys.argv[2]); depth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
stats = collections.Counter()
for i in range(n):
    random.seed(seed * 1000003 + i)
    e = gen(depth)
    prog = 'net x connect %s;\n' % src(e)
    recs = [rnd_rec() for _ in range(random.randint(3, 9))]
    STEPS[0] = 0
    try:
        root = Inst(e); outs = []
        for r in recs: outs += root.run(r)
        exp = ('ok', outs)
    except Err as x: exp = ('err', str(x))
    except Loop: exp = ('loop',)
    except RecursionError: exp = ('loop',)
    open(os.path.join(TMP, 'x.snet'), 'w').write(prog)
    snetx.write_input(os.path.join(TMP, 'x.xml'), [snetx.in_record({x: '(int)%d' % v for x, v in r[0].items()}, r[1]) for r in recs])
    p = run('seq')
    if p.returncode in (-6, 134): p.returncode = 124
    if p.returncode == 124 or exp[0] == 'loop':
        stats['loop' if p.returncode == 124 and exp[0] == 'loop' else 'loopdiff'] += 1
        if not (p.returncode == 124 and exp[0] == 'loop'):
            print('LOOP MISMATCH', i, exp[0], p.returncode); print(prog)
        continue
    if 'error[' in p.stderr and p.returncode != 0 and 'run' not in p.stderr[:0]:
        # compile error: our generator made something invalid (e.g. type errors)
        stats['compile-error'] += 1
        if '-v' in sys.argv: print(prog, p.stderr[:500])
        continue
    if exp[0] == 'err':
        stats['err' if p.returncode != 0 else 'errdiff'] += 1
        if p.returncode == 0: print('ERR MISMATCH', i, exp[1]); print(prog); print(open(os.path.join(TMP, 'x.xml')).read()); print(p.stdout)
        continue
    if p.returncode != 0:
        stats['snet-err'] += 1; print('SNET ERR', i, p.stderr[-400:]); print(prog); print(open(os.path.join(TMP, 'x.xml')).read()); continue
    expected = ''.join(enc(r) for r in outs) + snetx.TERM
    d = snetx.compare(expected, p.stdout, False)
    if d:
        stats['diff'] += 1; print('DIFF', i, d[:600]); print(prog); print(open(os.path.join(TMP, 'x.xml')).read()); print(p.stdout[:3000])
        if stats['diff'] > 2: break
    else:
        stats['ok'] += 1
        if snetx.compare(expected, p.stdout, True): stats['order-only'] += 1
        for eng in (('front', 'lpel', 'threads') if DET else ()):
            q = run(eng)
            d2 = snetx.compare(p.stdout, q.stdout, False) if q.returncode == 0 else 'exit %d: %s' % (q.returncode, q.stderr[-300:])
            if d2:
                stats['engine-diff'] += 1; print('ENGINE DIFF', eng, i, d2[:500]); print(prog)
            elif snetx.compare(p.stdout, q.stdout, True):
                # Records of one input coming from different sub-instances (e.g. two
                # stages of a star) may interleave (spec 7.14): look before calling it a bug.
                stats['engine-order'] += 1; print('ENGINE ORDER', eng, i); print(prog)
print(dict(stats))
import shutil; shutil.rmtree(TMP, ignore_errors=True)
