//! Regressions of the hostile test campaign (issue 24) that concern the front end:
//! byte-order marks, diagnostics floods, long source lines and generated chains.

use snet_core::NodeKind;

#[test]
fn a_utf8_byte_order_mark_is_accepted_and_columns_ignore_it() {
    let src = "\u{feff}net p connect [{<a>} -> {<b>}];\n";
    let c = snet_lang::compile_str("p.snet", src).expect("a BOM is not part of the program");
    assert_eq!(c.signature_line(), "net p ({<a>} -> {<b>})");
    // An error on line 1 is reported at the column an editor shows (the BOM is unseen).
    let bad = "\u{feff}net p connect nope;\n";
    let d = snet_lang::compile_str("p.snet", bad).unwrap_err().render();
    assert!(d.contains("p.snet:1:15"), "{d}");
}

#[test]
fn diagnostics_are_capped_with_a_count_of_the_rest() {
    // 500 undefined names: 500 errors found, at most 50 shown, the rest counted.
    let body: Vec<String> = (0..500).map(|i| format!("nope{i}")).collect();
    let src = format!("net p connect {};\n", body.join(" .. "));
    let d = snet_lang::compile_str("p.snet", &src).unwrap_err();
    assert_eq!(d.error_count(), 500);
    let text = d.render();
    assert_eq!(text.matches("error[").count(), 50, "{text}");
    assert!(text.contains("450 more errors not shown"), "{text}");
}

#[test]
fn warnings_of_one_kind_are_capped() {
    // 40 unknown metadata elements: 40 W0003 warnings, 10 shown. (Boxes without
    // interface metadata get one W0002 for all, naming each.)
    let mut src = String::from("<metadata>");
    for i in 0..40 {
        src.push_str(&format!("<bogus{i}/>"));
    }
    src.push_str("</metadata>\n");
    for i in 0..40 {
        src.push_str(&format!("box b{i}((x) -> (x));\n"));
    }
    let chain: Vec<String> = (0..40).map(|i| format!("b{i}")).collect();
    src.push_str(&format!("net p connect {};\n", chain.join(" .. ")));
    let c = snet_lang::compile_str("p.snet", &src).unwrap();
    assert_eq!(c.warnings.len(), 41);
    let text = c.warnings.render();
    assert_eq!(text.matches("warning[W0003]").count(), 10, "{text}");
    assert_eq!(text.matches("warning[W0002]").count(), 1, "{text}");
    assert!(text.contains("40 boxes have no interface metadata (`b0`, `b1`, `b2`, `b3`, `b4`, `b5`, `b6`, `b7`, and 32 more); assuming C4SNet"), "{text}");
    assert!(text.contains("30 more warnings not shown"), "{text}");
}

#[test]
fn a_long_source_line_is_cut_around_the_caret() {
    let filler = "[{<a>} -> {<a=a+1>}] .. ".repeat(4000); // ~96 KB on one line
    let src = format!("net p connect {filler}nope;\n");
    let text = snet_lang::compile_str("p.snet", &src).unwrap_err().render();
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest < 300, "a {longest}-byte line was echoed:\n{text}");
    // The snippet still shows the name and the caret under it.
    let line = text.lines().find(|l| l.contains("nope;")).expect("snippet");
    let caret = text.lines().find(|l| l.contains('^')).expect("caret");
    assert!(line.starts_with("1 | ..."), "{line}");
    let col = |s: &str, pat: &str| s.find(pat).unwrap();
    assert_eq!(col(line, "nope"), col(caret, "^"), "{line}\n{caret}");
}

#[test]
fn a_generated_chain_lowers_to_a_shallow_tree() {
    let n = 20_000;
    let body = vec!["[{<a>} -> {<a=a+1>}]"; n].join(" .. ");
    let src = format!("net p connect {body};\n");
    let c = snet_lang::compile_str("p.snet", &src).unwrap();
    let net = c.net.clone();
    // Depth of the Serial tree (iteratively).
    let mut max = 0;
    let mut stack = vec![(net.root, 1usize)];
    let mut leaves = 0;
    while let Some((id, d)) = stack.pop() {
        max = max.max(d);
        match &net.node(id).kind {
            NodeKind::Serial(a, b) => {
                stack.push((*a, d + 1));
                stack.push((*b, d + 1));
            }
            _ => leaves += 1,
        }
    }
    assert_eq!(leaves, n);
    assert!(max <= 17, "serial tree depth {max} for {n} stages");
}

#[test]
fn an_interface_value_with_a_line_break_keeps_the_diagnostic_on_its_lines() {
    // Found by the mutation campaign (seed 424242): the value was echoed raw.
    let src = "<metadata><boxdefault><interface value=\"C4SNet\n\"/></boxdefault></metadata>\nnet p { box b((x) -> (x)); } connect b;\n";
    let text = snet_lang::compile_str("p.snet", src).unwrap_err().render();
    let first = text.lines().next().unwrap();
    assert!(first.contains("`C4SNet\\n`"), "{text}");
    assert!(
        text.lines().nth(1).unwrap().starts_with(" --> p.snet:"),
        "{text}"
    );
}

/// A box or net whose definition was rejected is not reported as undefined where it is
/// used (one error, not a false second one); an undefined name still is.
#[test]
fn a_rejected_definition_is_not_reported_undefined_again() {
    let cases = [
        // Duplicate box name across nets (E0302).
        (
            "net n1 { box f((a)->(b)); } connect f; net p { box f((c)->(d)); } connect f | n1;",
            "E0302",
        ),
        // Compiler-stage syntax (E0207), inline code (E0208), a syntax error (E0201).
        ("box a b ((x) -> (y)); net p connect a;", "E0207"),
        (
            "box f((a) -> (b)) { <<< C | int x = 1; >>> } net p connect f;",
            "E0208",
        ),
        ("box f((a) -> (b) | ); net p connect f;", "E0201"),
        ("net q connect [{a} -> {b}] ..; net p connect q;", "E0201"),
        // One syntax error at one token, not a second one from the recovery.
        ("net p connect [{connect} -> {}];", "E0201"),
    ];
    for (src, code) in cases {
        let d = snet_lang::compile_str("p.snet", src).unwrap_err();
        let codes: Vec<&str> = d.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
        assert_eq!(codes, [code], "{src}: {}", d.render());
    }
    let d = snet_lang::compile_str("p.snet", "box f((a) -> (b) | ); net p connect g;").unwrap_err();
    let codes: Vec<&str> = d.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
    assert_eq!(codes, ["E0201", "E0305"], "{}", d.render());
}

/// Issue 33 item 6: a 40 KB metadata value or element name quoted in a warning is cut
/// to its first 200 bytes and its length.
#[test]
fn long_names_and_values_in_diagnostics_are_cut() {
    let src = format!(
        "<metadata><netdefault><observer/><observer_type value=\"{}\"/><observer_file value=\"/tmp/x\"/></netdefault><{}/></metadata>\nnet p connect [];\n",
        "b".repeat(40000),
        "e".repeat(40000)
    );
    let c = snet_lang::compile_str("p.snet", &src).unwrap();
    let text = c.warnings.render();
    assert!(text.len() < 2000, "{} bytes:\n{text}", text.len());
    assert!(text.contains("... (40002 bytes) is not `before`"), "{text}");
    assert!(text.contains("... (40004 bytes) is ignored"), "{text}");
}
