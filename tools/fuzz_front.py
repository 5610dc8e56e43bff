#!/usr/bin/env python3
"""Fuzz the S-Net front end (`snet check`, crates/snet-lang).

Run:   python3 tools/fuzz_front.py [--snet PATH] [--cases N] [--seed S] [--jobs J]
       (default binary: $CARGO_TARGET_DIR/release/snet or target/release/snet;
        build it first with `cargo build --release -p snet`).

What it does: takes every `.snet` under examples/ (and tests/), applies random
mutations (delete / duplicate / swap tokens, truncate, insert punctuation, keywords,
huge numbers, non-UTF-8 bytes, CRLF, tabs, unicode identifiers), plus a fixed set of
stress inputs (10^4 nested parentheses, 10^4 `..`, deep filters, ...) and a list of
spec-legal programs that must be accepted (spec §3 forms the examples never use),
and runs `snet check` on each.

Oracle (each violation is printed with the input saved under the --out directory):
  * no panic, abort, signal or stack overflow, and the check finishes within 5 s;
  * exit code 0 or 1 (2 is reserved for usage errors);
  * every `error[...]` diagnostic (and every `warning[...]` with a position) has a ` --> FILE:LINE:COL` line whose position lies in
    the file (LINE may be one past the last line only for an end-of-file position), and
    the snippet shows that source line with a caret (`^`) under column COL;
  * the programs of ACCEPT are accepted (exit 0).
Exit status: 0 if no violation was found, 1 otherwise.
"""
import argparse
import codecs
import concurrent.futures as cf
import os
import random
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KEYWORDS = ["box", "net", "connect", "type", "typesig", "if", "then", "else", "abs",
            "min", "max", "<metadata>", "</metadata>", "<<<", ">>>"]
PUNCT = ["..", "...", "->", "||", "|]", "[|", "**", "!!", "::", "==", "!=", "<=", ">=",
         "&&", "(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ":", "=", "|", "*", "!",
         "@", "\\", "#", "+", "-", "/", "%", "?", "/*", "*/", "//", "//!", "\"", "'", "$",
         "`", "~", "^", "&", "."]
NUMBERS = ["0", "00", "08", "0x", "0xFFFFFFFF", "0x7fffffff", "2147483647", "2147483648",
           "-2147483648", "-2147483649", "99999999999999999999999999999999", "0X1g",
           "1e5", "0777", "-0", "- 1"]
WEIRD = ["é", "αβγ", "名前", "\u200b", "\ufeff", "\x00", "\x7f", "\t", "\r", "\r\n",
         "\x0b", "\x0c"]
WEIRD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\x80", b"\xed\xa0\x80"]

TOKEN_RE = re.compile(rb"\s+|[A-Za-z_][A-Za-z0-9_]*|0[xX][0-9a-fA-F]*|[0-9]+|"
                      rb"\.\.\.|\.\.|->|\|\||\|\]|\[\||\*\*|!!|::|<<<|>>>|==|!=|<=|>=|&&|.",
                      re.S)

# Programs the spec (§3) allows that must be accepted.
ACCEPT = {
    "typedefs": """
type A = {a};
type AB = {a} | {b,<t>};
typesig S1 = A -> {x};
typesig S2 = S1, {b} -> {y} | {z};
typesig S3 = {<c>} -> ...;
net typedefs (S2) connect [{a} -> {x = a}] | [{b} -> {y = b}];
""",
    "typeref_in_sig": """
type A = {a};
type X = {x};
net typeref_in_sig (A -> X) connect [{a} -> {x = a}];
""",
    "sig_ellipsis": """
net sig_ellipsis ({<C>} -> ..., {a} -> {a}) connect [{<C>} -> {}] | [{a} -> {a}];
""",
    "sig_empty_out": """
net sig_empty_out ({a} ->) connect [{a} -> ];
""",
    "sig_passthrough": """
net sig_passthrough ({a,b} -> {=a, c}) connect [{b} -> {c = b}];
""",
    "nested_nets": """
net nested_nets {
  net inner {
    net innermost connect [{a} -> {b = a}];
  } connect innermost .. [{b} -> {c = b}];
  net other { } connect [];
} connect inner .. other;
""",
    "metadata_everywhere": """
<metadata><default><interface value="C4SNet" /></default></metadata>
<metadata>
  <boxdefault><interface value="C4SNet"/></boxdefault>
  <netdefault><location>1, 2, 3, 0</location></netdefault>
  <box name="foo"><interface value="C4SNet"/><empty/></box>
  <net name="metadata_everywhere"><key value="$MMAP"/><box name="foo"><interface value="C4SNet"/></box></net>
</metadata>
net metadata_everywhere {
  <metadata><boxdefault><interface value="C4SNet"/></boxdefault></metadata>
  box foo ((a) -> (b));
} connect foo;
""",
    "comments": """
// line comment
/* block
   comment ** with stars */ net /* inline */ comments // trailing
  connect /* here */ [] /**/ ; /* end */
// last line without newline""",
    "stage_pragma_first": "//! snet final\nnet stage_pragma_first connect [];\n",
    "box_shapes": """
box f1((a,<t>) -> (b) | (c,<u>));
box f2(() -> (x));
box f3( -> (x));
box f4((a) -> ());
box f5((a) -> );
box f6((a,<#b>) -> (a,<#b>));
net box_shapes connect f1 .. f4 .. f5 | f2 | f6;
""",
    "filter_forms": """
net filter_forms connect
    [{A} -> {A,<T>}] .. [{<T>} -> {}] .. [{} -> {} ; {}]
 .. [{A} -> {B = A}] .. [{<K>} -> if <K > 9> then {<K>,<big>} else {<K>,<small>}]
 .. [{<K>,<L>} -> if <K < L> then {<X=K>} ; {<K=K+1>,<L>} else ]
 .. [{<K>,<L>} -> if <K == 0> then else if <L == 0> then {<Z>} else {<K=K-1>}]
 .. [{<#b>} -> {<#b = #b + 1>, <c = #b>}]
 .. [{<L>,<M>,<V>} -> ];
""",
    "tagexprs": """
net tagexprs connect [{<a>,<b>} -> {<c = a > b ? 1 == 1 : b == 0 ? 2 : 3>,
   <d = a == b ? b < a ? 1 : 2 : 3>,
   <e = abs a + 1>, <f = abs (4 + 4)>, <g = a min b max 3>,
   <h = (!(a == 1) || b > 2 && a != b) ? 1 : 0>,
   <i = -5 + 0 - a>, <j = a % 3 / 2 * 1>, <k = (a > b) == (b >= a) ? 1 : 0>,
   <n = 0x1f + 030 + 0X1F>, <o = -2147483648>, <p = 2147483647>, <q = a > (b) ? 1 : 0>}];
""",
    "combinators": """
net combinators connect
   ([{a} -> {a}] * {a,<t>} if <t == 1>, {<u>}) ** {b}
 | [] ! <t> | [] !! <t> | [] !@ <t> | [] !!@ <t> | [] ! <#b>
 | ([{<t>} -> {<t = t - 1>}] \\ {<t>} if <t > 0>)
 | [|{a}, {b,<t>} if <t == 1>, {c}|] * {a,b,c}
 || [] @ 1 || ([|{xx},{rrm}|] @ 2) * {xx,rrm};
""",
    'spec_a2': 'type T = {a} | {b};\ntype O = {x};\ntypesig S = T -> O | {y};\ntypesig S2 = S;\ntypesig S3 = S2, {<c>} -> ;\nnet spec_a2 (S3) connect [{a} -> {x = a}] | [{b} -> {y = b}] | [{<c>} -> ];\n',
    'spec_a3': 'net spec_a3 (-> {x}, {a} -> {a}) connect [];\n',
    'spec_a4': 'net spec_a4 connect ([] !@ <t>) .. ([] !!@ <t>) .. ([] ! <#b>) .. ([] !! <#b>) .. [] @ 0;\n',
    'spec_a5': 'net spec_a5 {\n  <metadata><net name="inner"><netdefault><x value="1"/></netdefault></net></metadata>\n  net inner connect [];\n  typesig LocalSig = {a} -> {a};\n  type LocalT = {a};\n  net sig (LocalSig) connect [];\n} connect inner .. sig;\n',
    'spec_a7': 'net spec_a7 connect [| {a} if <1 == 1>, {<t>} if <t > 2>, {b} |] .. [| {c}, {d} |] ** {c, d} if <1 == 1>, {<z>};\n',
    'spec_a9': 'net spec_a9 connect [{<K>,<L>} -> if <K < L> then {<X=K>} ; {<K=K+1>,<L>} else ] .. [{<X>} -> {<Y = X>X ? 1 : 0>}];\n',
    'spec_a10': 'net spec_a10 connect [{<T>} -> {<U = T >= 4 ? 1 : 0>}] * {<S>} if <S >= 4> , {<R>} if <R> 3>;\n',
    'spec_a1': 'box f((a,<t>=) -> (b) | (c,<t>));\nbox g((a=, <t>) -> (b));\nnet spec_a1 connect f | g;\n',
    'spec_a8': 'box f(() -> (x));\nbox init( -> (y) | (<z>));\nbox none((a) -> );\nbox emp((a) -> ());\nnet spec_a8 connect (init .. none) | f .. emp;\n',
    "empty_braces_body": "net empty_braces_body { } connect [];\n",
    "unicode_in_comments": "// héllo wörld 名前\n/* ünïcödé */ net unicode_in_comments connect [];\n",
    "crlf": "net crlf\r\n  connect []\r\n  ;\r\n",
    "tabs": "net\ttabs\tconnect\t[\t]\t;\n",
    "deep_parens_ok": "net deep_parens_ok connect " + "(" * 200 + "[]" + ")" * 200 + ";\n",
    "long_chain_ok": "net long_chain_ok connect " + " .. ".join(["[]"] * 300) + ";\n",
    "long_choice_ok": "net long_choice_ok connect " + " | ".join(
        "[{<t%d>} -> {}]" % i for i in range(60)) + ";\n",
}

# Stress inputs: must not crash/hang (any diagnostic is fine).
STRESS = {
    "parens_1e4": "net s connect " + "(" * 10000 + "[]" + ")" * 10000 + ";\n",
    "parens_open_1e4": "net s connect " + "(" * 10000 + "\n",
    "serial_1e4": "net s connect " + " .. ".join(["[]"] * 10000) + ";\n",
    "choice_1e4": "net s connect " + " | ".join(["[]"] * 10000) + ";\n",
    "detchoice_1e4": "net s connect " + " || ".join(["[]"] * 10000) + ";\n",
    "star_1e4": "net s connect []" + " * {a}" * 10000 + ";\n",
    "fb_1e4": "net s connect []" + " \\ {a}" * 10000 + ";\n",
    "tagexpr_parens_1e4": "net s connect [{<a>} -> {<b = " + "(" * 10000 + "a" + ")" * 10000 + ">}];\n",
    "tagexpr_not_1e4": "net s connect [{<a>} -> {<b = " + "!" * 10000 + "a>}];\n",
    "tagexpr_abs_1e4": "net s connect [{<a>} -> {<b = " + "abs " * 10000 + "a>}];\n",
    "tagexpr_plus_1e4": "net s connect [{<a>} -> {<b = " + " + ".join(["a"] * 10000) + ">}];\n",
    "tagexpr_cond_1e4": "net s connect [{<a>} -> {<b = " + "a ? " * 5000 + "1" + " : 2" * 5000 + ">}];\n",
    "guards_1e3": "net s connect [{<a>} -> " + "if <a == 1> then {} else " * 1000 + "{}];\n",
    "nested_nets_1e3": "net s " + "{ net s " * 1000 + "connect [];" + "} connect s;" * 1000 + "\n",
    "nested_nets_1e4": "net s " + "{ net s " * 10000 + "connect [];" + "} connect s;" * 10000 + "\n",
    "labels_1e4": "net s connect [{" + ",".join("a%d" % i for i in range(10000)) + "} -> {}];\n",
    "sync_1e3": "net s connect [|" + ",".join("{a%d}" % i for i in range(1000)) + "|];\n",
    "sync_pats_20": "net s connect [|" + ",".join("{a%d}" % i for i in range(20)) + "|];\n",
    "long_ident": "net " + "a" * 100000 + " connect [];\n",
    "long_number": "net s connect [{<a>} -> {<b = " + "9" * 100000 + ">}];\n",
    "many_lines": "\n" * 100000 + "net s connect [] ;;\n",
    "metadata_deep": "<metadata>" + "<net name=\"s\">" * 5000 + "</net>" * 5000 + "</metadata>\nnet s connect [];\n",
    "comment_unterminated_long": "net s connect [];\n/*" + "x" * 100000,
    "choice_of_optional_20": "net s connect " + " .. ".join(
        "([{<t%d>} -> {<u%d>}] | [])" % (i, i) for i in range(20)) + ";\n",
    "nested_split_star": "net s connect " + "(" * 200 + "[] ! <t>" + ") * {a}" * 200 + ";\n",
}


def tokens(data):
    return [m.group(0) for m in TOKEN_RE.finditer(data)]


def mutate(rng, data):
    toks = tokens(data)
    if not toks:
        toks = [b""]
    n = rng.randint(1, 4)
    for _ in range(n):
        op = rng.randrange(14)
        i = rng.randrange(len(toks)) if toks else 0
        if op == 0 and len(toks) > 1:  # delete
            del toks[i]
        elif op == 1:  # duplicate
            toks.insert(i, toks[i])
        elif op == 2 and len(toks) > 1:  # swap two tokens
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == 3:  # truncate
            toks = toks[:i]
        elif op == 4:
            toks.insert(i, rng.choice(PUNCT).encode())
        elif op == 5:
            toks.insert(i, (" " + rng.choice(KEYWORDS) + " ").encode())
        elif op == 6:
            toks.insert(i, rng.choice(NUMBERS).encode())
        elif op == 7:
            toks.insert(i, rng.choice(WEIRD).encode("utf-8"))
        elif op == 8:
            toks.insert(i, rng.choice(WEIRD_BYTES))
        elif op == 9:  # CRLF everywhere
            toks = [t.replace(b"\n", b"\r\n") for t in toks]
        elif op == 10:  # tabs for spaces
            toks = [t.replace(b" ", b"\t") for t in toks]
        elif op == 11:  # replace an identifier with a unicode one
            ids = [k for k, t in enumerate(toks) if re.fullmatch(rb"[A-Za-z_]\w*", t)]
            if ids:
                toks[rng.choice(ids)] = rng.choice(["é", "naïve", "名前", "x\u0301"]).encode()
        elif op == 12:  # replace a number with a huge one
            nums = [k for k, t in enumerate(toks) if re.fullmatch(rb"[0-9]\w*", t)]
            if nums:
                toks[rng.choice(nums)] = rng.choice(NUMBERS).encode()
        elif op == 13:  # wrap a slice in parentheses / repeat a slice
            j = rng.randint(i, min(len(toks), i + 8))
            if rng.random() < 0.5:
                toks[i:j] = [b"("] + toks[i:j] + [b")"]
            else:
                toks[i:j] = toks[i:j] * rng.randint(2, 50)
        if not toks:
            toks = [b""]
    return b"".join(toks)


DIAG_RE = re.compile(r"^(error|warning)(\[[A-Z0-9]+\])?: ")
LOC_RE = re.compile(r"^ *--> (.*):(\d+):(\d+)$")
SNIP_RE = re.compile(r"^ *(\d+) \| ?(.*)$")
CARET_RE = re.compile(r"^ *\| ?([ ]*)([\^\-]+)")


def _per_byte(err):
    return ("\ufffd" * (err.end - err.start), err.end)


codecs.register_error("perbyte", _per_byte)


def char_starts(raw):
    """Byte offsets where a character starts (a bad byte is a character of its own)."""
    starts, i = set(), 0
    while i < len(raw):
        starts.add(i)
        b = raw[i]
        n = 1 if b < 0x80 else 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4 if b >> 3 == 30 else 1
        try:
            raw[i:i + n].decode("utf-8")
            i += n
        except UnicodeDecodeError:
            i += 1
    return starts


def display_line(raw):
    """How a diagnostic shows (part of) a source line: tabs as four spaces, a carriage
    return as a space, other control characters and each byte that is not UTF-8 as
    U+FFFD (one visible column each)."""
    text = raw.decode("utf-8", "perbyte")
    return "".join("    " if c == "\t" else " " if c == "\r" else
                   "\ufffd" if (ord(c) < 32 or 0x7f <= ord(c) < 0xa0) else c for c in text)


def line_body(lines, i):
    """Line i (0-based) of a text split at "\n", without its terminator: "\n" or "\r\n"
    ends a line; a lone "\r" (at the end of the text or before another "\r\n") is
    whitespace of the line (spec 2.1), which columns count."""
    body = lines[i]
    if i < len(lines) - 1 and body.endswith(b"\r"):
        body = body[:-1]
    return body


def check_diagnostics(path, data, stderr):
    """Returns a list of problems with the error diagnostics in stderr."""
    problems = []
    # A UTF-8 byte-order mark is not part of the program: columns of line 1 are
    # counted without it (as an editor shows them).
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    nlines = len(lines)
    out = stderr.split("\n")
    k = 0
    while k < len(out):
        m = DIAG_RE.match(out[k])
        if not m or out[k].startswith("error: could not compile") or not m.group(2):
            k += 1
            continue
        head = out[k]
        if k + 1 >= len(out) or not LOC_RE.match(out[k + 1]):
            # E0001 (cannot read) is the only error allowed without a position.
            if "E0001" not in head and m.group(1) == "error":
                problems.append("error without file:line:col: " + head)
            k += 1
            continue
        lm = LOC_RE.match(out[k + 1])
        fname, line, col = lm.group(1), int(lm.group(2)), int(lm.group(3))
        if os.path.basename(fname) != os.path.basename(path):
            problems.append("diagnostic names another file %r: %s" % (fname, head))
        if line < 1 or line > nlines or col < 1:
            problems.append("position %d:%d outside the file (%d lines): %s"
                            % (line, col, nlines, head))
            k += 2
            continue
        # Columns are 1-based byte offsets in the line (like gcc), so a caret's
        # display column is the width of the decoded bytes before it.
        rawb = line_body(lines, line - 1)
        if col > len(rawb) + 1:
            problems.append("column %d past the end of line %d (%d bytes): %s"
                            % (col, line, len(rawb), head))
        elif col <= len(rawb) and col - 1 not in char_starts(rawb):
            problems.append("column %d of line %d is inside a UTF-8 sequence: %s"
                            % (col, line, head))
        # find the snippet line for `line` and the caret line after it
        j = k + 2
        found = False
        while j < len(out) and out[j].strip() != "" and not DIAG_RE.match(out[j]):
            sm = SNIP_RE.match(out[j])
            if sm and int(sm.group(1)) == line and j + 1 < len(out):
                cm = CARET_RE.match(out[j + 1])
                if cm and "^" in cm.group(2):
                    found = True
                    want = display_line(line_body(lines, line - 1))
                    shown = sm.group(2)
                    if any(ord(c) < 32 for c in shown):
                        problems.append("snippet of line %d shows a control character: %r"
                                        % (line, shown))
                    prefix = display_line(lines[line - 1][:col - 1])
                    caret_col = len(cm.group(1))
                    cut = shown.rstrip() != want.rstrip() and (
                        shown.startswith("...") or shown.rstrip().endswith("..."))
                    if cut:
                        # A long line is shown as a window around the caret, `...` at
                        # each cut end: the window is part of the line, and the caret
                        # stands under the character of column COL.
                        core = shown.rstrip()
                        core = core[3:] if core.startswith("...") else core
                        core = core[:-3] if core.endswith("...") else core
                        if core not in want:
                            problems.append("cut snippet of line %d is %r, not part of %r: %s"
                                            % (line, shown, want[:200], head))
                        elif len(prefix) < len(want) and (
                                caret_col >= len(shown) or shown[caret_col] != want[len(prefix)]):
                            problems.append("caret of a cut line %d not under column %d: %s"
                                            % (line, col, head))
                        break
                    if shown.rstrip() != want.rstrip():
                        problems.append("snippet of line %d is %r, the file has %r: %s"
                                        % (line, shown, want, head))
                    if cm.group(2)[0] != "^" or caret_col != len(prefix):
                        problems.append("caret at display column %d, expected %d (line %d col %d): %s"
                                        % (caret_col, len(prefix), line, col, head))
                    break
            j += 1
        if not found:
            problems.append("no caret under line %d: %s" % (line, head))
        k = j if j > k else k + 1
    return problems


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4_000_000_000, 4_000_000_000))


def run_check(snet, path, data, timeout=5.0):
    with open(path, "wb") as f:
        f.write(data)
    t0 = time.time()
    try:
        p = subprocess.run([snet, "check", path], capture_output=True, timeout=timeout + 5,
                           preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return ["hang: no answer after %.0f s" % (timeout + 5)], None
    dt = time.time() - t0
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if dt > timeout:
        problems.append("slow: %.1f s" % dt)
    if p.returncode < 0:
        problems.append("killed by signal %d" % -p.returncode)
    elif p.returncode not in (0, 1):
        problems.append("exit code %d" % p.returncode)
    if "panicked" in err or "stack overflow" in err or "RUST_BACKTRACE" in err:
        problems.append("panic: " + err.strip().split("\n")[0][:300])
    if p.returncode == 1 and "error" not in err:
        problems.append("exit 1 without an error message")
    problems += check_diagnostics(path, data, err)
    return problems, p.returncode


def main():
    ap = argparse.ArgumentParser()
    tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap.add_argument("--snet", default=os.path.join(tgt, "release", "snet"))
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/snet-fuzz-front")
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop starting mutants after this many seconds (0: no limit)")
    args = ap.parse_args()
    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    seeds = []
    for d in ("examples", "tests"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if f.endswith(".snet"):
                    with open(os.path.join(dirpath, f), "rb") as fh:
                        seeds.append((f[:-5], fh.read()))
    seeds.sort()
    rng = random.Random(args.seed)
    jobs = []  # (kind, name, data)
    for name, src in sorted(ACCEPT.items()):
        jobs.append(("accept", name, src.encode()))
    for name, src in sorted(STRESS.items()):
        jobs.append(("stress", name, src.encode()))
    for name, data in seeds:  # every seed unchanged, with CRLF, with tabs
        jobs.append(("seed", name, data))
        jobs.append(("seed", name, data.replace(b"\n", b"\r\n")))
    fixed = len(jobs)

    def mutants():
        for i in range(args.cases):
            name, data = rng.choice(seeds)
            yield ("mutant", name, mutate(rng, data))

    failures = 0
    tried = panics = hangs = 0

    def work(idx_job):
        idx, (kind, name, data) = idx_job
        if kind == "mutant" and args.seconds and time.time() - t_start > args.seconds:
            return idx, "skipped", name, data, []
        # keep the entry net's name = file name where possible
        path = os.path.join(args.out, "w%d" % (idx % 64), name + ".snet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        probs, rc = run_check(args.snet, path, data)
        if kind == "accept" and rc != 0:
            probs.append("spec-legal program rejected (exit %s)" % rc)
        return idx, kind, name, data, probs

    def batches():
        # The fixed cases, then mutants made 256 at a time (lazily: with --seconds the
        # case count is only an upper bound).
        yield list(enumerate(jobs))
        it, idx = mutants(), fixed
        while not (args.seconds and time.time() - t_start > args.seconds):
            batch = []
            for job in it:
                batch.append((idx, job))
                idx += 1
                if len(batch) == 256:
                    break
            if not batch:
                return
            yield batch

    def results(ex):
        for batch in batches():
            yield from ex.map(work, batch)

    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for idx, kind, name, data, probs in results(ex):
            if kind == "skipped":
                continue
            tried += 1
            panics += any(p.startswith(("panic", "killed")) for p in probs)
            hangs += any(p.startswith(("hang", "slow")) for p in probs)
            if probs:
                failures += 1
                keep = os.path.join(args.out, "fail-%05d-%s.snet" % (idx, name))
                with open(keep, "wb") as f:
                    f.write(data)
                print("FAIL %s %s (%s):" % (kind, name, keep))
                for p in probs[:5]:
                    print("   ", p)
    print("fuzz_front: %d programs tried (%d accept, %d stress, %d seeds, %d mutants) in %.0f s: "
          "%d failing, %d panics or signals, %d hangs"
          % (tried, len(ACCEPT), len(STRESS), 2 * len(seeds),
             tried - fixed, time.time() - t_start,
             failures, panics, hangs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
