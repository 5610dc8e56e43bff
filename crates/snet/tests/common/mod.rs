//! Test helpers shared by the golden and engine-agreement tests.

use std::path::{Path, PathBuf};

/// An example program with its input and expected output (`examples/**/NAME/`).
#[derive(Debug)]
pub(crate) struct Example {
    pub(crate) dir: PathBuf,
    pub(crate) program: PathBuf,
    pub(crate) sources: Vec<PathBuf>,
    pub(crate) ordered: bool,
}

pub(crate) fn find_examples(dir: &Path, out: &mut Vec<Example>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in &entries {
        if p.is_dir() {
            find_examples(p, out);
        }
    }
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let program = dir.join(format!("{name}.snet"));
    if !(program.exists() && dir.join("input.xml").exists() && dir.join("expected.xml").exists()) {
        return;
    }
    let text = std::fs::read_to_string(&program).unwrap_or_default();
    let ordered = text.lines().take(5).any(|l| l.trim() == "// deterministic");
    let sources = entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .cloned()
        .collect();
    out.push(Example {
        dir: dir.to_path_buf(),
        program,
        sources,
        ordered,
    });
}
