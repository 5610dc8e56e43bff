#!/usr/bin/env python3
"""Per-task totals from LPEL monitoring logs (seed 000 section 6.2).

Reads the per-worker logs `mon_w<N>.log` written by snet-lpel's monitoring
(format of seed 000 section 5.4.3) and, if present, `tasks.map` (lines
`tid worker kind name`) from the same directory, and prints for each worker
the total and average execution time per task name, as the seed does:

    *** escTime: total 1.631908, avg 0.203989

(seconds; avg = total / number of task instances with that name), followed by
the per-worker wait lines found at level d.

Usage:
    lpel_log_totals.py DIR            # all mon_w*.log in DIR
    lpel_log_totals.py LOG [LOG...]   # given files (tasks.map looked up beside them)
    lpel_log_totals.py --by-task DIR  # one line per task id instead of per name
    lpel_log_totals.py --self-test    # parse a generated log and check the sums
"""

import os
import re
import sys
from collections import OrderedDict, defaultdict

LINE = re.compile(
    r"^(?P<ts>\d+) tid (?P<tid>\d+) disp (?P<disp>\d+) st (?P<st>R|Bi|Bo|Ba|Z) "
    r"et (?P<et>\d+)(?: creat (?P<creat>\d+))?(?: \[(?P<streams>[^\]]*)\])?$"
)
STREAM = re.compile(r"^(\d+),([rw]),([OIC]),(\d+),([?-][!-][*-])$")
WORKER = re.compile(r"^(?P<ts>\d+) \*\*\* (?P<msg>.*)$")


def parse_line(line):
    """Returns a dict for a dispatch line, ('worker', msg) for a worker line, or None."""
    line = line.rstrip("\n")
    m = LINE.match(line)
    if m:
        d = m.groupdict()
        rec = {
            "ts": int(d["ts"]),
            "tid": int(d["tid"]),
            "disp": int(d["disp"]),
            "st": d["st"],
            "et": int(d["et"]),
            "creat": int(d["creat"]) if d["creat"] else None,
            "streams": [],
        }
        if d["streams"]:
            for entry in d["streams"].split(";"):
                if not entry:
                    continue
                s = STREAM.match(entry)
                if not s:
                    raise ValueError("bad stream entry %r in line %r" % (entry, line))
                rec["streams"].append(
                    {"id": int(s.group(1)), "mode": s.group(2), "state": s.group(3),
                     "count": int(s.group(4)), "flags": s.group(5)}
                )
        return rec
    w = WORKER.match(line)
    if w:
        return ("worker", w.group("msg"))
    return None


def read_map(directory):
    names = {}
    path = os.path.join(directory, "tasks.map")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 3)
                if len(parts) == 4:
                    names[int(parts[0])] = parts[3]
    return names


def totals(records, names):
    """Per name: [total_ns, set of tids, dispatches]."""
    per = OrderedDict()
    for r in records:
        name = names.get(r["tid"], "tid %d" % r["tid"])
        e = per.setdefault(name, [0, set(), 0])
        e[0] += r["et"]
        e[1].add(r["tid"])
        e[2] += 1
    return per


def report(files, by_task=False, out=sys.stdout):
    for path in files:
        names = read_map(os.path.dirname(os.path.abspath(path)))
        records, worker_lines = [], []
        with open(path) as f:
            for line in f:
                p = parse_line(line)
                if p is None:
                    continue
                if isinstance(p, tuple):
                    worker_lines.append(p[1])
                else:
                    records.append(p)
        out.write("%s:\n" % os.path.basename(path))
        if by_task:
            per = defaultdict(lambda: [0, 0, None, 0])
            for r in records:
                e = per[r["tid"]]
                e[0] += r["et"]
                e[1] += 1
                if r["creat"] is not None:
                    e[2] = r["creat"]
                e[3] = r["ts"]
            for tid in sorted(per):
                tot, n, creat, last = per[tid]
                extra = ""
                if creat is not None:
                    alive = last - creat
                    extra = ", alive %.6f, idle %.6f" % (alive / 1e9, (alive - tot) / 1e9)
                out.write("*** tid %d %s: disp %d, total %.6f, avg %.6f%s\n"
                          % (tid, names.get(tid, "?"), n, tot / 1e9, tot / 1e9 / n, extra))
        else:
            for name, (tot, tids, n) in totals(records, names).items():
                out.write("*** %s: total %.6f, avg %.6f\n" % (name, tot / 1e9, tot / 1e9 / len(tids)))
        for w in worker_lines:
            out.write("*** %s\n" % w)


def self_test():
    import io
    import tempfile
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "tasks.map"), "w") as f:
        f.write("191 0 box escTime\n4 0 other <collector>\n")
    lines = [
        "248954687985216 tid 191 disp 3 st Z et 7473 creat 248954684456346 [246,w,C,2,-!*;245,r,C,2,--*;]",
        "248954687985300 tid 4 disp 1 st Bi et 1000 [245,r,I,0,?--;]",
        "248954687985400 tid 4 disp 2 st Z et 3000 creat 248954687900000 []",
        "248955428427159 *** worker 0 waited (19) for 0.740413447",
        "248955428433514 *** Worker 0 exited. wait_cnt 19, wait_time 1.034697843",
    ]
    log = os.path.join(d, "mon_w0.log")
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    rec = parse_line(lines[0])
    assert rec["tid"] == 191 and rec["et"] == 7473 and rec["creat"] == 248954684456346, rec
    assert rec["streams"][0] == {"id": 246, "mode": "w", "state": "C", "count": 2, "flags": "-!*"}
    assert parse_line("garbage") is None
    buf = io.StringIO()
    report([log], out=buf)
    text = buf.getvalue()
    assert "*** escTime: total 0.000007, avg 0.000007" in text, text
    assert "*** <collector>: total 0.000004, avg 0.000004" in text, text
    assert "Worker 0 exited. wait_cnt 19" in text, text
    buf = io.StringIO()
    report([log], by_task=True, out=buf)
    assert "*** tid 4 <collector>: disp 2, total 0.000004, avg 0.000002" in buf.getvalue(), buf.getvalue()
    print("self-test passed")


def main(argv):
    by_task = "--by-task" in argv
    args = [a for a in argv if a != "--by-task"]
    if args == ["--self-test"]:
        self_test()
        return 0
    if not args:
        sys.stderr.write(__doc__)
        return 2
    files = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a)
                            if f.startswith("mon_w") and f.endswith(".log"))
        else:
            files.append(a)
    report(files, by_task=by_task)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
