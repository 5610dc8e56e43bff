//! Lowering of a checked program to the static graph [`snet_core::Net`].
//!
//! Named nets are expanded by sharing: every reference to a net uses the node lowered
//! for its body once (engines instantiate per path). `A @ n` lowers to an `At` node per
//! use (a shared net is placed per use); `!@`/`!!@` to placed splits; `[{} -> {}]` was already turned into the identity. Chains of `..` are
//! balanced trees of binary `Serial` nodes; a choice chain is one n-ary `Parallel` whose
//! `routes` are the inferred input types of its branches (§8).

use super::family::FamInfer;
use super::infer::{Infer, Ty};
use super::ir::*;
use crate::span::SourceFile;
use snet_core::boxes::BoxSig;
use snet_core::net::{Net, Node, NodeId, NodeKind};
use snet_core::observe::{ObserverSpec, Side};
use std::collections::HashMap;
use std::sync::Arc;

/// Computes the inferred types of every lowered node (for `snet graph`).
pub(crate) fn node_types(ir: &Ir, ir_of: &[IrId]) -> Vec<NodeTypes> {
    let mut inf = Infer::new(ir);
    ir_of
        .iter()
        .map(|id| {
            inf.begin();
            NodeTypes {
                input: inf.input(*id).clone(),
                output: inf.all_outputs(*id),
            }
        })
        .collect()
}

/// Inferred types of a lowered node, for `snet graph`.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeTypes {
    /// `in(E)`.
    pub(crate) input: Ty,
    /// Union of `out(E, v)` over `v` in `in(E)`.
    pub(crate) output: Ty,
}

pub(crate) struct Lowering<'a, 'i> {
    ir: &'a Ir,
    fam: &'a FamInfer<'i>,
    file: &'a SourceFile,
    nodes: Vec<Node>,
    ir_of: Vec<IrId>,
    boxes: Vec<BoxSig>,
    box_ids: HashMap<usize, usize>,
    nets: HashMap<usize, NodeId>,
    /// IR box indices in `boxes` order.
    pub(crate) used_boxes: Vec<usize>,
    /// The id of the next observer.
    next_oid: u32,
}

impl<'a, 'i> Lowering<'a, 'i> {
    pub(crate) fn new(ir: &'a Ir, fam: &'a FamInfer<'i>, file: &'a SourceFile) -> Self {
        Lowering {
            ir,
            fam,
            file,
            nodes: Vec::new(),
            ir_of: Vec::new(),
            boxes: Vec::new(),
            box_ids: HashMap::new(),
            nets: HashMap::new(),
            used_boxes: Vec::new(),
            next_oid: 0,
        }
    }

    /// Lowers net `entry`; returns the graph, the IR node of each graph node, and the
    /// boxes used.
    pub(crate) fn run(mut self, entry: usize) -> (Net, Vec<IrId>, Vec<usize>) {
        let root = self.net(entry);
        let net = Net {
            nodes: self.nodes,
            root,
            boxes: self.boxes,
            entry: self.ir.nets[entry].name.clone(),
        };
        (net, self.ir_of, self.used_boxes)
    }

    fn net(&mut self, n: usize) -> NodeId {
        if let Some(id) = self.nets.get(&n) {
            return *id;
        }
        let body = self.ir.nets[n].body;
        let id = self.node(body);
        let net = &self.ir.nets[n];
        let id = self.observe(body, id, &net.observers, &net.name, false);
        self.nets.insert(n, id);
        id
    }

    fn push(&mut self, ir_id: IrId, kind: NodeKind, name: &str) -> NodeId {
        let loc: Arc<str> = self.file.location(self.ir.nodes[ir_id].span).into();
        self.nodes.push(Node {
            kind,
            loc,
            name: name.into(),
        });
        self.ir_of.push(ir_id);
        (self.nodes.len() - 1) as NodeId
    }

    /// A balanced tree of `Serial` nodes over `lowered` (the lowered `elems`, at least
    /// two). The top node stands for IR node `top`; an inner node for its last element
    /// (whose output types label the edge to the next element in `snet graph`, as
    /// in the right-nested chain).
    fn balanced(&mut self, top: IrId, elems: &[IrId], lowered: &[NodeId]) -> NodeId {
        if lowered.len() == 1 {
            return lowered[0];
        }
        let mid = lowered.len() / 2;
        let a = self.balanced(elems[mid - 1], &elems[..mid], &lowered[..mid]);
        let b = self.balanced(elems[elems.len() - 1], &elems[mid..], &lowered[mid..]);
        self.push(top, NodeKind::Serial(a, b), "..")
    }

    /// Wraps `inner` (lowered from `ir_id`, the box or net `name`) in the observer
    /// nodes of `observers` (spec §13.1): `before` in front, `after` behind, numbered
    /// in creation order. An initialiser box receives no records, so observers before
    /// it are left out (they would also hide it from its composition's start).
    fn observe(
        &mut self,
        ir_id: IrId,
        inner: NodeId,
        observers: &[ObserverSpec],
        name: &str,
        init: bool,
    ) -> NodeId {
        let mut node = inner;
        for o in observers {
            if init && o.side == Side::Before {
                continue;
            }
            let spec = ObserverSpec {
                oid: self.next_oid,
                position: name.to_owned(),
                ..o.clone()
            };
            self.next_oid += 1;
            let obs = self.push(ir_id, NodeKind::Observe(Arc::new(spec)), name);
            let pair = match o.side {
                Side::Before => NodeKind::Serial(obs, node),
                Side::After => NodeKind::Serial(node, obs),
            };
            node = self.push(ir_id, pair, "..");
        }
        node
    }

    fn node(&mut self, id: IrId) -> NodeId {
        crate::grow(|| self.node_inner(id))
    }

    fn node_inner(&mut self, id: IrId) -> NodeId {
        let ir = self.ir;
        match &ir.nodes[id].kind {
            IrKind::Box(b) => {
                let idx = match self.box_ids.get(b) {
                    Some(i) => *i,
                    None => {
                        let bx = &ir.boxes[*b];
                        self.boxes.push(BoxSig {
                            name: bx.name.clone(),
                            input: bx.input.clone(),
                            outputs: bx.outputs.clone(),
                            passthrough: bx.passthrough.clone(),
                        });
                        self.used_boxes.push(*b);
                        self.box_ids.insert(*b, self.boxes.len() - 1);
                        self.boxes.len() - 1
                    }
                };
                let bx = &ir.boxes[*b];
                let node = self.push(id, NodeKind::Box(idx), &bx.name);
                self.observe(id, node, &bx.observers, &bx.name, bx.input.is_none())
            }
            IrKind::Net(n) => self.net(*n),
            IrKind::Identity | IrKind::Error => self.push(id, NodeKind::Identity, "[]"),
            IrKind::Filter(f) => self.push(id, NodeKind::Filter(f.clone()), "filter"),
            IrKind::Sync(ps) => self.push(id, NodeKind::Sync(ps.clone()), "sync"),
            IrKind::Serial(..) => {
                // The whole chain `e1 .. e2 .. ... .. en` (however it is bracketed:
                // `..` is associative) becomes a balanced tree of `Serial` nodes, so
                // that everything that follows the instance tree (creation, ancestor
                // walks, freeing) goes O(log n) deep instead of n deep on a generated
                // chain of 10^5 stages.
                let elems = serial_elements(ir, id);
                let lowered: Vec<NodeId> = elems.iter().map(|e| self.node(*e)).collect();
                self.balanced(id, &elems, &lowered)
            }
            IrKind::Par { det, branches } => {
                let routes = branches
                    .iter()
                    .map(|b| self.fam.input(*b).to_vec())
                    .collect();
                let bs = branches.iter().map(|b| self.node(*b)).collect();
                self.push(
                    id,
                    NodeKind::Parallel {
                        branches: bs,
                        routes,
                        det: *det,
                    },
                    if *det { "||" } else { "|" },
                )
            }
            IrKind::Star { det, body, exits } => {
                let b = self.node(*body);
                self.push(
                    id,
                    NodeKind::Star {
                        body: b,
                        exits: exits.clone(),
                        det: *det,
                    },
                    if *det { "**" } else { "*" },
                )
            }
            IrKind::Split {
                det,
                body,
                index,
                placed,
            } => {
                let b = self.node(*body);
                self.push(
                    id,
                    NodeKind::Split {
                        body: b,
                        index: *index,
                        det: *det,
                        placed: *placed,
                    },
                    match (*det, *placed) {
                        (false, false) => "!",
                        (true, false) => "!!",
                        (false, true) => "!@",
                        (true, true) => "!!@",
                    },
                )
            }
            IrKind::Feedback { body, back } => {
                let b = self.node(*body);
                self.push(
                    id,
                    NodeKind::Feedback {
                        body: b,
                        back: back.clone(),
                    },
                    "\\",
                )
            }
            IrKind::At { body, node } => {
                let b = self.node(*body);
                self.push(
                    id,
                    NodeKind::At {
                        body: b,
                        node: *node,
                    },
                    "@",
                )
            }
        }
    }
}

/// The operands of the serial chain at `id`, left to right, looking through nested
/// `..` (not through named nets, which stay shared nodes). Iterative: a generated chain
/// can be 10^5 long.
fn serial_elements(ir: &Ir, id: IrId) -> Vec<IrId> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        match &ir.nodes[n].kind {
            IrKind::Serial(a, b) => {
                stack.push(*b);
                stack.push(*a);
            }
            _ => out.push(n),
        }
    }
    out
}
