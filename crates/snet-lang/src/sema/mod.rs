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
    // W0002 once for all boxes without an interface: one fix covers them all.
    let bare: Vec<&ir::BoxInfo> =
        r.ir.boxes
            .iter()
            .filter(|b| b.interface.is_none())
            .collect();
    if let Some(first) = bare.first() {
        let msg = match bare.len() {
            1 => format!(
                "box `{}` has no interface metadata; assuming C4SNet",
                first.name
            ),
            n => {
                let mut names: Vec<String> = bare
                    .iter()
                    .take(8)
                    .map(|b| format!("`{}`", b.name))
                    .collect();
                if n > 8 {
                    names.push(format!("and {} more", n - 8));
                }
                format!(
                    "{n} boxes have no interface metadata ({}); assuming C4SNet",
                    names.join(", ")
                )
            }
        };
        let mut d = Diagnostic::warning("W0002", msg)
            .primary(first.span, "no `interface` key applies to this box");
        for b in bare.iter().skip(1).take(4) {
            d = d.secondary(b.span, "nor to this one");
        }
        diags.push(d.help(
            "add `<metadata><boxdefault><interface value=\"C4SNet\"/></boxdefault></metadata>`",
        ));
    }
    for b in &r.ir.boxes {
        let Some(i) = b
            .interface
            .as_ref()
            .filter(|i| !SUPPORTED_INTERFACES.contains(&i.as_str()))
        else {
            continue;
        };
        // Escaped: a value with a line break or a control character must not break the
        // diagnostic's layout.
        let i = i.escape_debug();
        diags.push(
            Diagnostic::error(
                "E0312",
                format!(
                    "box `{}` uses box language interface `{i}`, which is not supported",
                    b.name
                ),
            )
            .primary(b.span, format!("interface `{i}` from metadata"))
            .note(format!(
                "supported interfaces: {}",
                SUPPORTED_INTERFACES.join(", ")
            )),
        );
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
    reach::withdraw_leavable_stars(ir, inf, entry, diags);
    reach::check(ir, inf, entry, diags);
}
