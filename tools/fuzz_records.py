#!/usr/bin/env python3
"""Fuzz the XML record reader (spec §11.2, crates/snet-io) through `snet run`.

Run:   python3 tools/fuzz_records.py [--snet PATH] [--cases N] [--seed S] [--jobs J]
       (default binary: $CARGO_TARGET_DIR/release/snet or target/release/snet).

Two kinds of cases:

* "count" cases: an input of 3-8 generated records (each carries a tag `__id`), one of
  which is mutated (broken tags, unknown attributes, entities, CDATA, comments, huge
  and overflowing values for every C type, negative unsigned values, arrays, empty
  fields, duplicate labels, whitespace variants) plus, at random, an `<?xml` prolog
  variant, a BOM, CRLF line ends, junk between records, a missing terminate record.
  The input is run through the identity network `[]` on the seq engine (or --engine).
  Oracle: no panic / signal / hang (10 s); exit 0 or 1; every diagnostic about the
  input names the record (`input record K`) and its position (`line L, column C`)
  and L:C lies in the input; every *unmutated* record (its `__id`) that precedes the
  terminate record is in the output unless the run stopped with a fatal error (exit
  1 with an `error:` line) at or before it; the mutated record is either in the
  output or named by a warning/error (no record silently lost).
* "example" cases: the `input.xml` of an example under examples/lang (no C boxes),
  mutated byte- or token-wise, run with its program. Oracle: no panic / signal;
  exit 0 or 1; input diagnostics name a record and a position in the input. (A run
  that does not end in 10 s is only noted: a mangled value can make an example loop.)

Exit status: 0 if no violation was found, 1 otherwise. Failing inputs are kept under
--out (default /tmp/snet-fuzz-records).
"""
import argparse
import time
import concurrent.futures as cf
import os
import random
import re
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CTYPES = {
    "char": ["a", ",", " ", "&lt;", "&amp;", "&gt;", "\n", "&#65;", "ab", ""],
    "unsigned char": ["z", "&amp;", "0", "ÿ", ""],
    "short": ["0", "-32768", "32767", "32768", "-32769", "70000", " 5", "+5", "x", ""],
    "unsigned short": ["0", "65535", "65536", "-1", "x", ""],
    "int": ["0", "-2147483648", "2147483647", "2147483648", "-2147483649",
            "99999999999999999999999", "007", "0x10", " 12", "1e3", "--1", ""],
    "unsigned int": ["4294967295", "4294967296", "-1", "0", ""],
    "long": ["9223372036854775807", "9223372036854775808", "-9223372036854775809",
             "1" * 60, ""],
    "unsigned long": ["18446744073709551615", "18446744073709551616", "-1", ""],
    "float": ["1.5", "1e39", "-1e-50", "nan", "inf", "-inf", "0x1p3", "1.", ".5", "e5", ""],
    "double": ["2.5", "1e309", "4.9e-325", "NaN", "INFINITY", "1e", ""],
    "long double": ["2.5", "1e4933", "1e-5000", "-0.0", ""],
    "pointer": ["0x10", "(nil)", "0", "zz", ""],
}


def value_text(rng):
    t = rng.choice(list(CTYPES))
    if rng.random() < 0.3:
        n = rng.choice([0, 1, 2, 3])
        if rng.random() < 0.15:
            n = rng.choice([-1, 4000000000, 2 ** 64, 10 ** 30])
        elems = [rng.choice(CTYPES[t]) for _ in range(max(0, min(n, 4)))]
        return "(%s[%d])%s" % (t, n, ",".join(elems))
    return "(%s)%s" % (t, rng.choice(CTYPES[t]))


def record(rng, ident, mutated):
    """The text of one data record; `mutated` makes it adversarial."""
    attrs = ['type="data"', 'mode="textual"']
    if rng.random() < 0.5:
        attrs.insert(0, 'xmlns="snet-home.org"')
    if rng.random() < 0.7:
        attrs.append('interface="C4SNet"')
    entries = ['<tag label="__id">%d</tag>' % ident]
    for k in range(rng.randint(0, 3)):
        kind = rng.choice(["field", "tag", "btag"])
        if kind == "field":
            v = "(int)%d" % rng.randint(-1000, 1000) if not mutated else value_text(rng)
            entries.append('<field label="f%d">%s</field>' % (k, v))
        else:
            v = str(rng.randint(-1000, 1000))
            entries.append('<%s label="%s%d">%s</%s>' % (kind, kind[0], k, v, kind))
    if "interface" not in " ".join(attrs) and any("<field" in e for e in entries):
        attrs.append('interface="C4SNet"')
    if not mutated:
        ws = rng.choice(["", "\n", "\n  ", " "])
        return "<record %s>%s%s%s</record>" % (" ".join(attrs), ws, ws.join(entries), ws)
    ops = rng.sample(range(21), rng.randint(1, 3))
    closing = "</record>"
    for op in ops:
        if op == 0:
            attrs.append(rng.choice(['foo="bar"', "x='1'", 'a=b', 'c', '=', '"', "z=\"&amp;\""]))
        elif op == 1:
            attrs = [a.replace('"data"', rng.choice(['"datum"', '""', '"DATA"', '"collect"',
                                                     '"terminate"', "'data'"])) for a in attrs]
        elif op == 2:
            attrs = [a.replace('"textual"', rng.choice(['"binary"', '"text"', '""']))
                     for a in attrs]
        elif op == 3:
            attrs = [a.replace('"C4SNet"', rng.choice(['"SAC4SNet"', '"c4snet"', '""']))
                     for a in attrs]
        elif op == 4:
            attrs = [a for a in attrs if not a.startswith(rng.choice(["type", "mode", "interface"]))]
        elif op == 5:  # duplicate label
            entries.append(rng.choice(['<tag label="__id">%d</tag>' % ident,
                                       '<field label="f0">(int)1</field>']))
        elif op == 6:  # empty / self-closing / valueless entries
            entries.append(rng.choice(['<tag label="e"/>', '<tag label="e"></tag>',
                                       '<btag label="e" />', '<field label="e"/>',
                                       '<field label="e"></field>', '<tag>1</tag>',
                                       '<field>(int)1</field>', '<tag label="">1</tag>']))
        elif op == 7:  # tag value variants (atoi)
            entries.append('<tag label="t">%s</tag>' % rng.choice(
                ["  12abc", "-", "+", "99999999999", "-2147483649", "0x1f", "", " \n 7 ",
                 "&amp;", "<![CDATA[5]]>"]))
        elif op == 8:  # comments / CDATA / entities between and in entries
            entries.insert(rng.randrange(len(entries) + 1), rng.choice(
                ["<!-- c -->", "<!-- <record type=\"data\"/> -->", "<![CDATA[x]]>", "&amp;",
                 "text", "<!---->", "<!-- unterminated"]))
        elif op == 9:  # broken closing tags
            entries = [e.replace("</tag>", rng.choice(["</tag", "</tga>", "<tag>", "</ tag>",
                                                       "</tag >", "</TAG>"]), 1)
                       for e in entries]
        elif op == 10:
            closing = rng.choice(["", "</record", "</recor>", "</record >", "</record\n>",
                                  "<record>", "</field>"])
        elif op == 11:  # unknown element
            entries.append(rng.choice(["<foo/>", "<foo>1</foo>", "<record type=\"data\"/>",
                                       "<?xml version=\"1.0\"?>", "</>", "<>"]))
        elif op == 12:  # whitespace variants in tags
            entries = [e.replace(' label=', rng.choice(['\n\tlabel = ', '  label=', '\tlabel=']))
                       for e in entries]
        elif op == 13:  # huge values
            entries.append(rng.choice(['<tag label="h">%s</tag>' % ("9" * 10000),
                                       '<field label="h">(char[20000])%s</field>'
                                       % ",".join("x" * 20000),
                                       '<field label="h">(int[5000])%s</field>'
                                       % ",".join(["2147483647"] * 5000),
                                       '<tag label="%s">1</tag>' % ("L" * 5000)]))
        elif op == 14:  # single quotes and odd attribute quoting
            entries = [e.replace('"', "'") for e in entries]
        elif op == 15:
            entries.append('<field label="v">%s</field>' % value_text(rng))
        elif op == 16:
            entries.append('<field label="v" interface="%s">(int)1</field>'
                           % rng.choice(["C4SNet", "SAC4SNet", ""]))
        elif op == 17:  # label with odd characters
            entries.append('<tag label="%s">1</tag>' % rng.choice(
                ["a b", "<x>", "&amp;", "é", "1", "a\"b", "-"]))
        elif op == 18:
            entries.append('<btag label="b">%s</btag>' % rng.choice(["1", "-5", "x", ""]))
        elif op == 20:  # an unterminated comment or declaration after the record
            closing += rng.choice(["<!-- unterminated", "<?xml version='1.0'", "<!-- -- ->"])
        elif op == 19:  # truncate the record text
            text = "<record %s>%s%s" % (" ".join(attrs), "".join(entries), closing)
            return text[:rng.randrange(len(text))]
    return "<record %s>%s%s" % (" ".join(attrs), "".join(entries), closing)


PROLOGS = ['<?xml version="1.0" encoding="ISO-8859-1" ?>\n', "<?xml version='1.0'?>",
           '<?xml version="1.0" standalone="yes"?>\n', '<?xml version="1.1"?>\n',
           '<?xml?>', '<?xml version="1.0" ?>\n<?xml version="1.0" ?>\n', "", "\ufeff",
           "\ufeff<?xml version=\"1.0\"?>\n", "junk text\n", "<!-- comment -->\n"]
TERMINATES = ['<record type="terminate"/>', '<record xmlns="snet-home.org" type="terminate" />',
              "<record type='terminate'></record>", ""]


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4_000_000_000, 4_000_000_000))


ENGINE = ["seq", "1"]


def run(snet, prog, inp_path):
    try:
        p = subprocess.run([snet, "run", "--engine", ENGINE[0], "-w", ENGINE[1], prog, "-i", inp_path],
                           capture_output=True, timeout=10, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, b"", "hang (10 s)"
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


POS_RE = re.compile(r"input record (\d+) \(line (\d+), column (\d+)")
ANYPOS_RE = re.compile(r"input (?:record \d+ )?\(?(?:line|byte)")


def common_problems(rc, err, data):
    probs = []
    if rc is None:
        return [err]
    if rc < 0:
        probs.append("killed by signal %d" % -rc)
    elif rc not in (0, 1):
        probs.append("exit code %d" % rc)
    if "panicked" in err or "stack overflow" in err:
        probs.append("panic: " + err.strip()[:300])
    lines = data.split(b"\n")
    for ln in err.split("\n"):
        if not ln.startswith(("warning: input", "error: input")):
            continue
        m = POS_RE.search(ln)
        if not m:
            if "input byte" in ln or "input record" in ln and "line" not in ln:
                probs.append("input diagnostic without record and line:column: " + ln[:200])
            continue
        line, col = int(m.group(2)), int(m.group(3))
        if line < 1 or line > len(lines) or col < 1 or col > len(lines[line - 1]) + 1:
            probs.append("position %d:%d outside the input: %s" % (line, col, ln[:200]))
    return probs


def ids_in_output(out):
    return [int(x) for x in re.findall(rb'<tag label="__id">(-?\d+)</tag>', out)]


def count_case(rng, snet, prog, path):
    n = rng.randint(3, 8)
    bad = rng.randrange(n)
    recs = [record(rng, i, i == bad) for i in range(n)]
    prolog = rng.choice(PROLOGS)
    sep = rng.choice(["\n", "", " \n\t", "\njunk\n", "<!-- x -->"])
    term = rng.choice(TERMINATES)
    text = prolog + sep.join(recs) + sep + term + "\n"
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    rc, out, err = run(snet, prog, path)
    probs = common_problems(rc, err, data)
    if rc is None:
        return data, probs
    got = ids_in_output(out)
    fatal = rc != 0 and any(l.startswith("error:") for l in err.split("\n"))
    warned = [int(m.group(1)) for m in POS_RE.finditer(err)]
    for i in range(n):
        if i == bad:
            continue
        # records before the mutated one always count; later ones unless the mutated
        # record ended the input or the run (a terminate or control record, or fatal)
        if i not in got and i < bad and not fatal:
            probs.append("record __id=%d (unmutated, before the mutated one) lost" % i)
        if got.count(i) > 1:
            probs.append("record __id=%d output %d times" % (i, got.count(i)))
    # every later unmutated record must be there unless the mutated one could legitimately
    # end the input (terminate, fatal error) or swallow it (unclosed record/comment)
    # a mutated record that became a terminate record ends the input; one that lost
    # its `<record` is junk (rule 1)
    ends = re.search(r"""type=["']terminate["']""", recs[bad]) is not None
    junk = re.match(r"<record[\s/>]", recs[bad]) is None
    later_lost = [i for i in range(bad + 1, n) if i not in got]
    if later_lost and rc == 0 and not warned and not ends:
        probs.append("records %s after the mutated one lost without any diagnostic" % later_lost)
    if bad not in got and not warned and not fatal and not ends and not junk:
        probs.append("mutated record __id=%d neither output nor reported" % bad)
    if rc == 1 and not fatal:
        probs.append("exit 1 without an error: line")
    return data, probs


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(7)
        i = rng.randrange(len(data) + 1)
        if op == 0 and data:
            del data[i:i + rng.randint(1, 8)]
        elif op == 1:
            data[i:i] = rng.choice([b"<", b">", b"/", b'"', b"'", b"=", b"&", b"\x00", b"\xff",
                                    b"<!--", b"-->", b"<record", b"</record>", b"\r\n",
                                    b"<![CDATA[", b"]]>", b"\xef\xbb\xbf", b"999999999999"])
        elif op == 2 and data:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randint(1, 40)]
        elif op == 3:
            data = data[:i]
        elif op == 4 and data:
            data[min(i, len(data) - 1)] = rng.randrange(256)
        elif op == 5:
            data = data.replace(b'"', b"'") if rng.random() < 0.5 else data.replace(b" ", b"\t")
        elif op == 6:
            data = data.replace(b"</tag>", b"</tag >", 1)
    return bytes(data)


def main():
    ap = argparse.ArgumentParser()
    tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap.add_argument("--snet", default=os.path.join(tgt, "release", "snet"))
    ap.add_argument("--cases", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/snet-fuzz-records")
    ap.add_argument("--engine", default="seq", help="ENGINE or ENGINE:WORKERS, e.g. front:2")
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop starting cases after this many seconds (0: no limit)")
    args = ap.parse_args()
    t_start = time.time()
    ENGINE[:] = (args.engine.split(":") + ["1"])[:2]
    os.makedirs(args.out, exist_ok=True)
    ident = os.path.join(args.out, "fzid.snet")
    with open(ident, "w") as f:
        f.write("net fzid connect [];\n")
    examples = []
    for name in sorted(os.listdir(os.path.join(ROOT, "examples/lang"))):
        d = os.path.join(ROOT, "examples/lang", name)
        prog, inp = os.path.join(d, name + ".snet"), os.path.join(d, "input.xml")
        if os.path.exists(prog) and os.path.exists(inp):
            with open(inp, "rb") as f:
                examples.append((prog, f.read()))

    def work(i):
        if args.seconds and time.time() - t_start > args.seconds:
            return i, "skipped", b"", []
        rng = random.Random(args.seed * 1000003 + i)
        path = os.path.join(args.out, "in-%d.xml" % (i % 64))
        if i % 3 == 2 and examples:
            prog, data = rng.choice(examples)
            data = mutate_bytes(rng, data)
            with open(path, "wb") as f:
                f.write(data)
            rc, _, err = run(args.snet, prog, path)
            if rc is None:
                # A mangled value can make the example's own loop run for ever (e.g.
                # doubling's `n * 2` from n = 0): the program's, not the reader's, fault.
                print("note: example %s did not finish on %s" % (os.path.basename(prog), path))
                return i, "example", data, []
            return i, "example " + os.path.basename(prog), data, common_problems(rc, err, data)
        data, probs = count_case(rng, args.snet, ident, path)
        return i, "count", data, probs

    failures = tried = panics = hangs = 0
    def results(ex):
        # 256 cases at a time: with --seconds the case count is only an upper bound.
        for start in range(0, args.cases, 256):
            if args.seconds and time.time() - t_start > args.seconds:
                return
            yield from ex.map(work, range(start, min(start + 256, args.cases)))

    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for i, kind, data, probs in results(ex):
            if kind == "skipped":
                continue
            tried += 1
            panics += any(("panic" in p or "signal" in p) for p in probs)
            hangs += any(("hang" in p or "did not end" in p) for p in probs)
            if probs:
                failures += 1
                keep = os.path.join(args.out, "fail-%05d.xml" % i)
                with open(keep, "wb") as f:
                    f.write(data)
                print("FAIL %s (%s):" % (kind, keep))
                for p in probs[:4]:
                    print("   ", p)
    print("fuzz_records: %d inputs tried (engine %s) in %.0f s: %d failing, %d panics or signals, %d hangs"
          % (tried, args.engine, time.time() - t_start, failures, panics, hangs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
