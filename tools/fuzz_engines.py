#!/usr/bin/env python3
"""Engine agreement on random box-free S-Net programs.

Run:   python3 tools/fuzz_engines.py [--snet PATH] [--cases N] [--seed S] [--jobs J]
       (default binary: $CARGO_TARGET_DIR/release/snet or target/release/snet).
       `--show N` prints program N of the seed and exits (to reproduce a failure).

Generates random well-typed programs without boxes over the tags <id> <k> <a> <b>
(every record of the input carries all four plus a field x): filters with tag
arithmetic, guards, duplication and consumption, synchrocells, `..`, `|`, `||`, `*`,
`**`, `!`, `!!`, and `\\` (feedback) whose guards terminate because every iteration
decrements <k>. Two classes:

* deterministic (`..`, `||`, `**`, `!!`, filters, synchrocells anywhere, also inside
  stars and nested splits): the output *sequence* must be the same on every engine;
* nondeterministic (everything, including feedback and `|`/`*`/`!`): the output
  *multiset* must be the same. Synchrocells appear in these only where the records they
  see cannot depend on the scheduling: in a split on the unique <id> fed one record per
  id, where each record is turned into one <p> and one <q> record (alone, inside a star,
  or inside a feedback loop).

Each program passes `snet check` (programs it rejects are counted and skipped) and runs on
`--engine seq`, and on front, lpel and threads at `-w 1` and `-w 2`. Oracle: no panic /
signal / hang (20 s); the same exit status everywhere; with exit 0 the same outputs (as
above) and the same count of records left in synchrocells; with an error the same error
message (the entity and problem; the offending record may differ for nondeterministic
programs). Exit status: 0 if no disagreement was found, 1 otherwise.
"""
import argparse
import concurrent.futures as cf
import os
import random
import re
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = [("seq", 1), ("front", 1), ("front", 2), ("lpel", 1), ("lpel", 2),
           ("threads", 1), ("threads", 2)]


class Gen:
    def __init__(self, rng, det):
        self.rng = rng
        self.det = det
        self.features = set()
        self.div = False

    # ----- tag expressions ---------------------------------------------------------
    def iexpr(self, d=0):
        r = self.rng
        if d > 2 or r.random() < 0.35:
            return r.choice(["a", "b", "k", str(r.randint(0, 9)), "-%d" % r.randint(1, 5)])
        op = r.randrange(9)
        x, y = self.iexpr(d + 1), self.iexpr(d + 1)
        if op < 3:
            return "(%s %s %s)" % (x, r.choice(["+", "-", "*"]), y)
        if op == 3:
            return "(%s %% %d)" % (x, r.randint(2, 7))
        if op == 4:
            return "(%s / %d)" % (x, r.choice([2, 3, -2]))
        if op == 5:
            return "(%s %s %s)" % (x, r.choice(["min", "max"]), y)
        if op == 6:
            return "(abs %s)" % x
        if op == 7:
            return "(%s ? %s : %s)" % (self.bexpr(d + 1), x, y)
        if op == 8 and r.random() < 0.15:  # may divide by zero: an error every engine reports
            self.div = True
            return "(%s / (%s %% 3))" % (x, y)
        return x

    def bexpr(self, d=0):
        r = self.rng
        if d > 2 or r.random() < 0.6:
            return "(%s %s %s)" % (self.iexpr(d + 1), r.choice(["<", "<=", ">", ">=", "==", "!="]),
                                   self.iexpr(d + 1))
        op = r.randrange(3)
        if op == 0:
            return "(%s && %s)" % (self.bexpr(d + 1), self.bexpr(d + 1))
        if op == 1:
            return "(%s || %s)" % (self.bexpr(d + 1), self.bexpr(d + 1))
        return "(!%s)" % self.bexpr(d + 1)

    # ----- leaves: every output record keeps <id>,<k>,<a>,<b> and field x ----------
    def filt(self, dup_ok):
        r = self.rng
        full = "{<a>,<b>,<k>}"
        choice = r.randrange(9 if dup_ok else 7)
        if choice == 0:
            return "[]"
        if choice in (1, 2):
            t = r.choice(["a", "b"])
            other = "b" if t == "a" else "a"
            return "[%s -> {<%s = %s>, <%s>, <k>}]" % (full, t, self.iexpr(), other)
        if choice == 3:
            return "[%s -> if <%s> then {<a = %s>, <b>, <k>} else {<b = %s>, <a>, <k>}]" % (
                full, self.bexpr(), self.iexpr(), self.iexpr())
        if choice == 4:
            return ("[%s -> if <%s> then {<a>, <b>, <k>} else if <%s> then {<a = %s>, <b>, <k>}"
                    " else {<a>, <b = %s>, <k>}]" % (full, self.bexpr(), self.bexpr(),
                                                     self.iexpr(), self.iexpr()))
        if choice == 5:  # rename the field there and back, add and remove a tag
            return "([{x} -> {y = x}] .. [{y, <a>} -> {x = y, <a>, <t>}] .. [{<t>} -> {}])"
        if choice == 6:  # consume some records
            self.features.add("consume")
            return "[%s -> if <%s> then else {<a>, <b>, <k>}]" % (full, self.bexpr())
        # duplicate
        self.features.add("dup")
        return "[%s -> {<a>, <b>, <k>}; {<a = %s>, <b>, <k>}]" % (full, self.iexpr())

    def dec(self):
        return "[{<k>} -> {<k = k - 1>}]"

    def cell(self):
        """A generic (possibly guarded) synchrocell; the merged record keeps all labels
        of the first pattern's record and takes <b> (or <a>) of the second."""
        r = self.rng
        self.features.add("sync")
        g1 = " if <%s>" % self.bexpr() if r.random() < 0.6 else ""
        g2 = " if <%s>" % self.bexpr() if r.random() < 0.6 else ""
        p1 = "{<a>,<b>,<k>}" if g1 else "{<a>}"
        p2 = "{<a>,<b>,<k>}" if g2 else "{<b>}"
        if r.random() < 0.3:
            return "[|%s%s, %s%s, {<k>,<b>} if <k %% 2 == 0>|]" % (p1, g1, p2, g2)
        return "[|%s%s, %s%s|]" % (p1, g1, p2, g2)

    def gadget(self):
        """One <p> and one <q> record per input record, merged by a synchrocell; the
        result carries the sum of their <a>. Safe in nondeterministic programs if every
        instance sees the records of one input record only."""
        self.features.add("sync")
        return ("[{<a>,<b>,<k>} -> {<a>,<b>,<k>,<p>}; {<a = a + %d>,<b>,<k>,<q>}] .. "
                "[|{<p>}, {<q>,<a>} if <a > -1000000>|] .. "
                "([{<p>,<q>} -> {}] | [{<p>} -> {}] | [{<q>} -> {}])" % self.rng.randint(1, 9))

    # ----- networks ------------------------------------------------------------------
    def net(self, depth, dup_ok=True, uniq=True):
        """Returns (text, uniq_after): uniq = every record on the stream has its own <id>."""
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            f = self.filt(dup_ok)
            return f, uniq and "dup" not in f and "; {" not in f
        kinds = ["serial", "serial", "choice", "detchoice", "star", "detstar", "split",
                 "detsplit", "cell", "nested"]
        if not self.det:
            kinds += ["choice", "star", "split", "feedback", "feedback", "gadget", "gadget"]
        kind = r.choice(kinds)
        if kind == "serial":
            x, u = self.net(depth - 1, dup_ok, uniq)
            y, u = self.net(depth - 1, dup_ok, u)
            return "(%s .. %s)" % (x, y), u
        if kind in ("choice", "detchoice"):
            if self.det and kind == "choice":
                kind = "detchoice"
            op = " | " if kind == "choice" else " || "
            self.features.add(kind)
            n = r.randint(2, 3)
            route = ("[{<a>,<b>,<k>} -> if <%s> then {<a>,<b>,<k>,<r0>} else if <%s> then "
                     "{<a>,<b>,<k>,<r1>} else {<a>,<b>,<k>,<r%d>}]" % (self.bexpr(), self.bexpr(), n - 1))
            bs, uu = [], uniq
            for i in range(n):
                b, u = self.net(depth - 1, dup_ok, uniq)
                uu = uu and u
                bs.append("[{<r%d>} -> {}] .. %s" % (i, b))
            if r.random() < 0.04:  # a branch missing: some records match no branch
                self.features.add("unroutable")
                bs.pop()
                if len(bs) == 1:
                    return "(%s .. %s)" % (route, bs[0]), uu
            return "(%s .. (%s))" % (route, op.join(bs)), uu
        if kind in ("star", "detstar"):
            if self.det and kind == "star":
                kind = "detstar"
            self.features.add(kind)
            body, u = self.net(depth - 1, False, uniq)
            if r.random() < 0.3:
                body = "(%s .. %s)" % (self.cell(), body) if self.det else body
            op = " * " if kind == "star" else " ** "
            ex = "{<k>} if <k <= 0>"
            if r.random() < 0.3:
                ex += ", {<a>,<b>} if <a == b>"
            return "((%s .. %s)%s%s)" % (body, self.dec(), op, ex), u
        if kind in ("split", "detsplit"):
            if self.det and kind == "split":
                kind = "detsplit"
            self.features.add(kind)
            body, u = self.net(depth - 1, dup_ok, uniq)
            tag = r.choice(["k", "a", "id", "b"])
            return "(%s %s <%s>)" % (body, "!" if kind == "split" else "!!", tag), u
        if kind == "cell" and self.det:
            return self.cell(), uniq
        if kind == "feedback":
            self.features.add("feedback")
            body, u = self.net(depth - 1, False, uniq)
            return "((%s .. %s) \\ {<k>} if <k > 0>)" % (body, self.dec()), u
        if kind == "gadget" and uniq:
            where = r.randrange(3)
            g = self.gadget()
            if where == 0:
                self.features.add("sync-in-split")
                return "((%s) ! <id>)" % g, True
            if where == 1:
                self.features.add("sync-in-star")
                return "(((%s .. %s) * {<k>} if <k <= 0>) ! <id>)" % (g, self.dec()), True
            self.features.add("sync-in-feedback")
            return "(((%s .. %s) \\ {<k>} if <k > 0>) ! <id>)" % (g, self.dec()), False
        if kind == "nested":
            # a split inside a split inside a (det) star
            self.features.add("nested-split")
            body, u = self.net(depth - 1, False, uniq)
            op = " ** " if self.det or r.random() < 0.5 else " * "
            return ("((((%s ! <a>) !! <b>) .. %s)%s{<k>} if <k <= 0>)" % (body, self.dec(), op)), u
        return self.filt(dup_ok), uniq


def mixed(g, rng, depth):
    """A serial chain of deterministic combinators around nondeterministic bodies."""
    parts = []
    for _ in range(rng.randint(1, 3)):
        b, _ = g.net(depth - 1, False)
        w = rng.randrange(3)
        if w == 0:
            b2, _ = g.net(depth - 1, False)
            parts.append("([{<a>} -> if <a %% 2 == 0> then {<a>,<r0>} else {<a>,<r1>}] .. "
                         "([{<r0>} -> {}] .. %s || [{<r1>} -> {}] .. %s))" % (b, b2))
        elif w == 1:
            parts.append("((%s .. %s) ** {<k>} if <k <= 0>)" % (b, g.dec()))
        else:
            parts.append("(%s !! <%s>)" % (b, rng.choice(["id", "k", "a"])))
    g.features.add("det-outer")
    return " .. ".join(parts)


def program(seed, depth=4, records=None):
    """(class, features, program text, input text); class is det, mixed or nondet."""
    rng = random.Random(seed)
    u = rng.random()
    cls = "det" if u < 0.3 else "mixed" if u < 0.6 else "nondet"
    g = Gen(rng, cls == "det")
    if cls == "mixed":
        body = mixed(g, rng, rng.randint(2, depth))
    else:
        body, _ = g.net(rng.randint(2, depth))
    text = "net fz connect %s;\n" % body
    recs = []
    n = rng.randint(2, 7) if rng.random() < 0.8 else rng.randint(8, 30)
    if records:
        n = rng.randint(*records)
    for i in range(n):
        recs.append('<record type="data" mode="textual" interface="C4SNet">'
                    '<field label="x">(int)%d</field><tag label="id">%d</tag>'
                    '<tag label="k">%d</tag><tag label="a">%d</tag><tag label="b">%d</tag>'
                    '</record>' % (i, i, rng.randint(0, 3), rng.randint(-5, 20), rng.randint(-5, 20)))
    inp = "\n".join(recs) + '\n<record type="terminate"/>\n'
    return cls, g.features, text, inp


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4_000_000_000, 4_000_000_000))


REC_RE = re.compile(rb"<record [^>]*type=\"data\"[^>]*>(.*?)</record>", re.S)
LEFT_RE = re.compile(r"(\d+) records? (?:were |was )?(?:left|still)")


def records(out):
    res = []
    for m in REC_RE.finditer(out):
        items = re.findall(rb"<(field|tag|btag) label=\"([^\"]*)\"[^>]*>([^<]*)</", m.group(1))
        res.append(tuple(sorted((k.decode(), l.decode(), v.decode()) for k, l, v in items)))
    return res


def run(snet, prog, inp, engine, workers):
    try:
        p = subprocess.run([snet, "run", "--engine", engine, "-w", str(workers), prog, "-i", inp],
                           capture_output=True, timeout=20, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, [], "hang (20 s)"
    return p.returncode, records(p.stdout), p.stderr.decode("utf-8", "replace")


def rid(rec):
    """The <id> of an output record (the input record that caused it)."""
    return next((v for k, l, v in rec if k == "tag" and l == "id"), None)


def error_key(err):
    """The error, without the offending record's values."""
    lines = [l for l in err.split("\n") if l.startswith("error")]
    return lines[0] if lines else ""


def warn_key(err):
    return sorted(l for l in err.split("\n") if l.startswith("warning") and "synchro" in l)


def main():
    ap = argparse.ArgumentParser()
    tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap.add_argument("--snet", default=os.path.join(tgt, "release", "snet"))
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", type=int, default=None)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--records", type=lambda t: tuple(int(x) for x in t.split(",")),
                    default=None, help="LO,HI: input records per program (default 2-7, "
                    "sometimes 8-30)")
    ap.add_argument("--out", default="/tmp/snet-fuzz-engines")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.show is not None:
        det, feats, text, inp = program(args.seed * 1000003 + args.show, args.depth, args.records)
        print(text + "\n" + inp)
        return 0

    def work(i):
        det, feats, text, inp = program(args.seed * 1000003 + i, args.depth, args.records)
        d = os.path.join(args.out, "c%d" % i)
        os.makedirs(d, exist_ok=True)
        prog, ip = os.path.join(d, "fz.snet"), os.path.join(d, "input.xml")
        with open(prog, "w") as f:
            f.write(text)
        with open(ip, "w") as f:
            f.write(inp)
        c = subprocess.run([args.snet, "check", prog], capture_output=True, preexec_fn=limit)
        if c.returncode != 0:
            return i, det, feats, "rejected", [c.stderr.decode()[:400]]
        results = [(e, w) + run(args.snet, prog, ip, e, w) for e, w in ENGINES]
        probs = []
        e0, w0, rc0, out0, err0 = results[0]
        for e, w, rc, out, err in results:
            name = "%s -w %d" % (e, w)
            if rc is None or rc < 0 or "panicked" in err:
                probs.append("%s: crash/hang rc=%s %s" % (name, rc, err[:300]))
                continue
            if rc != rc0:
                probs.append("%s: exit %s, seq exit %s (%s | %s)" % (name, rc, rc0,
                                                                     error_key(err), error_key(err0)))
                continue
            if rc0 != 0:
                if error_key(err).split(": record")[0] != error_key(err0).split(": record")[0]:
                    probs.append("%s: error %r, seq %r" % (name, error_key(err), error_key(err0)))
                continue
            if det == "det" and out != out0:
                probs.append("%s: output sequence differs from seq (%d vs %d records)"
                             % (name, len(out), len(out0)))
            elif det == "mixed" and [rid(x) for x in out] != [rid(x) for x in out0]:
                probs.append("%s: order of the input records' outputs differs from seq: %s vs %s"
                             % (name, [rid(x) for x in out], [rid(x) for x in out0]))
            elif sorted(out) != sorted(out0):
                probs.append("%s: output multiset differs from seq (%d vs %d records)"
                             % (name, len(out), len(out0)))
            if warn_key(err) != warn_key(err0):
                probs.append("%s: synchrocell warnings %s, seq %s" % (name, warn_key(err), warn_key(err0)))
        if not probs:
            import shutil
            shutil.rmtree(d, ignore_errors=True)
        status = "error" if rc0 != 0 else "ok"
        if rc0 != 0:
            feats = set(feats) | {"error: " + re.sub(r"[0-9]+", "N", error_key(err0))[:70]}
        return i, det, feats, status, probs

    stats = {"rejected": 0, "ok": 0, "error": 0}
    feat_count = {}
    failures = 0
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for i, det, feats, status, probs in ex.map(work, range(args.cases)):
            stats[status] += 1
            if status == "rejected":
                if os.environ.get("FUZZ_VERBOSE"):
                    print("rejected %d: %s" % (i, probs[0]))
                continue
            for f in feats:
                feat_count[f] = feat_count.get(f, 0) + 1
            if probs:
                failures += 1
                print("FAIL case %d (%s, %s): %s/c%d" % (i, det,
                                                        ",".join(sorted(feats)), args.out, i))
                for p in probs[:4]:
                    print("   ", p)
    print("fuzz_engines: %d programs (%d rejected by check, %d ran ok, %d stopped with an "
          "error), %d disagreeing" % (args.cases, stats["rejected"], stats["ok"],
                                       stats["error"], failures))
    print("features:", ", ".join("%s %d" % kv for kv in sorted(feat_count.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
