//! Generation of the per-box C wrappers (DESIGN rule 7).
//!
//! For every box the generated file holds
//! * a weak declaration of the user's function `void *NAME(void *hnd, ...)` with one
//!   parameter per input label (`c4snet_data_t *` for fields, `int` for tags), so that a
//!   missing function shows up as a NULL pointer after loading instead of a loader error;
//! * a wrapper `snet_c4snet_call_I(hnd, args)` that unpacks the argument slots in
//!   signature order and calls the user's function;
//! * the label kinds of the input and of every output variant, read by `C4SNetOut`;
//! * one entry of the table `snet_c4snet_boxes`, which the loader reads.

use crate::error::C4SNetError;
use snet_core::{BoxSig, Label};
use std::fmt::Write;

/// The kind of one C argument: what `C4SNetOut` reads with `va_arg` (`Field = 0`,
/// `Tag = 1`, the values of the C tables' kind arrays).
pub(crate) use snet_core::RawKind as SlotKind;

const C_KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "alignas",
    "alignof",
    "bool",
    "constexpr",
    "false",
    "nullptr",
    "static_assert",
    "thread_local",
    "true",
    "typeof",
    "typeof_unqual",
    "asm",
];

/// Checks that `name` can be the symbol of a box function.
pub(crate) fn check_box_name(name: &str) -> Result<(), C4SNetError> {
    let invalid = |reason| {
        Err(C4SNetError::InvalidBoxName {
            name: name.to_owned(),
            reason,
        })
    };
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return invalid("it is not a C identifier"),
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return invalid("it is not a C identifier");
    }
    if C_KEYWORDS.contains(&name) {
        return invalid("it is a C keyword");
    }
    if name.starts_with("C4SNet") || name.starts_with("snet_c4snet_") || name == "node_location" {
        return invalid("the name is reserved by the C4SNet interface");
    }
    if name.starts_with("CTYPE_") || ["nodist", "mpi", "scc", "zmq"].contains(&name) {
        return invalid("the name is an enumerator of C4SNet.h");
    }
    Ok(())
}

/// Input label kinds of a box (empty for an initialiser box).
pub(crate) fn input_kinds(sig: &BoxSig) -> Vec<SlotKind> {
    sig.input
        .iter()
        .flatten()
        .map(|&l| SlotKind::of(l))
        .collect()
}

/// Output label kinds per variant.
pub(crate) fn output_kinds(sig: &BoxSig) -> Vec<Vec<SlotKind>> {
    sig.outputs
        .iter()
        .map(|v| v.iter().map(|&l| SlotKind::of(l)).collect())
        .collect()
}

/// The C parameter names of a box's inputs, in signature order: each label's name
/// (`<#b>` gives `b`), or that name with `_N` appended (N counting from 1 in
/// signature order) when it is `hnd`, a C keyword or taken by an earlier parameter.
pub(crate) fn param_names(sig: &BoxSig) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (j, l) in sig.input.iter().flatten().enumerate() {
        let base = l.name();
        let taken = |n: &str, names: &[String]| {
            n == "hnd" || C_KEYWORDS.contains(&n) || names.iter().any(|m| m == n)
        };
        let mut name = base.to_owned();
        let mut k = j + 1;
        while taken(&name, &names) {
            name = format!("{base}_{k}");
            k += 1;
        }
        names.push(name);
    }
    names
}

/// The C type of a label's argument.
fn c_type(kind: SlotKind) -> &'static str {
    match kind {
        SlotKind::Field => "c4snet_data_t *",
        SlotKind::Tag => "int ",
    }
}

/// The C prototype snet calls a box through (spec §12.3), without the final `;`:
/// `void *NAME(void *hnd, c4snet_data_t *A, int t)`, one parameter per input label in
/// signature order (fields `c4snet_data_t *`, tags and binding tags `int`), named
/// after the labels.
pub fn c_prototype(sig: &BoxSig) -> String {
    let mut params = vec!["void *hnd".to_owned()];
    for (l, name) in sig.input.iter().flatten().zip(param_names(sig)) {
        params.push(format!("{}{name}", c_type(SlotKind::of(*l))));
    }
    format!("void *{}({})", sig.name, params.join(", "))
}

/// The S-Net signature of a box as written in a program: `(A, <t>) -> (B) | (C, <k>)`.
fn snet_signature(sig: &BoxSig) -> String {
    let list = |ls: &[Label]| {
        let v: Vec<String> = ls.iter().map(ToString::to_string).collect();
        format!("({})", v.join(", "))
    };
    let input = sig.input.as_deref().map_or("()".to_owned(), list);
    let outs: Vec<String> = sig.outputs.iter().map(|o| list(o)).collect();
    format!("{input} -> {}", outs.join(" | "))
}

/// A C skeleton of box `sig`: its prototype and a body that compiles, uses every
/// argument and shows the `C4SNetOut` call of each output variant (commented out, a
/// `//` line) with the label and C type of every value it takes, in order.
pub fn c_stub(sig: &BoxSig) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "/* box {} {} */", sig.name, snet_signature(sig));
    let _ = writeln!(out, "{}\n{{", c_prototype(sig));
    for name in param_names(sig) {
        let _ = writeln!(out, "    (void){name};");
    }
    for (v, labels) in sig.outputs.iter().enumerate() {
        let mut call = format!("C4SNetOut(hnd, {}", v + 1);
        for l in labels {
            let _ = write!(call, ", /* {l}: {} */", c_type(SlotKind::of(*l)).trim_end());
        }
        let _ = writeln!(out, "    // {call});");
    }
    out.push_str("    return hnd;\n}\n");
    out
}

fn kind_array(out: &mut String, name: &str, kinds: &[SlotKind]) -> String {
    if kinds.is_empty() {
        return "NULL".to_owned();
    }
    let list: Vec<String> = kinds.iter().map(|&k| (k as u8).to_string()).collect();
    let _ = writeln!(
        out,
        "static const unsigned char {name}[] = {{{}}};",
        list.join(", ")
    );
    name.to_owned()
}

/// The wrapper C source for `sigs` (names already checked, no duplicates).
pub(crate) fn generate(sigs: &[BoxSig]) -> String {
    let mut out = String::new();
    out.push_str(
        "/* Generated by snet-c4snet from the box declarations; do not edit. */\n\
         #include \"snet_c4snet_internal.h\"\n",
    );
    let mut entries = Vec::with_capacity(sigs.len());
    for (i, sig) in sigs.iter().enumerate() {
        let name = &sig.name;
        let ins = input_kinds(sig);
        let mut params = vec!["void *hnd".to_owned()];
        let mut args = vec!["hnd".to_owned()];
        for (j, k) in ins.iter().enumerate() {
            match k {
                SlotKind::Field => {
                    params.push(format!("c4snet_data_t *a{j}"));
                    args.push(format!("args[{j}].field"));
                }
                SlotKind::Tag => {
                    params.push(format!("int a{j}"));
                    args.push(format!("args[{j}].tag"));
                }
            }
        }
        let _ = write!(
            out,
            "\n/* box {name} */\n\
             extern void *{name}({}) __attribute__((weak));\n\
             static void *snet_c4snet_call_{i}(void *hnd, const snet_c4snet_slot *args)\n\
             {{\n    (void)args;\n    return {name}({});\n}}\n",
            params.join(", "),
            args.join(", ")
        );
        let in_arr = kind_array(&mut out, &format!("snet_c4snet_in_{i}"), &ins);
        let outs = output_kinds(sig);
        let mut variants = Vec::with_capacity(outs.len());
        for (v, kinds) in outs.iter().enumerate() {
            let arr = kind_array(&mut out, &format!("snet_c4snet_out_{i}_{v}"), kinds);
            variants.push(format!("{{{}, {arr}}}", kinds.len()));
        }
        let vars = if variants.is_empty() {
            "NULL".to_owned()
        } else {
            let _ = writeln!(
                out,
                "static const snet_c4snet_variant snet_c4snet_vars_{i}[] = {{{}}};",
                variants.join(", ")
            );
            format!("snet_c4snet_vars_{i}")
        };
        entries.push(format!(
            "    {{\"{name}\", snet_c4snet_call_{i}, (void (*)(void)){name}, {}, {in_arr}, {}, {vars}}}",
            ins.len(),
            outs.len()
        ));
    }
    // An empty array is not valid C before C23: keep one sentinel entry.
    if entries.is_empty() {
        entries.push("    {NULL, NULL, NULL, 0, NULL, 0, NULL}".to_owned());
    }
    let _ = write!(
        out,
        "\nconst snet_c4snet_box snet_c4snet_boxes[] = {{\n{}\n}};\n\
         const int snet_c4snet_nboxes = {};\n",
        entries.join(",\n"),
        sigs.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(name: &str, input: Option<Vec<Label>>, outputs: Vec<Vec<Label>>) -> BoxSig {
        BoxSig {
            name: name.to_owned(),
            input,
            outputs,
            passthrough: Vec::new(),
        }
    }

    #[test]
    fn wrapper_unpacks_arguments_in_signature_order() {
        let s = sig(
            "decompose",
            Some(vec![
                Label::field("Ain"),
                Label::tag("dim"),
                Label::btag("bs"),
            ]),
            vec![vec![Label::field("A"), Label::tag("p")], vec![]],
        );
        let c = generate(&[s]);
        assert!(c.contains(
            "extern void *decompose(void *hnd, c4snet_data_t *a0, int a1, int a2) __attribute__((weak));"
        ));
        assert!(c.contains("return decompose(hnd, args[0].field, args[1].tag, args[2].tag);"));
        assert!(c.contains("static const unsigned char snet_c4snet_in_0[] = {0, 1, 1};"));
        assert!(c.contains("static const unsigned char snet_c4snet_out_0_0[] = {0, 1};"));
        assert!(c.contains("{{2, snet_c4snet_out_0_0}, {0, NULL}}"));
        assert!(c.contains("const int snet_c4snet_nboxes = 1;"));
    }

    #[test]
    fn initialiser_takes_only_the_handle() {
        let c = generate(&[sig("init", None, vec![vec![Label::field("X")]])]);
        assert!(c.contains("extern void *init(void *hnd) __attribute__((weak));"));
        assert!(c.contains("return init(hnd);"));
        assert!(c.contains("{\"init\", snet_c4snet_call_0, (void (*)(void))init, 0, NULL, 1,"));
    }

    #[test]
    fn prototype_and_stub_name_the_parameters_after_the_labels() {
        let s = sig(
            "split",
            Some(vec![
                Label::field("A"),
                Label::tag("n"),
                Label::btag("hnd"),
                Label::tag("int"),
                Label::tag("A"),
            ]),
            vec![vec![Label::field("B"), Label::tag("k")], vec![]],
        );
        assert_eq!(
            c_prototype(&s),
            "void *split(void *hnd, c4snet_data_t *A, int n, int hnd_3, int int_4, int A_5)"
        );
        let stub = c_stub(&s);
        assert!(
            stub.starts_with(
                "/* box split (A, <n>, <#hnd>, <int>, <A>) -> (B, <k>) | () */
"
            ),
            "{stub}"
        );
        assert!(
            stub.contains(
                "    (void)hnd_3;
"
            ),
            "{stub}"
        );
        assert!(
            stub.contains(
                "    // C4SNetOut(hnd, 1, /* B: c4snet_data_t * */, /* <k>: int */);
"
            ),
            "{stub}"
        );
        assert!(
            stub.contains(
                "    // C4SNetOut(hnd, 2);
"
            ),
            "{stub}"
        );
        assert!(stub.ends_with("    return hnd;\n}\n"), "{stub}");
        let init = c_stub(&sig("init", None, vec![vec![Label::field("X")]]));
        assert!(
            init.contains("void *init(void *hnd)\n{\n    // C4SNetOut"),
            "{init}"
        );
    }

    #[test]
    fn box_names_are_checked() {
        assert!(check_box_name("merge").is_ok());
        assert!(check_box_name("_x9").is_ok());
        for bad in [
            "",
            "9a",
            "a-b",
            "int",
            "C4SNetOut",
            "snet_c4snet_x",
            "CTYPE_int",
            "mpi",
        ] {
            assert!(check_box_name(bad).is_err(), "{bad} accepted");
        }
    }
}
