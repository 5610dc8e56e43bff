use super::*;

fn parse_ok(src: &str) -> Program {
    let (p, d) = parse(src);
    assert!(d.is_empty(), "unexpected diagnostics for {src:?}: {d:#?}");
    p
}

fn connect_expr(src: &str) -> Expr {
    let p = parse_ok(&format!("net n connect {src};"));
    match p.defs.into_iter().next() {
        Some(Def::Net(n)) => n.expr,
        other => panic!("not a net: {other:?}"),
    }
}

#[test]
fn serial_binds_tighter_than_choice_and_postfix_tightest() {
    let e = connect_expr("a | b .. c * {x}");
    let ExprKind::Choice {
        det: false,
        branches,
    } = e.kind
    else {
        panic!()
    };
    assert_eq!(branches.len(), 2);
    let ExprKind::Serial(elems) = &branches[1].kind else {
        panic!()
    };
    assert!(matches!(elems[1].kind, ExprKind::Postfix(_, _)));
}

#[test]
fn term_extends_over_commas_and_guard_belongs_to_last() {
    let e = connect_expr("A * {x}, {<t>} if <t < 5>");
    let ExprKind::Postfix(_, ops) = e.kind else {
        panic!()
    };
    let PostOp::Star { exits, .. } = &ops[0] else {
        panic!()
    };
    assert_eq!(exits.len(), 2);
    assert!(exits[0].guard.is_none());
    assert!(exits[1].guard.is_some());
}

#[test]
fn embedded_gt_rule() {
    let e = connect_expr("[{<A>,<B>} -> if <A > B> then {<C>} else {<D>}]");
    let ExprKind::Filter(f) = e.kind else {
        panic!()
    };
    assert!(matches!(
        f.guards[0].0.kind,
        TagExprKind::Binary(BinOp::Gt, _, _)
    ));
    let e = connect_expr("[{<K>} -> if <K > 9> then {<K>,<big>} else {<K>,<small>}]");
    assert!(matches!(e.kind, ExprKind::Filter(_)));
}

#[test]
fn embedded_gt_before_det_split_ends_the_guard() {
    // §3.10.3: `!!` is not a token that can begin an operand, so the `>` before it ends
    // the guard and `!!` is the deterministic split applied to the star.
    let e = connect_expr("A * {<t>} if <t < 0> !! <k>");
    let ExprKind::Postfix(_, ops) = e.kind else {
        panic!()
    };
    assert_eq!(ops.len(), 2);
    assert!(matches!(ops[0], PostOp::Star { .. }));
    assert!(matches!(ops[1], PostOp::Split { det: true, .. }));
}

#[test]
fn embedded_gt_before_single_bang_suggests_parentheses() {
    // §3.10.3: `!` can begin an operand, so `> !` is greater-than-not and the guard
    // does not end there; the error says how to write the replication instead.
    let (_, d) = parse("net n connect A * {<t>} if <t < 0> ! <k>;");
    assert_eq!(d.len(), 1, "{d:#?}");
    let help = d[0].help.as_deref().unwrap_or("");
    assert!(help.contains("greater-than-not"), "{help}");
    assert!(help.contains("(A * {...} if <...>) ! <t>"), "{help}");
    // A failing operand after `> -` gets no such hint.
    let (_, d) = parse("net n connect A * {<t>} if <t < 0> - ;");
    assert!(!d.is_empty());
    assert!(
        d.iter()
            .all(|d| !d.help.as_deref().unwrap_or("").contains("greater-than-not")),
        "{d:#?}"
    );
    // The parenthesised form parses.
    let e = connect_expr("(A * {<t>} if <t < 0>) ! <k>");
    assert!(matches!(e.kind, ExprKind::Postfix(..)));
}

#[test]
fn spec_shapes_parse() {
    for src in [
        "net N ({<C>} -> ...) connect [];",
        "box f( -> (x));",
        "box f((a) -> );",
        "box f((a, <t>=) -> (b) | (c, <u>));",
        "net n connect [{} -> {} ; {}];",
        "net n connect [{<K>,<L>} -> if <K == 0> then else if <L == 0> then {<Z>} else {<K=K-1>}];",
        "net n connect dor !@ <R> * {<R>} if <R >= 4> .. as;",
        "net n connect [|{ts},{vs}|] * {ts,vs} @ 1;",
        "net n connect fb_op \\ {<C>} @ 2;",
        "net n connect [{<a>} -> {<b = 0x1f + 030 - -5>}];",
        "<metadata><default><interface value=\"C4SNet\"/></default></metadata>\nnet n connect [];",
        "//!snet core\nnet n { <metadata><boxdefault><interface value=\"C4SNet\" /></boxdefault></metadata> } connect [];",
        "type A = {A};\ntypesig A2P = A -> {P};\ntypesig compAB_t = A2P, {B} -> {Q};\nnet compAB (compAB_t) connect [];",
        "net n connect [| {A} if <T == 1>, {B} |];",
        "net n connect a ** {x} || b !! <#i> | c ! <t>;",
        "net n ({a} | {b} -> {=a, <t>} | {c}, {d} -> ) connect [];",
    ] {
        parse_ok(src);
    }
}

#[test]
fn several_errors_per_run() {
    let (_, d) = parse("net a connect [{x} -> {y z}];\nnet b connect (c .. ;\nnet c connect d;");
    assert_eq!(d.len(), 2, "{d:#?}");
}

#[test]
fn deep_nesting_is_a_diagnostic() {
    let src = format!(
        "net n connect {}a{};",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let (_, d) = parse(&src);
    assert!(d.iter().any(|d| d.code == "E0203"));
    let src = format!(
        "net n connect [{{<a>}} -> {{<b = {}a>}}];",
        "!".repeat(100_000)
    );
    let (_, d) = parse(&src);
    assert!(d.iter().any(|d| d.code == "E0203"));
    let src = format!(
        "net n connect [{{<a>}} -> {{<b = a{}>}}];",
        " + 1".repeat(10_000)
    );
    let (_, d) = parse(&src);
    assert!(d.iter().any(|d| d.code == "E0203"));
}

#[test]
fn a_power_operator_in_a_tag_expression_gets_a_hint() {
    let (_, d) = parse("net t connect [{<a>} -> {<a=a**2>}];");
    assert_eq!(d.len(), 1, "{d:#?}");
    let help = d[0].help.as_deref().unwrap_or("");
    assert!(help.contains("no power operator"), "{help}");
    // `**` where it is an operator of the language gets no such hint.
    let (_, d) = parse("net t connect A ** {<x>};");
    assert!(d.is_empty(), "{d:#?}");
}
