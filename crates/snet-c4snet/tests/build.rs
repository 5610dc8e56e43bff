//! Building box libraries: the object cache, classic multi-file box sources, prebuilt
//! objects, archives and shared objects, include directories, flags and libraries.

mod common;

use common::{field, options, run, scratch, sig, write_sources};
use snet_c4snet::{load_boxes, BuildOptions};
use snet_core::{Arg, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const TWICE_C: &str = r#"#include "C4SNet.h"
#include "twice.h"

void *twice(void *hnd, c4snet_data_t *x)
{
    int v = *(int *)C4SNetGetData(x);
    C4SNetFree(x);
    v = v * FACTOR;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v));
    return hnd;
}
"#;

fn twice_sig() -> snet_core::BoxSig {
    sig("twice", Some("x"), &["y"])
}

fn run_twice(boxes: &snet_c4snet::CBoxes, x: i32) -> i32 {
    let (r, rec) = run(boxes, "twice", vec![Arg::Field(Some(Value::int(x)))]);
    r.unwrap();
    field(&rec.emitted[0].1[0]).as_i32().unwrap()
}

#[test]
fn a_second_build_compiles_nothing_and_header_changes_recompile() {
    let dir = scratch("cache");
    let srcs = write_sources(
        &dir,
        &[
            ("twice.c", TWICE_C),
            (
                "twice.h",
                "#define FACTOR 2\nvoid *twice(void *hnd, c4snet_data_t *x);\n",
            ),
        ],
    );
    let opts = options(&dir);
    let first = load_boxes(&[twice_sig()], &srcs, &opts).unwrap();
    assert!(
        first.compiler_runs() >= 4,
        "probe, shim, wrappers, box, link"
    );
    assert_eq!(run_twice(&first, 21), 42);

    let second = load_boxes(&[twice_sig()], &srcs, &opts).unwrap();
    assert_eq!(second.compiler_runs(), 0);
    assert_eq!(second.library_path(), first.library_path());
    assert_eq!(run_twice(&second, 5), 10);

    // A header the box includes changes: only that source recompiles, then relinks.
    std::fs::write(
        dir.join("twice.h"),
        "#define FACTOR 3\nvoid *twice(void *hnd, c4snet_data_t *x);\n",
    )
    .unwrap();
    let third = load_boxes(&[twice_sig()], &srcs, &opts).unwrap();
    assert_eq!(third.compiler_runs(), 2);
    assert_ne!(third.library_path(), first.library_path());
    assert_eq!(run_twice(&third, 5), 15);
    // The old library is still loaded and still works.
    assert_eq!(run_twice(&first, 1), 2);

    // Label names do not reach C: renaming one reuses everything.
    let renamed = sig("twice", Some("x"), &["z"]);
    let fourth = load_boxes(&[renamed], &srcs, &opts).unwrap();
    assert_eq!(fourth.compiler_runs(), 0);
    // Another box set regenerates the wrappers only (wrappers + link).
    let extra = sig("other", None, &[]);
    let fifth = load_boxes(&[twice_sig(), extra.clone()], &srcs, &opts);
    assert!(fifth.is_err(), "no function `other`");
    std::fs::write(
        dir.join("other.c"),
        "void *other(void *hnd) { return hnd; }\n",
    )
    .unwrap();
    let mut srcs2 = srcs.clone();
    srcs2.push(dir.join("other.c"));
    let sixth = load_boxes(&[twice_sig(), extra], &srcs2, &opts).unwrap();
    assert_eq!(sixth.compiler_runs(), 2, "other.c and the link");
}

#[test]
fn warnings_are_replayed_from_the_cache() {
    let dir = scratch("warn");
    let src = "#include <C4SNet.h>\nvoid *w(void *hnd) { int unused_var; return hnd; }\n";
    let srcs = write_sources(&dir, &[("w.c", src)]);
    let mut opts = options(&dir);
    opts.cflags = vec!["-Wall".into()];
    let a = load_boxes(&[sig("w", None, &[])], &srcs, &opts).unwrap();
    let b = load_boxes(&[sig("w", None, &[])], &srcs, &opts).unwrap();
    assert_eq!(b.compiler_runs(), 0);
    assert!(a.warnings().join("").contains("unused_var"));
    assert_eq!(a.warnings(), b.warnings());
}

/// A program laid out like the classic examples: a header per box with its prototype,
/// several .c files, `<C4SNet.h>` and `"C4SNet.h"`, `<bool.h>`, `"memfun.h"`,
/// `extern int node_location`.
const CLASSIC: &[(&str, &str)] = &[
    (
        "split.h",
        "#ifndef SPLIT_H\n#define SPLIT_H\n#include <C4SNet.h>\n\
         void *split(void *hnd, c4snet_data_t *a, int n);\n#endif\n",
    ),
    (
        "merge.h",
        "#ifndef MERGE_H\n#define MERGE_H\n#include \"C4SNet.h\"\n\
         void *merge(void *hnd, c4snet_data_t *a, c4snet_data_t *b);\n#endif\n",
    ),
    (
        "split.c",
        r#"#include <stdio.h>
#include <bool.h>
#include "memfun.h"
#include "split.h"

extern int node_location;

void *split(void *hnd, c4snet_data_t *a, int n)
{
    bool first = true;
    int *buf = SNetMemAlloc(sizeof(int));
    *buf = node_location;
    for (int i = 0; i < n; i++) {
        C4SNetOut(hnd, 1, C4SNetShallowCopy(a), i, first ? 1 : *buf);
        first = false;
    }
    SNetMemFree(buf);
    C4SNetFree(a);
    return hnd;
}
"#,
    ),
    (
        "merge.c",
        r#"#include "merge.h"
#include "util.h"

void *merge(void *hnd, c4snet_data_t *a, c4snet_data_t *b)
{
    int s = sum_ints(a) + sum_ints(b);
    C4SNetFree(a);
    C4SNetFree(b);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &s));
    return hnd;
}
"#,
    ),
    (
        "util.h",
        "#include <C4SNet.h>\nint sum_ints(c4snet_data_t *d);\n",
    ),
    (
        "util.c",
        r#"#include "util.h"

int sum_ints(c4snet_data_t *d)
{
    int s = 0;
    int *p = C4SNetGetData(d);
    for (size_t i = 0; i < C4SNetArraySize(d); i++) {
        s += p[i];
    }
    return s;
}
"#,
    ),
];

fn classic_sigs() -> Vec<snet_core::BoxSig> {
    vec![
        sig("split", Some("a, <n>"), &["a, <i>, <first>"]),
        sig("merge", Some("a, b"), &["s"]),
    ]
}

fn check_classic(boxes: &snet_c4snet::CBoxes) {
    let a = Value::int_array(&[1, 2, 3]);
    let (r, rec) = run(
        boxes,
        "split",
        vec![Arg::Field(Some(a.clone())), Arg::Tag(3)],
    );
    r.unwrap();
    assert_eq!(rec.emitted.len(), 3);
    let tags: Vec<(Arg, Arg)> = rec
        .emitted
        .iter()
        .map(|(_, v)| (v[1].clone(), v[2].clone()))
        .collect();
    assert_eq!(
        tags,
        vec![
            (Arg::Tag(0), Arg::Tag(1)),
            (Arg::Tag(1), Arg::Tag(0)),
            (Arg::Tag(2), Arg::Tag(0))
        ]
    );
    drop(rec);
    assert_eq!(a.ref_count(), 1);
    let (r, rec) = run(
        boxes,
        "merge",
        vec![
            Arg::Field(Some(Value::int_array(&[1, 2, 3]))),
            Arg::Field(Some(Value::int(10))),
        ],
    );
    r.unwrap();
    assert_eq!(field(&rec.emitted[0].1[0]).as_i32(), Some(16));
}

#[test]
fn classic_multi_file_sources_build_unmodified() {
    let dir = scratch("classic");
    let srcs = write_sources(&dir, CLASSIC);
    assert_eq!(srcs.len(), 3);
    let boxes = load_boxes(&classic_sigs(), &srcs, &options(&dir)).unwrap();
    check_classic(&boxes);
}

/// Spec §12.1: `node_location` is provided for boxes that only declare it, but box code
/// written for the classic (non-MPI) runtime, which does not define it, may define it
/// itself, as a tentative or an initialised definition: both must still link, and the
/// box then sees its own value.
#[test]
fn boxes_may_define_node_location_themselves() {
    for (def, want) in [("int node_location;", 0), ("int node_location = 3;", 3)] {
        let dir = scratch("nodeloc");
        let src = format!(
            "#include <C4SNet.h>\n{def}\n\
             void *where(void *hnd)\n{{\n    C4SNetOut(hnd, 1, node_location);\n    return hnd;\n}}\n"
        );
        let srcs = write_sources(&dir, &[("where.c", &src)]);
        let boxes = load_boxes(&[sig("where", Some(""), &["<n>"])], &srcs, &options(&dir))
            .unwrap_or_else(|e| panic!("`{def}` does not build: {e}"));
        let (r, rec) = run(&boxes, "where", vec![]);
        r.unwrap();
        assert_eq!(common::tag(&rec.emitted[0].1[0]), want, "{def}");
    }
}

/// Spec §12.1 ("box sources are other people's C, often old"): a header with an
/// uninitialised global (`int counter;`, a tentative definition) included by two box
/// files was one shared variable with the C compilers of the classic runtime's time
/// (`-fcommon` was the default before GCC 10 and clang 11); it must still link, and both
/// boxes must see the same variable.
#[test]
fn a_tentative_definition_in_a_shared_header_links_as_one_variable() {
    let dir = scratch("common");
    let srcs = write_sources(
        &dir,
        &[
            ("counter.h", "int counter;\n"),
            (
                "first.c",
                "#include <C4SNet.h>\n#include \"counter.h\"\n\
                 void *first(void *hnd)\n{\n    counter += 1;\n    C4SNetOut(hnd, 1, counter);\n    return hnd;\n}\n",
            ),
            (
                "second.c",
                "#include <C4SNet.h>\n#include \"counter.h\"\n\
                 void *second(void *hnd)\n{\n    counter += 10;\n    C4SNetOut(hnd, 1, counter);\n    return hnd;\n}\n",
            ),
        ],
    );
    let sigs = [
        sig("first", Some(""), &["<n>"]),
        sig("second", Some(""), &["<n>"]),
    ];
    let boxes = load_boxes(&sigs, &srcs, &options(&dir))
        .unwrap_or_else(|e| panic!("two files sharing `int counter;` do not build: {e}"));
    let (r, rec) = run(&boxes, "first", vec![]);
    r.unwrap();
    assert_eq!(common::tag(&rec.emitted[0].1[0]), 1);
    let (r, rec) = run(&boxes, "second", vec![]);
    r.unwrap();
    assert_eq!(
        common::tag(&rec.emitted[0].1[0]),
        11,
        "one shared `counter`"
    );
}

/// Spec §12.1: box code from the classic runtime's time was compiled with GNU89 inline
/// semantics (GCC's default before GCC 5), under which a plain `inline` function in a
/// `.c` file is also an ordinary external function. Under today's C99 semantics it is
/// an inline definition only, and a call the compiler does not inline (here: a
/// recursive one) is left as an undefined symbol. Such sources must still load, and the
/// box must compute the right value.
#[test]
fn a_plain_inline_function_of_gnu89_code_still_loads() {
    let dir = scratch("gnu89inline");
    let srcs = write_sources(
        &dir,
        &[(
            "fib.c",
            "#include <C4SNet.h>\n\
             inline int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
             void *fibbox(void *hnd, int n)\n{\n    C4SNetOut(hnd, 1, fib(n));\n    return hnd;\n}\n",
        )],
    );
    let boxes = load_boxes(
        &[sig("fibbox", Some("<n>"), &["<f>"])],
        &srcs,
        &options(&dir),
    )
    .unwrap_or_else(|e| panic!("a plain `inline` function does not load: {e}"));
    let (r, rec) = run(&boxes, "fibbox", vec![Arg::Tag(20)]);
    r.unwrap();
    assert_eq!(common::tag(&rec.emitted[0].1[0]), 6765);
}

fn cc(dir: &Path, args: &[&str]) {
    let inc = snet_c4snet::source_include_dir();
    let st = Command::new("cc")
        .current_dir(dir)
        .arg(format!("-I{}", inc.display()))
        .args(args)
        .status()
        .unwrap();
    assert!(st.success(), "cc {args:?}");
}

#[test]
fn prebuilt_objects_archives_and_shared_objects() {
    let dir = scratch("prebuilt");
    write_sources(&dir, CLASSIC);
    cc(&dir, &["-fPIC", "-c", "split.c", "merge.c", "util.c"]);
    // .o files
    let objs: Vec<PathBuf> = ["split.o", "merge.o", "util.o"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let boxes = load_boxes(&classic_sigs(), &objs, &options(&dir)).unwrap();
    check_classic(&boxes);
    // a .a archive (boxes are only weakly referenced, so the whole archive is linked)
    let st = Command::new("ar")
        .current_dir(&dir)
        .args(["rcs", "libboxes.a", "split.o", "merge.o", "util.o"])
        .status()
        .unwrap();
    assert!(st.success());
    let boxes = load_boxes(&classic_sigs(), &[dir.join("libboxes.a")], &options(&dir)).unwrap();
    check_classic(&boxes);
    // a .so whose C4SNet references resolve against the generated library
    cc(
        &dir,
        &[
            "-shared",
            "-fPIC",
            "-o",
            "libboxes.so",
            "split.o",
            "merge.o",
            "util.o",
        ],
    );
    let boxes = load_boxes(&classic_sigs(), &[dir.join("libboxes.so")], &options(&dir)).unwrap();
    check_classic(&boxes);
}

#[test]
fn include_dirs_cflags_and_libraries() {
    let dir = scratch("flags");
    let inc = dir.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("scale.h"), "#define SCALE 7\n").unwrap();
    let src = r#"#include <C4SNet.h>
#include <math.h>
#include <pthread.h>
#include <scale.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void *root(void *hnd, c4snet_data_t *x)
{
    double v = *(double *)C4SNetGetData(x);
    C4SNetFree(x);
    pthread_mutex_lock(&lock);
    v = sqrt(v) * SCALE + OFFSET;
    pthread_mutex_unlock(&lock);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_double, 1, &v));
    return hnd;
}
"#;
    let srcs = write_sources(&dir, &[("root.c", src)]);
    let opts = BuildOptions {
        include_dirs: vec![inc],
        cflags: snet_c4snet::split_flags("-DOFFSET=0.5 -O1"),
        libs: vec!["pthread".into()],
        ..options(&dir)
    };
    let boxes = load_boxes(&[sig("root", Some("x"), &["y"])], &srcs, &opts).unwrap();
    let (r, rec) = run(&boxes, "root", vec![Arg::Field(Some(Value::double(16.0)))]);
    r.unwrap();
    assert_eq!(field(&rec.emitted[0].1[0]).get_f64(0), Some(28.5));
}

const CACHE_CHILD_ENV: &str = "SNET_C4SNET_CACHE_CHILD";

#[test]
#[ignore = "run as a child process by the_cache_directory_comes_from_the_environment"]
fn cache_child() {
    let dir = PathBuf::from(std::env::var(CACHE_CHILD_ENV).expect("run by the parent test"));
    let srcs = write_sources(&dir, &[("w.c", "void *w(void *hnd) { return hnd; }\n")]);
    // No cache_dir: the default, which $SNET_CACHE_DIR overrides.
    let boxes = load_boxes(&[sig("w", None, &[])], &srcs, &BuildOptions::default()).unwrap();
    println!("LIBRARY {}", boxes.library_path().display());
}

/// The test harness's name of this file's test `f`: `build::f` while the file is a
/// module of `tests/all.rs`, plain `f` in a test crate of its own (`--exact` needs it).
fn test_name(f: &str) -> String {
    module_path!()
        .split_once("::")
        .map_or(f.to_owned(), |(_, m)| format!("{m}::{f}"))
}

#[test]
fn the_cache_directory_comes_from_the_environment() {
    let dir = scratch("envcache");
    let cache = dir.join("from-env");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name("cache_child"),
            "--ignored",
            "--nocapture",
        ])
        .env(CACHE_CHILD_ENV, &dir)
        .env(snet_c4snet::CACHE_DIR_ENV, &cache)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = stdout
        .lines()
        .find_map(|l| l.strip_prefix("LIBRARY "))
        .expect("library path printed");
    assert!(Path::new(lib).starts_with(&cache), "{lib}");
    assert!(cache.join("c4snet").is_dir());
}

#[test]
fn a_missing_compiler_is_reported() {
    let dir = scratch("nocc");
    let srcs = write_sources(&dir, &[("w.c", "int x;\n")]);
    let opts = BuildOptions {
        compiler: Some("/nonexistent/bin/cc".into()),
        ..options(&dir)
    };
    let err = load_boxes(&[], &srcs, &opts).unwrap_err();
    assert!(
        matches!(err, snet_c4snet::C4SNetError::CompilerNotFound { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("/nonexistent/bin/cc"));
}
