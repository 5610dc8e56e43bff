//! Routing types (spec §8): the worked checks of the spec, observed on the lowered
//! `Net` (the routes of parallel compositions) and on printed signatures.

use snet_core::net::{Family, NodeKind};
use snet_core::Net;

const MD: &str = "<metadata><default><interface value=\"C4SNet\"/></default></metadata>\n";

fn compile(name: &str, src: &str) -> snet_lang::Compiled {
    match snet_lang::compile_str(&format!("{name}.snet"), &format!("{MD}{src}")) {
        Ok(c) => c,
        Err(d) => panic!("{}", d.render()),
    }
}

/// A route entry as `{a,b,c?}` (`c?`: optional, see `snet_core::net::Family`).
fn show(f: &Family) -> String {
    let mut ls: Vec<String> = f
        .labels
        .iter()
        .map(|l| l.to_string())
        .chain(f.optional.iter().map(|l| format!("{l}?")))
        .collect();
    ls.sort();
    format!("{{{}}}", ls.join(","))
}

/// The variants of a route, each as `{a,b}` (sorted labels).
fn variants(route: &[Family]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for f in route {
        for bits in 0u32..1 << f.optional.len() {
            let mut ls: Vec<String> = f.labels.iter().map(|l| l.to_string()).collect();
            for (i, l) in f.optional.iter().enumerate() {
                if bits & (1 << i) != 0 {
                    ls.push(l.to_string());
                }
            }
            ls.sort();
            out.insert(format!("{{{}}}", ls.join(",")));
        }
    }
    out
}

/// The families of the first parallel composition in node order.
fn first_routes(net: &Net) -> Vec<Vec<Family>> {
    net.nodes
        .iter()
        .find_map(|n| match &n.kind {
            NodeKind::Parallel { routes, .. } => Some(routes.clone()),
            _ => None,
        })
        .expect("a parallel composition")
}

/// Routes of the first parallel composition reached from the root (depth first).
fn routes(net: &Net) -> Vec<Vec<String>> {
    let mut stack = vec![net.root];
    while let Some(id) = stack.pop() {
        match &net.node(id).kind {
            NodeKind::Parallel { routes, .. } => {
                return routes
                    .iter()
                    .map(|r| r.iter().map(show).collect())
                    .collect()
            }
            NodeKind::Serial(a, b) => {
                stack.push(*b);
                stack.push(*a);
            }
            NodeKind::Star { body, .. }
            | NodeKind::Split { body, .. }
            | NodeKind::Feedback { body, .. } => stack.push(*body),
            _ => {}
        }
    }
    panic!("no parallel composition")
}

#[test]
fn flow_inheritance_through_a_serial_chain() {
    let src = "net w { box A((a) -> (x)); box B((b) -> (y)); box C((x, y) -> (z)); }";
    let c = compile("w", &format!("{src} connect (A .. B .. C) | [];"));
    assert_eq!(routes(&c.net), vec![vec!["{a,b}"], vec!["{}"]]);
    let c = compile("w", &format!("{src} connect ((A .. B) .. C) | [];"));
    assert_eq!(routes(&c.net), vec![vec!["{a,b}"], vec!["{}"]]);
}

#[test]
fn determ_routes_on_the_whole_chain() {
    let c = compile(
        "determ",
        "net determ { box delay((D) -> (D)); box showB((B) -> (B)); box showC((C) -> (C)); }
         connect (delay .. showB) | (delay .. showC);",
    );
    assert_eq!(routes(&c.net), vec![vec!["{B,D}"], vec!["{C,D}"]]);
}

#[test]
fn filter_before_a_box() {
    let c = compile(
        "d",
        "net d { box KeyInvert((KeySet) -> (KeySet)); } connect [] | ([{<Decipher>} -> {}] .. KeyInvert);",
    );
    assert_eq!(
        routes(&c.net),
        vec![vec!["{}"], vec!["{<Decipher>,KeySet}"]]
    );
    let c = compile(
        "y",
        "net y { box dct((Matrix, color, row, col, sample) -> (M)); box zzq_encode((M) -> (Z)); }
         connect ([{YMatrix} -> {Matrix = YMatrix}] .. dct .. zzq_encode) | [];",
    );
    assert_eq!(routes(&c.net)[0], vec!["{YMatrix,col,color,row,sample}"]);
}

#[test]
fn split_of_a_star_of_synchrocells() {
    let c = compile(
        "s",
        "net s { net cells connect [| {<V>}, {<W>} |] * {<V>,<W>}; } connect (cells ! <M>) | [];",
    );
    // Three variants (routed as two families, e.g. `{<M>,<V>}` and `{<M>,<W>,<V>?}`).
    assert_eq!(
        variants(&first_routes(&c.net)[0]),
        ["{<M>,<V>}", "{<M>,<V>,<W>}", "{<M>,<W>}"]
            .map(String::from)
            .into()
    );
}

#[test]
fn declared_signatures_give_the_reference_input_variants() {
    let c = compile(
        "compab",
        "type A = {A}; typesig A2P = A -> {P}; typesig compAB_t = A2P, {B} -> {Q};
         net compab { box compA((A) -> (P)); box compB((B) -> (Q));
           net compAB (compAB_t) connect compA | compB;
           net syncPQ ({P} | {Q} -> {P, Q}) connect [| {P}, {Q} |];
         } connect compAB .. syncPQ;",
    );
    assert_eq!(
        c.signature,
        "{A} -> {P, Q}, {A, Q} -> {P, Q}, {B, P} -> {P, Q}, {B} -> {P, Q}"
    );
}

#[test]
fn initialiser_branches_get_empty_routes_and_splits_add_the_index() {
    let c = compile(
        "i",
        "net i { box init( -> (x)); box f((a) -> (b)); } connect (init | f) .. (f ! <#k> | []);",
    );
    assert_eq!(
        routes(&c.net),
        vec![Vec::<String>::new(), vec!["{a}".to_owned()]]
    );
    let mut found = false;
    for n in &c.net.nodes {
        if let NodeKind::Parallel { routes, .. } = &n.kind {
            if routes.len() == 2 && routes[0].iter().any(|v| v.labels.len() == 2) {
                assert_eq!(show(&routes[0][0]), "{<#k>,a}");
                found = true;
            }
        }
    }
    assert!(found);
}

#[test]
fn lowering_shapes() {
    // `a | b | c` is one n-ary parallel; a chain of `..` is a balanced tree (here
    // `a .. (b .. c)`); `@ n` is a node of its own per use around the shared operand;
    // `[{} -> {}]` is the identity; a net referenced twice is shared.
    let c = compile(
        "l",
        "net l { net g connect [{<t>} -> {<t = t + 1>}]; } connect (g | [{} -> {}] | []) .. g @ 3 .. g;",
    );
    let net = &c.net;
    let NodeKind::Serial(a, rest) = &net.node(net.root).kind else {
        panic!()
    };
    let NodeKind::Parallel {
        branches,
        det: false,
        ..
    } = &net.node(*a).kind
    else {
        panic!()
    };
    assert_eq!(branches.len(), 3);
    assert!(matches!(net.node(branches[1]).kind, NodeKind::Identity));
    let NodeKind::Serial(placed, g2) = &net.node(*rest).kind else {
        panic!()
    };
    let NodeKind::At { body: g1, node: 3 } = &net.node(*placed).kind else {
        panic!("`g @ 3` is placed: {:?}", net.node(*placed).kind)
    };
    assert_eq!(g1, g2, "both references to g share one node");
    assert_eq!(*g1, branches[0]);
    assert!(matches!(net.node(*g1).kind, NodeKind::Filter(_)));
    assert_eq!(&*net.node(net.root).loc, "l.snet:2:59");
    assert_eq!(net.entry, "l");
}

#[test]
fn pass_through_qualifiers_reattach_the_labels() {
    // Separate and fused (`<t>=` lexes as `<t` `>=`) qualifiers.
    let c = compile(
        "p",
        "net p { box f((a =, <t>=, c) -> (b) | (a, x)); } connect f;",
    );
    assert_eq!(c.signature, "{a, c, <t>} -> {a, b, <t>} | {a, x, <t>}");
    let net = &c.net;
    // The box itself, receiving all three labels and keeping the two marked ones.
    assert!(matches!(net.node(net.root).kind, NodeKind::Box(0)));
    assert_eq!(net.boxes[0].input.as_ref().map(Vec::len), Some(3));
    assert_eq!(
        net.boxes[0].passthrough,
        vec![snet_core::Label::field("a"), snet_core::Label::tag("t")]
    );
}

#[test]
fn graphs_show_pass_through_qualifiers() {
    let c = compile(
        "p",
        "net p { box f((a =, <t>=, c) -> (b) | (a, x)); } connect f;",
    );
    let dot = c.to_dot();
    assert!(dot.contains("(a=, <t>=, c) -> (b) | (a, x)"), "{dot}");
}

#[test]
fn a_long_chain_of_choices_compiles_although_its_own_type_is_too_large() {
    // `(b0 | []) .. (b1 | []) .. ...`: §8 gives the chain 2^n input variants, but routing
    // needs only the types of the branches. Sixteen stages used to fail with E0504
    // (and ten took a minute to print the signature).
    let n = 16;
    let boxes: String = (0..n)
        .map(|i| format!("box b{i}((x{i}) -> (x{}));", i + 1))
        .collect();
    let chain: Vec<String> = (0..n).map(|i| format!("(b{i} | [])")).collect();
    let src = format!("net long {{ {boxes} }} connect {};", chain.join(" .. "));
    let start = std::time::Instant::now();
    let c = compile("long", &src);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    assert_eq!(routes(&c.net), vec![vec!["{x0}"], vec!["{}"]]);
    assert_eq!(c.signature, "...");
}

#[test]
fn a_long_pipeline_with_an_error_exit_is_one_family() {
    // `b0 .. b1 .. ...` with `bi((xi) -> (xi+1) | (err))`: §8 gives the chain 2^(n-1)
    // input variants ({x0} plus any of x1..x(n-1), which a record may carry past the
    // stage that failed). Fourteen stages used to fail with E0504 as a branch of `|`;
    // as one family the type stays one entry and routing stays exact.
    let n = 24;
    let boxes: String = (0..n)
        .map(|i| format!("box b{i}((x{i}) -> (x{}) | (err));", i + 1))
        .collect();
    let chain: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
    let src = format!(
        "net pipe {{ {boxes} box report((err) -> (msg)); }} connect ({}) | report;",
        chain.join(" .. ")
    );
    let start = std::time::Instant::now();
    let c = compile("pipe", &src);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    let opt: Vec<String> = (1..n).map(|i| format!("x{i}?")).collect();
    let mut want = vec!["x0".to_owned()];
    want.extend(opt);
    want.sort();
    assert_eq!(
        routes(&c.net),
        vec![
            vec![format!("{{{}}}", want.join(","))],
            vec!["{err}".to_owned()]
        ]
    );
    // Routing on the lowered net: the pipeline takes {x0} and, with a better score,
    // {x0, x5, err}; the report takes {err}; {x3} alone goes nowhere.
    let r = first_routes(&c.net);
    let rec = |labels: &[&str]| {
        let mut rec = snet_core::Record::new();
        for l in labels {
            rec = rec.with_field(l, snet_core::Value::int(1));
        }
        rec
    };
    use snet_core::pattern::best_branch;
    assert_eq!(best_branch(&rec(&["x0"]), &r), Some(0));
    assert_eq!(best_branch(&rec(&["err"]), &r), Some(1));
    assert_eq!(best_branch(&rec(&["x0", "x5", "err"]), &r), Some(0));
    assert_eq!(best_branch(&rec(&["err", "x5"]), &r), Some(1));
    assert_eq!(best_branch(&rec(&["x3"]), &r), None);
}
