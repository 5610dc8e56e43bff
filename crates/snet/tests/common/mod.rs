//! Test helpers shared by the golden and engine-agreement tests.

use snet::{Program, Record};
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

/// The records of an example's input file; malformed ones are skipped (as `snet run`
/// reports and skips them).
// Not every test crate that includes this module uses every helper.
#[allow(dead_code)]
pub(crate) fn read_input(path: &Path) -> Result<Vec<Record>, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut r = snet_io::XmlReader::new(std::io::BufReader::new(f));
    let mut recs = Vec::new();
    while let Some(x) = r.next_record() {
        match x {
            Ok(rec) => recs.push(rec),
            Err(e) if e.is_fatal() => return Err(e.to_string()),
            // Malformed records are reported and skipped by `snet run`; skip them too.
            Err(_) => {}
        }
    }
    Ok(recs)
}

/// Binds an example's C boxes (compiled from its `.c` files) to `prog`.
#[allow(dead_code)]
pub(crate) fn bind_c(prog: &mut Program, ex: &Example) -> Result<(), String> {
    if ex.sources.is_empty() {
        return Ok(());
    }
    let sigs: Vec<_> = prog.net().boxes.to_vec();
    let boxes = snet_c4snet::load_boxes(&sigs, &ex.sources, &snet_c4snet::BuildOptions::default())
        .map_err(|e| e.to_string())?;
    prog.bind_table(&boxes.into_table());
    Ok(())
}
