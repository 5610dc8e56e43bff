"""run_example.py DIR [N]: run the example in DIR (DIR/NAME.snet, DIR/*.c, input.xml) on
every engine at -w 1 and -w 2, N runs (default 15) each for the concurrent engines, and
compare with expected.xml as spec 11.4 says (in order if the program is marked
'// deterministic'). Uses $SNET, else target/release/snet of this repository."""
import sys, os, subprocess, glob, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snetx
d = os.path.abspath(sys.argv[1]); n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
name = os.path.basename(d)
prog = os.path.join(d, name + '.snet'); srcs = sorted(glob.glob(os.path.join(d, '*.c')))
ordered = any(l.strip() == '// deterministic' for l in open(prog).readlines()[:5])
exp = open(os.path.join(d, 'expected.xml')).read()
snet = os.environ.get('SNET') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '../target/release/snet')
fails = collections.Counter(); msgs = {}
for eng in ['seq', 'front', 'lpel', 'threads']:
    for w in [1, 2]:
        runs = 1 if eng == 'seq' else n
        if eng == 'seq' and w == 2: continue
        for i in range(runs):
            p = subprocess.run(['bash', '-c', 'ulimit -v 4000000; exec timeout 60 "$@"', 'x', snet, 'run', prog, *srcs,
                                '-i', os.path.join(d, 'input.xml'), '--engine', eng, '-w', str(w)],
                               capture_output=True, text=True)
            err = None
            if p.returncode != 0:
                err = 'exit %d: %s' % (p.returncode, p.stderr[-600:])
            else:
                err = snetx.compare(exp, p.stdout, ordered)
            if err:
                fails[(eng, w)] += 1; msgs.setdefault((eng, w), err)
print(name, 'ordered' if ordered else 'multiset', 'OK' if not fails else 'FAIL')
for k, c in fails.items():
    print('  ', k, c, 'fails;', msgs[k][:1500])
