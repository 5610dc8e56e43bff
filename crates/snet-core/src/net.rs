//! `Net`: the static property graph of a checked program (DESIGN rule 2).
//!
//! A `Net` is built once per program by the front end (`snet-lang` lowers its checked
//! AST into it). Nodes are templates: engines create entity instances from them, lazily
//! for replicated operands (`*`, `!`). Named networks are macros; the front end may
//! share one node between several references, since every path from the root is its
//! own instance.

use crate::boxes::BoxSig;
use crate::label::Label;
use crate::tagexpr::TagExpr;
use std::fmt;
use std::sync::Arc;

/// Index of a node in [`Net::nodes`].
pub type NodeId = u32;

/// A record type (variant): a sorted, de-duplicated set of labels.
pub type Variant = Vec<Label>;

/// Sorts and de-duplicates a label list into a [`Variant`].
pub fn variant(mut labels: Vec<Label>) -> Variant {
    labels.sort_unstable();
    labels.dedup();
    labels
}

/// An entry of a parallel branch's routing type (spec §8): the variants `labels ∪ S`
/// for every subset `S` of `optional` (disjoint from `labels`, both sorted). With no
/// optional labels it is one variant; with `k` it stands for `2^k` variants — how the
/// input type of a long chain whose stages may or may not produce a label stays small
/// (a chain of `n` boxes with an error exit has `2^(n-1)` input variants).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Family {
    /// Labels every variant of the family has.
    pub labels: Variant,
    /// Labels each variant may or may not have.
    pub optional: Variant,
}

impl Family {
    /// The family of the single variant `labels`.
    pub fn exact(labels: Variant) -> Family {
        Family {
            labels,
            optional: Vec::new(),
        }
    }
}

impl std::fmt::Display for Family {
    /// `{a,b,c?}`: the labels, then each optional label with a `?`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self.labels.iter().map(|l| l.to_string()).collect();
        parts.extend(self.optional.iter().map(|l| format!("{l}?")));
        write!(f, "{{{}}}", parts.join(","))
    }
}

/// A pattern with an optional guard (spec §3.6 `GuardedPat`, §5.3).
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedPattern {
    /// The pattern's labels, sorted.
    pub labels: Variant,
    /// The guard, a `bool` expression reading only tags of `labels`.
    pub guard: Option<TagExpr>,
}

/// One item of a filter output record (spec §3.7 `OutItem`).
#[derive(Debug, Clone, PartialEq)]
pub enum OutItem {
    /// Field `to` with the value of the input's field `from` (`f` is `f = f`).
    Field {
        /// Output field.
        to: Label,
        /// Input field (in the pattern).
        from: Label,
    },
    /// Tag or binding tag `to` (kind from the label). `value: None` means "copy from
    /// the input if the pattern names it, else 0" (spec §7.5).
    Tag {
        /// Output tag or binding tag.
        to: Label,
        /// Assigned expression (`int`), if any.
        value: Option<TagExpr>,
    },
}

/// A filter action: zero or more output records, each a list of items.
pub type Action = Vec<Vec<OutItem>>;

/// A filter `[p -> if <g1> then A1 else ... An]` (spec §7.5).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The pattern `p`, sorted (the consumed labels).
    pub pattern: Variant,
    /// Guarded actions, in order.
    pub guards: Vec<(TagExpr, Action)>,
    /// The final (else) action.
    pub default: Action,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A box; index into [`Net::boxes`].
    Box(usize),
    /// The identity `[]` (also `[{} -> {}]`).
    Identity,
    /// A filter.
    Filter(Filter),
    /// A synchrocell with at least two patterns.
    Sync(Vec<GuardedPattern>),
    /// Serial composition `A .. B`.
    Serial(NodeId, NodeId),
    /// Parallel composition `A | B | ...` (`det`: `||`). `routes[i]` is the input type
    /// of branch `i` (spec §8) as a list of variant families; an empty list marks an
    /// initialiser branch.
    Parallel {
        /// Branches, left to right.
        branches: Vec<NodeId>,
        /// Input type of each branch.
        routes: Vec<Vec<Family>>,
        /// Deterministic variant `||`.
        det: bool,
    },
    /// Serial replication `A * P` (`det`: `**`).
    Star {
        /// The replicated operand.
        body: NodeId,
        /// Exit patterns.
        exits: Vec<GuardedPattern>,
        /// Deterministic variant `**`.
        det: bool,
    },
    /// Parallel replication `A ! <t>` (`det`: `!!`); `index` is a tag or binding tag.
    Split {
        /// The replicated operand.
        body: NodeId,
        /// The index tag.
        index: Label,
        /// Deterministic variant `!!`.
        det: bool,
        /// Indexed placement `!@` / `!!@`: replica `v` runs on node `v` (spec §16.2).
        placed: bool,
    },
    /// Static placement `A @ n`: every entity of this use of `A` runs on node `node`
    /// unless an inner placement says otherwise (spec §16.2). A node of its own, so
    /// that a named net shared by several uses is placed per use.
    At {
        /// The placed operand.
        body: NodeId,
        /// The node (process) it runs on.
        node: u32,
    },
    /// An observer (spec §13.1): passes every record on unchanged after reporting it.
    /// Lowering puts it in front of or behind an observed box or net.
    Observe(Arc<crate::observe::ObserverSpec>),
    /// Feedback `A \ P`.
    Feedback {
        /// The operand.
        body: NodeId,
        /// Back patterns.
        back: Vec<GuardedPattern>,
    },
}

/// A node of the static graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What the node does.
    pub kind: NodeKind,
    /// Source position `file:line:col` for diagnostics.
    pub loc: Arc<str>,
    /// Name to show in diagnostics and traces (box name, net name, or the combinator).
    pub name: Arc<str>,
}

/// A checked, lowered S-Net program: the entry network's static graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Net {
    /// All nodes, in no particular order.
    pub nodes: Vec<Node>,
    /// The entry network's root node.
    pub root: NodeId,
    /// Box declarations used by the net, indexed by `NodeKind::Box`.
    pub boxes: Vec<BoxSig>,
    /// Name of the entry network.
    pub entry: String,
}

impl Net {
    /// The node with id `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// `id` with the placements wrapped around it taken off: the node an instance is
    /// made of, and the innermost static placement among them (spec §16.2).
    pub fn unplaced(&self, mut id: NodeId) -> (NodeId, Option<u32>) {
        let mut at = None;
        while let NodeKind::At { body, node } = &self.node(id).kind {
            at = Some(*node);
            id = *body;
        }
        (id, at)
    }

    /// The static placements `@ n` of the program with where they are (`file:line:col`)
    /// and the indexed placements `!@` (their node is known only at run time).
    pub fn placements(&self) -> Vec<(u32, Arc<str>)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::At { node, .. } => Some((*node, n.loc.clone())),
                _ => None,
            })
            .collect()
    }

    /// True if the program places anything (`@`, `!@`, `!!@`).
    pub fn is_placed(&self) -> bool {
        self.nodes.iter().any(|n| {
            matches!(
                n.kind,
                NodeKind::At { .. } | NodeKind::Split { placed: true, .. }
            )
        })
    }
}

impl fmt::Display for GuardedPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, l) in self.labels.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{l}")?;
        }
        write!(f, "}}")?;
        if self.guard.is_some() {
            write!(f, " if <...>")?;
        }
        Ok(())
    }
}
