//! The resolved program: boxes, nets and a node arena of network expressions in which
//! names are resolved, labels interned and filters/patterns already type-checked.
//!
//! Nodes are pushed children first and nets are defined before use, so every node's
//! operands (and every net a node refers to) have smaller ids: a pass in id order is a
//! bottom-up pass without recursion.

use crate::span::Span;
use snet_core::net::{Filter, GuardedPattern, Variant};
use snet_core::observe::ObserverSpec;
use snet_core::Label;

/// Index into [`Ir::nodes`].
pub(crate) type IrId = usize;

/// A resolved box declaration.
#[derive(Debug, Clone)]
pub(crate) struct BoxInfo {
    pub(crate) name: String,
    pub(crate) span: Span,
    /// Input labels in written order; `None` for an initialiser.
    pub(crate) input: Option<Vec<Label>>,
    /// Output variants, labels in written order.
    pub(crate) outputs: Vec<Vec<Label>>,
    /// Scope the box is defined in.
    pub(crate) scope: usize,
    /// Interface from metadata (filled after resolution).
    pub(crate) interface: Option<String>,
    /// Input labels with a pass-through qualifier `=` (§7.3.6).
    pub(crate) passthrough: Vec<Label>,
    /// Observers from metadata (§13.1; filled after resolution, `oid` and `position`
    /// are set by lowering).
    pub(crate) observers: Vec<ObserverSpec>,
}

/// A declared signature: mappings from input variants to output variants.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sig {
    pub(crate) maps: Vec<SigMap>,
}

/// One mapping; `outputs: None` is `...` (unspecified).
#[derive(Debug, Clone)]
pub(crate) struct SigMap {
    pub(crate) inputs: Vec<Variant>,
    pub(crate) outputs: Option<Vec<Variant>>,
}

/// A resolved net definition.
#[derive(Debug, Clone)]
pub(crate) struct NetInfo {
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) sig: Option<Sig>,
    pub(crate) body: IrId,
    /// The scope the net is defined in (`None`: made up by the resolver).
    pub(crate) scope: Option<usize>,
    /// Observers from metadata, as for boxes.
    pub(crate) observers: Vec<ObserverSpec>,
}

/// A node of a network expression.
#[derive(Debug, Clone)]
pub(crate) struct IrNode {
    pub(crate) kind: IrKind,
    pub(crate) span: Span,
}

/// Node kinds; `Serial` is binary and right-nested, `Par` n-ary.
#[derive(Debug, Clone)]
pub(crate) enum IrKind {
    Box(usize),
    Net(usize),
    Identity,
    Filter(Filter),
    Sync(Vec<GuardedPattern>),
    Serial(IrId, IrId),
    Par {
        det: bool,
        branches: Vec<IrId>,
    },
    Star {
        det: bool,
        body: IrId,
        exits: Vec<GuardedPattern>,
    },
    Split {
        det: bool,
        body: IrId,
        index: Label,
        /// `!@` / `!!@`: replica `v` runs on node `v` (spec §16.2).
        placed: bool,
    },
    Feedback {
        body: IrId,
        back: Vec<GuardedPattern>,
    },
    /// `A @ n`: `A` runs on node `n` (spec §7.13, §16.2).
    At {
        body: IrId,
        node: u32,
    },
    /// After an error (unknown name, syntax error).
    Error,
}

/// The resolved program.
#[derive(Debug, Default)]
pub(crate) struct Ir {
    pub(crate) boxes: Vec<BoxInfo>,
    pub(crate) nets: Vec<NetInfo>,
    pub(crate) nodes: Vec<IrNode>,
    /// Top-level nets, in order.
    pub(crate) top_nets: Vec<usize>,
}

impl Ir {
    pub(crate) fn push(&mut self, kind: IrKind, span: Span) -> IrId {
        self.nodes.push(IrNode { kind, span });
        self.nodes.len() - 1
    }

    /// A short description of node `id` for messages: a box or net name, or the
    /// construct.
    pub(crate) fn describe(&self, id: IrId) -> String {
        match &self.nodes[id].kind {
            IrKind::Box(b) => format!("box `{}`", self.boxes[*b].name),
            IrKind::Net(n) => format!("net `{}`", self.nets[*n].name),
            IrKind::Identity => "the identity `[]`".to_owned(),
            IrKind::Filter(_) => "the filter".to_owned(),
            IrKind::Sync(_) => "the synchrocell".to_owned(),
            IrKind::Serial(a, _) => format!("the serial chain starting with {}", self.describe(*a)),
            IrKind::Par { det, .. } => {
                format!(
                    "the parallel composition `{}`",
                    if *det { "||" } else { "|" }
                )
            }
            IrKind::Star { det, .. } => {
                format!("the serial replication `{}`", if *det { "**" } else { "*" })
            }
            IrKind::Split { det, .. } => {
                format!(
                    "the parallel replication `{}`",
                    if *det { "!!" } else { "!" }
                )
            }
            IrKind::Feedback { .. } => "the feedback loop `\\`".to_owned(),
            IrKind::At { body, .. } => self.describe(*body),
            IrKind::Error => "this network".to_owned(),
        }
    }
}

/// Sorted, de-duplicated label set.
pub(crate) fn variant_of(labels: &[Label]) -> Variant {
    snet_core::net::variant(labels.to_vec())
}

/// The label set each output record of filter `f` writes (spec §8's `out` of a filter),
/// action by action, in source order: a target name per item (`f=g` gives `f`,
/// `<t=e>` gives `<t>`); an empty `{}` gives the empty variant. (§8's table says an
/// empty `RecOut` contributes no variant, but its corpus example `[{<Decipher>} -> {}]
/// .. KeyInvert` with input type `[{<Decipher>, KeySet}]`, which §8 makes normative,
/// needs the empty variant: without it `in(A .. B)` would be `v` alone, `{<Decipher>}`.)
pub(crate) fn filter_outputs(f: &Filter) -> impl Iterator<Item = Variant> + '_ {
    f.guards
        .iter()
        .map(|(_, a)| a)
        .chain([&f.default])
        .flatten()
        .map(|rec| {
            let labels: Vec<Label> = rec
                .iter()
                .map(|it| match it {
                    snet_core::net::OutItem::Field { to, .. }
                    | snet_core::net::OutItem::Tag { to, .. } => *to,
                })
                .collect();
            variant_of(&labels)
        })
}
