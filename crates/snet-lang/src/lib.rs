//! S-Net language front end: lexer, parser, name resolution, routing-type inference,
//! static checks with rustc-style diagnostics, and lowering to [`snet_core::Net`].
//!
//! The entry points are [`compile_file`] and [`compile_str`]:
//!
//! ```
//! let src = "net twice connect [{<n>} -> {<n>} ; {<n = n * 2>}];";
//! let c = snet_lang::compile_str("twice.snet", src).unwrap();
//! assert_eq!(c.signature, "{<n>} -> {<n>}");
//! assert_eq!(c.net.entry, "twice");
//! ```
//!
//! Diagnostic codes (one program per code in `tests/check_errors/`):
//!
//! | code | meaning |
//! |---|---|
//! | E0101–E0104 | lexical errors: bad character, unterminated comment, bad integer literal, unterminated inline code |
//! | E0201 | syntax error (expected ..., found ...) |
//! | E0202 | integer literal out of the 32-bit range |
//! | E0203 | nesting deeper than 256 levels |
//! | E0204 | unary minus on a non-literal |
//! | E0205 | mismatched or unclosed metadata element |
//! | E0206 | malformed metadata |
//! | E0207 | compiler-stage (`[INTERNAL]`) syntax |
//! | E0208 | inline box code (not supported) |
//! | E0209 | synchrocell with fewer than two patterns |
//! | E0210 | negative placement `@ -n` |
//! | E0301 | duplicate definition in one scope |
//! | E0302 | box name defined twice in the program |
//! | E0303 / E0304 | unknown type / typesig name |
//! | E0305 | undefined network or box |
//! | E0307 | no entry network |
//! | E0308 / E0309 | pass-through qualifier on a binding tag / twice on one label |
//! | E0311 | label listed twice in a box type or record type |
//! | E0312 | unsupported box interface |
//! | E0401 | operand type mismatch in a tag expression |
//! | E0402 | guard is not bool |
//! | E0403 | tag value is not int |
//! | E0404 | filter reads a tag that is not in its pattern |
//! | E0405 | filter copies a field that is not in its pattern |
//! | E0406 | guard of a pattern reads a tag not in the pattern |
//! | E0407 | a label produced twice in one filter output |
//! | E0501 | initialiser in a position where it would receive records |
//! | E0502 | parallel composition of initialisers only |
//! | E0503 | the entry network is an initialiser |
//! | E0504 | routing type of a parallel branch too large (over 4096 variant families) |
//! | W0001 | no net named like the file; the last top-level net is the entry |
//! | W0002 | box without interface metadata |
//! | W0003 | unknown or unusable metadata |
//! | W0101 | serial composition: an output the next network cannot accept |
//! | W0102 | routing tie between parallel branches |
//! | W0103 | serial replication that can never end |
//! | W0104 | split whose input lacks the index tag |
//! | W0105 | declared signature input that the body does not accept, or output it does not produce |
//! | W0106 | a parallel branch that no record the network is meant for reaches |
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod ast;
pub mod diag;
mod dot;
pub mod lexer;
pub mod parser;
pub mod pretty;
mod sema;
pub mod span;
mod svg;

pub use diag::{Diagnostic, Diagnostics, Severity};
pub use dot::{BoxHeat, DotHeat};
pub use parser::{parse, MAX_NESTING};
pub use sema::SUPPORTED_INTERFACES;

use sema::infer::{show_type, show_variant, Infer};
use sema::lower::Lowering;
use span::SourceFile;
use std::path::Path;
use std::sync::Arc;

/// Longest signature line `snet check` prints on one line
/// ([`Compiled::signature_text`]).
pub const SIGNATURE_WIDTH: usize = 100;

/// A checked and lowered program.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The lowered entry network.
    pub net: snet_core::Net,
    /// The inferred (or declared) signature of the entry network, as `snet check`
    /// prints it after `net NAME`: e.g. `{<N>} -> {<S>}`; mappings separated by `, `.
    pub signature: String,
    /// The mappings of `signature`: input, then each output variant.
    sig_maps: Vec<(String, Vec<String>)>,
    /// Whether the entry network declares its signature.
    sig_declared: bool,
    /// Each box used by the entry network, with its metadata interface (`None`: no
    /// metadata applied; treated as C4SNet).
    pub box_interfaces: Vec<(String, Option<String>)>,
    /// Warnings (§9 items 15–19 and others).
    pub warnings: Diagnostics,
    ir: Arc<sema::Ir>,
    ir_of: Vec<usize>,
}

impl Compiled {
    /// Graphviz DOT of the static network: boxes, filters and synchrocells as nodes,
    /// combinators as labelled clusters, edges labelled with record types.
    pub fn to_dot(&self) -> String {
        self.to_dot_with(&DotHeat::default())
    }

    /// [`Compiled::to_dot`] with run figures drawn on it (`snet graph --profile`): each
    /// box of `heat.boxes` gets its fill colour and a second label line, and edges into
    /// and out of it their widths.
    pub fn to_dot_with(&self, heat: &DotHeat) -> String {
        dot::render(
            &self.net,
            &sema::lower::node_types(&self.ir, &self.ir_of),
            heat,
        )
    }

    /// An SVG picture of the static network (`snet graph -o x.svg`), laid out here in
    /// time linear in the network's size: combinators as labelled frames (`@ n`
    /// placements as shaded frames named `node n`), long chains wrapped into rows, long
    /// edge types shortened to a count with the full type in a tooltip, and the
    /// figures of `heat` drawn on the boxes as in [`Compiled::to_dot_with`]. The
    /// canvas is the drawing's bounding box plus a small margin.
    pub fn to_svg_with(&self, heat: &DotHeat) -> String {
        svg::render(
            &self.net,
            &sema::lower::node_types(&self.ir, &self.ir_of),
            heat,
        )
    }

    /// `net NAME (SIGNATURE)` on one line.
    pub fn signature_line(&self) -> String {
        format!("net {} ({})", self.net.entry, self.signature)
    }

    /// What `snet check` prints: [`Compiled::signature_line`] if it fits in
    /// [`SIGNATURE_WIDTH`] columns, else one variant per line (each mapping's input,
    /// then its outputs aligned under one another), followed, for an inferred
    /// signature of more than four mappings or twice that width, by a comment
    /// suggesting to declare it. Still S-Net: it can be pasted into the program.
    pub fn signature_text(&self) -> String {
        let line = self.signature_line();
        if line.chars().count() <= SIGNATURE_WIDTH {
            return line;
        }
        let mut out = format!("net {} (\n", self.net.entry);
        for (i, (input, outs)) in self.sig_maps.iter().enumerate() {
            let comma = if i + 1 < self.sig_maps.len() { "," } else { "" };
            if outs.is_empty() {
                out.push_str(&format!("    {}{comma}\n", show_map(input, outs)));
                continue;
            }
            let head = format!("    {input} -> ");
            let pad = " ".repeat(head.chars().count().saturating_sub(2));
            for (j, o) in outs.iter().enumerate() {
                let end = if j + 1 == outs.len() { comma } else { "" };
                if j == 0 {
                    out.push_str(&format!("{head}{o}{end}\n"));
                } else {
                    out.push_str(&format!("{pad}| {o}{end}\n"));
                }
            }
        }
        out.push(')');
        if !self.sig_declared && (self.sig_maps.len() > 4 || line.len() > 2 * SIGNATURE_WIDTH) {
            let outs: usize = self.sig_maps.iter().map(|m| m.1.len()).sum();
            out.push_str(&format!(
                "\n// inferred from the body: {} input variants, {outs} output variants in all\n\
                 // declare the one you mean, `net {} (...) connect ...`: snet checks the body \
                 against it",
                self.sig_maps.len(),
                self.net.entry
            ));
        }
        out
    }
}

/// The text of a source file. Source is ASCII (spec §2.1); each byte that is not part
/// of valid UTF-8 becomes [`lexer::INVALID_BYTE`], one byte long, so that byte offsets
/// (and thus reported columns) are those of the file, the lexer reports the byte where
/// it stands, and inside comments it stays harmless.
fn decode_source(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.into();
    }
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for _ in chunk.invalid() {
            text.push(lexer::INVALID_BYTE);
        }
    }
    text.into()
}

/// Reads and compiles `path`. The entry network is the top-level net named like the
/// file (without extension), else the last top-level net (with a warning).
pub fn compile_file(path: &Path) -> Result<Compiled, Diagnostics> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = decode_source(&bytes);
            compile_str(&path.to_string_lossy(), &text)
        }
        Err(e) => {
            let mut ds = Diagnostics::new();
            ds.push(Diagnostic::error(
                "E0001",
                format!("cannot read `{}`: {e}", path.display()),
            ));
            Err(ds)
        }
    }
}

/// Compiles `source`, reported under `file_name` (whose base name selects the entry
/// network, §4).
pub fn compile_str(file_name: &str, source: &str) -> Result<Compiled, Diagnostics> {
    // A UTF-8 byte-order mark (written by some Windows editors) is not part of the
    // program; columns are counted as an editor shows them, without it.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let file = Arc::new(SourceFile::new(file_name, source));
    let finish = |mut ds: Diagnostics| {
        ds.finish(&file);
        ds
    };
    let (prog, parse_diags) = parser::parse(source);
    let mut diags: Vec<Diagnostic> = parse_diags;
    let (ir, resolve_diags) = sema::resolve(&prog);
    diags.extend(resolve_diags);
    let mut all = Diagnostics::new();
    let errors = |ds: &[Diagnostic]| ds.iter().any(Diagnostic::is_error);

    // The entry network (§4).
    let stem = Path::new(file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let entry = ir
        .top_nets
        .iter()
        .copied()
        .find(|n| ir.nets[*n].name == stem);
    let entry = match entry {
        Some(e) => Some(e),
        None => match ir.top_nets.last() {
            Some(last) => {
                if !errors(&diags) {
                    diags.push(
                        Diagnostic::warning(
                            "W0001",
                            format!(
                                "no top-level net is named `{stem}` after the file; using the last one, `{}`",
                                ir.nets[*last].name
                            ),
                        )
                        .primary(ir.nets[*last].name_span, "entry network")
                        .help(format!("name the entry network `{stem}`")),
                    );
                }
                Some(*last)
            }
            None => {
                if !errors(&diags) {
                    diags.push(
                        Diagnostic::error("E0307", "the program defines no top-level network")
                            .primary(span::Span::new(source.len(), source.len()), "")
                            .note(format!(
                                "the entry network is the top-level `net {stem} ... connect ...;`"
                            )),
                    );
                }
                None
            }
        },
    };
    if errors(&diags) {
        for d in diags {
            all.push(d);
        }
        return Err(finish(all));
    }
    let Some(entry) = entry else {
        return Err(finish(all));
    };

    let mut inf = Infer::new(&ir);
    let fam = sema::family::FamInfer::new(&ir);
    let routing_overflow = fam.routing_overflow();
    sema::check(&ir, &mut inf, &mut diags);
    let body = ir.nets[entry].body;
    if !errors(&diags) && !inf.input(body).is_empty() {
        sema::check_reach(&ir, &inf, entry, &mut diags);
    }
    if inf.input(body).is_empty() && !errors(&diags) {
        diags.push(
            Diagnostic::error(
                "E0503",
                format!("the entry network `{}` is an initialiser", ir.nets[entry].name),
            )
            .primary(ir.nodes[body].span, "has no input type: it never receives records")
            .note("an initialiser only makes sense as a branch of a parallel composition, e.g. `init | []` (spec §7.4)"),
        );
    }
    inf.set_precise(true);
    let sig_maps = signature(&ir, &mut inf, entry);
    let signature = sig_maps
        .iter()
        .map(|(i, o)| show_map(i, o))
        .collect::<Vec<_>>()
        .join(", ");
    let sig_declared = ir.nets[entry].sig.is_some();
    inf.set_precise(false);
    if let Some(at) = routing_overflow {
        diags.push(
            Diagnostic::error(
                "E0504",
                format!(
                    "inferred type too large (more than {} variant families)",
                    sema::infer::MAX_VARIANTS
                ),
            )
            .primary(
                ir.nodes[at].span,
                "routing needs the input type of this branch (spec §8)",
            )
            .help("declare signatures on the named networks involved"),
        );
    }
    if errors(&diags) {
        for d in diags {
            all.push(d);
        }
        return Err(finish(all));
    }
    let (net, ir_of, used) = Lowering::new(&ir, &fam, &file).run(entry);
    let box_interfaces = used
        .iter()
        .map(|b| (ir.boxes[*b].name.clone(), ir.boxes[*b].interface.clone()))
        .collect();
    for d in diags {
        all.push(d);
    }
    Ok(Compiled {
        net,
        signature,
        sig_maps,
        sig_declared,
        box_interfaces,
        warnings: finish(all),
        ir: Arc::new(ir),
        ir_of,
    })
}

/// The entry network's signature, one mapping per entry: the input variant(s) and the
/// output variants (`["..."]` when unknown or unspecified; none for an output-less
/// mapping).
fn signature(ir: &sema::Ir, inf: &mut Infer<'_>, entry: usize) -> Vec<(String, Vec<String>)> {
    let n = &ir.nets[entry];
    let shown = |t: &[snet_core::net::Variant]| t.iter().map(|v| show_variant(v)).collect();
    let mut maps = Vec::new();
    match &n.sig {
        Some(sig) => {
            for m in &sig.maps {
                let outs = match &m.outputs {
                    None => vec!["...".to_owned()],
                    Some(o) => shown(o),
                };
                maps.push((show_type(&m.inputs), outs));
            }
        }
        // A type too large to compute (see `sema::infer`) is shown as `...`.
        None if inf.input_incomplete(n.body) => maps.push(("...".to_owned(), Vec::new())),
        None => {
            for v in inf.input(n.body).clone() {
                inf.begin();
                let outs = inf.output(n.body, &v);
                let outs = if inf.tainted() {
                    vec!["...".to_owned()]
                } else {
                    shown(&outs)
                };
                maps.push((show_variant(&v), outs));
            }
        }
    }
    maps
}

/// `IN -> OUT | OUT`, or `IN ->` without outputs (`...` alone for an unknown type).
fn show_map(input: &str, outs: &[String]) -> String {
    if input == "..." && outs.is_empty() {
        return input.to_owned();
    }
    format!("{input} -> {}", outs.join(" | ")).trim().to_owned()
}

/// Runs `f`, first growing the stack if little is left (deeply nested programs).
pub(crate) fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 2 * 1024 * 1024, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_can_cross_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Compiled>();
        assert_send_sync::<Diagnostics>();
    }

    #[test]
    fn entry_is_the_net_named_like_the_file_else_the_last_with_a_warning() {
        let src = "net a connect []; net b connect [{<x>} -> {<x = 1>}]; net c connect [];";
        let c = compile_str("dir/b.snet", src).unwrap();
        assert_eq!(c.net.entry, "b");
        assert!(c.warnings.is_empty());
        let c = compile_str("other.snet", src).unwrap();
        assert_eq!(c.net.entry, "c");
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings.render().starts_with("warning[W0001]"));
    }

    #[test]
    fn box_interfaces_list_the_boxes_the_entry_net_uses() {
        let src = "<metadata><box name=\"f\"><interface value=\"C4SNet\"/></box></metadata>
            box f((a) -> (b)); box g((b) -> (c)); box unused((q) -> (r));
            net m connect f .. g;";
        let c = compile_str("m.snet", src).unwrap();
        assert_eq!(
            c.box_interfaces,
            vec![
                ("f".to_owned(), Some("C4SNet".to_owned())),
                ("g".to_owned(), None)
            ]
        );
        assert_eq!(c.net.boxes.len(), 2);
        assert_eq!(
            c.net.boxes[0].input,
            Some(vec![snet_core::Label::field("a")])
        );
        // Boxes without interface metadata are accepted with a warning each.
        // One warning for both (issue 33 item 9), naming each.
        let w0002: Vec<_> = c.warnings.iter().filter(|d| d.code == "W0002").collect();
        assert_eq!(w0002.len(), 1);
        assert!(
            w0002[0]
                .message
                .starts_with("2 boxes have no interface metadata (`"),
            "{}",
            w0002[0].message
        );
    }
}
