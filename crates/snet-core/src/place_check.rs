//! What a distributed run cannot do yet, checked before the first record (spec §16).
//!
//! Records inside a deterministic combinator (`||`, `**`, `!!`) carry causal frames
//! (`det`) that live in the memory of the process that made them, and the initialiser
//! gate of a composition counts its initialisers' records the same way. Until frames
//! can be lent to other nodes, the operand of a deterministic combinator and a
//! composition with initialiser branches must run on one node: a placement inside
//! them is refused with a message that names it, rather than giving wrong output.

use crate::error::RunError;
use crate::net::{Net, NodeId, NodeKind};

/// Fails if a deterministic combinator or a composition with initialisers has a
/// placement inside its operand.
pub(crate) fn check(net: &Net) -> Result<(), RunError> {
    for (id, n) in net.nodes.iter().enumerate() {
        let (body, what): (Vec<NodeId>, &str) = match &n.kind {
            NodeKind::Parallel {
                branches,
                det: true,
                ..
            } => (branches.clone(), "`||`"),
            NodeKind::Parallel {
                branches, routes, ..
            } if routes.iter().any(Vec::is_empty) => {
                (branches.clone(), "a choice with initialiser branches")
            }
            NodeKind::Star {
                body, det: true, ..
            } => (vec![*body], "`**`"),
            NodeKind::Split {
                body,
                det: true,
                placed,
                ..
            } => {
                if *placed {
                    return Err(unsupported(net, id as NodeId, "`!!@`"));
                }
                (vec![*body], "`!!`")
            }
            _ => continue,
        };
        if body.iter().any(|b| placed_inside(net, *b)) {
            return Err(unsupported(net, id as NodeId, what));
        }
    }
    Ok(())
}

fn unsupported(net: &Net, id: NodeId, what: &str) -> RunError {
    let n = net.node(id);
    RunError::new(
        format!("{} at {}", n.name, n.loc),
        None,
        format!(
            "{what} with placements (`@`, `!@`) inside it cannot run across nodes yet: its ordering state lives in one process; place the whole combinator instead (`(...) @ n`)"
        ),
    )
}

/// True if a placement occurs in the subgraph of `root` (iteratively).
fn placed_inside(net: &Net, root: NodeId) -> bool {
    let mut todo = vec![root];
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        match &net.node(id).kind {
            NodeKind::At { .. } | NodeKind::Split { placed: true, .. } => return true,
            NodeKind::Serial(a, b) => todo.extend([*a, *b]),
            NodeKind::Parallel { branches, .. } => todo.extend(branches),
            NodeKind::Star { body, .. }
            | NodeKind::Split { body, .. }
            | NodeKind::Feedback { body, .. } => todo.push(*body),
            NodeKind::Box(_) | NodeKind::Identity | NodeKind::Filter(_) | NodeKind::Sync(_) => {}
        }
    }
    false
}
