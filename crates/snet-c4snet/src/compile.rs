//! Compiling box sources and linking the box library with the system C compiler, with
//! a content-hash cache so that a second run compiles nothing.
//!
//! Every `.c` source is compiled as the compiler's default dialect with `-O2 -fPIC
//! -Wreturn-type` (a box that ends without `return hnd;` gets the compiler's warning at
//! its line; GCC gives it only under `-Wall`), the shipped include directory and the
//! user's `-I` directories, then the user's flags; warnings are collected and returned,
//! never turned into errors (spec §12.1). Flags that keep newer compilers from rejecting
//! old code (`-Wno-error=implicit-function-declaration` and friends) are added when the
//! compiler knows them (probed once per compiler and cached). The generated wrappers and
//! the shim are compiled the same way, and everything is linked into one shared object
//! with `-lm` and `-Wl,-Bsymbolic` (so the box code's calls to `C4SNetOut` and to its own
//! functions bind inside the object).

use crate::cache::{self, Cache, Hasher};
use crate::error::C4SNetError;
use crate::wrapgen;
use snet_core::BoxSig;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// Options for building C boxes (the CLI's `-I`, `--cflags`, `-l`).
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Extra include directories (`-I DIR`), searched after the shipped headers.
    pub include_dirs: Vec<PathBuf>,
    /// Extra compiler flags, passed when compiling and when linking (split already; see
    /// [`split_flags`]).
    pub cflags: Vec<String>,
    /// Extra libraries to link (`-l LIB`, given without the `-l`).
    pub libs: Vec<String>,
    /// The cache root; `None` = `$SNET_CACHE_DIR`, `$XDG_CACHE_HOME/snet` or
    /// `~/.cache/snet`.
    pub cache_dir: Option<PathBuf>,
    /// The C compiler; `None` = `$CC` if set, else `cc`.
    pub compiler: Option<OsString>,
}

/// A linked box library, ready to load.
#[derive(Debug, Clone)]
pub struct BuiltLibrary {
    /// The shared object (in the cache).
    pub path: PathBuf,
    /// Compiler and linker warnings, one entry per source that produced any (replayed
    /// from the cache on a hit).
    pub warnings: Vec<String>,
    /// Number of compiler or linker runs this build needed (0 when everything was
    /// cached).
    pub compiler_runs: usize,
    /// The user's files, for "no symbol" messages.
    pub(crate) searched: Vec<PathBuf>,
    /// The user's shared objects (canonical paths), which may define box functions.
    pub(crate) shared_deps: Vec<PathBuf>,
    /// The signatures the wrappers were generated for.
    pub(crate) sigs: Vec<BoxSig>,
}

/// Splits a `--cflags` string into flags at whitespace, honouring single and double
/// quotes and backslash escapes as a POSIX shell would for plain words.
pub fn split_flags(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                if !matches!(n, '"' | '\\' | '$' | '`') {
                                    cur.push('\\');
                                }
                                cur.push(n);
                            }
                        }
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Kinds of user-supplied box files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    C,
    /// A header passed along with the sources (`snet run prog.snet boxes/*`): not
    /// compiled itself; its directory is searched for `#include`s.
    Header,
    Object,
    Archive,
    Shared,
}

fn source_kind(path: &Path) -> Option<SourceKind> {
    let name = path.file_name()?.to_str()?;
    let ext = path.extension()?.to_str()?;
    match ext {
        "c" => Some(SourceKind::C),
        "h" => Some(SourceKind::Header),
        "o" => Some(SourceKind::Object),
        "a" => Some(SourceKind::Archive),
        "so" => Some(SourceKind::Shared),
        // Versioned shared objects: libfoo.so.1.2
        _ if name.contains(".so.") => Some(SourceKind::Shared),
        _ => None,
    }
}

/// The compiler command and a string identifying its binary (path, size, mtime).
#[derive(Debug, Clone)]
struct Compiler {
    cmd: OsString,
    identity: String,
}

impl Compiler {
    fn find(opts: &BuildOptions) -> Compiler {
        let cmd = opts
            .compiler
            .clone()
            .or_else(|| std::env::var_os("CC").filter(|c| !c.is_empty()))
            .unwrap_or_else(|| OsString::from("cc"));
        let resolved = resolve_in_path(Path::new(&cmd));
        let identity = match resolved.as_deref().map(std::fs::metadata) {
            Some(Ok(m)) => {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!(
                    "{}|{}|{mtime}",
                    resolved.as_deref().unwrap_or(Path::new("")).display(),
                    m.len()
                )
            }
            _ => cmd.to_string_lossy().into_owned(),
        };
        Compiler { cmd, identity }
    }

    fn command(&self) -> Command {
        Command::new(&self.cmd)
    }

    fn run(&self, cmd: &mut Command) -> Result<Output, C4SNetError> {
        cmd.output()
            .map_err(|source| C4SNetError::CompilerNotFound {
                compiler: self.cmd.to_string_lossy().into_owned(),
                source,
            })
    }
}

/// The canonical path of an executable named by `cmd` (searched in `PATH` if it has no
/// directory part).
fn resolve_in_path(cmd: &Path) -> Option<PathBuf> {
    if cmd.components().count() > 1 {
        return std::fs::canonicalize(cmd).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}

/// Flags that let old box code build (spec §12.1): warning-to-error downgrades, and
/// `-fcommon`, under which a tentative definition (`int counter;` in a header included
/// by several box files) is one shared variable, as it was by default before GCC 10 and
/// clang 11 (without it such sources fail to link with "multiple definition"). Kept only
/// if the compiler knows them.
const PERMISSIVE_FLAGS: &[&str] = &[
    "-fcommon",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=return-mismatch",
    "-Wno-error=declaration-missing-parameter-type",
    // clang 16+: old code passing function pointers of other types.
    "-Wno-error=incompatible-function-pointer-types",
];

/// The subset of [`PERMISSIVE_FLAGS`] the compiler accepts, probed once per compiler.
fn permissive_flags(
    cc: &Compiler,
    cache: &Cache,
    runs: &mut usize,
) -> Result<Vec<String>, C4SNetError> {
    let mut h = Hasher::new("probe");
    h.part(cc.identity.as_bytes());
    for f in PERMISSIVE_FLAGS {
        h.part(f.as_bytes());
    }
    let path = cache.probe(&h.finish()[..32]);
    if let Ok(text) = std::fs::read_to_string(&path) {
        return Ok(text.lines().map(str::to_owned).collect());
    }
    let src = cache.source_file("int snet_c4snet_probe;\n")?;
    let accepts = |flags: &[&str], runs: &mut usize| -> Result<bool, C4SNetError> {
        let obj = cache::temp_path(&cache.object("probe"));
        let mut cmd = cc.command();
        cmd.arg("-Werror")
            .args(flags)
            .arg("-c")
            .arg(&src)
            .arg("-o")
            .arg(&obj);
        *runs += 1;
        let ok = cc.run(&mut cmd)?.status.success();
        let _ = std::fs::remove_file(&obj);
        Ok(ok)
    };
    let kept: Vec<&str> = if accepts(PERMISSIVE_FLAGS, runs)? {
        PERMISSIVE_FLAGS.to_vec()
    } else {
        let mut kept = Vec::new();
        for f in PERMISSIVE_FLAGS {
            if accepts(&[f], runs)? {
                kept.push(*f);
            }
        }
        kept
    };
    let mut text = String::new();
    for f in &kept {
        text.push_str(f);
        text.push('\n');
    }
    cache::write_atomic(&path, text.as_bytes())?;
    Ok(kept.into_iter().map(str::to_owned).collect())
}

fn render_command(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains(char::is_whitespace) {
            s.push('\'');
            s.push_str(&a);
            s.push('\'');
        } else {
            s.push_str(&a);
        }
    }
    s
}

fn output_text(out: &Output) -> String {
    let mut s = String::from_utf8_lossy(&out.stderr).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stdout));
    s
}

/// Everything a compilation depends on besides the source itself.
#[derive(Debug)]
struct CompileSetup<'a> {
    cc: &'a Compiler,
    cache: &'a Cache,
    flags: Vec<OsString>,
    key_base: Hasher,
}

/// The result of compiling one source.
#[derive(Debug)]
struct Compiled {
    object: PathBuf,
    /// Content hash of the object file (the key alone misses header changes).
    digest: String,
    warnings: Option<String>,
    ran: bool,
}

impl CompileSetup<'_> {
    /// Compiles `src` (canonical path) or takes its object from the cache.
    fn compile(&self, src: &Path) -> Result<Compiled, C4SNetError> {
        let text = cache::read(src)?;
        let mut h = self.key_base.clone();
        h.part(src.as_os_str().as_encoded_bytes()).part(&text);
        let key = h.finish()[..40].to_owned();
        let (obj, deps, log) = (
            self.cache.object(&key),
            self.cache.deps(&key),
            self.cache.log(&key),
        );
        let read_log = |log: &Path| {
            std::fs::read_to_string(log)
                .ok()
                .filter(|w| !w.trim().is_empty())
        };
        if cache::manifest_matches(&deps) {
            if let Ok(bytes) = std::fs::read(&obj) {
                return Ok(Compiled {
                    object: obj,
                    digest: cache::hash_bytes(&bytes),
                    warnings: read_log(&log),
                    ran: false,
                });
            }
        }
        let tmp_obj = cache::temp_path(&obj);
        let tmp_dep = tmp_obj.with_extension("d");
        let mut cmd = self.cc.command();
        cmd.args(&self.flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&tmp_obj)
            .arg("-MD")
            .arg("-MF")
            .arg(&tmp_dep);
        let out = self.cc.run(&mut cmd)?;
        let diagnostics = output_text(&out);
        let dep_text = std::fs::read_to_string(&tmp_dep).unwrap_or_default();
        let _ = std::fs::remove_file(&tmp_dep);
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp_obj);
            return Err(C4SNetError::Compile {
                file: src.to_path_buf(),
                command: render_command(&cmd),
                output: diagnostics,
            });
        }
        cache::write_atomic(&log, diagnostics.as_bytes())?;
        let digest = cache::hash_bytes(&cache::read(&tmp_obj)?);
        cache::rename(&tmp_obj, &obj)?;
        // The manifest goes last: an entry without it is a miss.
        cache::write_manifest(&deps, &cache::parse_depfile(&dep_text))?;
        Ok(Compiled {
            object: obj,
            warnings: (!diagnostics.trim().is_empty()).then_some(diagnostics),
            digest,
            ran: true,
        })
    }
}

/// Compiles every source on up to `available_parallelism` threads, keeping input order.
fn compile_all(setup: &CompileSetup<'_>, srcs: &[PathBuf]) -> Result<Vec<Compiled>, C4SNetError> {
    let threads = snet_core::engine::cores().min(srcs.len()).max(1);
    if threads == 1 {
        // One source (or one core): no thread to start.
        return srcs.iter().map(|src| setup.compile(src)).collect();
    }
    let results: Mutex<Vec<Option<Result<Compiled, C4SNetError>>>> =
        Mutex::new((0..srcs.len()).map(|_| None).collect());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(src) = srcs.get(i) else { break };
                let r = setup.compile(src);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| unreachable!("every source is compiled")))
        .collect()
}

fn canonical(p: &Path) -> Result<PathBuf, C4SNetError> {
    std::fs::canonicalize(p).map_err(cache::io_err("read", p))
}

/// Checks names and removes duplicate signatures (keeping the first).
pub(crate) fn unique_sigs(sigs: &[BoxSig]) -> Result<Vec<BoxSig>, C4SNetError> {
    let mut out: Vec<BoxSig> = Vec::with_capacity(sigs.len());
    for s in sigs {
        wrapgen::check_box_name(&s.name)?;
        match out.iter().find(|o| o.name == s.name) {
            Some(o) if o == s => {}
            Some(_) => {
                return Err(C4SNetError::ConflictingSignatures {
                    name: s.name.clone(),
                })
            }
            None => out.push(s.clone()),
        }
    }
    Ok(out)
}

/// Compiles `sources` (`.c`, `.o`, `.a`, `.so` files) together with generated wrappers
/// for `sigs` into one shared object, reusing cached results.
pub fn build_library(
    sigs: &[BoxSig],
    sources: &[PathBuf],
    opts: &BuildOptions,
) -> Result<BuiltLibrary, C4SNetError> {
    let sigs = unique_sigs(sigs)?;
    let root = opts.cache_dir.clone().unwrap_or_else(cache::default_root);
    let cache = Cache::open(&root)?;
    let include = cache.include_dir()?;
    let cc = Compiler::find(opts);
    let mut runs = 0;

    let mut c_files = Vec::new();
    let mut link_inputs: Vec<(SourceKind, PathBuf)> = Vec::new();
    let mut searched = Vec::new();
    let mut shared_deps = Vec::new();
    let mut header_dirs: Vec<PathBuf> = Vec::new();
    for s in sources {
        let kind =
            source_kind(s).ok_or_else(|| C4SNetError::UnsupportedSource { path: s.clone() })?;
        let path = canonical(s)?;
        if kind == SourceKind::Header {
            if let Some(dir) = path.parent() {
                if !header_dirs.iter().any(|d| d == dir) {
                    header_dirs.push(dir.to_path_buf());
                }
            }
            continue;
        }
        searched.push(s.clone());
        match kind {
            SourceKind::C => c_files.push(path),
            SourceKind::Shared => {
                shared_deps.push(path.clone());
                link_inputs.push((kind, path));
            }
            _ => link_inputs.push((kind, path)),
        }
    }

    let permissive = permissive_flags(&cc, &cache, &mut runs)?;
    // -Wreturn-type: a box whose body ends without `return hnd;` returns whatever the
    // register holds, often the handle by chance (after a last C4SNetOut), so the
    // run-time check cannot be relied on to see it; GCC warns only under -Wall.
    let mut flags: Vec<OsString> = vec!["-O2".into(), "-fPIC".into(), "-Wreturn-type".into()];
    flags.push(format!("-I{}", include.display()).into());
    for d in &opts.include_dirs {
        let d = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        flags.push(format!("-I{}", d.display()).into());
    }
    for d in &header_dirs {
        flags.push(format!("-I{}", d.display()).into());
    }
    flags.extend(permissive.iter().map(OsString::from));
    flags.extend(opts.cflags.iter().map(OsString::from));
    let mut key_base = Hasher::new("compile");
    key_base.part(cc.identity.as_bytes());
    for f in &flags {
        key_base.part(f.as_encoded_bytes());
    }
    let setup = CompileSetup {
        cc: &cc,
        cache: &cache,
        flags,
        key_base,
    };

    // The shim and the generated wrappers are compiled like user sources.
    let shim = cache.source_file(cache::SHIM)?;
    let wrappers = cache.source_file(&wrapgen::generate(&sigs))?;
    let mut all = vec![shim, wrappers];
    all.extend(c_files.iter().cloned());
    let compiled = compile_all(&setup, &all)?;
    let mut warnings = Vec::new();
    let mut link_key = Hasher::new("link");
    link_key.part(cc.identity.as_bytes());
    for c in &compiled {
        runs += usize::from(c.ran);
        link_key.part(c.digest.as_bytes());
    }
    for (c, src) in compiled.iter().zip(&all).skip(2) {
        if let Some(w) = &c.warnings {
            warnings.push(format!("{}:\n{}", src.display(), w.trim_end()));
        }
    }
    for (kind, path) in &link_inputs {
        link_key
            .part(&[*kind as u8])
            .part(path.as_os_str().as_encoded_bytes())
            .part(&cache::read(path)?);
    }
    for f in &opts.cflags {
        link_key.part(f.as_bytes());
    }
    for l in &opts.libs {
        link_key.part(b"-l").part(l.as_bytes());
    }
    let lib = cache.library(&link_key.finish()[..40]);
    if !lib.exists() {
        let tmp = cache::temp_path(&lib);
        let mut cmd = cc.command();
        cmd.arg("-shared").arg("-fPIC").arg("-o").arg(&tmp);
        for c in &compiled {
            cmd.arg(&c.object);
        }
        for (kind, path) in &link_inputs {
            match kind {
                SourceKind::Archive => {
                    // Box functions are only weakly referenced, which does not pull
                    // archive members: take the whole archive.
                    cmd.arg("-Wl,--whole-archive")
                        .arg(path)
                        .arg("-Wl,--no-whole-archive");
                }
                SourceKind::Shared => {
                    // Only weak references lead to it: keep it even under --as-needed.
                    cmd.arg("-Wl,--push-state,--no-as-needed")
                        .arg(path)
                        .arg("-Wl,--pop-state");
                    if let Some(dir) = path.parent() {
                        cmd.arg(format!("-Wl,-rpath,{}", dir.display()));
                    }
                }
                _ => {
                    cmd.arg(path);
                }
            }
        }
        cmd.args(&opts.cflags);
        for l in &opts.libs {
            cmd.arg(format!("-l{l}"));
        }
        cmd.arg("-lm").arg("-Wl,-Bsymbolic");
        runs += 1;
        let out = cc.run(&mut cmd)?;
        let diagnostics = output_text(&out);
        if !out.status.success() {
            let _ = std::fs::remove_file(&tmp);
            return Err(C4SNetError::Link {
                command: render_command(&cmd),
                output: diagnostics,
            });
        }
        if !diagnostics.trim().is_empty() {
            warnings.push(format!("linking:\n{}", diagnostics.trim_end()));
        }
        cache::rename(&tmp, &lib)?;
    }
    Ok(BuiltLibrary {
        path: lib,
        warnings,
        compiler_runs: runs,
        searched,
        shared_deps,
        sigs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_split_like_a_shell() {
        assert_eq!(
            split_flags(r#"-O3  -DNAME="a b" '-DX=1 2' -I\ dir"#),
            vec!["-O3", "-DNAME=a b", "-DX=1 2", "-I dir"]
        );
        assert!(split_flags("   ").is_empty());
        assert_eq!(split_flags("''"), vec![""]);
    }

    #[test]
    fn source_kinds_by_extension() {
        assert_eq!(source_kind(Path::new("a/b.c")), Some(SourceKind::C));
        assert_eq!(source_kind(Path::new("a/b.h")), Some(SourceKind::Header));
        assert_eq!(source_kind(Path::new("x.o")), Some(SourceKind::Object));
        assert_eq!(source_kind(Path::new("libx.a")), Some(SourceKind::Archive));
        assert_eq!(source_kind(Path::new("libx.so")), Some(SourceKind::Shared));
        assert_eq!(
            source_kind(Path::new("libx.so.1")),
            Some(SourceKind::Shared)
        );
        assert_eq!(source_kind(Path::new("x.cpp")), None);
        assert_eq!(source_kind(Path::new("Makefile")), None);
    }
}
