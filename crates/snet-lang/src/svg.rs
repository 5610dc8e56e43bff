//! SVG pictures of a lowered network (`snet graph -o x.svg`), laid out here.
//!
//! An S-Net network is a tree of combinators, so the picture follows the tree instead
//! of laying out a general graph: each node becomes a block (a width, a height, the
//! height of its entry on the left edge and of its exit on the right edge), computed
//! bottom up from its operands, then written top down with absolute positions. Each
//! node is visited once, so the layout takes time linear in the size of the network
//! (a chain of 5 000 boxes, 5 000 parallel boxes, 100 nested levels each take well
//! under a second).
//!
//! * A serial chain runs left to right and wraps into rows when it gets wider than
//!   [`MAX_ROW`] pixels; the edge into the next row comes back along the left.
//! * Every combinator is a labelled frame around its operands (`|` and `||` branches
//!   stacked top to bottom; `*`, `**` and `\` with their loop back over the top and
//!   `*`'s bypass along the bottom; `!` / `!!` with the operand drawn as a stack of
//!   replicas, `!@` labelled `replica v on node v`); a placement `@ n` is a shaded
//!   frame named `node n`.
//! * Edge labels longer than [`EDGE_LABEL_MAX`] characters are shortened to a count
//!   (`12 variants`); every edge has a tooltip (`<title>`) with the full type, every
//!   node one with its full label and source position. An edge that continues one
//!   inside a frame with the same type, across the frame's border, is not labelled
//!   twice.
//! * The canvas is the drawing's bounding box plus a margin of [`MARGIN`] pixels.
//!
//! Text is set in a monospace font, whose advance (0.6 em) gives the text widths the
//! layout needs without font metrics.

use crate::dot::{box_signature, filter_label, show_pats, sync_label, DotHeat};
use crate::sema::infer::{show_families, show_type};
use crate::sema::lower::NodeTypes;
use snet_core::net::{Net, NodeId, NodeKind};
use std::fmt::Write as _;

/// Font size of node text, in pixels.
const FONT: f64 = 12.0;
/// Font size of edge and frame labels.
const SMALL: f64 = 10.0;
/// Advance of a monospace character, in em.
const ADVANCE: f64 = 0.6;
/// Line height of node text.
const LINE: f64 = 15.0;
/// Space between a frame and its contents.
const PAD: f64 = 10.0;
/// Height of the label band at the top of a frame.
const HEAD: f64 = 16.0;
/// Least horizontal gap between two blocks of a chain.
const GAP: f64 = 24.0;
/// Vertical gap between the branches of a choice.
const VGAP: f64 = 14.0;
/// Vertical gap between the rows of a wrapped chain.
const ROW_GAP: f64 = 30.0;
/// A chain wider than this (pixels) wraps into rows.
pub(crate) const MAX_ROW: f64 = 1400.0;
/// The least row width a nested chain gets, however deep it is.
const MIN_ROW: f64 = 320.0;
/// Margin around the drawing.
pub(crate) const MARGIN: f64 = 12.0;
/// Longest edge label drawn in full (characters); longer ones show a count.
pub(crate) const EDGE_LABEL_MAX: usize = 40;
/// Longest line of node or frame text drawn in full (characters).
const TEXT_MAX: usize = 48;

fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * ADVANCE
}

/// `s` cut to `max` characters, ending in `...` when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(3)).collect();
    t.push_str("...");
    t
}

/// The label drawn on an edge for the type (or pattern list) `full`: `full` itself when
/// it has at most [`EDGE_LABEL_MAX`] characters, otherwise a count of its variants
/// (`12 variants`) or, for one long variant, of its labels (`{30 labels}`). The full
/// text goes into the edge's tooltip.
pub(crate) fn short_label(full: &str) -> String {
    if full.chars().count() <= EDGE_LABEL_MAX {
        return full.to_owned();
    }
    let mut depth = 0usize;
    let mut variants = 0usize;
    for c in full.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    variants += 1;
                }
                depth += 1;
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if variants > 1 {
        format!("{variants} variants")
    } else if variants == 1 {
        format!("{{{} labels}}", full.matches(',').count() + 1)
    } else {
        clip(full, EDGE_LABEL_MAX)
    }
}

fn esc(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Not allowed in XML 1.0 (a file name could hold one).
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
}

/// A drawing primitive, in coordinates relative to its block.
enum Prim {
    /// A node or frame outline.
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        rx: f64,
        fill: String,
        stroke: &'static str,
        dash: bool,
        double: bool,
    },
    /// Lines of text, the first at baseline `y`.
    Text {
        x: f64,
        y: f64,
        lines: Vec<String>,
        size: f64,
        bold_first: bool,
        middle: bool,
    },
    /// An edge: a polyline, its drawn label and its full label (tooltip).
    Edge(Edge),
    /// A junction point.
    Dot { x: f64, y: f64 },
}

#[derive(Default)]
struct Edge {
    points: Vec<(f64, f64)>,
    /// Drawn label and the baseline position of its start.
    label: Option<(String, f64, f64)>,
    title: String,
    width: u32,
    /// 0: solid, 1: dashed, 2: dotted.
    style: u8,
    arrow: bool,
}

/// A laid-out piece of the picture.
struct Block {
    w: f64,
    h: f64,
    /// Height of the entry on the left edge.
    entry: f64,
    /// Height of the exit on the right edge.
    exit: f64,
    /// Edge widths into and out of the block (a box with figures).
    in_w: Option<u32>,
    out_w: Option<u32>,
    /// The type drawn on the edge from the block's entry into its contents, and on the
    /// edge from its contents to its exit: an edge just outside that would carry the
    /// same type (across the frame's border, on the same line) is not labelled again.
    in_label: Option<String>,
    out_label: Option<String>,
    /// `<g class=...>` around the block (empty: no group).
    class: &'static str,
    title: String,
    /// Drawn before the operands (frames).
    back: Vec<Prim>,
    kids: Vec<(f64, f64, Block)>,
    /// Drawn after the operands (edges, junctions).
    front: Vec<Prim>,
}

impl Block {
    fn new(w: f64, h: f64, entry: f64, exit: f64) -> Block {
        Block {
            w,
            h,
            entry,
            exit,
            in_w: None,
            out_w: None,
            in_label: None,
            out_label: None,
            class: "",
            title: String::new(),
            back: Vec::new(),
            kids: Vec::new(),
            front: Vec::new(),
        }
    }
}

/// Which node shape a leaf gets.
#[derive(Clone, Copy)]
enum Look {
    Box,
    Filter,
    Sync,
    Identity,
    Observer,
    Port { double: bool },
}

/// A node: its text lines (the first in bold), tooltip and look.
fn leaf(lines: Vec<String>, title: String, fill: &str, look: Look) -> Block {
    let lines: Vec<String> = lines.iter().map(|l| clip(l, TEXT_MAX)).collect();
    let tw = lines.iter().map(|l| text_w(l, FONT)).fold(0.0, f64::max);
    let (w, h) = match look {
        Look::Identity => (tw + 10.0, 22.0),
        Look::Port { .. } => (tw + 24.0, 26.0),
        _ => (tw + 16.0, lines.len() as f64 * LINE + 10.0),
    };
    let mut b = Block::new(w, h, h / 2.0, h / 2.0);
    b.class = match look {
        Look::Box => "node box",
        Look::Filter => "node filter",
        Look::Sync => "node sync",
        Look::Identity => "node identity",
        Look::Observer => "node observer",
        Look::Port { .. } => "node port",
    };
    b.title = title;
    let (rx, stroke, double) = match look {
        Look::Box => (2.0, "#37526e", false),
        Look::Filter => (8.0, "#777777", false),
        Look::Sync => (0.0, "#8a6d2f", true),
        Look::Identity => (0.0, "none", false),
        Look::Observer => (0.0, "#999966", false),
        Look::Port { double } => (h / 2.0, "#333333", double),
    };
    b.back.push(Prim::Rect {
        x: 0.0,
        y: 0.0,
        w,
        h,
        rx,
        fill: fill.to_owned(),
        stroke,
        dash: false,
        double,
    });
    let n = lines.len() as f64;
    b.back.push(Prim::Text {
        x: w / 2.0,
        y: h / 2.0 - (n - 1.0) * LINE / 2.0 + FONT * 0.35,
        lines,
        size: FONT,
        bold_first: matches!(look, Look::Box),
        middle: true,
    });
    b
}

fn edge(points: Vec<(f64, f64)>, full: &str, at: Option<(f64, f64)>, width: u32) -> Prim {
    Prim::Edge(Edge {
        // Above the line, however wide it is.
        label: at.map(|(x, y)| (short_label(full), x, y - f64::from(width - 1) / 2.0)),
        title: full.to_owned(),
        points,
        width,
        style: 0,
        arrow: true,
    })
}

/// A plain connecting line (no label, no arrow).
fn line(points: Vec<(f64, f64)>, width: u32) -> Prim {
    Prim::Edge(Edge {
        points,
        width,
        ..Edge::default()
    })
}

fn styled(p: Prim, style: u8, arrow: bool) -> Prim {
    match p {
        Prim::Edge(mut e) => {
            e.style = style;
            e.arrow = arrow;
            Prim::Edge(e)
        }
        p => p,
    }
}

fn label_w(full: &str) -> f64 {
    text_w(&short_label(full), SMALL)
}

/// Whether the label `full` repeats `beside`, the label drawn next to it across a
/// frame's border.
fn repeats(full: &str, beside: &Option<String>) -> bool {
    beside.as_deref() == Some(full)
}

/// Where an edge's label goes: `at`, or nowhere when it repeats the one beside it.
fn unless(hidden: bool, at: (f64, f64)) -> Option<(f64, f64)> {
    (!hidden).then_some(at)
}

/// The width of a label, 0 when it is not drawn.
fn shown_w(full: &str, hidden: bool) -> f64 {
    if hidden {
        0.0
    } else {
        label_w(full)
    }
}

fn width(a: Option<u32>, b: Option<u32>) -> u32 {
    a.max(b).unwrap_or(1).max(1)
}

/// The widest gap before an item of a chain with edge labels `labels`.
fn lead(labels: &[String]) -> f64 {
    labels
        .iter()
        .map(|l| (label_w(l) + 16.0).max(GAP))
        .fold(GAP, f64::max)
}

/// Places `items` left to right, wrapping into rows `max_row` pixels wide; `labels[i]`
/// is the type on the edge from item `i` to item `i + 1`. With `extend`, a last row
/// shorter than the block ends in a line to the block's right edge (its exit).
fn chain(mut items: Vec<Block>, labels: Vec<String>, max_row: f64, extend: bool) -> Block {
    debug_assert_eq!(items.len(), labels.len() + 1);
    if items.len() == 1 {
        return items
            .pop()
            .unwrap_or_else(|| Block::new(0.0, 0.0, 0.0, 0.0));
    }
    let hidden: Vec<bool> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| repeats(l, &items[i].out_label) || repeats(l, &items[i + 1].in_label))
        .collect();
    let gap = |i: usize| {
        if hidden[i - 1] {
            GAP
        } else {
            lead(&labels[i - 1..i])
        }
    };
    // Rows of item indices and their x positions.
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut row: Vec<(usize, f64)> = Vec::new();
    let mut x = 0.0;
    for (i, it) in items.iter().enumerate() {
        let g = if i == 0 { 0.0 } else { gap(i) };
        // Wrap when the item does not fit on this row but does on a new one (an item
        // wider than a row stays where it is: a row of its own would not narrow the
        // picture).
        if !row.is_empty() && x + g + it.w > max_row && g + it.w <= max_row {
            rows.push(std::mem::replace(&mut row, vec![(i, g)]));
            x = g + it.w;
        } else {
            row.push((i, x + g));
            x += g + it.w;
        }
    }
    rows.push(row);
    let mut b = Block::new(0.0, 0.0, 0.0, 0.0);
    b.in_w = items[0].in_w;
    b.out_w = items[items.len() - 1].out_w;
    b.in_label = items[0].in_label.clone();
    b.out_label = items[items.len() - 1].out_label.clone();
    // Vertical placement: the entries of a row on one line (its axis).
    let mut top = 0.0;
    let mut pos = vec![(0.0, 0.0); items.len()];
    let mut axes = Vec::with_capacity(rows.len());
    let mut bottoms = Vec::with_capacity(rows.len());
    let mut w: f64 = 0.0;
    for (r, row) in rows.iter().enumerate() {
        let above = row
            .iter()
            .map(|&(i, _)| items[i].entry)
            .fold(14.0, f64::max);
        let below = row
            .iter()
            .map(|&(i, _)| items[i].h - items[i].entry)
            .fold(0.0, f64::max);
        let axis = top + above;
        for &(i, x) in row {
            pos[i] = (x, axis - items[i].entry);
        }
        let bottom = row
            .iter()
            .map(|&(i, _)| pos[i].1 + items[i].h)
            .fold(axis + below, f64::max);
        let Some(&(last, lx)) = row.last() else {
            continue;
        };
        let right = lx + items[last].w + if r + 1 < rows.len() { 8.0 } else { 0.0 };
        w = w.max(right);
        axes.push(axis);
        bottoms.push(bottom);
        top = bottom + ROW_GAP;
    }
    b.w = w;
    b.h = bottoms[bottoms.len() - 1];
    b.entry = axes[0];
    // Edges.
    for (r, row) in rows.iter().enumerate() {
        for (k, &(i, x)) in row.iter().enumerate() {
            if i == 0 {
                continue;
            }
            let prev = &items[i - 1];
            let from = (pos[i - 1].0 + prev.w, pos[i - 1].1 + prev.exit);
            let to = (x, axes[r]);
            let wd = width(prev.out_w, items[i].in_w);
            let full = &labels[i - 1];
            if k > 0 {
                let mut pts = vec![from];
                if (from.1 - to.1).abs() > 0.5 {
                    pts.push((from.0 + 6.0, from.1));
                    pts.push((from.0 + 6.0, to.1));
                }
                pts.push(to);
                let lx = if pts.len() > 2 {
                    from.0 + 10.0
                } else {
                    from.0 + 8.0
                };
                b.front
                    .push(edge(pts, full, unless(hidden[i - 1], (lx, to.1 - 4.0)), wd));
            } else {
                // Into the next row: right, down between the rows, back to the left.
                let mid = bottoms[r - 1] + ROW_GAP / 2.0;
                let pts = vec![
                    from,
                    (from.0 + 8.0, from.1),
                    (from.0 + 8.0, mid),
                    (4.0, mid),
                    (4.0, to.1),
                    to,
                ];
                b.front.push(edge(
                    pts,
                    full,
                    unless(hidden[i - 1], (10.0, to.1 - 4.0)),
                    wd,
                ));
            }
        }
    }
    let last = items.len() - 1;
    let end = (pos[last].0 + items[last].w, pos[last].1 + items[last].exit);
    b.exit = end.1;
    if extend && end.0 < b.w - 0.5 {
        b.front.push(line(
            vec![end, (b.w, end.1)],
            width(items[last].out_w, None),
        ));
    }
    for (it, (x, y)) in items.into_iter().zip(pos) {
        b.kids.push((x, y, it));
    }
    b
}

/// A frame labelled `label` (clipped; the full text and `title` in its tooltip).
fn frame(b: &mut Block, label: &str, title: &str, class: &'static str) {
    let shown = clip(label, TEXT_MAX);
    b.w = b.w.max(text_w(&shown, SMALL) + 2.0 * PAD);
    b.class = class;
    b.title = format!("{label}\n{title}");
    let (fill, stroke, dash) = if class == "cluster at" {
        ("#eaf1fb".to_owned(), "#3b6ea8", true)
    } else {
        ("none".to_owned(), "#8c8c8c", false)
    };
    b.back.insert(
        0,
        Prim::Rect {
            x: 0.0,
            y: 0.0,
            w: b.w,
            h: b.h,
            rx: 6.0,
            fill,
            stroke,
            dash,
            double: false,
        },
    );
    b.back.insert(
        1,
        Prim::Text {
            x: 6.0,
            y: 12.0,
            lines: vec![shown],
            size: SMALL,
            bold_first: class == "cluster at",
            middle: false,
        },
    );
}

/// Stubs from the frame's left edge to `(x, y)` (the inner entry point) and from the
/// inner exit point `(x2, y2)` to the frame's right edge, with junction dots.
fn stubs(b: &mut Block, entry: (f64, f64), exit: (f64, f64), dots: bool) {
    b.entry = entry.1;
    b.exit = exit.1;
    b.front.push(line(vec![(0.0, entry.1), entry], 1));
    b.front.push(line(vec![exit, (b.w, exit.1)], 1));
    if dots {
        b.front.push(Prim::Dot {
            x: entry.0,
            y: entry.1,
        });
        b.front.push(Prim::Dot {
            x: exit.0,
            y: exit.1,
        });
    }
}

struct Layout<'a> {
    net: &'a Net,
    types: &'a [NodeTypes],
    heat: &'a DotHeat,
}

impl Layout<'_> {
    fn in_types(&self, id: NodeId) -> String {
        show_type(&self.types[id as usize].input)
    }

    fn out_types(&self, id: NodeId) -> String {
        show_type(&self.types[id as usize].output)
    }

    /// The operands of a serial chain rooted at `id`, left to right (iteratively: a
    /// chain of thousands of boxes is a deep tree of `..`).
    fn flatten(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            match &self.net.node(n).kind {
                NodeKind::Serial(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                _ => out.push(n),
            }
        }
        out
    }

    /// Lays out node `id`; chains in it wrap at `room` pixels (less the frames around
    /// them).
    fn block(&self, id: NodeId, room: f64) -> Block {
        crate::grow(|| self.block_inner(id, room.max(MIN_ROW)))
    }

    fn serial(&self, id: NodeId, room: f64) -> Block {
        let parts = self.flatten(id);
        let labels: Vec<String> = parts[..parts.len() - 1]
            .iter()
            .map(|&p| self.out_types(p))
            .collect();
        // A row may start with the label of the edge coming into it.
        let inner = room - lead(&labels);
        chain(
            parts.iter().map(|&p| self.block(p, inner)).collect(),
            labels,
            room,
            true,
        )
    }

    fn block_inner(&self, id: NodeId, room: f64) -> Block {
        let net = self.net;
        let n = net.node(id);
        match &n.kind {
            NodeKind::Box(b) => {
                let sig = &net.boxes[*b];
                let signature = box_signature(sig);
                let mut lines = vec![sig.name.to_string(), signature.clone()];
                let mut fill = "#dde8f7".to_owned();
                let heat = self.heat.boxes.get(&sig.name);
                if let Some(h) = heat {
                    lines.extend(h.label.lines().map(str::to_owned));
                    fill.clone_from(&h.fill);
                }
                let title = format!("box {}\n{}\n{}", sig.name, signature, n.loc);
                let mut b = leaf(lines, title, &fill, Look::Box);
                if let Some(h) = heat {
                    b.in_w = Some(h.width_in.max(1));
                    b.out_w = Some(h.width_out.max(1));
                }
                b
            }
            NodeKind::Observe(o) => leaf(
                vec![format!(
                    "observer {} ({}, {})",
                    o.oid,
                    o.side.name(),
                    o.target
                )],
                format!("observer {}", o.oid),
                "#fffbe6",
                Look::Observer,
            ),
            NodeKind::Identity => leaf(
                vec!["[]".into()],
                format!("identity\n{}", n.loc),
                "none",
                Look::Identity,
            ),
            NodeKind::Filter(f) => {
                let label = filter_label(f);
                leaf(
                    vec![label.clone()],
                    format!("filter {label}\n{}", n.loc),
                    "#eeeeee",
                    Look::Filter,
                )
            }
            NodeKind::Sync(ps) => {
                let label = sync_label(ps);
                leaf(
                    vec![label.clone()],
                    format!("synchrocell {label}\n{}", n.loc),
                    "#f7e6c4",
                    Look::Sync,
                )
            }
            NodeKind::Serial(..) => self.serial(id, room),
            NodeKind::Parallel {
                branches,
                routes,
                det,
            } => {
                let labels: Vec<(Option<String>, String)> = branches
                    .iter()
                    .zip(routes)
                    .map(|(&br, route)| {
                        let r = (!route.is_empty()).then(|| show_families(route));
                        (r, self.out_types(br))
                    })
                    .collect();
                let lw = labels
                    .iter()
                    .map(|(r, _)| r.as_deref().map_or(text_w("initialiser", SMALL), label_w))
                    .fold(0.0, f64::max);
                let ow = labels.iter().map(|(_, o)| label_w(o)).fold(0.0, f64::max);
                let inner = room - (2.0 * PAD + 32.0 + lw + ow);
                let kids: Vec<(Block, Option<String>, String)> = branches
                    .iter()
                    .zip(labels)
                    .map(|(&br, (r, o))| (self.block(br, inner), r, o))
                    .collect();
                let op = if *det { "||" } else { "|" };
                let kind = if *det {
                    "deterministic parallel composition"
                } else {
                    "parallel composition"
                };
                parallel(kids, op, &format!("{kind}\n{}", n.loc))
            }
            NodeKind::Star { body, exits, det } => {
                let op = if *det { "**" } else { "*" };
                let pats = show_pats(exits);
                let input = self.in_types(*body);
                let inner = room - (2.0 * PAD + 32.0 + label_w(&input) + label_w(&pats));
                let body_b = self.block(*body, inner);
                looped(
                    body_b,
                    &input,
                    "next stage",
                    &pats,
                    Some(&pats),
                    &format!("{op} {pats}"),
                    &format!("serial replication\n{}", n.loc),
                )
            }
            NodeKind::Feedback { body, back } => {
                let pats = show_pats(back);
                let (input, output) = (self.in_types(*body), self.out_types(*body));
                let inner = room - (2.0 * PAD + 32.0 + label_w(&input) + label_w(&output));
                let body_b = self.block(*body, inner);
                looped(
                    body_b,
                    &input,
                    &pats,
                    &output,
                    None,
                    &format!("\\ {pats}"),
                    &format!("feedback\n{}", n.loc),
                )
            }
            NodeKind::Split {
                body,
                index,
                det,
                placed,
            } => {
                let op = crate::dot::split_label(*det, *placed, index);
                let (input, output) = (format!("replica per {index}"), self.out_types(*body));
                let inner = room - (2.0 * PAD + 40.0 + label_w(&input) + label_w(&output));
                let body_b = self.block(*body, inner);
                split(
                    body_b,
                    &input,
                    &output,
                    &op,
                    &format!("parallel replication\n{}", n.loc),
                )
            }
            NodeKind::At { body, node } => {
                let inner = self.block(*body, room - 2.0 * PAD);
                let mut b = Block::new(inner.w + 2.0 * PAD, HEAD + inner.h + PAD, 0.0, 0.0);
                let (ex, ey) = (PAD, HEAD + inner.entry);
                let (xx, xy) = (PAD + inner.w, HEAD + inner.exit);
                b.in_w = inner.in_w;
                b.out_w = inner.out_w;
                b.in_label = inner.in_label.clone();
                b.out_label = inner.out_label.clone();
                b.kids.push((PAD, HEAD, inner));
                frame(
                    &mut b,
                    &format!("node {node} (@ {node})"),
                    &format!("placement: runs on node {node}\n{}", n.loc),
                    "cluster at",
                );
                stubs(&mut b, (ex, ey), (xx, xy), false);
                b
            }
        }
    }
}

/// `|` / `||`: branches stacked, fanned out from a routing point and merged again.
fn parallel(kids: Vec<(Block, Option<String>, String)>, op: &str, title: &str) -> Block {
    if kids.is_empty() {
        return Block::new(0.0, 0.0, 0.0, 0.0);
    }
    let lw = kids
        .iter()
        .map(|(k, r, _)| match r {
            Some(r) => shown_w(r, repeats(r, &k.in_label)),
            None => text_w("initialiser", SMALL),
        })
        .fold(0.0, f64::max);
    let ow = kids
        .iter()
        .map(|(k, _, o)| shown_w(o, repeats(o, &k.out_label)))
        .fold(0.0, f64::max);
    let bw = kids.iter().map(|(b, _, _)| b.w).fold(0.0, f64::max);
    let x0 = PAD;
    let bx = x0 + 8.0 + lw + 8.0;
    let ox = bx + bw + 8.0;
    let mx = ox + ow + 8.0;
    let mut b = Block::new(mx + PAD, 0.0, 0.0, 0.0);
    let mut y = HEAD + PAD;
    // Per branch: its top, entry and exit heights.
    let mut ends = Vec::with_capacity(kids.len());
    for (kid, _, _) in &kids {
        y += (14.0 - kid.entry).max(14.0 - kid.exit).max(0.0);
        ends.push((y, y + kid.entry, y + kid.exit));
        y += kid.h + VGAP;
    }
    b.h = y - VGAP + PAD;
    let (first, last) = (ends[0], ends[ends.len() - 1]);
    let entry = ((first.1 + last.1) / 2.0).round();
    let exit = ((first.2 + last.2) / 2.0).round();
    for ((kid, route, out), &(top, ey, xy)) in kids.into_iter().zip(&ends) {
        let pts = vec![(x0, entry), (x0, ey), (bx, ey)];
        let wi = width(None, kid.in_w);
        b.front.push(match &route {
            Some(r) => edge(
                pts,
                r,
                unless(repeats(r, &kid.in_label), (x0 + 6.0, ey - 4.0)),
                wi,
            ),
            None => styled(
                edge(pts, "initialiser", Some((x0 + 6.0, ey - 4.0)), wi),
                2,
                true,
            ),
        });
        let pts = vec![(bx + kid.w, xy), (mx, xy), (mx, exit)];
        b.front.push(styled(
            edge(
                pts,
                &out,
                unless(repeats(&out, &kid.out_label), (ox, xy - 4.0)),
                width(kid.out_w, None),
            ),
            0,
            false,
        ));
        b.kids.push((bx, top, kid));
    }
    frame(&mut b, op, title, "cluster choice");
    stubs(&mut b, (x0, entry), (mx, exit), true);
    b
}

/// `*`, `**` and `\`: the operand with its loop back over the top (labelled `back`),
/// its exit edge (labelled `out`) and, for a star, the bypass along the bottom (`bypass`:
/// the exit patterns).
fn looped(
    body: Block,
    input: &str,
    back: &str,
    out: &str,
    bypass: Option<&str>,
    label: &str,
    title: &str,
) -> Block {
    let (hide_in, hide_out) = (
        repeats(input, &body.in_label),
        repeats(out, &body.out_label),
    );
    let x0 = PAD;
    let bx = x0 + 8.0 + shown_w(input, hide_in) + 8.0;
    let by = HEAD + PAD + 16.0;
    let right = bx + body.w;
    let tx = right + 8.0 + shown_w(out, hide_out).max(label_w(back) - body.w) + 8.0;
    let (ey, xy) = (by + body.entry, by + body.exit);
    let mut h = by + body.h + PAD;
    let mut b = Block::new(tx + PAD, 0.0, 0.0, 0.0);
    b.in_label = (!hide_in).then(|| input.to_owned());
    b.out_label = (!hide_out).then(|| out.to_owned());
    b.front.push(edge(
        vec![(x0, ey), (bx, ey)],
        input,
        unless(hide_in, (x0 + 6.0, ey - 4.0)),
        width(None, body.in_w),
    ));
    b.front.push(styled(
        edge(
            vec![
                (right, xy),
                (right + 4.0, xy),
                (right + 4.0, by - 8.0),
                (bx - 4.0, by - 8.0),
                (bx - 4.0, ey),
                (bx, ey),
            ],
            back,
            Some((bx + 4.0, by - 12.0)),
            1,
        ),
        1,
        true,
    ));
    b.front.push(styled(
        edge(
            vec![(right, xy), (tx, xy)],
            out,
            unless(hide_out, (right + 8.0, xy - 4.0)),
            width(body.out_w, None),
        ),
        0,
        false,
    ));
    if let Some(p) = bypass {
        let yb = by + body.h + 10.0;
        b.front.push(styled(
            edge(vec![(x0, ey), (x0, yb), (tx, yb), (tx, xy)], p, None, 1),
            2,
            false,
        ));
        h += 10.0;
    }
    b.h = h;
    b.kids.push((bx, by, body));
    let class = if label.starts_with('\\') {
        "cluster feedback"
    } else {
        "cluster star"
    };
    frame(&mut b, label, title, class);
    stubs(&mut b, (x0, ey), (tx, xy), true);
    b
}

/// `!`, `!!`, `!@`, `!!@`: the operand drawn as a stack of replicas.
fn split(body: Block, input: &str, out: &str, label: &str, title: &str) -> Block {
    let x0 = PAD;
    let bx = x0 + 8.0 + label_w(input) + 8.0;
    let by = HEAD + PAD;
    let right = bx + body.w + 8.0;
    let hide_out = repeats(out, &body.out_label);
    let mx = right + 8.0 + shown_w(out, hide_out) + 8.0;
    let (ey, xy) = (by + body.entry, by + body.exit);
    let mut b = Block::new(mx + PAD, by + body.h + 8.0 + PAD, 0.0, 0.0);
    b.out_label = (!hide_out).then(|| out.to_owned());
    for k in [8.0, 4.0] {
        b.back.push(Prim::Rect {
            x: bx + k,
            y: by + k,
            w: body.w,
            h: body.h,
            rx: 4.0,
            fill: "#ffffff".into(),
            stroke: "#b0b0b0",
            dash: false,
            double: false,
        });
    }
    b.front.push(edge(
        vec![(x0, ey), (bx, ey)],
        input,
        Some((x0 + 6.0, ey - 4.0)),
        width(None, body.in_w),
    ));
    b.front.push(styled(
        edge(
            vec![(bx + body.w, xy), (mx, xy)],
            out,
            unless(hide_out, (right + 8.0, xy - 4.0)),
            width(body.out_w, None),
        ),
        0,
        false,
    ));
    b.kids.push((bx, by, body));
    frame(&mut b, label, title, "cluster split");
    stubs(&mut b, (x0, ey), (mx, xy), true);
    b
}

/// Writes the block at offset `(ox, oy)`.
fn emit(b: &Block, ox: f64, oy: f64, out: &mut String) {
    crate::grow(|| emit_inner(b, ox, oy, out));
}

fn emit_inner(b: &Block, ox: f64, oy: f64, out: &mut String) {
    if !b.class.is_empty() {
        let _ = write!(out, "<g class=\"{}\"><title>", b.class);
        esc(&b.title, out);
        out.push_str("</title>\n");
    }
    for p in &b.back {
        prim(p, ox, oy, out);
    }
    for (x, y, k) in &b.kids {
        emit(k, ox + x, oy + y, out);
    }
    for p in &b.front {
        prim(p, ox, oy, out);
    }
    if !b.class.is_empty() {
        out.push_str("</g>\n");
    }
}

fn prim(p: &Prim, ox: f64, oy: f64, out: &mut String) {
    match p {
        Prim::Rect {
            x,
            y,
            w,
            h,
            rx,
            fill,
            stroke,
            dash,
            double,
        } => {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{rx}\" fill=\"{fill}\" stroke=\"{stroke}\"{}/>",
                n(ox + x),
                n(oy + y),
                n(*w),
                n(*h),
                if *dash { " stroke-dasharray=\"5,3\"" } else { "" }
            );
            if *double {
                let _ = writeln!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\" fill=\"none\" stroke=\"{stroke}\"/>",
                    n(ox + x + 3.0),
                    n(oy + y + 3.0),
                    n(w - 6.0),
                    n(h - 6.0),
                    (rx - 3.0).max(0.0)
                );
            }
        }
        Prim::Text {
            x,
            y,
            lines,
            size,
            bold_first,
            middle,
        } => {
            let anchor = if *middle {
                " text-anchor=\"middle\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" font-size=\"{size}\"{anchor}>",
                n(ox + x),
                n(oy + y)
            );
            if lines.len() == 1 {
                if *bold_first {
                    out.truncate(out.len() - 1);
                    out.push_str(" font-weight=\"bold\">");
                }
                esc(&lines[0], out);
            } else {
                for (i, l) in lines.iter().enumerate() {
                    let dy = if i == 0 { 0.0 } else { LINE };
                    let bold = if i == 0 && *bold_first {
                        " font-weight=\"bold\""
                    } else {
                        ""
                    };
                    let _ = write!(out, "<tspan x=\"{}\" dy=\"{dy}\"{bold}>", n(ox + x));
                    esc(l, out);
                    out.push_str("</tspan>");
                }
            }
            out.push_str("</text>\n");
        }
        Prim::Edge(e) => {
            out.push_str("<g class=\"edge\"><title>");
            esc(&e.title, out);
            out.push_str("</title><polyline points=\"");
            for (i, (x, y)) in e.points.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{},{}", n(ox + x), n(oy + y));
            }
            let dash = match e.style {
                1 => " stroke-dasharray=\"6,3\"",
                2 => " stroke-dasharray=\"2,3\"",
                _ => "",
            };
            let arrow = if e.arrow {
                " marker-end=\"url(#arrow)\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"{}\"{dash}{arrow}/>",
                e.width
            );
            if let Some((l, x, y)) = &e.label {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"{SMALL}\" fill=\"#333333\">",
                    n(ox + x),
                    n(oy + y)
                );
                esc(l, out);
                out.push_str("</text>");
            }
            out.push_str("</g>\n");
        }
        Prim::Dot { x, y } => {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#444444\"/>",
                n(ox + x),
                n(oy + y)
            );
        }
    }
}

/// A coordinate with at most one decimal.
fn n(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The SVG picture of `net`.
pub(crate) fn render(net: &Net, types: &[NodeTypes], heat: &DotHeat) -> String {
    let lay = Layout { net, types, heat };
    let root = &types[net.root as usize];
    let input = leaf(
        vec!["in".into()],
        "global input".into(),
        "#ffffff",
        Look::Port { double: false },
    );
    let output = leaf(
        vec!["out".into()],
        "global output".into(),
        "#ffffff",
        Look::Port { double: true },
    );
    // The entry network's own chain joins the one from `in` to `out`, so that it wraps
    // as one.
    let parts = lay.flatten(net.root);
    let mut labels = Vec::with_capacity(parts.len() + 1);
    labels.push(show_type(&root.input));
    for (k, &p) in parts.iter().enumerate() {
        labels.push(if k + 1 < parts.len() {
            lay.out_types(p)
        } else {
            show_type(&root.output)
        });
    }
    let inner = MAX_ROW - lead(&labels);
    let mut items = Vec::with_capacity(parts.len() + 2);
    items.push(input);
    items.extend(parts.iter().map(|&p| lay.block(p, inner)));
    items.push(output);
    let body = chain(items, labels, MAX_ROW, false);
    let title = format!("net {}", net.entry);
    let top = MARGIN + 22.0;
    let w = n(body.w + 2.0 * MARGIN)
        .max(n(text_w(&title, 14.0) + 2.0 * MARGIN))
        .ceil();
    let h = (top + body.h + MARGIN).ceil();
    let mut out = String::with_capacity(256 + 400 * net.nodes.len());
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace\">\n\
         <defs><marker id=\"arrow\" markerUnits=\"userSpaceOnUse\" markerWidth=\"8\" markerHeight=\"8\" \
         refX=\"8\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#444444\"/></marker></defs>\n\
         <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"{MARGIN}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">",
        MARGIN + 12.0
    );
    esc(&title, &mut out);
    out.push_str("</text>\n");
    emit(&body, MARGIN, top, &mut out);
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_edge_labels_become_counts() {
        assert_eq!(short_label("{a} | {b}"), "{a} | {b}");
        let many: Vec<String> = (0..40).map(|i| format!("{{x{i}, y}}")).collect();
        assert_eq!(short_label(&many.join(" | ")), "40 variants");
        let wide: Vec<String> = (0..30).map(|i| format!("f{i}")).collect();
        assert_eq!(
            short_label(&format!("{{{}}}", wide.join(", "))),
            "{30 labels}"
        );
        assert!(short_label(&"z".repeat(100)).chars().count() <= EDGE_LABEL_MAX);
    }

    /// A type already drawn just inside a frame is not drawn again on the edge that
    /// continues it outside (the tooltip keeps it), and takes no room.
    #[test]
    fn a_label_repeating_the_one_across_a_frame_border_is_not_drawn_again() {
        let mk = || leaf(vec!["b".into()], String::new(), "#fff", Look::Box);
        let labels = |b: &Block| -> Vec<(Option<String>, String)> {
            b.front
                .iter()
                .filter_map(|p| match p {
                    Prim::Edge(e) if !e.title.is_empty() => {
                        Some((e.label.as_ref().map(|l| l.0.clone()), e.title.clone()))
                    }
                    _ => None,
                })
                .collect()
        };
        let plain = chain(vec![mk(), mk()], vec!["{x, y, z}".into()], MAX_ROW, true);
        assert_eq!(
            labels(&plain),
            [(Some("{x, y, z}".into()), "{x, y, z}".into())]
        );
        let mut framed = mk();
        framed.out_label = Some("{x, y, z}".into());
        let b = chain(vec![framed, mk()], vec!["{x, y, z}".into()], MAX_ROW, true);
        assert_eq!(labels(&b), [(None, "{x, y, z}".into())]);
        assert!(b.w < plain.w, "{} < {}", b.w, plain.w);
    }

    #[test]
    fn text_is_escaped_for_xml() {
        let mut out = String::new();
        esc("a<b & \"c\"\u{1}\n", &mut out);
        assert_eq!(out, "a&lt;b &amp; &quot;c&quot;\u{fffd}\n");
    }

    #[test]
    fn a_long_chain_wraps_into_rows_no_wider_than_the_limit() {
        let items: Vec<Block> = (0..100)
            .map(|i| leaf(vec![format!("b{i}")], String::new(), "#fff", Look::Box))
            .collect();
        let labels = vec!["{x}".to_owned(); 99];
        let b = chain(items, labels, MAX_ROW, true);
        assert!(b.w <= MAX_ROW + 10.0, "{}", b.w);
        assert!(b.h > 5.0 * LINE, "several rows: {}", b.h);
    }
}
