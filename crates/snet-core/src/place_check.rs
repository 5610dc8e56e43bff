//! What a distributed run cannot do yet, checked before the first record (spec §16).
//!
//! Initialiser boxes (spec §7.4) fire when their composition is created, on the
//! composition's home, which sends the call to the box's node (decision 37). Inside a
//! deterministic combinator (`||`, `**`, `!!`) their records are also counted in a
//! *creation frame* that every node makes when it builds its copy of the network; only
//! the copy on the combinator's home orders its output, and the composition's home,
//! which fires the initialiser, may be another node (or a node that created the
//! composition only to route by). Until creation frames are lent between nodes the way
//! records' frames are, an initialiser that lies both inside a placement and inside a
//! deterministic combinator is refused with a message naming both, rather than giving
//! wrong output or waiting for ever. Initialisers in placements outside deterministic
//! combinators, and initialisers in deterministic combinators with no placement
//! around them, run distributed.

use crate::error::RunError;
use crate::net::{Net, NodeId, NodeKind};

/// Fails if an initialiser box lies inside both a placement (`@`, `!@`, `!!@`) and a
/// deterministic combinator.
pub(crate) fn check(net: &Net) -> Result<(), RunError> {
    // (node, the innermost placement above it, the innermost deterministic combinator
    // above it)
    type Item = (NodeId, Option<NodeId>, Option<NodeId>);
    let mut todo: Vec<Item> = vec![(net.root, None, None)];
    let mut seen = std::collections::HashSet::new();
    while let Some((id, placed, det)) = todo.pop() {
        if !seen.insert((id, placed, det)) {
            continue;
        }
        let n = net.node(id);
        // What lies below a deterministic combinator.
        let below = |is_det: bool| if is_det { Some(id) } else { det };
        match &n.kind {
            NodeKind::Box(b) => {
                if let (Some(p), Some(d), None) = (placed, det, &net.boxes[*b].input) {
                    let (at, dn) = (net.node(p), net.node(d));
                    let what = match &at.kind {
                        NodeKind::At { node, .. } => format!("@ {node}"),
                        NodeKind::Split { index, det, .. } => {
                            format!("{}@ <{index}>", if *det { "!!" } else { "!" })
                        }
                        _ => at.name.to_string(),
                    };
                    return Err(RunError::new(
                        format!("`{what}` at {}", at.loc),
                        None,
                        format!(
                            "the initialiser box `{}` (at {}) would run inside this placement and inside the deterministic combinator `{}` (at {}): such initialisers are not yet placeable in a distributed run (use the non-deterministic variant, or leave the placement out)",
                            n.name, n.loc, dn.name, dn.loc
                        ),
                    ));
                }
            }
            NodeKind::At { body, .. } => todo.push((*body, Some(id), det)),
            NodeKind::Split {
                body,
                placed: true,
                det: d,
                ..
            } => todo.push((*body, Some(id), below(*d))),
            NodeKind::Serial(a, b) => todo.extend([(*a, placed, det), (*b, placed, det)]),
            NodeKind::Parallel {
                branches, det: d, ..
            } => todo.extend(branches.iter().map(|b| (*b, placed, below(*d)))),
            NodeKind::Star { body, det: d, .. } | NodeKind::Split { body, det: d, .. } => {
                todo.push((*body, placed, below(*d)))
            }
            NodeKind::Feedback { body, .. } => todo.push((*body, placed, det)),
            NodeKind::Identity | NodeKind::Filter(_) | NodeKind::Sync(_) | NodeKind::Observe(_) => {
            }
        }
    }
    Ok(())
}
