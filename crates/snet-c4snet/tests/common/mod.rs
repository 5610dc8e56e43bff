//! Helpers shared by the integration tests: scratch directories, signatures from a
//! compact notation, and a recording emitter.

#![allow(
    dead_code,
    reason = "each test file uses a different subset of the helpers"
)]

use snet_c4snet::{load_boxes, BuildOptions, C4SNetError, CBoxes};
use snet_core::{Arg, BoxFailure, BoxSig, Emitter, Label};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the target's scratch space.
pub(crate) fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "c4snet-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A label from `x`, `<t>` or `<#b>`.
pub(crate) fn label(s: &str) -> Label {
    if let Some(b) = s.strip_prefix("<#") {
        Label::btag(b.trim_end_matches('>'))
    } else if let Some(t) = s.strip_prefix('<') {
        Label::tag(t.trim_end_matches('>'))
    } else {
        Label::field(s)
    }
}

fn labels(s: &str) -> Vec<Label> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(label)
        .collect()
}

/// A signature: `input` is `None` for an initialiser, else comma-separated labels;
/// `outputs` one comma-separated list per variant.
pub(crate) fn sig(name: &str, input: Option<&str>, outputs: &[&str]) -> BoxSig {
    BoxSig {
        name: name.to_owned(),
        input: input.map(labels),
        outputs: outputs.iter().map(|o| labels(o)).collect(),
        passthrough: Vec::new(),
    }
}

/// Writes `files` into a scratch directory and returns the paths of the `.c` ones.
pub(crate) fn write_sources(dir: &Path, files: &[(&str, &str)]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        if name.ends_with(".c") {
            out.push(p);
        }
    }
    out
}

/// Options with a private cache directory.
pub(crate) fn options(dir: &Path) -> BuildOptions {
    BuildOptions {
        cache_dir: Some(dir.join("cache")),
        ..BuildOptions::default()
    }
}

/// Builds and loads `sigs` from a single C source.
pub(crate) fn build(name: &str, sigs: &[BoxSig], source: &str) -> Result<CBoxes, C4SNetError> {
    let dir = scratch(name);
    let srcs = write_sources(&dir, &[("boxes.c", source)]);
    load_boxes(sigs, &srcs, &options(&dir))
}

/// An emitter that records every emission; it fails (returns an error) at emission
/// number `fail_at` if set.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) emitted: Vec<(usize, Vec<Arg>)>,
    pub(crate) fail_at: Option<usize>,
}

impl Emitter for Recorder {
    fn emit(&mut self, variant: usize, values: snet_core::Args) -> Result<(), BoxFailure> {
        if self.fail_at == Some(self.emitted.len()) {
            return Err(BoxFailure("downstream refused the record".into()));
        }
        self.emitted.push((variant, values.into_vec()));
        Ok(())
    }
}

/// Runs box `name` of `boxes` once on `args`.
pub(crate) fn run(
    boxes: &CBoxes,
    name: &str,
    args: Vec<Arg>,
) -> (Result<(), BoxFailure>, Recorder) {
    let mut rec = Recorder::default();
    let f = boxes.table().get(name).expect("box bound");
    let r = f.invoke(args.into(), &mut rec);
    (r, rec)
}

/// The field value of an emitted argument.
pub(crate) fn field(a: &Arg) -> &snet_core::Value {
    match a {
        Arg::Field(Some(v)) => v,
        other => panic!("expected a non-NULL field, got {other:?}"),
    }
}

/// The tag value of an emitted argument.
pub(crate) fn tag(a: &Arg) -> i32 {
    match a {
        Arg::Tag(t) => *t,
        other => panic!("expected a tag, got {other:?}"),
    }
}
