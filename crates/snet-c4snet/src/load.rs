//! Loading a built box library and binding its boxes as [`BoxFn`]s.
//!
//! The library is opened with `RTLD_NOW | RTLD_LOCAL`, the Rust entry points are
//! installed into its shim, and its generated box table is checked against the
//! signatures (names, input kinds, variants). Each box must resolve to a function defined
//! in the library itself or in one of the user's shared objects; a symbol that only the
//! C library defines (a box named `index`, say) is reported as missing rather than called.

use crate::abi::{self, CBoxDesc, CVariant, CallFn, CallInfo};
use crate::compile::BuiltLibrary;
use crate::error::C4SNetError;
use crate::wrapgen::{self, SlotKind};
use snet_core::{Arg, Args, BoxFailure, BoxFn, BoxSig, BoxTable, Emitter};
use std::ffi::{c_int, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A loaded box library; it stays loaded while any of its boxes is alive.
#[derive(Debug)]
struct LoadedLibrary {
    _lib: libloading::Library,
    path: PathBuf,
    /// `"node N: "` once this library's boxes run as node N of a distributed run
    /// ([`CBoxes::set_node_location`]): crash messages name the node (with `local:N`,
    /// every node has its own copy of the library).
    node: Arc<std::sync::OnceLock<Box<[u8]>>>,
}

/// One C box bound to its wrapper.
struct CBox {
    name: Box<str>,
    desc: *const CBoxDesc,
    call: CallFn,
    info: CallInfo,
    inputs: Vec<SlotKind>,
    outputs: Vec<Vec<SlotKind>>,
    _lib: Arc<LoadedLibrary>,
}

// SAFETY: `desc` points to an immutable table in the library, which `_lib` keeps loaded;
// the C side of a call only reads it. Box functions are thread-safe by contract (spec
// §7.3.4), and every invocation has its own context.
unsafe impl Send for CBox {}
// SAFETY: as above; `CBox` has no interior mutability.
unsafe impl Sync for CBox {}

impl std::fmt::Debug for CBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CBox").field("name", &self.name).finish()
    }
}

impl BoxFn for CBox {
    fn invoke(&self, mut args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.invoke_from(&mut args, out)
    }

    fn invoke_from(&self, args: &mut Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        if args.len() != self.inputs.len() {
            return Err(BoxFailure(format!(
                "box `{}` takes {} argument(s), got {}",
                self.name,
                self.inputs.len(),
                args.len()
            )));
        }
        let mut slots = Vec::with_capacity(args.len());
        for (i, (arg, kind)) in args.drain(..).zip(&self.inputs).enumerate() {
            let slot = match (arg, kind) {
                (Arg::Field(f), SlotKind::Field) => abi::Slot {
                    field: f.map_or(std::ptr::null_mut(), snet_core::Value::into_raw),
                },
                (Arg::Tag(t), SlotKind::Tag) => abi::Slot { tag: t },
                _ => {
                    // SAFETY: the slots made so far hold what `inputs` says, each
                    // field one reference made by `into_raw`.
                    unsafe { snet_core::boxes::release_slots(&self.inputs[..i], &slots) };
                    return Err(BoxFailure(format!(
                        "box `{}`: argument {} must be a {}",
                        self.name,
                        i + 1,
                        if *kind == SlotKind::Field {
                            "field"
                        } else {
                            "tag"
                        }
                    )));
                }
            };
            slots.push(slot);
        }
        // SAFETY: the slots hold what `inputs` says (checked just above), each field one
        // reference that passes to the box.
        unsafe { self.invoke_raw(&self.inputs, &slots, out) }
    }

    fn raw_inputs(&self) -> bool {
        true
    }

    unsafe fn invoke_raw(
        &self,
        kinds: &[SlotKind],
        args: &[abi::Slot],
        out: &mut dyn Emitter,
    ) -> Result<(), BoxFailure> {
        // Compared element by element: a call to `memcmp` for the usual one or two
        // kinds cost more than the comparison.
        if kinds.len() != self.inputs.len()
            || kinds.iter().zip(&self.inputs[..]).any(|(a, b)| a != b)
        {
            // SAFETY: the caller's contract: the slots hold what `kinds` says.
            unsafe { snet_core::boxes::release_slots(kinds, args) };
            return Err(BoxFailure(format!(
                "box `{}` takes the arguments {:?}, was given {kinds:?}",
                self.name, self.inputs
            )));
        }
        // `desc`/`call` come from the loaded library kept alive by `_lib`, whose API
        // table was installed at load time; `outputs` was checked against the
        // descriptor's variants.
        // SAFETY: as said, and the slots are of the descriptor's input kinds (checked
        // just above), their references passing to the box (the caller's contract).
        unsafe {
            abi::invoke(
                self.desc,
                self.call,
                &self.name,
                &self.info,
                &self.outputs,
                &self.inputs,
                args,
                out,
            )
        }
    }
}

/// The loaded C boxes of one run.
#[derive(Debug, Clone)]
pub struct CBoxes {
    table: BoxTable,
    path: PathBuf,
    warnings: Vec<String>,
    compiler_runs: usize,
    /// What was loaded (to load a copy for another node of a distributed run).
    built: BuiltLibrary,
    lib: Arc<LoadedLibrary>,
}

impl CBoxes {
    /// The boxes by S-Net name.
    pub fn table(&self) -> &BoxTable {
        &self.table
    }
    /// The boxes by S-Net name (the library stays loaded while they are alive).
    pub fn into_table(self) -> BoxTable {
        self.table
    }
    /// The loaded shared object.
    pub fn library_path(&self) -> &Path {
        &self.path
    }
    /// Compiler and linker warnings of the build (the CLI shows them).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Compiler runs the build needed (0 when fully cached).
    pub fn compiler_runs(&self) -> usize {
        self.compiler_runs
    }

    /// Sets the box code's `node_location` (spec §12.1) to `node`: the node number of a
    /// distributed run, in the library these boxes were loaded from.
    pub fn set_node_location(&self, node: u32) -> Result<(), C4SNetError> {
        // SAFETY: the shim defines `int node_location` (box code may define it too:
        // then the one the library resolves); the library stays loaded while `self`
        // lives, and box code only reads it.
        unsafe {
            let p = self
                .lib
                ._lib
                .get::<*mut c_int>(b"node_location\0")
                .map_err(|e| C4SNetError::Load {
                    path: self.path.clone(),
                    message: e.to_string(),
                })?;
            **p = node as c_int;
        }
        let _ = self
            .lib
            .node
            .set(format!("node {node}: ").into_bytes().into_boxed_slice());
        Ok(())
    }

    /// The same boxes from a private copy of the library (its own globals, among them
    /// `node_location`, set to `node`): one node of a distributed run in this process
    /// (`--distrib local:N`), whose box code must not share state with the others.
    pub fn node_copy(&self, node: u32) -> Result<CBoxes, C4SNetError> {
        let dir = std::env::temp_dir().join(format!("snet-node-libs-{}", std::process::id()));
        let load_err = |message: String| C4SNetError::Load {
            path: self.path.clone(),
            message,
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| load_err(format!("cannot make {}: {e}", dir.display())))?;
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "boxes.so".into());
        let copy = dir.join(format!("node{node}-{name}"));
        std::fs::copy(&self.path, &copy)
            .map_err(|e| load_err(format!("cannot copy to {}: {e}", copy.display())))?;
        let mut built = self.built.clone();
        built.path = copy.clone();
        let boxes = load_library(&built);
        // Loaded (or failed): the file is not needed any more, nor the directory once
        // it is empty (the last node's copy removes it; a failing removal means
        // another node's copy is still there).
        let _ = std::fs::remove_file(&copy);
        let _ = std::fs::remove_dir(&dir);
        let boxes = boxes?;
        boxes.set_node_location(node)?;
        Ok(boxes)
    }
}

fn kinds_slice<'a>(p: *const u8, n: c_int) -> &'a [u8] {
    if n <= 0 || p.is_null() {
        return &[];
    }
    // SAFETY: the generated table stores `n` kinds at `p` (checked by the callers'
    // comparison with the signature, which is what the generator wrote).
    unsafe { std::slice::from_raw_parts(p, n as usize) }
}

fn same_kinds(c: &[u8], rust: &[SlotKind]) -> bool {
    c.len() == rust.len() && c.iter().zip(rust).all(|(&a, &b)| a == b as u8)
}

fn canonical_eq(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The file that defines the code at `addr`, if the loader knows it.
fn defining_file(addr: *const std::ffi::c_void) -> Option<PathBuf> {
    // SAFETY: an all-zero Dl_info is a valid value for dladdr to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(name.to_string_lossy().into_owned()))
}

/// Loads `built` and binds every box of its signatures.
pub fn load_library(built: &BuiltLibrary) -> Result<CBoxes, C4SNetError> {
    let path = built.path.clone();
    let load_err = |message: String| C4SNetError::Load {
        path: path.clone(),
        message,
    };
    // SAFETY: loading runs the library's initialisers; the library is our shim, the
    // generated wrappers and the user's box code, which is trusted like any box code.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(&path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| load_err(e.to_string()))?;
    let lib: libloading::Library = lib.into();
    type InstallFn = unsafe extern "C" fn(*const abi::Api) -> c_int;
    // SAFETY: `snet_c4snet_install` is defined by the shim with this signature.
    let install = unsafe { lib.get::<InstallFn>(b"snet_c4snet_install\0") }
        .map_err(|e| load_err(e.to_string()))?;
    // SAFETY: API is a 'static table matching `snet_c4snet_api`; the shim copies it.
    if unsafe { install(&abi::API) } != 0 {
        return Err(load_err(
            "the library's C4SNet shim is of another version".into(),
        ));
    }
    // SAFETY: the generated file defines these two objects with these types.
    let (boxes, nboxes) = unsafe {
        let b = lib
            .get::<*const CBoxDesc>(b"snet_c4snet_boxes\0")
            .map_err(|e| load_err(e.to_string()))?;
        let n = lib
            .get::<*const c_int>(b"snet_c4snet_nboxes\0")
            .map_err(|e| load_err(e.to_string()))?;
        (*b, **n)
    };
    let descs: &[CBoxDesc] = if nboxes <= 0 {
        &[]
    } else {
        // SAFETY: the generated table has `nboxes` entries and lives as long as `lib`,
        // which outlives this borrow (it is moved into an Arc below and kept by every box).
        unsafe { std::slice::from_raw_parts(boxes, nboxes as usize) }
    };
    let loaded = Arc::new(LoadedLibrary {
        _lib: lib,
        path: path.clone(),
        node: Arc::default(),
    });
    let mut table = BoxTable::new();
    for sig in &built.sigs {
        let b = bind(sig, descs, built, &loaded)?;
        table.insert(sig.name.clone(), Arc::new(b));
    }
    Ok(CBoxes {
        table,
        path,
        warnings: built.warnings.clone(),
        compiler_runs: built.compiler_runs,
        built: built.clone(),
        lib: loaded,
    })
}

fn bind(
    sig: &BoxSig,
    descs: &[CBoxDesc],
    built: &BuiltLibrary,
    loaded: &Arc<LoadedLibrary>,
) -> Result<CBox, C4SNetError> {
    let mismatch = |message: &str| C4SNetError::SignatureMismatch {
        name: sig.name.clone(),
        message: message.to_owned(),
    };
    let desc = descs
        .iter()
        .find(|d| {
            // SAFETY: every generated entry has a NUL-terminated name.
            !d.name.is_null() && unsafe { CStr::from_ptr(d.name) }.to_bytes() == sig.name.as_bytes()
        })
        .ok_or_else(|| mismatch("the box is not in the library's table"))?;
    let inputs = wrapgen::input_kinds(sig);
    if !same_kinds(kinds_slice(desc.input_kinds, desc.ninputs), &inputs)
        || desc.ninputs as usize != inputs.len()
    {
        return Err(mismatch("input labels differ"));
    }
    let outputs = wrapgen::output_kinds(sig);
    if desc.nvariants as usize != outputs.len() {
        return Err(mismatch("number of output variants differs"));
    }
    let cvars: &[CVariant] = if outputs.is_empty() {
        &[]
    } else {
        // SAFETY: the table stores `nvariants` variants (just compared).
        unsafe { std::slice::from_raw_parts(desc.variants, outputs.len()) }
    };
    for (cv, rv) in cvars.iter().zip(&outputs) {
        if cv.nlabels as usize != rv.len() || !same_kinds(kinds_slice(cv.kinds, cv.nlabels), rv) {
            return Err(mismatch("output variant labels differ"));
        }
    }
    let call = desc.call.ok_or_else(|| mismatch("no wrapper"))?;
    let Some(user_fn) = desc.user_fn else {
        return Err(C4SNetError::MissingSymbol {
            name: sig.name.clone(),
            searched: built.searched.clone(),
            found_elsewhere: None,
            closest: closest_function(&sig.name, &built.searched),
            defined: box_like_functions(&built.searched),
        });
    };
    // The function must be box code: in the library itself or a user's shared object.
    if let Some(file) = defining_file(user_fn as *const std::ffi::c_void) {
        let ours = canonical_eq(&file, &loaded.path)
            || built.shared_deps.iter().any(|d| canonical_eq(&file, d));
        if !ours {
            return Err(C4SNetError::MissingSymbol {
                name: sig.name.clone(),
                searched: built.searched.clone(),
                found_elsewhere: Some(file),
                closest: closest_function(&sig.name, &built.searched),
                defined: box_like_functions(&built.searched),
            });
        }
    }
    Ok(CBox {
        name: sig.name.clone().into_boxed_str(),
        desc: std::ptr::from_ref(desc),
        call,
        info: CallInfo {
            prototype: format!("{};", wrapgen::c_prototype(sig)).into_boxed_str(),
            node: loaded.node.clone(),
            labels: sig
                .input
                .iter()
                .flatten()
                .map(|l| l.to_string().into_boxed_str())
                .collect(),
        },
        inputs,
        outputs,
        _lib: Arc::clone(loaded),
    })
}

/// The name closest to `name` (a few edits at most, [`snet_core::label::closest`]) among
/// the identifiers followed by `(` in the C sources and headers of `files`: the function
/// a box name misspells. Object files and libraries are not looked into.
fn closest_function(name: &str, files: &[PathBuf]) -> Option<String> {
    let names = source_names(files);
    snet_core::label::closest(name, names.iter().map(|(n, _)| n.as_str())).map(str::to_owned)
}

/// The functions of the C sources and headers of `files` whose parameter list starts
/// with `void *` (a box function takes its handle first, spec §12.3), at most 8, C4SNet's
/// own names left out: what a user whose box name matches no function is told is there.
fn box_like_functions(files: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = source_names(files)
        .into_iter()
        .filter(|(n, box_like)| *box_like && !n.starts_with("C4SNet") && !n.starts_with("snet_"))
        .map(|(n, _)| n)
        .collect();
    names.truncate(8);
    names
}

/// The identifiers followed by `(` in the C sources and headers of `files` (object
/// files and libraries are not looked into), each once, with whether the parenthesis
/// opens with `void *` at any of its occurrences (a definition or declaration).
fn source_names(files: &[PathBuf]) -> Vec<(String, bool)> {
    let mut names: Vec<(String, bool)> = Vec::new();
    for f in files {
        if !f.extension().is_some_and(|e| e == "c" || e == "h") {
            continue;
        }
        let Ok(text) = std::fs::read(f) else {
            continue;
        };
        for (n, box_like) in named_calls(&text) {
            match names.iter_mut().find(|(m, _)| *m == n) {
                Some((_, b)) => *b |= box_like,
                None => names.push((n, box_like)),
            }
        }
    }
    names
}

/// The identifiers of C source `text` followed (after blanks) by `(`, each with whether
/// the parenthesis opens with `void *` (a box function's handle parameter).
fn named_calls(text: &[u8]) -> Vec<(String, bool)> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if ident(text[i]) && (i == 0 || !ident(text[i - 1])) {
            let start = i;
            while i < text.len() && ident(text[i]) {
                i += 1;
            }
            let mut j = i;
            while j < text.len() && text[j].is_ascii_whitespace() {
                j += 1;
            }
            let word = String::from_utf8_lossy(&text[start..i]);
            const KEYWORDS: [&str; 8] = [
                "if", "while", "for", "switch", "return", "sizeof", "defined", "_Alignof",
            ];
            if j < text.len()
                && text[j] == b'('
                && !text[start].is_ascii_digit()
                && !KEYWORDS.contains(&&*word)
            {
                let rest = &text[j + 1..];
                let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
                let box_like = rest.strip_prefix(b"void").is_some_and(|r| {
                    let r = &r[r.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
                    r.first() == Some(&b'*')
                });
                out.push((word.into_owned(), box_like));
            }
        } else {
            i += 1;
        }
    }
    out
}
