//! Property tests of the front end:
//! 1. pretty-printing a syntax tree and parsing the text gives the same tree;
//! 2. lex + parse + check never panics (nor hangs, nor overflows the stack) on arbitrary
//!    or mutated input.

use proptest::prelude::*;
use snet_lang::ast::*;
use snet_lang::span::Span;

const NAMES: &[&str] = &["a", "b", "x", "T", "cnt", "_p", "A1", "state", "n"];

fn ident() -> impl Strategy<Value = Ident> {
    prop::sample::select(NAMES).prop_map(|n| Ident {
        name: n.to_owned(),
        span: Span::default(),
    })
}

fn label() -> impl Strategy<Value = LabelRef> {
    (
        prop::sample::select(&[LabelKind::Field, LabelKind::Tag, LabelKind::BTag][..]),
        prop::sample::select(NAMES),
    )
        .prop_map(|(kind, n)| LabelRef {
            kind,
            name: n.to_owned(),
            span: Span::default(),
        })
}

fn rectype() -> impl Strategy<Value = RecType> {
    prop::collection::vec(label(), 0..3).prop_map(|labels| RecType {
        labels,
        span: Span::default(),
    })
}

fn te(kind: TagExprKind) -> TagExpr {
    TagExpr {
        kind,
        span: Span::default(),
    }
}

fn tagexpr() -> impl Strategy<Value = TagExpr> {
    let leaf = prop_oneof![
        prop_oneof![
            -1000i64..1000,
            Just(i64::from(i32::MIN)),
            Just(i64::from(i32::MAX))
        ]
        .prop_map(|v| te(TagExprKind::Int(v))),
        prop::sample::select(NAMES).prop_map(|n| te(TagExprKind::Tag(n.to_owned()))),
        prop::sample::select(NAMES).prop_map(|n| te(TagExprKind::BTag(n.to_owned()))),
    ];
    let ops = [
        BinOp::Or,
        BinOp::And,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Min,
        BinOp::Max,
    ];
    leaf.prop_recursive(4, 24, 3, move |inner| {
        prop_oneof![
            (
                prop::sample::select(&[UnOp::Not, UnOp::Abs][..]),
                inner.clone()
            )
                .prop_map(|(op, e)| te(TagExprKind::Unary(op, Box::new(e)))),
            (
                prop::sample::select(ops.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, a, b)| te(TagExprKind::Binary(
                    op,
                    Box::new(a),
                    Box::new(b)
                ))),
            (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| te(TagExprKind::Cond(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            ))),
        ]
    })
}

fn guarded() -> impl Strategy<Value = GuardedPat> {
    (rectype(), prop::option::of(tagexpr())).prop_map(|(pat, guard)| GuardedPat { pat, guard })
}

fn outitem() -> impl Strategy<Value = OutItem> {
    prop_oneof![
        (ident(), prop::option::of(ident())).prop_map(|(to, from)| OutItem::Field { to, from }),
        (
            prop::sample::select(&[LabelKind::Tag, LabelKind::BTag][..]),
            ident(),
            prop::option::of(tagexpr())
        )
            .prop_map(|(kind, to, value)| OutItem::Tag {
                kind,
                to,
                value,
                span: Span::default()
            }),
    ]
}

fn action() -> impl Strategy<Value = Vec<RecOut>> {
    prop::collection::vec(
        prop::collection::vec(outitem(), 0..3).prop_map(|items| RecOut {
            items,
            span: Span::default(),
        }),
        0..3,
    )
}

fn filter() -> impl Strategy<Value = Filter> {
    (
        rectype(),
        prop::collection::vec((tagexpr(), action()), 0..2),
        action(),
    )
        .prop_map(|(pattern, guards, default)| Filter {
            pattern,
            guards,
            default,
        })
}

fn ex(kind: ExprKind) -> Expr {
    Expr {
        kind,
        span: Span::default(),
    }
}

fn postop() -> impl Strategy<Value = PostOp> {
    prop_oneof![
        (any::<bool>(), prop::collection::vec(guarded(), 1..3)).prop_map(|(det, exits)| {
            PostOp::Star {
                det,
                exits,
                span: Span::default(),
            }
        }),
        (
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(&[LabelKind::Tag, LabelKind::BTag][..]),
            ident()
        )
            .prop_map(|(det, placed, kind, id)| PostOp::Split {
                det,
                placed,
                index: LabelRef {
                    kind,
                    name: id.name,
                    span: Span::default()
                },
                span: Span::default()
            }),
        prop::collection::vec(guarded(), 1..3).prop_map(|back| PostOp::Feedback {
            back,
            span: Span::default()
        }),
        (0i64..100).prop_map(|location| PostOp::At {
            location,
            span: Span::default()
        }),
    ]
}

/// Whether a split follows an operator whose last pattern has a guard: unprintable
/// (see `pretty`).
fn unprintable(ops: &[PostOp]) -> bool {
    ops.windows(2).any(|w| {
        let guarded_last = match &w[0] {
            PostOp::Star { exits: p, .. } | PostOp::Feedback { back: p, .. } => {
                p.last().is_some_and(|g| g.guard.is_some())
            }
            _ => false,
        };
        guarded_last && matches!(w[1], PostOp::Split { .. })
    })
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        ident().prop_map(|id| ex(ExprKind::Ref(id))),
        Just(ex(ExprKind::Identity)),
        filter().prop_map(|f| ex(ExprKind::Filter(f))),
        prop::collection::vec(guarded(), 2..4).prop_map(|ps| ex(ExprKind::Sync(ps))),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| ex(ExprKind::Serial(v))),
            (any::<bool>(), prop::collection::vec(inner.clone(), 2..4))
                .prop_map(|(det, branches)| ex(ExprKind::Choice { det, branches })),
            (inner, prop::collection::vec(postop(), 1..3))
                .prop_filter("split after a guarded pattern", |(_, ops)| !unprintable(
                    ops
                ))
                .prop_map(|(b, ops)| ex(ExprKind::Postfix(Box::new(b), ops))),
        ]
    })
}

fn sigitem() -> impl Strategy<Value = SigItem> {
    let inalt = prop_oneof![
        rectype().prop_map(InAlt::Rec),
        ident().prop_map(InAlt::Named)
    ];
    let outalt = prop_oneof![
        prop::collection::vec((any::<bool>(), label()), 0..3)
            .prop_map(|ls| OutAlt::Rec(ls, Span::default())),
        ident().prop_map(OutAlt::Named),
    ];
    let out = prop_oneof![
        Just(OutSpec::Unspecified(Span::default())),
        prop::collection::vec(outalt, 0..3).prop_map(OutSpec::Alts),
    ];
    prop_oneof![
        ident().prop_map(SigItem::Named),
        (prop::collection::vec(inalt, 0..3), out).prop_map(|(input, output)| SigItem::Map(
            TypeMap {
                input,
                output,
                span: Span::default()
            }
        )),
    ]
}

fn metadata() -> impl Strategy<Value = Metadata> {
    let key = (
        prop::sample::select(&["interface", "observer", "SACmodule"][..]),
        prop::option::of(prop::sample::select(&["C4SNet", "1, 2, 3", "$MMAP"][..])),
    )
        .prop_map(|(k, v)| MdElem {
            name: k.to_owned(),
            attrs: v
                .map(|v| vec![("value".to_owned(), v.to_owned())])
                .unwrap_or_default(),
            children: Vec::new(),
            text: String::new(),
            span: Span::default(),
        });
    let construct = (
        prop::sample::select(&["default", "boxdefault", "box", "net"][..]),
        prop::collection::vec(key, 1..3),
    )
        .prop_map(|(c, keys)| MdElem {
            name: c.to_owned(),
            attrs: if c == "box" || c == "net" {
                vec![("name".to_owned(), "a".to_owned())]
            } else {
                Vec::new()
            },
            children: keys,
            text: String::new(),
            span: Span::default(),
        });
    prop::collection::vec(construct, 1..3).prop_map(|elems| Metadata {
        elems,
        span: Span::default(),
    })
}

fn def(depth: u32) -> BoxedStrategy<Def> {
    let boxdef = (
        ident(),
        prop::option::of(prop::collection::vec(
            (label(), 0u8..2).prop_map(|(label, q)| BoxInLabel {
                label,
                qualifiers: q,
                qualifier_span: Span::default(),
            }),
            0..3,
        )),
        prop::collection::vec(prop::collection::vec(label(), 0..3), 0..3),
    )
        .prop_map(|(name, input, outputs)| {
            Def::Box(BoxDef {
                name,
                input,
                outputs,
                span: Span::default(),
            })
        });
    let body = if depth == 0 {
        Just(None).boxed()
    } else {
        prop::option::of(prop::collection::vec(def(depth - 1), 0..3)).boxed()
    };
    let netdef = (
        ident(),
        prop::option::of(prop::collection::vec(sigitem(), 1..3)),
        body,
        expr(),
    )
        .prop_map(|(name, sig, body, expr)| {
            Def::Net(NetDef {
                name,
                sig,
                body,
                expr,
                span: Span::default(),
            })
        });
    let typedef = (
        ident(),
        prop::collection::vec(
            prop_oneof![
                rectype().prop_map(InAlt::Rec),
                ident().prop_map(InAlt::Named)
            ],
            1..3,
        ),
    )
        .prop_map(|(name, alts)| {
            Def::Type(TypeDef {
                name,
                alts,
                span: Span::default(),
            })
        });
    let typesig = (ident(), prop::collection::vec(sigitem(), 1..3)).prop_map(|(name, sig)| {
        Def::Typesig(TypesigDef {
            name,
            sig,
            span: Span::default(),
        })
    });
    prop_oneof![
        boxdef,
        netdef,
        typedef,
        typesig,
        metadata().prop_map(Def::Metadata)
    ]
    .boxed()
}

fn program() -> impl Strategy<Value = Program> {
    prop::collection::vec(def(1), 0..4).prop_map(|defs| Program {
        defs,
        rejected: Vec::new(),
    })
}

/// Tokens and fragments that inputs are assembled from, so that random inputs get
/// past the lexer into the parser and the checker.
const FRAGMENTS: &[&str] = &[
    "net ",
    "box ",
    "connect ",
    "type ",
    "typesig ",
    "if ",
    "then ",
    "else ",
    "n",
    "a",
    "x",
    "<t>",
    "<#b>",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "[|",
    "|]",
    "..",
    "|",
    "||",
    "*",
    "**",
    "!",
    "!!",
    "@",
    "\\",
    "->",
    ",",
    ";",
    "=",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "+",
    "-",
    "?",
    ":",
    "0",
    "7",
    "0x1f",
    "030",
    "99999999999",
    "#",
    "abs ",
    " min ",
    "...",
    "<metadata><default><interface value=\"C4SNet\"/></default></metadata>",
    "<metadata>",
    "</metadata>",
    "<box name=\"a\">",
    "</box>",
    "//!snet core\n",
    "/*",
    "*/",
    "<<<",
    ">>>",
    "\n",
    " ",
    "::",
    "\"",
    "é",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60).prop_map(|v| v.concat())
}

const SEED_PROGRAMS: &[&str] = &[
    "net triangle ({<N>} -> {<S>}) { net start connect [{<N>} -> {<N>, <S=0>}]; net step connect [{<N>, <S>} -> if <N == 0> then {<S>, <done>} else {<N=N-1>, <S=S+N>}]; net finish connect [{<S>, <done>} -> {<S>}]; } connect start .. (step * {<done>}) .. finish;",
    "<metadata><default><interface value=\"C4SNet\"/></default></metadata>\nnet state { net merge connect [| {state}, {inval} |]; net bypass connect []; box add((state, inval) -> (state) | (outval)); } connect (merge .. (bypass | add)) * {outval};",
    "net n { box f((a, <t>) -> (b) | (c, <u>)); box init( -> (a)); } connect (init .. f | []) ! <t> .. [{<u>} -> if <u > 3> then {<v = u min 2>} else ] \\ {c, <u>} if <u == 1>, {b};",
];

const CH: &[u8] = b"<>{}[]|;,.*!\\@=-#(a)";

fn mutate(src: &str, edits: &[(usize, u8)]) -> String {
    let mut b = src.as_bytes().to_vec();
    for (pos, byte) in edits {
        if b.is_empty() {
            break;
        }
        let i = pos % b.len();
        match byte % 3 {
            0 => {
                b.remove(i);
            }
            1 => b.insert(i, CH[*byte as usize % CH.len()]),
            _ => b[i] = CH[*byte as usize % CH.len()],
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pretty_print_then_parse_gives_the_same_tree(p in program()) {
        let text = snet_lang::pretty::program(&p);
        let (back, diags) = snet_lang::parse(&text);
        prop_assert!(diags.iter().all(|d| !d.is_error()), "{text}\n{diags:#?}");
        prop_assert_eq!(back, p, "{}", text);
    }

    #[test]
    fn random_fragments_never_panic(src in fragments()) {
        let _ = snet_lang::compile_str("n.snet", &src);
    }

    #[test]
    fn mutated_programs_never_panic(
        which in 0..SEED_PROGRAMS.len(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let src = mutate(SEED_PROGRAMS[which], &edits);
        let _ = snet_lang::compile_str("n.snet", &src);
    }

    #[test]
    fn arbitrary_bytes_never_panic(src in ".{0,200}") {
        let _ = snet_lang::compile_str("n.snet", &src);
    }
}

#[test]
fn seed_programs_compile() {
    for (i, src) in SEED_PROGRAMS.iter().enumerate() {
        let name = ["triangle.snet", "state.snet", "n.snet"][i];
        if let Err(d) = snet_lang::compile_str(name, src) {
            panic!("{}", d.render());
        }
    }
}

#[test]
fn deep_inputs_give_diagnostics_not_crashes() {
    let deep = [
        format!(
            "net n connect {}[]{};",
            "(".repeat(50_000),
            ")".repeat(50_000)
        ),
        format!(
            "net n connect [{{<a>}} -> {{<b = {}a{}>}}];",
            "(".repeat(50_000),
            ")".repeat(50_000)
        ),
        format!(
            "net n connect [{{<a>}} -> {{<b = {}a>}}];",
            "abs ".repeat(50_000)
        ),
        format!(
            "net n connect [{{<a>}} -> {{<b = a{}>}}];",
            " - 1".repeat(50_000)
        ),
        format!(
            "{}net n connect [];{}",
            "net m { ".repeat(5_000),
            " } connect [];".repeat(5_000)
        ),
        format!(
            "<metadata>{}</metadata> net n connect [];",
            "<a>".repeat(50_000)
        ),
    ];
    for src in &deep {
        let r = snet_lang::compile_str("n.snet", src);
        assert!(r.is_err(), "accepted a {}-byte deep program", src.len());
    }
    // Long but flat programs are fine: chains are not nesting.
    let long_chain = format!("net n connect []{};", " .. []".repeat(20_000));
    snet_lang::compile_str("n.snet", &long_chain)
        .map_err(|d| d.render())
        .unwrap();
    let mut nets = String::from("net n0 connect [];\n");
    for i in 1..3000 {
        nets.push_str(&format!("net n{i} connect n{} .. [];\n", i - 1));
    }
    nets.push_str("net n connect n2999;\n");
    snet_lang::compile_str("n.snet", &nets)
        .map_err(|d| d.render())
        .unwrap();
}
