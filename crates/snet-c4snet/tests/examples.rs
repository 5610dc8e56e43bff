//! The C box example programs in `examples/c/`: every box source compiles with
//! `-Wall -Wextra -Werror`, every box declared in the program binds to its C function
//! with a matching signature, and the expected outputs have the §11.3 layout.

mod common;

use common::{label, scratch};
use snet_core::BoxSig;
use std::path::{Path, PathBuf};
use std::process::Command;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c")
}

fn example_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// Removes `//` and `/* */` comments.
fn strip_comments(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn labels_in_parens(s: &str) -> Vec<snet_core::Label> {
    let s = s.trim();
    let inner = s
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a label list: {s}"));
    inner
        .split(',')
        // A pass-through qualifier (`a=`, `<t>=`) does not change the C parameter.
        .map(|l| l.trim().trim_end_matches('=').trim())
        .filter(|l| !l.is_empty())
        .map(label)
        .collect()
}

/// The first occurrence of `word` as a whole word.
fn find_keyword(s: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    s.match_indices(word).map(|(i, _)| i).find(|&i| {
        !s[..i].chars().next_back().is_some_and(ident)
            && !s[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The box declarations of a program: `box NAME (SIG);` with the simple shapes the
/// examples use (no inline code; `box` in metadata, `<box name=...>`, is skipped).
fn box_sigs(snet: &str) -> Vec<BoxSig> {
    let src = strip_comments(snet);
    let mut sigs = Vec::new();
    let mut rest = src.as_str();
    while let Some(i) = find_keyword(rest, "box") {
        if rest[..i].ends_with('<') || rest[..i].ends_with("</") {
            rest = &rest[i + 3..];
            continue;
        }
        let after = &rest[i + 3..];
        let open = after.find('(').unwrap();
        let name = after[..open].trim().to_owned();
        // The signature runs to the matching parenthesis.
        let mut depth = 0;
        let mut end = open;
        for (j, c) in after[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let sig = &after[open + 1..end];
        let (input, outputs) = sig.split_once("->").unwrap();
        let input = input.trim();
        let outputs = outputs.trim();
        sigs.push(BoxSig {
            name,
            input: (!input.is_empty()).then(|| labels_in_parens(input)),
            outputs: if outputs.is_empty() {
                Vec::new()
            } else {
                outputs.split('|').map(labels_in_parens).collect()
            },
            passthrough: Vec::new(),
        });
        rest = &after[end..];
    }
    sigs
}

#[test]
fn there_are_enough_examples() {
    let dirs = example_dirs();
    assert!(dirs.len() >= 12, "{} examples", dirs.len());
    for d in &dirs {
        let name = d.file_name().unwrap().to_str().unwrap();
        for f in [
            format!("{name}.snet"),
            "input.xml".into(),
            "expected.xml".into(),
        ] {
            assert!(d.join(&f).is_file(), "{}: missing {f}", d.display());
        }
        assert!(
            !files_with(d, "c").is_empty(),
            "{}: no C sources",
            d.display()
        );
    }
}

#[test]
fn box_sources_compile_with_all_warnings_as_errors() {
    let out = scratch("werror");
    let inc = snet_c4snet::source_include_dir();
    for d in example_dirs() {
        for c in files_with(&d, "c") {
            let o = out.join(format!(
                "{}-{}.o",
                d.file_name().unwrap().to_str().unwrap(),
                c.file_stem().unwrap().to_str().unwrap()
            ));
            let res = Command::new("cc")
                .args(["-Wall", "-Wextra", "-Werror", "-O2", "-fPIC", "-c"])
                .arg(format!("-I{}", inc.display()))
                .arg(&c)
                .arg("-o")
                .arg(&o)
                .output()
                .unwrap();
            assert!(
                res.status.success(),
                "{}:\n{}",
                c.display(),
                String::from_utf8_lossy(&res.stderr)
            );
        }
    }
}

#[test]
fn every_declared_box_binds_to_its_function() {
    let cache = scratch("examples-cache");
    let opts = snet_c4snet::BuildOptions {
        cache_dir: Some(cache),
        ..Default::default()
    };
    let mut total = 0;
    for d in example_dirs() {
        let name = d.file_name().unwrap().to_str().unwrap().to_owned();
        let snet = std::fs::read_to_string(d.join(format!("{name}.snet"))).unwrap();
        let sigs = box_sigs(&snet);
        assert!(!sigs.is_empty(), "{name}: no boxes");
        let boxes = snet_c4snet::load_boxes(&sigs, &files_with(&d, "c"), &opts)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // `oldc` is written in the style of old box code on purpose: it only loads with
        // GNU89 inline semantics, and the rebuild that gives them says so.
        let expected: &[&str] = if name == "oldc" {
            &["-fgnu89-inline"]
        } else {
            &[]
        };
        assert!(
            boxes.warnings().len() == expected.len()
                && boxes
                    .warnings()
                    .iter()
                    .zip(expected)
                    .all(|(w, e)| w.contains(e)),
            "{name}: {:?}",
            boxes.warnings()
        );
        for s in &sigs {
            assert!(boxes.table().contains(&s.name), "{name}: {}", s.name);
        }
        total += sigs.len();
    }
    assert!(total >= 25, "{total} boxes");
}

#[test]
fn expected_outputs_have_the_reference_layout() {
    for d in example_dirs() {
        let text = std::fs::read_to_string(d.join("expected.xml")).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(
            lines.last(),
            Some(&""),
            "{}: ends with a newline",
            d.display()
        );
        let lines = &lines[..lines.len() - 1];
        let n = lines.len();
        assert!(n >= 2);
        assert_eq!(lines[n - 2], "<?xml version=\"1.0\" ?>");
        assert_eq!(lines[n - 1], "<record type=\"terminate\" />");
        let mut i = 0;
        while i < n - 2 {
            assert_eq!(
                lines[i],
                "<?xml version=\"1.0\" ?>",
                "{}:{}",
                d.display(),
                i + 1
            );
            assert_eq!(
                lines[i + 1],
                "<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >"
            );
            i += 2;
            // fields, then tags, then binding tags
            let mut group = 0;
            while lines[i] != "</record>" {
                let g = if lines[i].starts_with("<field label=\"") {
                    assert!(lines[i].contains("\" interface=\"C4SNet\">("));
                    assert!(lines[i].ends_with("</field>"));
                    0
                } else if lines[i].starts_with("<tag label=\"") {
                    assert!(lines[i].ends_with("</tag>"));
                    1
                } else {
                    assert!(lines[i].starts_with("<btag label=\""), "{}", lines[i]);
                    assert!(lines[i].ends_with("</btag>"));
                    2
                };
                assert!(g >= group, "{}: {} out of order", d.display(), lines[i]);
                group = g;
                i += 1;
            }
            i += 1;
        }
    }
}

#[test]
fn the_box_declaration_reader_reads_every_shape() {
    let s = box_sigs(
        "box a((x, <t>, <#b>) -> (y) | ()); // box fake((z) -> (z));\n\
         net initbox { box init( -> (X,\n <i>));\nbox e(() -> ); } connect boxes;",
    );
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].name, "a");
    assert_eq!(s[0].input.as_ref().unwrap().len(), 3);
    assert_eq!(s[0].outputs.len(), 2);
    assert!(s[0].outputs[1].is_empty());
    assert_eq!(s[1].input, None);
    assert_eq!(s[1].outputs[0].len(), 2);
    assert_eq!(s[2].input, Some(vec![]));
    assert!(s[2].outputs.is_empty());
}

#[test]
fn shipped_headers_and_shim_compile_in_every_dialect() {
    let out = scratch("dialects");
    let user = out.join("user.c");
    std::fs::write(
        &user,
        "#include <C4SNet.h>\n#include <bool.h>\n#include \"memfun.h\"\n\
         void *b(void *hnd, c4snet_data_t *x)\n{\n    bool ok = true;\n\
         void *p = SNetMemAlloc(4);\n    SNetMemFree(p);\n\
         C4SNetOut(hnd, 1, x, ok);\n    return hnd;\n}\n",
    )
    .unwrap();
    let inc = snet_c4snet::source_include_dir();
    let csrc = inc.join("../csrc");
    for std in ["c89", "gnu89", "c99", "c11", "gnu17", "c2x"] {
        for src in [user.clone(), csrc.join("shim.c")] {
            let res = Command::new("cc")
                .arg(format!("-std={std}"))
                .args(["-pedantic", "-Wall", "-Wextra", "-Werror", "-c"])
                .arg(format!("-I{}", inc.display()))
                .arg(format!("-I{}", csrc.display()))
                .arg(&src)
                .arg("-o")
                .arg(out.join("x.o"))
                .output()
                .unwrap();
            assert!(
                res.status.success(),
                "-std={std} {}:\n{}",
                src.display(),
                String::from_utf8_lossy(&res.stderr)
            );
        }
    }
}
