//! Semantic analysis: name resolution (§4), local checks (§9 items 2–12), routing-type
//! inference (§8), whole-network checks (§9 items 13–19) and lowering to `snet_core::Net`.

mod checks;
mod convert;
pub(crate) mod family;
pub(crate) mod infer;
pub(crate) mod ir;
pub(crate) mod lower;
mod reach;
mod resolve;

use crate::ast::Program;
use crate::diag::Diagnostic;
pub(crate) use infer::Infer;
pub(crate) use ir::Ir;

/// Box interfaces this implementation can run (§13).
pub const SUPPORTED_INTERFACES: &[&str] = &["C4SNet"];

/// Resolves `prog`; returns the IR and the diagnostics found.
pub(crate) fn resolve(prog: &Program) -> (Ir, Vec<Diagnostic>) {
    let mut r = resolve::Resolver::new();
    r.program(prog);
    let mut diags = std::mem::take(&mut r.diags);
    for b in &r.ir.boxes {
        match &b.interface {
            Some(i) if !SUPPORTED_INTERFACES.contains(&i.as_str()) => diags.push({
                // Escaped: a value with a line break or a control character must not
                // break the diagnostic's layout.
                let i = i.escape_debug();
                Diagnostic::error(
                    "E0312",
                    format!("box `{}` uses box language interface `{i}`, which is not supported", b.name),
                )
                .primary(b.span, format!("interface `{i}` from metadata"))
                .note(format!("supported interfaces: {}", SUPPORTED_INTERFACES.join(", ")))
            }),
            Some(_) => {}
            None => diags.push(
                Diagnostic::warning(
                    "W0002",
                    format!("box `{}` has no interface metadata; assuming C4SNet", b.name),
                )
                .primary(b.span, "no `interface` key applies to this box")
                .help("add `<metadata><boxdefault><interface value=\"C4SNet\"/></boxdefault></metadata>`"),
            ),
        }
    }
    (r.ir, diags)
}

/// Runs the whole-network checks.
pub(crate) fn check(ir: &Ir, inf: &mut Infer<'_>, diags: &mut Vec<Diagnostic>) {
    checks::check(ir, inf, diags);
}

/// Reports the parallel branches of the entry network that no record it is meant for
/// reaches (W0106).
pub(crate) fn check_reach(ir: &Ir, inf: &Infer<'_>, entry: usize, diags: &mut Vec<Diagnostic>) {
    reach::check(ir, inf, entry, diags);
}
