//! Graphviz DOT rendering of a lowered network (`snet graph`).
//!
//! Boxes, filters, synchrocells and identities are nodes; `|`, `||`, `*`, `**`, `!`,
//! `!!` and `\` are clusters labelled with the combinator, entered and left through
//! small point nodes. Every edge is labelled with the record types that flow on it
//! (inferred input types into a network, explicit output types out of it); a type
//! longer than 40 characters is shown as a count (`12 variants`) with the full type in
//! the edge's tooltip. A net that
//! is referenced twice is drawn twice, as engines instantiate it twice.

use crate::sema::infer::{show_families, show_type, show_variant};
use crate::sema::lower::NodeTypes;
use snet_core::net::{GuardedPattern, Net, NodeId, NodeKind, OutItem};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Figures of one box to draw on the graph (`snet graph --profile`).
#[derive(Debug, Clone, Default)]
pub struct BoxHeat {
    /// A second label line (the numbers).
    pub label: String,
    /// Fill colour, `#rrggbb`.
    pub fill: String,
    /// Width of the edges into the box (records in), 1 and up.
    pub width_in: u32,
    /// Width of the edges out of the box (records out), 1 and up.
    pub width_out: u32,
}

/// Run figures by box name; empty for a plain graph.
#[derive(Debug, Clone, Default)]
pub struct DotHeat {
    /// Figures by box name.
    pub boxes: HashMap<String, BoxHeat>,
}

pub(crate) fn render(net: &Net, types: &[NodeTypes], heat: &DotHeat) -> String {
    let mut d = Dot {
        net,
        types,
        out: String::new(),
        next: 0,
        indent: 1,
        heat,
        width_in: HashMap::new(),
        width_out: HashMap::new(),
    };
    let _ = writeln!(d.out, "digraph {} {{", quote(&net.entry));
    d.line("rankdir=LR;");
    d.line("compound=true;");
    d.line("node [fontname=\"Helvetica\", fontsize=10];");
    d.line("edge [fontname=\"Helvetica\", fontsize=9];");
    d.line(&format!("label={};", quote(&format!("net {}", net.entry))));
    d.line("input [shape=circle, label=\"in\"];");
    d.line("output [shape=doublecircle, label=\"out\"];");
    let (entry, exit) = d.node(net.root);
    let root_types = &types[net.root as usize];
    d.edge("input", &entry, &show_type(&root_types.input), "");
    d.edge(&exit, "output", &show_type(&root_types.output), "");
    d.out.push_str("}\n");
    d.out
}

struct Dot<'a> {
    net: &'a Net,
    types: &'a [NodeTypes],
    out: String,
    next: usize,
    indent: usize,
    heat: &'a DotHeat,
    /// Edge widths into / out of DOT nodes (boxes with figures).
    width_in: HashMap<String, u32>,
    width_out: HashMap<String, u32>,
}

fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Patterns as `{a}, {b} if <...>`.
pub(crate) fn show_pats(ps: &[GuardedPattern]) -> String {
    ps.iter()
        .map(|p| {
            let mut s = show_variant(&p.labels);
            if p.guard.is_some() {
                s.push_str(" if <...>");
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A box's signature as declared: `(a, <t>=) -> (b) | (c)`; pass-through inputs keep
/// their qualifier.
pub(crate) fn box_signature(sig: &snet_core::BoxSig) -> String {
    let show = |ls: &[snet_core::Label]| {
        ls.iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let input = match &sig.input {
        Some(ls) => format!(
            "({})",
            ls.iter()
                .map(|l| {
                    if sig.passthrough.contains(l) {
                        format!("{l}=")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => String::new(),
    };
    let outs: Vec<String> = sig
        .outputs
        .iter()
        .map(|o| format!("({})", show(o)))
        .collect();
    format!("{} -> {}", input, outs.join(" | "))
}

/// A filter as `[{a} -> if ... {b} else {c}]`.
pub(crate) fn filter_label(f: &snet_core::net::Filter) -> String {
    let actions: Vec<String> = f
        .guards
        .iter()
        .map(|(_, a)| a)
        .chain([&f.default])
        .map(|a| {
            a.iter()
                .map(|rec| {
                    let ls: Vec<String> = rec
                        .iter()
                        .map(|it| match it {
                            OutItem::Field { to, from } if to == from => to.to_string(),
                            OutItem::Field { to, from } => format!("{to}={from}"),
                            OutItem::Tag { to, value: None } => to.to_string(),
                            OutItem::Tag { to, value: Some(_) } => {
                                let s = to.to_string();
                                format!("{}=...>", &s[..s.len() - 1])
                            }
                        })
                        .collect();
                    format!("{{{}}}", ls.join(","))
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    let guards = if f.guards.is_empty() { "" } else { "if ... " };
    format!(
        "[{} -> {guards}{}]",
        show_variant(&f.pattern),
        actions.join(" else ")
    )
}

/// A synchrocell as `[| {a}, {b} |]`.
pub(crate) fn sync_label(ps: &[GuardedPattern]) -> String {
    format!("[| {} |]", show_pats(ps))
}

impl Dot<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn edge(&mut self, from: &str, to: &str, label: &str, extra: &str) {
        let label = if label.is_empty() { "{}" } else { label };
        let w = self
            .width_out
            .get(from)
            .copied()
            .max(self.width_in.get(to).copied());
        let width = w.map_or(String::new(), |w| format!(", penwidth={w}"));
        // A long type is shortened to a count; the full type is the edge's tooltip.
        let short = crate::svg::short_label(label);
        let tip = if short == label {
            String::new()
        } else {
            format!(", tooltip={}", quote(label))
        };
        self.line(&format!(
            "{from} -> {to} [label={}{tip}{extra}{width}];",
            quote(&short)
        ));
    }

    fn out_types(&self, id: NodeId) -> String {
        show_type(&self.types[id as usize].output)
    }

    fn in_types(&self, id: NodeId) -> String {
        show_type(&self.types[id as usize].input)
    }

    fn point(&mut self, prefix: &str) -> String {
        let p = self.fresh(prefix);
        self.line(&format!("{p} [shape=point, width=0.08];"));
        p
    }

    fn cluster_open(&mut self, label: &str) {
        let c = self.fresh("cluster_");
        self.line(&format!("subgraph {c} {{"));
        self.indent += 1;
        self.line(&format!("label={};", quote(label)));
        self.line("style=rounded; color=gray50;");
    }

    fn cluster_close(&mut self) {
        self.indent -= 1;
        self.line("}");
    }

    /// Draws node `id`; returns its entry and exit DOT node names.
    fn node(&mut self, id: NodeId) -> (String, String) {
        crate::grow(|| self.node_inner(id))
    }

    fn node_inner(&mut self, id: NodeId) -> (String, String) {
        let net = self.net;
        let n = net.node(id);
        match &n.kind {
            NodeKind::Box(b) => {
                let sig = &net.boxes[*b];
                let v = self.fresh("box");
                let mut label = format!("{}\n{}", sig.name, box_signature(sig));
                let mut fill = "#dde8f7";
                if let Some(h) = self.heat.boxes.get(&sig.name) {
                    label.push('\n');
                    label.push_str(&h.label);
                    fill = &h.fill;
                    self.width_in.insert(v.clone(), h.width_in.max(1));
                    self.width_out.insert(v.clone(), h.width_out.max(1));
                }
                self.line(&format!(
                    "{v} [shape=box, style=filled, fillcolor=\"{fill}\", label={}, tooltip={}];",
                    quote(&label),
                    quote(&n.loc)
                ));
                (v.clone(), v)
            }
            NodeKind::Observe(o) => {
                let v = self.fresh("obs");
                let label = format!("observer {} ({}, {})", o.oid, o.side.name(), o.target);
                self.line(&format!(
                    "{v} [shape=note, fontsize=9, label={}];",
                    quote(&label)
                ));
                (v.clone(), v)
            }
            NodeKind::Identity => {
                let v = self.fresh("id");
                self.line(&format!("{v} [shape=plaintext, label=\"[]\"];"));
                (v.clone(), v)
            }
            NodeKind::Filter(f) => {
                let label = filter_label(f);
                let v = self.fresh("filter");
                self.line(&format!(
                    "{v} [shape=box, style=\"rounded,filled\", fillcolor=\"#eeeeee\", label={}, tooltip={}];",
                    quote(&label),
                    quote(&n.loc)
                ));
                (v.clone(), v)
            }
            NodeKind::Sync(ps) => {
                let v = self.fresh("sync");
                let label = sync_label(ps);
                self.line(&format!(
                    "{v} [shape=box, style=\"filled\", fillcolor=\"#f7e6c4\", peripheries=2, label={}, tooltip={}];",
                    quote(&label),
                    quote(&n.loc)
                ));
                (v.clone(), v)
            }
            NodeKind::Serial(a, b) => {
                let (ea, xa) = self.node(*a);
                let (eb, xb) = self.node(*b);
                let label = self.out_types(*a);
                self.edge(&xa, &eb, &label, "");
                (ea, xb)
            }
            NodeKind::Parallel {
                branches,
                routes,
                det,
            } => {
                self.cluster_open(if *det { "||" } else { "|" });
                let r = self.point("route");
                let m = self.point("merge");
                for (b, route) in branches.iter().zip(routes) {
                    let (e, x) = self.node(*b);
                    if route.is_empty() {
                        self.line(&format!(
                            "{r} -> {e} [style=dotted, label=\"initialiser\"];"
                        ));
                    } else {
                        self.edge(&r, &e, &show_families(route), "");
                    }
                    let label = self.out_types(*b);
                    self.edge(&x, &m, &label, "");
                }
                self.cluster_close();
                (r, m)
            }
            NodeKind::Star { body, exits, det } => {
                let op = if *det { "**" } else { "*" };
                self.cluster_open(&format!("{op} {}", show_pats(exits)));
                let s = self.point("star");
                let t = self.point("exit");
                let (e, x) = self.node(*body);
                let label = self.in_types(*body);
                self.edge(&s, &e, &label, "");
                self.edge(&x, &e, "next stage", ", style=dashed");
                self.edge(&x, &t, &show_pats(exits), "");
                self.edge(&s, &t, &show_pats(exits), ", style=dotted");
                self.cluster_close();
                (s, t)
            }
            NodeKind::Split {
                body,
                index,
                det,
                placed,
            } => {
                self.cluster_open(&split_label(*det, *placed, index));
                let s = self.point("split");
                let m = self.point("merge");
                let (e, x) = self.node(*body);
                let label = format!("replica per {index}");
                self.edge(&s, &e, &label, "");
                let label = self.out_types(*body);
                self.edge(&x, &m, &label, "");
                self.cluster_close();
                (s, m)
            }
            NodeKind::At { body, node } => {
                // A placement: a cluster around its operand, named by the node.
                self.cluster_open(&format!("node {node} (@ {node})"));
                let r = self.node(*body);
                self.cluster_close();
                r
            }
            NodeKind::Feedback { body, back } => {
                self.cluster_open(&format!("\\ {}", show_pats(back)));
                let s = self.point("loop");
                let t = self.point("exit");
                let (e, x) = self.node(*body);
                let label = self.in_types(*body);
                self.edge(&s, &e, &label, "");
                self.edge(&x, &e, &show_pats(back), ", style=dashed, constraint=false");
                let label = self.out_types(*body);
                self.edge(&x, &t, &label, "");
                self.cluster_close();
                (s, t)
            }
        }
    }
}

/// A split's label in pictures (DOT clusters, SVG frames): its operator and index tag,
/// and for `!@`/`!!@` where the replicas run.
pub(crate) fn split_label(det: bool, placed: bool, index: &impl std::fmt::Display) -> String {
    let op = match (det, placed) {
        (false, false) => "!",
        (true, false) => "!!",
        (false, true) => "!@",
        (true, true) => "!!@",
    };
    if placed {
        format!("{op} {index}: replica v on node v")
    } else {
        format!("{op} {index}")
    }
}
