//! Semantics of every §7 construct on every engine, with Rust boxes and hand-checked
//! answers taken from the spec's own examples.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Error, Program, Record, Value};
use snet_core::{BoxFailure, Label};

fn rec_fields(pairs: &[(&str, i32)]) -> Record {
    pairs
        .iter()
        .fold(Record::new(), |r, (n, v)| r.with_field(n, Value::int(*v)))
}

fn int_field(r: &Record, name: &str) -> Option<i32> {
    r.field(Label::field(name))?.as_ref()?.as_i32()
}

fn tag(r: &Record, name: &str) -> Option<i32> {
    r.tag(Label::tag(name))
}

fn run_all(prog: &Program, input: Vec<Record>) -> Vec<Vec<Record>> {
    EngineKind::ALL
        .iter()
        .map(|e| {
            prog.run_records(*e, input.clone())
                .unwrap_or_else(|err| panic!("{e:?}: {err}"))
        })
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn show(rs: &[Record]) -> Vec<String> {
    rs.iter().map(|r| format!("{r:?}")).collect()
}

#[test]
fn triangle_star_of_filters() {
    // Spec Appendix A.1.
    let src = "net triangle ({<N>} -> {<S>})
{
    net start connect [{<N>} -> {<N>, <S=0>}];
    net step  connect [{<N>, <S>} -> if <N == 0> then {<S>, <done>}
                                     else {<N=N-1>, <S=S+N>}];
    net finish connect [{<S>, <done>} -> {<S>}];
}
connect start .. (step * {<done>}) .. finish;";
    let p = Program::from_source("triangle.snet", src).unwrap();
    for out in run_all(&p, (0..8).map(|n| Record::new().with_tag("N", n)).collect()) {
        let got: Vec<i32> = out.iter().map(|r| tag(r, "S").unwrap()).collect();
        assert_eq!(got, (0..8).map(|n| n * (n + 1) / 2).collect::<Vec<_>>());
        assert!(out
            .iter()
            .all(|r| !r.has(Label::tag("done")) && !r.has(Label::tag("N"))));
    }
}

#[test]
fn syncstar_pairs_in_order() {
    // Spec §7.6 idiom, reference test `syncstar`.
    let p = Program::from_source(
        "syncstar.snet",
        "net syncstar connect [| {A}, {B} |] * {A,B};",
    )
    .unwrap();
    let input = vec![
        rec_fields(&[("A", 1)]),
        rec_fields(&[("A", 2)]),
        rec_fields(&[("B", 1)]),
        rec_fields(&[("B", 2)]),
        rec_fields(&[("A", 2)]),
        rec_fields(&[("B", 1)]),
    ];
    for out in run_all(&p, input) {
        let got: Vec<(i32, i32)> = out
            .iter()
            .map(|r| (int_field(r, "A").unwrap(), int_field(r, "B").unwrap()))
            .collect();
        assert_eq!(
            sorted(got.iter().map(|x| format!("{x:?}")).collect()),
            sorted(vec!["(1, 1)".into(), "(2, 2)".into(), "(2, 1)".into()])
        );
    }
}

fn dec_box(inp: &BoxInput<'_>, out: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = inp.int("A").ok_or_else(|| BoxFailure("no A".into()))?;
    if a > 0 {
        out.emit(1, vec![Arg::int(a - 1)])
    } else {
        out.emit(2, vec![Arg::int(0)])
    }
}

#[test]
fn deep_star_with_a_rust_box_and_flow_inheritance() {
    let mut p = Program::from_source(
        "deep.snet",
        "net deep { box foo((A) -> (A) | (B)); } connect foo*{B};",
    )
    .unwrap();
    p.bind("foo", dec_box).unwrap();
    let input: Vec<Record> = (0..20)
        .map(|i| rec_fields(&[("A", i)]).with_tag("id", i))
        .collect();
    for out in run_all(&p, input) {
        assert_eq!(out.len(), 20);
        let mut ids: Vec<i32> = out.iter().map(|r| tag(r, "id").unwrap()).collect();
        ids.sort();
        assert_eq!(ids, (0..20).collect::<Vec<_>>());
        assert!(out
            .iter()
            .all(|r| int_field(r, "B") == Some(0) && !r.has(Label::field("A"))));
    }
}

#[test]
fn deterministic_star_keeps_input_order() {
    // Reference test `stardet`: several records enter the star at once; small A finish
    // first, but `**` releases results in entry order, `*` (on seq) does not.
    let src = |op: &str| {
        format!("net stardet {{ box gen((<go>) -> (A, <i>)); box foo((A) -> (A) | (B)); }} connect gen .. foo{op}{{B}};")
    };
    let gen = |_i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        for a in [5, 0, 3, 1] {
            o.emit(1, vec![Arg::int(a), Arg::tag(a)])?;
        }
        Ok(())
    };
    let mut det = Program::from_source("stardet.snet", &src("**")).unwrap();
    det.bind("gen", gen).unwrap();
    det.bind("foo", dec_box).unwrap();
    for out in run_all(&det, vec![Record::new().with_tag("go", 1)]) {
        let got: Vec<i32> = out.iter().map(|r| tag(r, "i").unwrap()).collect();
        assert_eq!(got, vec![5, 0, 3, 1]);
    }
    let mut nondet = Program::from_source("stardet.snet", &src("*")).unwrap();
    nondet.bind("gen", gen).unwrap();
    nondet.bind("foo", dec_box).unwrap();
    let out = nondet
        .run_records(EngineKind::Seq, vec![Record::new().with_tag("go", 1)])
        .unwrap();
    let got: Vec<i32> = out.iter().map(|r| tag(r, "i").unwrap()).collect();
    assert_eq!(got, vec![0, 1, 3, 5], "seq runs the star breadth first");
}

#[test]
fn det_parallel_orders_outputs_of_one_fanout() {
    // A filter turns one record into two inputs of `||`; the left branch takes two box
    // hops, the right one, so the nondeterministic `|` (on seq) emits right first.
    let src = |op: &str| {
        format!(
            "net p {{ box a((<k>) -> (<k>)); box b((<k>) -> (<k>, <done>)); box c((<j>) -> (<j>, <done>)); }}
             connect [{{}} -> {{<k=1>}}; {{<j=2>}}] .. ((a .. b) {op} c);"
        )
    };
    let bind = |p: &mut Program| {
        p.bind("a", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(0))])
        })
        .unwrap();
        p.bind("b", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(0)), Arg::tag(1)])
        })
        .unwrap();
        p.bind("c", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            o.emit(1, vec![Arg::tag(i.tag("j").unwrap_or(0)), Arg::tag(1)])
        })
        .unwrap();
    };
    let mut det = Program::from_source("p.snet", &src("||")).unwrap();
    bind(&mut det);
    for out in run_all(&det, vec![Record::new().with_tag("x", 0); 3]) {
        let got: Vec<String> = out
            .iter()
            .map(|r| if r.has(Label::tag("k")) { "k" } else { "j" }.to_string())
            .collect();
        assert_eq!(got, ["k", "j", "k", "j", "k", "j"]);
    }
    let mut nondet = Program::from_source("p.snet", &src("|")).unwrap();
    bind(&mut nondet);
    let out = nondet
        .run_records(EngineKind::Seq, vec![Record::new().with_tag("x", 0)])
        .unwrap();
    assert_eq!(out.len(), 2);
}

#[test]
fn det_split_keeps_order_nondet_split_may_not() {
    // Reference test `splitdet`: larger A take longer; `!!` restores input order.
    let mut p = Program::from_source(
        "splitdet.snet",
        "net splitdet { box foo((A) -> (A) | (B)); } connect (foo * {B}) !! <T>;",
    )
    .unwrap();
    p.bind("foo", dec_box).unwrap();
    let input: Vec<Record> = (0..6)
        .map(|i| {
            rec_fields(&[("A", 100 * (5 - i))])
                .with_tag("T", i % 3)
                .with_tag("i", i)
        })
        .collect();
    for out in run_all(&p, input) {
        let got: Vec<i32> = out.iter().map(|r| tag(r, "i").unwrap()).collect();
        assert_eq!(got, (0..6).collect::<Vec<_>>());
        assert!(out.iter().all(|r| r.has(Label::tag("T"))));
    }
}

#[test]
fn a_split_replica_that_is_a_fired_synchrocell_passes_later_records_on() {
    // A fired synchrocell is an identity for ever (§7.6), also as a split's replica
    // (which the walker then retires, remembering only its index value).
    let input = vec![
        rec_fields(&[("a", 1)]).with_tag("k", 1),
        rec_fields(&[("b", 2)]).with_tag("k", 1),
        rec_fields(&[("a", 3)]).with_tag("k", 1),
        rec_fields(&[("b", 4)]).with_tag("k", 2),
        rec_fields(&[("a", 5)]).with_tag("k", 2),
        rec_fields(&[("b", 6)]).with_tag("k", 1),
        rec_fields(&[("a", 7), ("b", 8)]).with_tag("k", 2),
    ];
    let expected = [
        "a=1 b=2 k=1",
        "a=3 k=1",
        "a=5 b=4 k=2",
        "b=6 k=1",
        "a=7 b=8 k=2",
    ];
    let show = |r: &Record| {
        let mut s: Vec<String> = ["a", "b"]
            .iter()
            .filter_map(|n| int_field(r, n).map(|v| format!("{n}={v}")))
            .collect();
        s.push(format!("k={}", tag(r, "k").unwrap()));
        s.join(" ")
    };
    for (op, det) in [("!!", true), ("!", false)] {
        let src = format!("net cells connect [| {{a}}, {{b}} |] {op} <k>;");
        let p = Program::from_source("cells.snet", &src).unwrap();
        for out in run_all(&p, input.clone()) {
            let got: Vec<String> = out.iter().map(show).collect();
            if det {
                assert_eq!(got, expected, "{src}");
            } else {
                assert_eq!(
                    sorted(got),
                    sorted(expected.iter().map(|s| s.to_string()).collect()),
                    "{src}"
                );
            }
        }
    }
}

#[test]
fn feedback_always_enters_and_loops() {
    // Records from outside always enter the operand (spec §7.12 rule 1), even when they
    // do not match the back pattern; results matching it go round again.
    let p = Program::from_source(
        "fb.snet",
        "net fb connect [{<n>} -> if <n > 0> then {<n=n-1>} else {<n>, <out>}] \\ {<n>} if <n > 0>;",
    )
    .unwrap();
    for out in run_all(
        &p,
        vec![
            Record::new().with_tag("n", 4),
            Record::new().with_tag("n", 0),
        ],
    ) {
        let mut got = show(&out);
        got.sort();
        assert_eq!(
            got,
            vec!["{<n>=0, <out>=0}".to_string(), "{<n>=0}".to_string()]
        );
    }
}

#[test]
fn state_idiom_with_star() {
    // Spec §7.17, reference test `state`.
    let src = "net state {
  net merge  connect [| {state}, {inval} |];
  net bypass connect [];
  box add((state, inval) -> (state) | (outval));
} connect (merge .. (bypass | add)) * {outval};";
    let mut p = Program::from_source("state.snet", src).unwrap();
    p.bind("add", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let (s, v) = (i.int("state").unwrap_or(0), i.int("inval").unwrap_or(0));
        if s + v < 10 {
            o.emit(1, vec![Arg::int(s + v)])?;
        }
        o.emit(2, vec![Arg::int(s)])
    })
    .unwrap();
    let input = vec![
        rec_fields(&[("state", 0)]),
        rec_fields(&[("inval", 1)]),
        rec_fields(&[("inval", 2)]),
        rec_fields(&[("inval", 3)]),
        rec_fields(&[("inval", 4)]),
    ];
    for out in run_all(&p, input) {
        let mut got: Vec<i32> = out
            .iter()
            .map(|r| int_field(r, "outval").unwrap())
            .collect();
        got.sort();
        assert_eq!(got, vec![0, 1, 3, 6]);
    }
}

/// `src` with its initialiser `init` bound to emit `{X}` = 0..`n` and `id` to add 100.
fn init_and_id(file: &str, src: &str, n: i32) -> Program {
    let mut p = Program::from_source(file, src).unwrap();
    p.bind("init", move |_i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        for k in 0..n {
            o.emit(1, vec![Arg::int(k)])?;
        }
        Ok(())
    })
    .unwrap();
    p.bind("id", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(i.int("X").unwrap_or(0) + 100)])
    })
    .unwrap();
    p
}

#[test]
fn initialiser_fires_at_start_even_without_input() {
    // Reference test `initbox`: top-level initialiser fires at start-up.
    let p = init_and_id(
        "initbox.snet",
        "net initbox { box init( -> (X)); box id((X) -> (X)); } connect (init | id);",
        5,
    );
    for e in EngineKind::ALL {
        let out = p.run_records(*e, vec![]).unwrap();
        let got: Vec<i32> = out.iter().map(|r| int_field(r, "X").unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        // Initialiser records precede data records of the same composition.
        let out = p.run_records(*e, vec![rec_fields(&[("X", 7)])]).unwrap();
        let got: Vec<i32> = out.iter().map(|r| int_field(r, "X").unwrap()).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4, 107]);
    }
}

#[test]
fn a_branch_declared_without_input_type_that_is_no_initialiser_is_never_invoked() {
    // Spec §3.4/§8: a net declared `(-> {X})` has no input type, so as a branch of a
    // parallel composition it never receives records (§7.8); unlike an initialiser
    // (§7.4) it has nothing to invoke at creation. This was an internal engine error
    // ("run_box on a non-box instance") or a call of `id` without its input.
    for src in [
        "net noin { box id((X) -> (X)); net g (-> {X}) connect [{a} -> {X=a}]; }
         connect g | [];",
        "net noin { box id((X) -> (X)); net g (-> {X}) connect id; } connect g | [];",
        "net noin { box id((X) -> (X)); net g (-> {X}) connect [] .. id; }
         connect (g .. []) || [];",
    ] {
        let mut p = Program::from_source("noin.snet", src).unwrap();
        // (The first program does not use `id`, so there is nothing to bind.)
        let _ = p.bind("id", |_i: &BoxInput<'_>, _o: &mut BoxOutput<'_>| {
            Err(BoxFailure("id must not be called".into()))
        });
        for e in EngineKind::ALL {
            let out = p
                .run_records(*e, vec![rec_fields(&[("a", 1)])])
                .unwrap_or_else(|err| panic!("{src} {e:?}: {err}"));
            assert_eq!(show(&out), show(&[rec_fields(&[("a", 1)])]), "{src} {e:?}");
        }
    }
}

#[test]
fn an_initialiser_nested_in_a_det_parallel_fires_at_start_and_comes_first() {
    // Spec §7.4/§7.14: the inner `||` is created with the outer one at start-up; its
    // initialiser's records were held back for an outer input that never came (lost
    // without input, after the first input's records otherwise).
    let p = init_and_id(
        "nestinit.snet",
        "net nestinit { box init( -> (X)); box id((X) -> (X)); }
         connect [{<a>} -> {<a>}] || (init || id);",
        3,
    );
    for e in EngineKind::ALL {
        let out = p.run_records(*e, vec![]).unwrap();
        let got: Vec<Option<i32>> = out.iter().map(|r| int_field(r, "X")).collect();
        assert_eq!(got, vec![Some(0), Some(1), Some(2)], "{e:?}");
        let input = vec![Record::new().with_tag("a", 1), rec_fields(&[("X", 7)])];
        let out = p.run_records(*e, input).unwrap();
        let got: Vec<Option<i32>> = out.iter().map(|r| int_field(r, "X")).collect();
        assert_eq!(
            got,
            vec![Some(0), Some(1), Some(2), None, Some(107)],
            "{e:?}"
        );
    }
}

#[test]
fn routing_failure_is_a_run_time_error_naming_the_record() {
    let mut p = Program::from_source(
        "r.snet",
        "net r { box f((A) -> (A)); box g((B) -> (B)); } connect f | g;",
    )
    .unwrap();
    p.bind("f", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(i.int("A").unwrap_or(0))])
    })
    .unwrap();
    p.bind("g", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(i.int("B").unwrap_or(0))])
    })
    .unwrap();
    for e in EngineKind::ALL {
        let err = p
            .run_records(*e, vec![rec_fields(&[("C", 1)])])
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("no branch accepts"), "{msg}");
        assert!(msg.contains("C="), "{msg}");
    }
}

#[test]
fn routing_failure_for_a_binding_tag_says_why() {
    // {A, <#k>} has what f wants, but neither f nor [] lists <#k> (spec 5.4, 7.8).
    let mut p =
        Program::from_source("r.snet", "net r { box f((A) -> (A)); } connect f | [];").unwrap();
    p.bind("f", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(i.int("A").unwrap_or(0))])
    })
    .unwrap();
    for e in EngineKind::ALL {
        let err = p
            .run_records(*e, vec![rec_fields(&[("A", 1)]).with_btag("k", 2)])
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("no branch accepts"), "{msg}");
        assert!(msg.contains("lists every one of them"), "{msg}");
    }
    // Without a binding tag the message has no such note.
    let mut q =
        Program::from_source("q.snet", "net q { box f((A) -> (A)); } connect f | f;").unwrap();
    q.bind("f", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(i.int("A").unwrap_or(0))])
    })
    .unwrap();
    let msg = q
        .run_records(EngineKind::Seq, vec![rec_fields(&[("B", 1)])])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no branch accepts"), "{msg}");
    assert!(!msg.contains("lists every one of them"), "{msg}");
}

#[test]
fn box_panic_and_bad_variant_stop_the_run_with_the_box_name() {
    let mut p =
        Program::from_source("b.snet", "net b { box boom((A) -> (A)); } connect boom;").unwrap();
    p.bind("boom", |_i: &BoxInput<'_>, _o: &mut BoxOutput<'_>| {
        panic!("kaboom")
    })
    .unwrap();
    let err = p
        .run_records(EngineKind::Seq, vec![rec_fields(&[("A", 1)])])
        .unwrap_err();
    assert!(matches!(err, Error::Run(_)));
    let msg = err.to_string();
    assert!(msg.contains("boom") && msg.contains("kaboom"), "{msg}");
    p.bind("boom", |_i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(3, vec![])
    })
    .unwrap();
    let msg = p
        .run_records(EngineKind::Seq, vec![rec_fields(&[("A", 1)])])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("variant 3") && msg.contains("boom"), "{msg}");
}

#[test]
fn split_creates_independent_replicas_with_their_own_sync_state() {
    let p = Program::from_source(
        "cells.snet",
        "net cells connect ([| {<V>}, {<W>} |] * {<V>,<W>}) ! <M>;",
    )
    .unwrap();
    let r = |m: i32, v: Option<i32>, w: Option<i32>| {
        let mut r = Record::new().with_tag("M", m);
        if let Some(v) = v {
            r = r.with_tag("V", v);
        }
        if let Some(w) = w {
            r = r.with_tag("W", w);
        }
        r
    };
    let input = vec![
        r(1, Some(10), None),
        r(2, Some(20), None),
        r(2, None, Some(21)),
        r(1, None, Some(11)),
    ];
    for out in run_all(&p, input) {
        let mut got: Vec<(i32, i32, i32)> = out
            .iter()
            .map(|x| {
                (
                    tag(x, "M").unwrap(),
                    tag(x, "V").unwrap(),
                    tag(x, "W").unwrap(),
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, vec![(1, 10, 11), (2, 20, 21)]);
    }
}

#[test]
fn a_star_of_depth_100000_runs_and_is_torn_down_without_stack_overflow() {
    let p = Program::from_source(
        "deepstar.snet",
        "net deepstar connect [{<n>} -> if <n == 0> then {<done>} else {<n=n-1>}] * {<done>};",
    )
    .unwrap();
    for out in run_all(&p, vec![Record::new().with_tag("n", 100_000)]) {
        assert_eq!(out.len(), 1);
        assert_eq!(tag(&out[0], "done"), Some(0));
    }
}

#[test]
fn every_run_time_error_of_spec_section_10_stops_the_run_with_entity_and_record() {
    let cases = [
        // A split record lacks its index tag (only possible when the checker cannot
        // see it: the record carries it or not at run time).
        (
            "net s1 connect [{<k>} -> {<k>}] ! <t>;",
            Record::new().with_tag("k", 1),
            "index tag <t>",
        ),
        // Division by zero in a filter's tag expression.
        (
            "net s2 connect [{<a>} -> {<b=10/a>}];",
            Record::new().with_tag("a", 0),
            "division by zero",
        ),
        // Remainder by zero in a synchrocell guard.
        (
            "net s3 connect [| {<a>} if <5 % a == 0>, {<b>} |];",
            Record::new().with_tag("a", 0),
            "division by zero",
        ),
    ];
    for (src, input, want) in cases {
        let name = &src[4..6];
        let p = Program::from_source(&format!("{name}.snet"), src)
            .unwrap_or_else(|e| panic!("{src}: {e}"));
        for e in EngineKind::ALL {
            let err = p
                .run_records(*e, vec![input.clone()])
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{src} on {e:?}: {err}");
            assert!(
                err.contains(&format!("{name}.snet:1:")),
                "entity position: {err}"
            );
            assert!(err.contains("record:"), "record shown: {err}");
        }
    }
}

#[test]
fn a_long_pipeline_with_an_error_exit_routes_on_every_engine() {
    // Sixteen stages that may each fail with `err`, as a branch of `|`: §8 gives the
    // pipeline 2^15 input variants (routed as one family); records with x0 go through
    // it, records with err to the report; {x3} alone matches neither.
    let n = 16;
    let boxes: String = (0..n)
        .map(|i| format!("box b{i}((x{i}) -> (x{}) | (err));", i + 1))
        .collect();
    let chain: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
    let src = format!(
        "net pipe {{ {boxes} box report((err) -> (msg)); }} connect ({}) | report;",
        chain.join(" .. ")
    );
    let mut p = Program::from_source("pipe.snet", &src).unwrap();
    for i in 0..n {
        let input = format!("x{i}");
        p.bind(
            &format!("b{i}"),
            move |b: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
                let v = b.int(&input).unwrap_or(0);
                if v >= 0 {
                    o.emit(1, vec![Arg::int(v + 1)])
                } else {
                    o.emit(2, vec![Arg::int(v)])
                }
            },
        )
        .unwrap();
    }
    p.bind("report", |b: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::int(-b.int("err").unwrap_or(0))])
    })
    .unwrap();
    for e in EngineKind::ALL {
        let input = vec![
            rec_fields(&[("x0", 5)]),
            rec_fields(&[("err", -7)]),
            rec_fields(&[("x0", 100)]),
        ];
        let mut out: Vec<(Option<i32>, Option<i32>)> = p
            .run_records(*e, input)
            .unwrap()
            .iter()
            .map(|r| (int_field(r, "x16"), int_field(r, "msg")))
            .collect();
        out.sort();
        assert_eq!(
            out,
            vec![(None, Some(7)), (Some(21), None), (Some(116), None)],
            "{e:?}"
        );
        let msg = p
            .run_records(*e, vec![rec_fields(&[("x3", 1)])])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("no branch accepts"), "{msg}");
        assert!(msg.contains("x15?") && msg.contains("may lack"), "{msg}");
    }
}

#[test]
fn serial_chains_hop_straight_to_the_next_box_and_nowhere_else() {
    // Records leaving a box go straight on to the next box of a serial composition (a
    // successor found once per box instance, issue 26); what lies between two boxes
    // that is not `..` (a parallel composition, a star, a filter, a synchrocell, a
    // nested chain's end) must still be walked. Every box adds its own number to <t>
    // times ten, so the output shows the exact path each record took.
    let src = "net chain {
        box b1((<t>) -> (<t>)); box b2((<t>) -> (<t>)); box b3((<t>) -> (<t>));
        box b4((<t>) -> (<t>)); box b5((<t>) -> (<t>)); box b6((<t>) -> (<t>));
    } connect b1 .. (b2 .. b3) .. ((b4 .. [{<t>} -> {<t>, <odd>}]) | (b5 .. [{<t>} -> {<t>, <even>}]))
              .. ((b6 .. [{<t>} -> {<t>, <done>}]) * {<done>});";
    let mut p = Program::from_source("chain.snet", src).unwrap();
    for (i, name) in ["b1", "b2", "b3", "b4", "b5", "b6"].iter().enumerate() {
        let k = i as i32 + 1;
        p.bind(name, move |inp: &BoxInput<'_>, out: &mut BoxOutput<'_>| {
            let t = inp.tag("t").unwrap_or(0);
            out.emit(1, vec![Arg::Tag(t * 10 + k)])
        })
        .unwrap();
    }
    // `|` picks b4 and b5 alike for {<t>}: either path, but always whole.
    for out in run_all(&p, vec![Record::new().with_tag("t", 0)]) {
        assert_eq!(out.len(), 1);
        let t = tag(&out[0], "t").unwrap();
        assert!(t == 12346 || t == 12356, "path {t}");
        assert_eq!(out[0].has(Label::tag("odd")), t == 12346);
        assert_eq!(out[0].has(Label::tag("even")), t == 12356);
    }
}
