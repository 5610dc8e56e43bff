//! Engine agreement (DESIGN rule 1): every engine produces the same output multiset as
//! `seq`, and the same sequence where the program is deterministic.
//!
//! * every example with `input.xml` + `expected.xml` under `examples/` (C boxes are
//!   compiled and loaded through `snet-c4snet`; examples whose boxes cannot be bound
//!   are skipped with a note);
//! * a set of programs with Rust boxes covering star, det star, split, det split,
//!   feedback, synchrocells, initialisers and nested det combinators;
//! * a stress run of every deterministic program, 100 times at 2 workers;
//! * a property test over random well-typed networks and inputs.
//!
//! Each program runs on every engine of `EngineKind::ALL` at 1 and 2 workers.

use common::{bind_c, find_examples, read_input};
use proptest::prelude::*;
use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, RunOptions, Value};
use snet_core::{BoxFailure, RecordSink, RecordSource};
use std::path::Path;

mod common;

/// A canonical text of a record: labels sorted by kind and name, values in the C4SNet
/// textual form, so that records equal up to label order compare equal.
fn canon(r: &Record) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (l, v) in r.fields() {
        let mut t = Vec::new();
        match v {
            Some(v) => snet_core::value::write_value(v, &mut t),
            None => t.extend_from_slice(b"NULL"),
        }
        parts.push(format!("{}={}", l.name(), String::from_utf8_lossy(&t)));
    }
    for (l, v) in r.tags() {
        parts.push(format!("<{}>={v}", l.name()));
    }
    for (l, v) in r.btags() {
        parts.push(format!("<#{}>={v}", l.name()));
    }
    parts.sort();
    format!("{{{}}}", parts.join(", "))
}

fn deep_copy(r: &Record) -> Record {
    let mut c = r.clone();
    for (l, v) in r.fields() {
        if let Some(v) = v {
            c.set_field(*l, Some(v.deep_copy()));
        }
    }
    c
}

/// Runs `run` on a fresh copy of `input` (C boxes may modify their inputs in place) and
/// returns the canonical output.
fn collect(
    input: &[Record],
    run: impl FnOnce(&mut dyn RecordSource, &mut dyn RecordSink) -> Result<(), String>,
) -> Result<Vec<String>, String> {
    let mut out: Vec<Record> = Vec::new();
    let mut src = input.iter().map(deep_copy).fuse();
    run(&mut src, &mut out)?;
    Ok(out.iter().map(canon).collect())
}

fn run_on(
    prog: &Program,
    engine: EngineKind,
    workers: usize,
    input: &[Record],
) -> Result<Vec<String>, String> {
    collect(input, |src, out| {
        prog.run(engine, src, out, &RunOptions::new(workers))
            .map(drop)
            .map_err(|e| e.to_string())
    })
}

/// `front` with every box allowed `k` concurrent invocations (seed 003 §4.7).
fn run_front_concurrent(
    prog: &Program,
    k: usize,
    workers: usize,
    input: &[Record],
) -> Result<Vec<String>, String> {
    let e = snet_front::FrontEngine::new(snet_front::FrontOptions {
        box_concurrency: snet_front::BoxConcurrency {
            default: k,
            by_name: Vec::new(),
        },
        ..Default::default()
    });
    collect(input, |src, out| {
        let opts = RunOptions::new(workers);
        snet_core::Engine::run(&e, prog.net(), prog.boxes(), src, out, &opts)
            .map(drop)
            .map_err(|e| e.to_string())
    })
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Runs `prog` on every engine at 1 and 2 workers; every output must equal `seq`'s
/// (in order if `ordered`, else as a multiset). Returns `seq`'s output.
fn check_agreement(
    name: &str,
    prog: &Program,
    input: &[Record],
    ordered: bool,
) -> Result<Vec<String>, String> {
    let want = run_on(prog, EngineKind::Seq, 1, input).map_err(|e| format!("{name} [seq]: {e}"))?;
    // One configuration's output against seq's.
    let check = |what: &str, got: Result<Vec<String>, String>| -> Result<(), String> {
        let got = got.map_err(|e| format!("{name} [{what}]: {e}"))?;
        let same = if ordered {
            got == want
        } else {
            sorted(got.clone()) == sorted(want.clone())
        };
        if same {
            return Ok(());
        }
        Err(format!(
            "{name} [{what}] differs from seq{}:\n  seq:  {want:?}\n  got:  {got:?}",
            if ordered { " (ordered)" } else { " (multiset)" }
        ))
    };
    for &engine in EngineKind::ALL {
        if engine == EngineKind::Seq {
            continue;
        }
        for workers in [1, 2] {
            let what = format!("{} -w {workers}", engine.name());
            if std::env::var_os("SNET_AGREEMENT_TRACE").is_some() {
                eprintln!("{name} [{what}]");
            }
            check(&what, run_on(prog, engine, workers, input))?;
        }
    }
    // Concurrent invocations of every box must not change the outcome either.
    check(
        "front --box-concurrency 3 -w 2",
        run_front_concurrent(prog, 3, 2, input),
    )?;
    Ok(want)
}

// ---------------------------------------------------------------------------------
// Examples

#[test]
fn examples_agree_with_seq_on_every_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut examples = Vec::new();
    find_examples(&root, &mut examples);
    assert!(
        examples.len() >= 10,
        "found only {} examples",
        examples.len()
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for ex in &examples {
        let name = ex.dir.display().to_string();
        let mut prog = match Program::from_file(&ex.program) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: does not compile: {e}"));
                continue;
            }
        };
        if let Err(e) = bind_c(&mut prog, ex) {
            eprintln!("note: {name}: C boxes not loadable here ({e}); skipped");
            continue;
        }
        if !prog.unbound_boxes().is_empty() {
            eprintln!(
                "note: {name}: unbound boxes {:?}; skipped",
                prog.unbound_boxes()
            );
            continue;
        }
        let input = match read_input(&ex.dir.join("input.xml")) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{name}: input: {e}"));
                continue;
            }
        };
        match check_agreement(&name, &prog, &input, ex.ordered) {
            Ok(_) => ran += 1,
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 10, "only {ran} examples ran");
}

// ---------------------------------------------------------------------------------
// Programs with Rust boxes

fn int(i: &BoxInput<'_>, n: &str) -> Result<i32, BoxFailure> {
    i.int(n)
        .or_else(|| i.tag(n))
        .ok_or_else(|| BoxFailure(format!("no {n}")))
}

/// `dec`: {A} → {A-1} while A > 0, else {B=0}.
fn dec(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = int(i, "A")?;
    if a > 0 {
        o.emit(1, vec![Arg::int(a - 1)])
    } else {
        o.emit(2, vec![Arg::int(0)])
    }
}

/// `inc`: {A} → {A+1}.
fn inc(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    o.emit(1, vec![Arg::int(int(i, "A")? + 1)])
}

/// `dup`: {A} → {A}, {A+100} (two records).
fn dup(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = int(i, "A")?;
    o.emit(1, vec![Arg::int(a)])?;
    o.emit(1, vec![Arg::int(a + 100)])
}

/// `spread`: {N} → N records {A=i, <T=i%3>}.
fn spread(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    for k in 0..int(i, "N")? {
        o.emit(1, vec![Arg::int(k), Arg::tag(k % 3)])?;
    }
    Ok(())
}

/// `init`: emits {A=-1} and {A=-2} once.
fn init(_i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    o.emit(1, vec![Arg::int(-1)])?;
    o.emit(1, vec![Arg::int(-2)])
}

/// `addb`: {A, B} → {A+B}.
fn addb(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    o.emit(1, vec![Arg::int(int(i, "A")? + int(i, "B")?)])
}

type BoxImpl = fn(&BoxInput<'_>, &mut BoxOutput<'_>) -> Result<(), BoxFailure>;

struct Case {
    name: &'static str,
    src: &'static str,
    boxes: &'static [(&'static str, BoxImpl)],
    input: fn() -> Vec<Record>,
    ordered: bool,
}

fn a(v: i32) -> Record {
    Record::new().with_field("A", Value::int(v))
}

fn seq_a(n: i32) -> Vec<Record> {
    (0..n).map(|i| a(i % 7).with_tag("id", i)).collect()
}

const CASES: &[Case] = &[
    Case {
        name: "star",
        src: "net p { box dec((A) -> (A) | (B)); } connect dec * {B};",
        boxes: &[("dec", dec)],
        input: || seq_a(40),
        ordered: false,
    },
    Case {
        name: "det_star",
        src: "net p { box dec((A) -> (A) | (B)); } connect dec ** {B};",
        boxes: &[("dec", dec)],
        input: || seq_a(40),
        ordered: true,
    },
    Case {
        name: "pipeline",
        src: "net p { box inc((A) -> (A)); } connect inc .. inc .. inc .. inc;",
        boxes: &[("inc", inc)],
        input: || seq_a(200),
        ordered: true,
    },
    Case {
        name: "split",
        src: "net p { box inc((A) -> (A)); } connect inc ! <T>;",
        boxes: &[("inc", inc)],
        input: || (0..60).map(|i| a(i).with_tag("T", i % 4)).collect(),
        ordered: false,
    },
    Case {
        name: "det_split",
        src: "net p { box inc((A) -> (A)); box dup((A) -> (A)); } connect (dup .. inc) !! <T>;",
        boxes: &[("inc", inc), ("dup", dup)],
        input: || (0..60).map(|i| a(i).with_tag("T", i % 4)).collect(),
        ordered: true,
    },
    Case {
        name: "spread_split",
        src: "net p { box spread((N) -> (A, <T>)); box inc((A) -> (A)); } connect spread .. (inc .. inc) ! <T>;",
        boxes: &[("spread", spread), ("inc", inc)],
        input: || (0..8).map(|i| Record::new().with_field("N", Value::int(5 + i))).collect(),
        ordered: false,
    },
    Case {
        name: "det_spread_split",
        src: "net p { box spread((N) -> (A, <T>)); box inc((A) -> (A)); } connect spread .. (inc .. inc) !! <T>;",
        boxes: &[("spread", spread), ("inc", inc)],
        input: || (0..8).map(|i| Record::new().with_field("N", Value::int(5 + i))).collect(),
        ordered: true,
    },
    Case {
        name: "feedback",
        src: "net p { box dec((A) -> (A) | (B)); } connect dec \\ {A};",
        boxes: &[("dec", dec)],
        input: || seq_a(40),
        ordered: false,
    },
    Case {
        name: "choice",
        src: "net p { box dec((A) -> (A) | (B)); box inc((A) -> (A)); }
              connect dec .. (inc | [{B} -> {B, <b>}]);",
        boxes: &[("dec", dec), ("inc", inc)],
        input: || seq_a(50),
        ordered: false,
    },
    Case {
        name: "det_choice",
        src: "net p { box dec((A) -> (A) | (B)); box inc((A) -> (A)); box dup((A) -> (A)); }
              connect dec .. ((dup .. inc) || [{B} -> {B, <b>}]);",
        boxes: &[("dec", dec), ("inc", inc), ("dup", dup)],
        input: || seq_a(50),
        ordered: true,
    },
    Case {
        name: "sync_star",
        src: "net p { box addb((A, B) -> (A)); } connect [| {A}, {B} |] * {A, B} .. addb;",
        boxes: &[("addb", addb)],
        input: || {
            let mut v = Vec::new();
            for g in 0..10 {
                for k in 0..3 {
                    v.push(a(g * 3 + k));
                }
                for k in 0..3 {
                    v.push(Record::new().with_field("B", Value::int(1000 + g * 3 + k)));
                }
            }
            v
        },
        ordered: true,
    },
    Case {
        name: "initialisers",
        src: "net p { box init( -> (A)); box inc((A) -> (A)); } connect (init | inc) .. inc;",
        boxes: &[("init", init), ("inc", inc)],
        input: || seq_a(20),
        ordered: false,
    },
    Case {
        name: "det_initialisers",
        src: "net p { box init( -> (A)); box inc((A) -> (A)); } connect (init || inc) .. inc;",
        boxes: &[("init", init), ("inc", inc)],
        input: || seq_a(20),
        ordered: true,
    },
    Case {
        name: "nested_det",
        src: "net p { box dec((A) -> (A) | (B)); box dup((A) -> (A)); }
              connect ((dup .. (dec ** {B})) !! <T>) .. [{B} -> {A=B}] .. ((dec) !! <T>) ** {B};",
        boxes: &[("dec", dec), ("dup", dup)],
        input: || (0..30).map(|i| a(i % 5).with_tag("T", i % 3).with_tag("id", i)).collect(),
        ordered: true,
    },
    Case {
        name: "nested_det_star_in_split",
        src: "net p { box dec((A) -> (A) | (B)); box dup((A) -> (A)); }
              connect (dup .. dec ** {B}) !! <T>;",
        boxes: &[("dec", dec), ("dup", dup)],
        input: || (0..40).map(|i| a(i % 6).with_tag("T", i % 4).with_tag("id", i)).collect(),
        ordered: true,
    },
    Case {
        name: "star_of_split",
        src: "net p { box dec((A) -> (A) | (B)); } connect ((dec) ! <T>) * {B};",
        boxes: &[("dec", dec)],
        input: || (0..40).map(|i| a(i % 9).with_tag("T", i % 5)).collect(),
        ordered: false,
    },
];

fn build(c: &Case) -> Program {
    let mut p = Program::from_source(&format!("{}.snet", c.name), c.src)
        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    for (n, f) in c.boxes {
        p.bind(n, *f).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
    p
}

#[test]
fn rust_box_programs_agree_with_seq_on_every_engine() {
    let mut failures = Vec::new();
    for c in CASES {
        let p = build(c);
        let input = (c.input)();
        match check_agreement(c.name, &p, &input, c.ordered) {
            Ok(out) => assert!(!out.is_empty(), "{}: no output at all", c.name),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn deterministic_programs_keep_their_order_under_stress() {
    let runs: usize = std::env::var("SNET_STRESS_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    for c in CASES.iter().filter(|c| c.ordered) {
        let p = build(c);
        let input = (c.input)();
        let input: Vec<Record> = input.into_iter().take(24).collect();
        let want = run_on(&p, EngineKind::Seq, 1, &input).unwrap();
        for &engine in EngineKind::ALL.iter().filter(|e| **e != EngineKind::Seq) {
            for i in 0..runs {
                let got = run_on(&p, engine, 2, &input)
                    .unwrap_or_else(|e| panic!("{} [{}] run {i}: {e}", c.name, engine.name()));
                assert_eq!(got, want, "{} [{} -w 2] run {i}", c.name, engine.name());
            }
        }
    }
}

/// `work`: {A, <lane>} → {A} after a delay that varies with A.
fn work(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = int(i, "A")?;
    let mut s = 0u64;
    for k in 0..(a as u64 * 7919 % 13) * 2000 {
        s = std::hint::black_box(s.wrapping_add(k));
    }
    o.emit(1, vec![Arg::int(a)])
}

/// `slowinc`: {A} → {A+1} after a fixed delay.
fn slowinc(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let mut s = 0u64;
    for k in 0..3000 {
        s = std::hint::black_box(s.wrapping_add(k));
    }
    o.emit(1, vec![Arg::int(int(i, "A")? + 1)])
}

#[test]
fn records_leaving_a_det_split_keep_their_order_at_the_next_box() {
    // Records leave the `!!` collector from whichever worker completes the oldest
    // input; front held the last one back to continue its walk at the next box after the
    // invocation, so a record drained later by another worker could reach it first.
    let mut p = Program::from_source(
        "detnext.snet",
        "net detnext { box work((A, <lane>) -> (A)); box slowinc((A) -> (A)); } connect (work !! <lane>) .. slowinc;",
    )
    .unwrap();
    p.bind("work", work).unwrap();
    p.bind("slowinc", slowinc).unwrap();
    let input: Vec<Record> = (0..3000).map(|i| a(i).with_tag("lane", i % 4)).collect();
    let want = run_on(&p, EngineKind::Seq, 1, &input).unwrap();
    for &engine in EngineKind::ALL.iter().filter(|e| **e != EngineKind::Seq) {
        let runs = if engine == EngineKind::Front { 100 } else { 10 };
        for i in 0..runs {
            let got = run_on(&p, engine, 2, &input).unwrap();
            assert!(
                got == want,
                "[{} -w 2] run {i}: order differs",
                engine.name()
            );
        }
    }
}

// ---------------------------------------------------------------------------------
// Random networks

/// A random network over records that always carry the tag `<x>`; generated as S-Net
/// source. `det` programs use only deterministic combinators (and may contain
/// synchrocells, whose pairing then is deterministic too).
#[derive(Debug, Clone)]
enum Gen {
    /// `[{<x>} -> {<x=x OP c>}]`
    Arith(u8, i32),
    /// `[{<x>} -> {<x>}; {<x=x+c>}]`
    Fork(i32),
    /// `[{<x>} -> if <x % m == 0> then {<x=x+1>} else {<x>}]`
    Guard(i32),
    Serial(Box<Gen>, Box<Gen>),
    /// Marks even records, which take the left branch; the rest take `[]`.
    Choice(Box<Gen>),
    /// Runs the body `x % 4` times (counter tag).
    Star(Box<Gen>),
    /// Replicates the body by `x % 3`.
    Split(Box<Gen>),
    /// Pairs even and odd records in a synchrocell star.
    Sync,
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        4 => (0u8..3, 1i32..5).prop_map(|(o, c)| Gen::Arith(o, c)),
        1 => (1i32..4).prop_map(Gen::Fork),
        2 => (2i32..4).prop_map(Gen::Guard),
        1 => Just(Gen::Sync),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            3 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Gen::Serial(Box::new(a), Box::new(b))),
            2 => inner.clone().prop_map(|a| Gen::Choice(Box::new(a))),
            2 => inner.clone().prop_map(|a| Gen::Star(Box::new(a))),
            2 => inner.prop_map(|a| Gen::Split(Box::new(a))),
        ]
    })
}

/// Writes `g` as S-Net; `n` numbers the counter/index tags so nested ones differ.
fn emit(g: &Gen, det: bool, n: &mut u32, forks: &mut u32) -> String {
    let (par, star, split) = if det {
        ("||", "**", "!!")
    } else {
        ("|", "*", "!")
    };
    match g {
        Gen::Arith(op, c) => {
            let e = match op {
                0 => format!("x + {c}"),
                1 => format!("x - {c}"),
                _ => format!("(x * {c}) % 97"),
            };
            format!("[{{<x>}} -> {{<x={e}>}}]")
        }
        Gen::Fork(c) if *forks < 2 => {
            *forks += 1;
            format!("[{{<x>}} -> {{<x>}}; {{<x=x+{c}>}}]")
        }
        Gen::Fork(c) => format!("[{{<x>}} -> {{<x=x+{c}>}}]"),
        Gen::Guard(m) => format!("[{{<x>}} -> if <x % {m} == 0> then {{<x=x+1>}} else {{<x>}}]"),
        Gen::Serial(a, b) => format!("({} .. {})", emit(a, det, n, forks), emit(b, det, n, forks)),
        Gen::Choice(a) => {
            *n += 1;
            let m = format!("m{n}");
            format!(
                "([{{<x>}} -> if <x % 2 == 0> then {{<x>, <{m}>}} else {{<x>}}] .. (([{{<x>, <{m}>}} -> {{<x>}}] .. {}) {par} []))",
                emit(a, det, n, forks)
            )
        }
        Gen::Star(a) => {
            *n += 1;
            let c = format!("c{n}");
            format!(
                "([{{<x>}} -> {{<x>, <{c}=x % 4>}}] .. (({} .. [{{<{c}>}} -> {{<{c}={c}-1>}}]) {star} {{<{c}>}} if <{c} <= 0>) .. [{{<{c}>}} -> {{}}])",
                emit(a, det, n, forks)
            )
        }
        Gen::Split(a) => {
            *n += 1;
            let s = format!("s{n}");
            format!(
                "([{{<x>}} -> {{<x>, <{s}=x % 3>}}] .. (({}) {split} <{s}>) .. [{{<{s}>}} -> {{}}])",
                emit(a, det, n, forks)
            )
        }
        Gen::Sync if det => {
            *n += 1;
            let (l, r) = (format!("l{n}"), format!("r{n}"));
            format!(
                "([{{<x>}} -> if <x % 2 == 0> then {{<x>, <{l}>}} else {{<x>, <{r}>}}] .. ([| {{<{l}>}}, {{<{r}>}} |] {star} {{<{l}>, <{r}>}}) .. [{{<{l}>, <{r}>}} -> {{}}])"
            )
        }
        Gen::Sync => "[{<x>} -> {<x=x+7>}]".to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_networks_agree_with_seq(
        g in gen_strategy(),
        det in any::<bool>(),
        xs in proptest::collection::vec(-20i32..60, 0..12),
    ) {
        let mut n = 0;
        let mut forks = 0;
        let body = emit(&g, det, &mut n, &mut forks);
        let src = format!("net rnd connect {body};");
        let prog = match Program::from_source("rnd.snet", &src) {
            Ok(p) => p,
            Err(e) => panic!("generated program does not compile:\n{src}\n{e}"),
        };
        let input: Vec<Record> = xs.iter().map(|x| Record::new().with_tag("x", *x)).collect();
        if let Err(e) = check_agreement(&src, &prog, &input, det) {
            panic!("{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Observers (spec §13.1) never change the output: a random network with observers on
    /// both sides of an inner net and of the entry net gives `seq`'s output without
    /// them on every engine, and the entry net's reports are its input and its output.
    #[test]
    fn observers_on_random_networks_never_change_the_output(
        g in gen_strategy(),
        det in any::<bool>(),
        xs in proptest::collection::vec(-20i32..60, 0..12),
    ) {
        let mut n = 0;
        let mut forks = 0;
        let body = emit(&g, det, &mut n, &mut forks);
        let plain = Program::from_source("rnd.snet", &format!("net rnd connect {body};")).unwrap();
        let input: Vec<Record> = xs.iter().map(|x| Record::new().with_tag("x", *x)).collect();
        let want = run_on(&plain, EngineKind::Seq, 1, &input).unwrap();
        let dir = std::env::temp_dir().join(format!("snet-obs-agree-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("reports.xml");
        let md = format!(
            "<metadata><netdefault><observer /><observer_type value=\"both\"/>\
             <observer_data value=\"allvalues\"/><observer_file value=\"{}\"/></netdefault></metadata>",
            file.display()
        );
        let src = format!("{md}\nnet rnd {{ {md} net inner connect {body}; }} connect inner .. [];");
        let observed = Program::from_source("rnd.snet", &src).unwrap();
        for &engine in EngineKind::ALL {
            let mut got = run_on(&observed, engine, 2, &input).unwrap();
            let mut w = want.clone();
            if !det {
                got.sort();
                w.sort();
            }
            prop_assert_eq!(&got, &w, "[{}] {}", engine.name(), src);
            let text = std::fs::read_to_string(&file).unwrap();
            let entry = |side: &str| {
                text.split("<?xml version=\"1.0\"?>\n")
                    .filter(|d| d.contains("position=\"rnd\"") && d.contains(&format!("type=\"{side}\"")))
                    .count()
            };
            prop_assert_eq!(entry("before"), input.len());
            prop_assert_eq!(entry("after"), w.len());
        }
    }
}
