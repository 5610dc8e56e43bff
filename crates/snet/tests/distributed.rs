//! Distributed runs on the in-process transport (spec §16): placed programs give the
//! same output as one process on every supported engine and number of nodes, the
//! per-node statistics prove where the boxes ran, and what cannot run across nodes is
//! refused with a message.

use snet::{BoxInput, BoxOutput, EngineKind, Program, Record, RunStats};
use snet_core::{BoxFailure, Engine, Label};

fn inc(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = i.tag("a").ok_or_else(|| BoxFailure("no a".into()))?;
    o.emit(1, vec![snet::Arg::Tag(a + 1)])
}

fn dbl(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let b = i.tag("b").ok_or_else(|| BoxFailure("no b".into()))?;
    o.emit(1, vec![snet::Arg::Tag(b * 2)])
}

fn step(i: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    let a = i.tag("a").ok_or_else(|| BoxFailure("no a".into()))?;
    let go = i.tag("go").ok_or_else(|| BoxFailure("no go".into()))?;
    if a < 6 {
        o.emit(1, vec![snet::Arg::Tag(a + 1), snet::Arg::Tag(go)])
    } else {
        o.emit(2, vec![snet::Arg::Tag(a)])
    }
}

/// An initialiser (spec §7.4): one record when its composition is created.
fn seed(_: &BoxInput<'_>, o: &mut BoxOutput<'_>) -> Result<(), BoxFailure> {
    o.emit(1, vec![snet::Arg::Tag(1000)])
}

const BOXES: &str = "box inc((<a>) -> (<a>)); box dbl((<b>) -> (<b>)); box step((<a>, <go>) -> (<a>, <go>) | (<r>)); box seed( -> (<a>));";

/// Every engine runs distributed.
const ENGINES: [EngineKind; 4] = [
    EngineKind::Seq,
    EngineKind::Front,
    EngineKind::Lpel,
    EngineKind::Threads,
];

fn program(name: &str, body: &str) -> Program {
    let src = format!("net {name} {{ {BOXES} }} connect {body};");
    let mut p = Program::from_source(&format!("{name}.snet"), &src)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // Boxes the body does not use are not in the program (bind says so).
    let _ = p.bind("inc", inc);
    let _ = p.bind("dbl", dbl);
    let _ = p.bind("step", step);
    let _ = p.bind("seed", seed);
    p
}

fn input(n: i32, nodes: i32) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let r = Record::new().with_tag("id", i).with_tag("n", i % nodes);
            match i % 3 {
                0 => r.with_tag("a", i),
                1 => r.with_tag("b", i),
                _ => r.with_tag("a", i).with_tag("go", 1),
            }
        })
        .collect()
}

fn show(mut v: Vec<Record>) -> Vec<String> {
    let mut s: Vec<String> = v.drain(..).map(|r| format!("{r:?}")).collect();
    s.sort();
    s
}

/// `p` on `nodes` in-process nodes of `engine` with `workers` each: the output and
/// every node's result.
fn run_nodes(
    p: &Program,
    engine: EngineKind,
    nodes: u32,
    inp: Vec<Record>,
    workers: usize,
) -> (Vec<Record>, Vec<snet::dist::NodeResult>) {
    run_nodes_flow(p, engine, nodes, inp, workers, Default::default())
}

/// [`run_nodes`] with flow control `flow`.
fn run_nodes_flow(
    p: &Program,
    engine: EngineKind,
    nodes: u32,
    inp: Vec<Record>,
    workers: usize,
    flow: snet::dist::FlowConfig,
) -> (Vec<Record>, Vec<snet::dist::NodeResult>) {
    let mut out = Vec::new();
    let make = move |_: u32| -> Box<dyn Engine> { engine.engine() };
    let results = snet::dist::run_local(
        p.net(),
        &[p.boxes().clone()],
        &make,
        nodes,
        Box::new(inp.into_iter().fuse()),
        &mut out,
        workers,
        flow,
    );
    (out, results)
}

fn run_dist(
    p: &Program,
    engine: EngineKind,
    nodes: u32,
    inp: Vec<Record>,
) -> (Vec<Record>, Vec<RunStats>) {
    let (out, results) = run_nodes(p, engine, nodes, inp, 2);
    let stats = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|e| panic!("{engine:?} node {i} of {nodes}: {e}")))
        .collect();
    (out, stats)
}

/// The placed programs (all routing records by their labels: `<a>` to inc, `<b>` to
/// dbl, `<a>,<go>` to the feedback loop of step).
fn cases() -> Vec<(&'static str, &'static str, u32)> {
    // (name, body, smallest number of nodes it needs)
    vec![
        ("single", "(inc @ 1) | dbl | (step \\ {<go>})", 2),
        ("chain", "(inc @ 1 .. [{<a>} -> {<b=a>}] .. dbl @ 2 .. [{<b>} -> {<a=b>}] .. inc @ 1) | (dbl @ 1) | (step \\ {<go>})", 3),
        ("branches", "(inc @ 1) | (dbl @ 2) | ((step \\ {<go>}) @ 1)", 3),
        ("split", "((inc | dbl | (step \\ {<go>})) !@ <n>)", 1),
        ("star", "(((inc .. [{<a>} -> if <a > 20> then {<a>, <done>} else {<a>}]) * {<done>}) @ 1) | dbl | (step \\ {<go>})", 2),
        ("feedback", "inc | dbl | ((step \\ {<go>}) @ 1)", 2),
        ("nested", "((inc .. (inc @ 0)) | (dbl @ 1) | (step \\ {<go>})) !@ <n>", 2),
        // Initialisers in placements: the composition's home fires them (its gate
        // holds the other branches back until they returned), on the box's node.
        ("init_placed", "((seed | inc) @ 1) | dbl | (step \\ {<go>})", 2),
        ("init_box_placed", "((seed @ 2) | (inc @ 1)) | dbl | (step \\ {<go>})", 3),
        ("init_in_star", "((((seed | inc) .. [{<a>} -> if <a > 20> then {<a>, <done>} else {<a>}]) @ 1) * {<done>}) | dbl | (step \\ {<go>})", 2),
        ("init_in_split", "((seed | inc | dbl | (step \\ {<go>})) !@ <n>)", 1),
        ("star_in_placed", "((((inc .. [{<a>} -> if <a > 20> then {<a>, <done>} else {<a>}]) * {<done>}) .. inc) @ 1) | (dbl @ 1) | (step \\ {<go>})", 2),
    ]
}

#[test]
fn placed_programs_give_the_output_of_one_process_on_2_to_5_nodes() {
    for (name, body, min) in cases() {
        let p = program(name, body);
        let expected = show(p.run_records(EngineKind::Seq, input(60, 1)).unwrap());
        for engine in ENGINES {
            for nodes in 2..=5u32 {
                if nodes < min {
                    continue;
                }
                let inp = input(60, nodes as i32);
                // The one-process answer for this input (the `<n>` tags differ).
                let want = show(p.run_records(EngineKind::Seq, inp.clone()).unwrap());
                let (out, stats) = run_dist(&p, engine, nodes, inp);
                assert_eq!(show(out), want, "{name} on {engine:?}, {nodes} nodes");
                let moved: u64 = stats.iter().map(|s| s.records_sent).sum();
                let got: u64 = stats.iter().map(|s| s.records_received).sum();
                assert_eq!(moved, got, "{name}: every record sent arrived");
                assert!(moved > 0, "{name}: nothing crossed a node on {nodes} nodes");
            }
        }
        assert!(!expected.is_empty());
    }
}

#[test]
fn per_node_statistics_prove_the_placement() {
    // Only `inc` is placed, on node 1: node 0 calls no box, node 1 every one.
    let p = program("only", "inc @ 1");
    let inp: Vec<Record> = (0..40).map(|i| Record::new().with_tag("a", i)).collect();
    for engine in ENGINES {
        let (out, stats) = run_dist(&p, engine, 3, inp.clone());
        assert_eq!(out.len(), 40);
        assert_eq!(stats[0].box_calls, 0, "{engine:?}");
        assert_eq!(stats[1].box_calls, 40, "{engine:?}");
        assert_eq!(stats[2].box_calls, 0, "{engine:?}");
        // Every record went to node 1 and came back for the output.
        assert_eq!((stats[0].records_sent, stats[0].records_received), (40, 40));
        assert_eq!((stats[1].records_sent, stats[1].records_received), (40, 40));
    }
    // `!@ <n>`: replica v on node v, so node v calls the box for exactly the records
    // with n = v.
    let p = program("rep", "inc !@ <n>");
    let inp: Vec<Record> = (0..40)
        .map(|i| Record::new().with_tag("a", i).with_tag("n", i % 4))
        .collect();
    let (out, stats) = run_dist(&p, EngineKind::Front, 4, inp);
    assert_eq!(out.len(), 40);
    for (v, st) in stats.iter().enumerate() {
        assert_eq!(st.box_calls, 10, "node {v}");
    }
    let _ = Label::tag("n");
}

fn dist_error(p: &Program, nodes: u32, inp: Vec<Record>) -> String {
    let (_, results) = run_nodes(p, EngineKind::Front, nodes, inp, 1);
    results
        .into_iter()
        .find_map(|r| r.err())
        .map(|e| e.to_string())
        .expect("the run fails")
}

#[test]
fn placements_the_run_cannot_honour_are_errors_naming_them() {
    // A static placement on a node the run does not have: before any record.
    let p = program("far", "inc @ 7");
    let e = dist_error(&p, 3, vec![Record::new().with_tag("a", 1)]);
    assert!(e.contains("@ 7") && e.contains("3 nodes"), "{e}");
    // An index value that names no node.
    let p = program("badtag", "inc !@ <n>");
    let e = dist_error(&p, 2, vec![Record::new().with_tag("a", 1).with_tag("n", 5)]);
    assert!(
        e.contains("index value 5") && e.contains("2 nodes") && e.contains("`!@`"),
        "{e}"
    );
    // The deterministic form is named as written.
    let p = program("badtagdet", "inc !!@ <n>");
    let e = dist_error(&p, 2, vec![Record::new().with_tag("a", 1).with_tag("n", 5)]);
    assert!(e.contains("index value 5") && e.contains("`!!@`"), "{e}");
    let e = dist_error(
        &p,
        2,
        vec![Record::new().with_tag("a", 1).with_tag("n", -1)],
    );
    assert!(e.contains("index value -1"), "{e}");
    // An initialiser inside a placement and a deterministic combinator (decision 39).
    let p = program("detinit", "((seed @ 1) | inc) || dbl");
    let e = dist_error(&p, 2, vec![Record::new().with_tag("a", 1)]);
    assert!(
        e.contains("`seed`") && e.contains("not yet placeable") && e.contains("@ 1"),
        "{e}"
    );
}

#[test]
fn initialisers_fire_once_on_the_node_of_their_box() {
    // The gate of `seed | inc` is on node 0; seed runs on node 2 and its record comes
    // back before any record inc (on node 1) produced.
    let p = program("gate", "((seed @ 2) | (inc @ 1)) | dbl");
    let inp: Vec<Record> = (0..20).map(|i| Record::new().with_tag("a", i)).collect();
    for engine in ENGINES {
        let (out, stats) = run_dist(&p, engine, 3, inp.clone());
        assert_eq!(out.len(), 21, "{engine:?}");
        assert_eq!(
            stats[2].box_calls, 1,
            "{engine:?}: seed ran once, on node 2"
        );
        assert_eq!(stats[1].box_calls, 20, "{engine:?}: inc ran on node 1");
        assert_eq!(stats[0].box_calls, 0, "{engine:?}");
        // Spec §7.4: the initialiser's record leaves the composition first.
        let first_a = out
            .iter()
            .find(|r| format!("{r:?}").contains("<a>"))
            .unwrap();
        assert!(
            format!("{first_a:?}").contains("1000"),
            "{engine:?}: {out:?}"
        );
    }
}

#[test]
fn deterministic_combinators_across_nodes_keep_their_order() {
    // `||`, `!!@` and `**` whose operands run on other nodes: the same records in the
    // same order as one process (spec §7.14 across nodes: frames lent to the nodes
    // their records reach).
    // (name, body, whether the whole output is ordered: otherwise a non-deterministic
    // `|` merges branches, and the order holds within each kind of record).
    let cases = [
        ("detpar", "((inc @ 1) || (dbl @ 2) || ((step \\ {<go>}) @ 1))", true),
        ("detsplit", "((inc | dbl | (step \\ {<go>})) !!@ <n>)", true),
        ("detstar", "(((inc @ 1) .. [{<a>} -> if <a > 30> then {<a>, <done>} else {<a>}] @ 2) ** {<done>}) | (dbl @ 1) | (step \\ {<go>})", false),
        ("nested", "(((inc @ 2) || dbl) !!@ <n>) | (step \\ {<go>})", false),
    ];
    let kinds = |v: &[String]| -> Vec<Vec<String>> {
        // The outputs of the deterministic combinators (the feedback loop of `step`
        // beside them is not deterministic: its outputs are compared as a multiset).
        let mut all: Vec<String> = v.to_vec();
        all.sort();
        let mut k: Vec<Vec<String>> = ["<a>", "<b>"]
            .iter()
            .map(|k| v.iter().filter(|r| r.contains(k)).cloned().collect())
            .collect();
        k.push(all);
        k
    };
    for (name, body, ordered) in cases {
        let p = program(name, body);
        for nodes in [3u32, 4] {
            let inp = input(60, nodes as i32);
            let want: Vec<String> = p
                .run_records(EngineKind::Seq, inp.clone())
                .unwrap()
                .iter()
                .map(|r| format!("{r:?}"))
                .collect();
            for engine in ENGINES {
                for _ in 0..3 {
                    let (out, stats) = run_dist(&p, engine, nodes, inp.clone());
                    let got: Vec<String> = out.iter().map(|r| format!("{r:?}")).collect();
                    if ordered {
                        assert_eq!(
                            got, want,
                            "{name} on {engine:?}, {nodes} nodes: order or records differ"
                        );
                    } else {
                        assert_eq!(
                            kinds(&got),
                            kinds(&want),
                            "{name} on {engine:?}, {nodes} nodes: order or records differ"
                        );
                    }
                    assert!(
                        stats.iter().map(|s| s.records_sent).sum::<u64>() > 0,
                        "{name}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_failing_box_on_one_node_ends_every_node_with_its_message() {
    let mut p = program("fails", "inc @ 2");
    p.bind(
        "inc",
        |_: &BoxInput<'_>, _: &mut BoxOutput<'_>| -> Result<(), BoxFailure> {
            Err(BoxFailure("broken on purpose".into()))
        },
    )
    .unwrap();
    let inp: Vec<Record> = (0..10).map(|i| Record::new().with_tag("a", i)).collect();
    for (engine, workers) in ENGINES.into_iter().flat_map(|e| [(e, 1), (e, 2)]) {
        let (_, results) = run_nodes(&p, engine, 3, inp.clone(), workers);
        // Every node ends, each with an error; node 2's names the box and the cause,
        // the others name node 2.
        assert_eq!(results.len(), 3);
        let errs: Vec<String> = results
            .iter()
            .map(|r| r.as_ref().unwrap_err().to_string())
            .collect();
        assert!(
            errs[2].contains("broken on purpose"),
            "{engine:?} -w {workers}: {errs:?}"
        );
        assert!(
            errs[0].contains("node 2"),
            "{engine:?} -w {workers}: {errs:?}"
        );
    }
}

#[test]
fn a_distributed_run_of_one_node_ends() {
    // One node: the termination waves have no other node to ask (a hang before).
    let p = program("solo", "inc !@ <n>");
    let inp: Vec<Record> = (0..10)
        .map(|i| Record::new().with_tag("a", i).with_tag("n", 0))
        .collect();
    for engine in ENGINES {
        let (out, stats) = run_dist(&p, engine, 1, inp.clone());
        assert_eq!(out.len(), 10, "{engine:?}");
        assert_eq!(stats[0].box_calls, 10);
    }
}

/// Flow control cannot deadlock a placed loop (decision 48): with a window of 2 records
/// per pair of nodes and 1 input record read ahead — bounds so small that a design
/// whose sends waited for credit would deadlock — four shapes whose records cross
/// nodes back and forth finish on every engine with the one-process output: a star
/// whose stages cross nodes, `!@` inside a star, a synchrocell fed from two nodes, and
/// a feedback loop whose body crosses nodes.
#[test]
fn placed_loops_finish_under_the_smallest_flow_control_window() {
    let tiny = snet::dist::FlowConfig {
        window: 2,
        window_bytes: 256,
        input_ahead: 1,
    };
    let shapes = [
        (
            "star_crossing",
            "(((inc @ 1) .. [{<a>} -> if <a > 20> then {<a>, <done>} else {<a>}]) * {<done>}) | dbl | ((step @ 1) \\ {<go>})",
        ),
        (
            "split_in_star",
            "(((inc !@ <n>) .. [{<a>} -> if <a > 20> then {<a>, <done>} else {<a>}]) * {<done>}) | (dbl @ 2) | (step \\ {<go>})",
        ),
        (
            "sync_two_nodes",
            "(((inc @ 1) | (dbl @ 2)) .. ([| {<a>}, {<b>} |] @ 1)) | (step \\ {<go>})",
        ),
        (
            "feedback_crossing",
            "inc | (dbl @ 1) | (((step @ 2) .. ([{<a>, <go>} -> {<a>, <go>}] | ([{<r>} -> {<r>}] @ 1))) \\ {<go>})",
        ),
    ];
    let mut waits = 0;
    for (name, body) in shapes {
        let p = program(name, body);
        let inp = input(90, 3);
        let want = show(p.run_records(EngineKind::Seq, inp.clone()).unwrap());
        for engine in ENGINES {
            let (out, results) = run_nodes_flow(&p, engine, 3, inp.clone(), 2, tiny);
            let stats: Vec<RunStats> = results
                .into_iter()
                .map(|r| r.unwrap_or_else(|e| panic!("{name} on {engine:?}: {e}")))
                .collect();
            assert_eq!(show(out), want, "{name} on {engine:?}");
            let moved: u64 = stats.iter().map(|s| s.records_sent).sum();
            assert!(moved > 90, "{name}: records crossed nodes ({moved})");
            // Sends never wait, so records already inside a loop may exceed the
            // window (by what the engines' own streams hold); new input waits
            // instead, so the queues between nodes never hold the whole input.
            let peak = stats.iter().map(|s| s.peak_unacked).max().unwrap_or(0);
            assert!(
                peak < 90,
                "{name} on {engine:?}: {peak} records waited for credit"
            );
            waits += stats[0].input_waits;
        }
    }
    assert!(waits > 0, "the input never waited for a full window");
}

/// A record leaving a placed operand of `..` goes straight to the node of the next one
/// (`(inc @ 1) .. (filter @ 2)`: 0 → 1 → 2 → 0), not back through node 0 each time.
#[test]
fn a_serial_chain_across_nodes_routes_node_to_node() {
    let p = program("route", "(inc @ 1) .. ([{<a>} -> {<a>}] @ 2)");
    let inp: Vec<Record> = (0..50).map(|i| Record::new().with_tag("a", i)).collect();
    for engine in ENGINES {
        let (out, stats) = run_dist(&p, engine, 3, inp.clone());
        assert_eq!(out.len(), 50, "{engine:?}");
        let hops: Vec<(u64, u64)> = stats
            .iter()
            .map(|s| (s.records_sent, s.records_received))
            .collect();
        // Node 0 sends each record once (to 1) and receives it once (from 2).
        assert_eq!(hops, vec![(50, 50), (50, 50), (50, 50)], "{engine:?}");
    }
}
