//! Warnings (spec §9 items 15–19 and others): each program in `tests/warnings/` is
//! accepted and produces exactly the warnings pinned in its `.stderr` file (the file
//! name starts with the warning's code). `SNET_BLESS=1` rewrites the pinned files.

use std::path::Path;

#[test]
fn warnings_are_pinned() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/warnings");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "snet"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    let bless = std::env::var_os("SNET_BLESS").is_some();
    let mut failures = Vec::new();
    for f in &files {
        let name = format!(
            "tests/warnings/{}",
            f.file_name().unwrap().to_string_lossy()
        );
        let src = std::fs::read_to_string(f).unwrap();
        let code = &f.file_stem().unwrap().to_string_lossy()[..5];
        let rendered = match snet_lang::compile_str(&name, &src) {
            Ok(c) => c.warnings.render(),
            Err(d) => {
                failures.push(format!("{name}: rejected\n{}", d.render()));
                continue;
            }
        };
        if !rendered.contains(&format!("warning[{code}]")) {
            failures.push(format!("{name}: no warning[{code}] in\n{rendered}"));
        }
        let pinned = f.with_extension("stderr");
        if bless {
            std::fs::write(&pinned, &rendered).unwrap();
        } else if std::fs::read_to_string(&pinned).ok().as_deref() != Some(&rendered) {
            failures.push(format!(
                "{name}: warnings changed or not pinned\n{rendered}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The rendered warnings of `src` with code `code`.
fn warnings_with(name: &str, src: &str, code: &str) -> String {
    let c = snet_lang::compile_str(name, src).unwrap();
    c.warnings
        .iter()
        .filter(|d| d.code == code)
        .map(|d| d.render())
        .collect()
}

/// Issue 33 item 2: records that carry a tag `<k>` never reach a box that wants a field
/// `k`; in a choice they take the other branch (here an identity inside a star, which
/// used to loop for ever). The warning names the missing label, the similar one the
/// records have and where it is produced.
#[test]
fn w0106_a_branch_no_record_reaches_names_the_near_miss() {
    let src = "<metadata><boxdefault><interface value=\"C4SNet\"/></boxdefault></metadata>
net wf {
  box split((text) -> (chunk, <k>) | (<done>));
  box count((chunk, k) -> (hist));
} connect split .. ((count | []) ** {hist});
";
    assert_eq!(
        warnings_with("wf.snet", src, "W0106"),
        "warning[W0106]: branch 1 of `|` (box `count`) receives no record
 --> wf.snet:5:22
  |
5 | } connect split .. ((count | []) ** {hist});
  |                      ^^^^^ wants {chunk, k}
  |           ----- produces tag `<k>`
  |
  = note: the records reaching the `|` are {chunk, <k>} | {<done>}
  = note: none of them has field `k`; they have tag `<k>`
  = help: did you mean tag `<k>`? (unless the input records bring `k` along by flow inheritance)
"
    );
    // A close spelling of the same kind.
    let src = "net near {
  box split((line) -> (txt, <n>));
  box count((text) -> (n));
} connect split .. (count | [{txt} -> {txt}]);
";
    let w = warnings_with("near.snet", src, "W0106");
    assert!(
        w.contains("none of them has field `text`; they have field `txt`"),
        "{w}"
    );
    // A box in a serial position: the run would stop at its first record.
    let src = "net s { box split((text) -> (chunk, <k>)); box count((chunk, k) -> (hist)); } connect split .. count;";
    let w = warnings_with("s.snet", src, "W0106");
    assert!(
        w.starts_with("warning[W0106]: box `count` accepts none of the records that reach it"),
        "{w}"
    );
    assert!(
        w.contains("none of them has field `k`; they have tag `<k>`"),
        "{w}"
    );
    // A declared signature: its input type is what the network is for.
    let src = "net d ({a} -> {b}) { box f((a) -> (b)); box g((c) -> (b)); } connect f | g;";
    let w = warnings_with("d.snet", src, "W0106");
    assert!(
        w.contains("branch 2 of `|` (box `g`) receives no record"),
        "{w}"
    );
    assert!(
        w.contains("records of the declared input type {a} never take this branch"),
        "{w}"
    );
}

/// No W0106 where the branches are reached: records that bring a label from outside
/// (inferred input types, no similar label), a star whose stage changes the record, a
/// synchrocell's merged record, initialiser branches.
#[test]
fn w0106_is_quiet_for_reached_branches() {
    for src in [
        "net p { box a((x) -> (y)); box b((y, z) -> (w)); } connect a .. (b | []);",
        "net p connect ([{<n>} -> {<n = n + 1>}] | [{<a>} -> {<h>}]) * {<n>} if <n > 5>;",
        "net p { box f((a, b) -> (c)); } connect [| {a}, {b} |] .. (f | []);",
        "net p { box i(-> (a)); box f((a) -> (b)); } connect (i .. f) | [];",
        "net p { box f((a) -> (b) | (c)); box g((b) -> (d)); box h((c) -> (d)); } connect f .. (g | h);",
        // `row2` comes with the input; `row1`, close to it, is wanted by the branch too.
        "net p { box a((row1) -> (row1, s)); box b((row1, row2) -> (t)); } connect a .. (b | []);",
        // Extra binding tags do not keep a record from a box in a serial position.
        "net p { box a((x) -> (y, <#q>)); box b((y) -> (z)); box c((z, w) -> (v)); } connect a .. b .. (c | []);",
    ] {
        let w = warnings_with("p.snet", src, "W0106");
        assert!(w.is_empty(), "{src}\n{w}");
    }
}

/// W0103 (no record can leave a serial replication) is withdrawn when an exit label
/// comes from outside by flow inheritance and the records the program is for do leave:
/// the state idiom of spec §7.17 (as in examples/c/blockmm, where `<nb>` comes with the
/// state record) and a round counter checked against a tag from upstream (as in
/// examples/c/feistel). A star that those records reach and cannot leave keeps it.
#[test]
fn w0103_is_quiet_when_the_exit_label_comes_by_flow_inheritance() {
    for src in [
        "net p { box init((x) -> (acc, <cnt>, <nb>) | (part)); box add((acc, part, <cnt>) -> (acc, <cnt>)); } \
         connect init .. (([| {acc, <cnt>}, {part} |] .. (add | [])) * {acc, <cnt>, <nb>} if <cnt == nb>);",
        "net p { box setup((key, <rounds>) -> (sched, <rounds>)); box rnd((blk, sched, <r>) -> (blk, sched, <r>)); } \
         connect setup .. [{} -> {<r = 0>}] .. ((rnd .. [{<r>} -> {<r = r + 1>}]) ** {<r>, <rounds>} if <r == rounds>);",
        // A declared input type that brings the exit label.
        "net p ({x, <n>} -> {y, <n>}) { box f((x) -> (y)); } connect f * {y, <n>};",
    ] {
        let w = warnings_with("p.snet", src, "W0103");
        assert!(w.is_empty(), "{src}\n{w}");
    }
    // Reached, but the exit label is consumed in the loop: the warning stays.
    let src = "net p { box f((x, <n>) -> (x)); } connect [{x} -> {x, <n = 1>}] .. (f * {x, <n>});";
    let w = warnings_with("p.snet", src, "W0103");
    assert!(w.contains("warning[W0103]"), "{src}\n{w}");
}

/// Under an inferred input type the records reaching a choice may lack labels that come
/// with the input, so W0106 needs a real near miss: a record that, with its similar
/// labels renamed, would have every label the branch wants. `{b}` is no near miss of a
/// branch that wants `{B, D}` (the record `{B, D}` reaches it), `{D, b}` is.
#[test]
fn w0106_under_an_inferred_type_needs_a_real_near_miss() {
    let src = "net w4 connect ([{D} -> {D}] .. [{B} -> {B, <hit>}]) | ([{D} -> {D}] .. [{C} -> {C}]) | [{b} -> {b}];";
    let w = warnings_with("w4.snet", src, "W0106");
    assert!(w.is_empty(), "{w}");
    // The typo: records `{D, b}` reach a branch that wants `{B, D}`.
    let src = "net t { box f((x) -> (D, b)); } connect f .. (([{D} -> {D}] .. [{B} -> {B, <hit>}]) | [{b} -> {b}]);";
    let w = warnings_with("t.snet", src, "W0106");
    assert!(w.contains("branch 1 of `|`"), "{w}");
    assert!(
        w.contains("none of them has field `B`; they have field `b`"),
        "{w}"
    );
}

/// Issue 33 item 5: a declared output that the body cannot produce is flagged like a
/// declared input it does not accept.
#[test]
fn w0105_a_declared_output_the_body_does_not_produce() {
    let src = "net o ({a} -> {<b>} | {<nope>}) connect [{a} -> {<b>}];\n";
    assert_eq!(
        warnings_with("o.snet", src, "W0105"),
        "warning[W0105]: net `o` declares output {<nope>}, which its body does not produce
 --> o.snet:1:5
  |
1 | net o ({a} -> {<b>} | {<nope>}) connect [{a} -> {<b>}];
  |     ^ declared signature
  |                                         -------------- produces {<b>}
  |
  = note: no output of the body has `<nope>`, and no declared input brings it along
"
    );
    // Labels a declared input brings along by flow inheritance, and outputs the body
    // does produce, are fine.
    let src = "net o ({a, c} -> {<b>, c}) connect [{a} -> {<b>}];\n";
    assert_eq!(warnings_with("o.snet", src, "W0105"), "");
}

/// Issue 33 item 8: a metadata block naming a box or net outside its scope has no
/// effect (a box observer inside a net body for a top-level box was silently dropped);
/// W0003 says where the block applies and where to move it.
#[test]
fn w0003_metadata_out_of_scope_says_where_to_move_it() {
    let src = "<metadata>
  <net name=\"step\"><observer/><observer_file value=\"/tmp/r.xml\"/></net>
</metadata>
net m {
  net step connect [{<n>} -> {<n=n*10>}];
} connect step;
";
    let w = warnings_with("m.snet", src, "W0003");
    assert!(
        w.starts_with("warning[W0003]: metadata for net `step` has no effect: the block is at the top level, and net `step` is defined in the body of net `m`\n --> m.snet:2:3\n"),
        "{w}"
    );
    assert!(
        w.contains("= help: move the block into a `<metadata>` in the body of net `m`, or nest it here: `<net name=\"m\"><net name=\"step\">...</net></net>`"),
        "{w}"
    );
    // Nested as suggested, it applies: no warning, and the net gets its observer.
    let nested = src.replace(
        "<net name=\"step\"><observer/><observer_file value=\"/tmp/r.xml\"/></net>",
        "<net name=\"m\"><net name=\"step\"><observer/><observer_file value=\"/tmp/r.xml\"/></net></net>",
    );
    let c = snet_lang::compile_str("m.snet", &nested).unwrap();
    assert!(c.warnings.is_empty(), "{}", c.warnings.render());
    assert!(
        c.net
            .nodes
            .iter()
            .any(|n| matches!(n.kind, snet_core::NodeKind::Observe(_))),
        "no observer node"
    );
    // A box defined at the top level, metadata inside a net body.
    let src = "<metadata><boxdefault><interface value=\"C4SNet\"/></boxdefault></metadata>
box f((a) -> (b));
net m2 {
  <metadata><box name=\"f\"><observer/><observer_file value=\"/tmp/r.xml\"/></box></metadata>
  net inner connect f;
} connect inner;
";
    let w = warnings_with("m2.snet", src, "W0003");
    assert!(
        w.contains("metadata for box `f` has no effect: the block is in the body of net `m2`, and box `f` is defined at the top level"),
        "{w}"
    );
    assert!(
        w.contains("= help: move the block into a `<metadata>` at the top level"),
        "{w}"
    );
}
