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
