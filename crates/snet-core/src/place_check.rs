//! What a distributed run cannot do yet, checked before the first record (spec §16).
//!
//! Initialiser boxes (spec §7.4) fire when their composition is created, and their
//! records are counted in frames that every node makes when it builds its copy of the
//! static network. Until that counting is lent between nodes the way records' frames
//! are, an initialiser and every composition around it must run on node 0: a placement
//! on the way from the root to an initialiser is refused with a message naming it,
//! rather than giving wrong output or waiting for ever.

use crate::error::RunError;
use crate::net::{Net, NodeId, NodeKind};

/// Fails if a placement (`@`, `!@`, `!!@`) encloses an initialiser box.
pub(crate) fn check(net: &Net) -> Result<(), RunError> {
    // (node, the innermost placement above it)
    let mut todo: Vec<(NodeId, Option<NodeId>)> = vec![(net.root, None)];
    let mut seen = std::collections::HashSet::new();
    while let Some((id, placed)) = todo.pop() {
        if !seen.insert((id, placed)) {
            continue;
        }
        let n = net.node(id);
        match &n.kind {
            NodeKind::Box(b) => {
                if let (Some(p), None) = (placed, &net.boxes[*b].input) {
                    let at = net.node(p);
                    return Err(RunError::new(
                        format!("{} at {}", at.name, at.loc),
                        None,
                        format!(
                            "the initialiser box `{}` (at {}) would run inside this placement: initialisers and the compositions around them run on node 0 in a distributed run (not yet placeable)",
                            n.name, n.loc
                        ),
                    ));
                }
            }
            NodeKind::At { body, .. } => todo.push((*body, Some(id))),
            NodeKind::Split {
                body, placed: true, ..
            } => todo.push((*body, Some(id))),
            NodeKind::Serial(a, b) => todo.extend([(*a, placed), (*b, placed)]),
            NodeKind::Parallel { branches, .. } => {
                todo.extend(branches.iter().map(|b| (*b, placed)))
            }
            NodeKind::Star { body, .. }
            | NodeKind::Split { body, .. }
            | NodeKind::Feedback { body, .. } => todo.push((*body, placed)),
            NodeKind::Identity | NodeKind::Filter(_) | NodeKind::Sync(_) | NodeKind::Observe(_) => {
            }
        }
    }
    Ok(())
}
