//! Heap allocations per box firing on the record path (issue 26): a counting global
//! allocator around the system one, the `pipe` (10 identity boxes) and `deep` (a star
//! whose box replaces its scalar field) benchmarks of BENCHMARKS.md §1 with Rust boxes
//! and with the same boxes in C (C4SNet), on every engine at one worker. Counts only
//! what happens during the run (the input records are made before), after a warm-up
//! run. Prints one line per configuration; `cargo bench -p snet --bench allocs`.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, RunOptions, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The system allocator, counting allocations (reallocations included).
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to the system allocator with its own arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: forwarded as is (the caller's contract).
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: forwarded as is.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PIPE_C: &str = include_str!("../../../bench/programs/pipe/id.c");
const DEEP_C: &str = include_str!("../../../bench/programs/deep/foo.c");

fn bind_c(prog: &mut Program, file: &str, source: &str) {
    let dir = std::env::temp_dir().join(format!("snet-allocs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let path = dir.join(file);
    std::fs::write(&path, source).expect("box source written");
    let sigs = prog.net().boxes.clone();
    let boxes = snet_c4snet::load_boxes(&sigs, &[path], &snet_c4snet::BuildOptions::default())
        .expect("C boxes compile (needs a C compiler)");
    prog.bind_table(&boxes.into_table());
    let _ = std::fs::remove_dir_all(&dir);
}

/// (name, program, input) of the two benchmarks, Rust or C boxes.
fn benches(c: bool) -> Vec<(String, Program, Vec<Record>)> {
    let lang = if c { "C" } else { "Rust" };
    let src = format!(
        "net stage {{ box id((A) -> (A)); }} connect id; net pipe connect {};",
        ["stage"; 10].join(" .. ")
    );
    let mut pipe = Program::from_source("pipe.snet", &src).expect("pipe compiles");
    if c {
        bind_c(&mut pipe, "id.c", PIPE_C);
    } else {
        pipe.bind("id", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            let v = i.field("A").cloned().expect("field A");
            o.emit(1, [Arg::field(v)])
        })
        .expect("id binds");
    }
    let pipe_in = (0..20_000)
        .map(|i| Record::new().with_field("A", Value::int(i)))
        .collect();
    let mut deep = Program::from_source(
        "deep.snet",
        "net deep { box foo((A) -> (A) | (B)); } connect foo*{B};",
    )
    .expect("deep compiles");
    if c {
        bind_c(&mut deep, "foo.c", DEEP_C);
    } else {
        deep.bind("foo", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
            let a = i.int("A").unwrap_or(0);
            if a > 0 {
                o.emit(1, [Arg::int(a - 1)])
            } else {
                o.emit(2, [Arg::int(0)])
            }
        })
        .expect("foo binds");
    }
    let deep_in = (0..200)
        .map(|i| Record::new().with_field("A", Value::int(i % 100)))
        .collect();
    vec![
        (format!("pipe 20000 x 10, {lang} boxes"), pipe, pipe_in),
        (
            format!("deep 100 (200 records), {lang} boxes"),
            deep,
            deep_in,
        ),
    ]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!(
        "{:<36} {:<8} {:>10} {:>12} {:>10}",
        "benchmark", "engine", "firings", "allocations", "per firing"
    );
    for c in [false, true] {
        for (name, prog, input) in benches(c) {
            for engine in [
                EngineKind::Seq,
                EngineKind::Front,
                EngineKind::Lpel,
                EngineKind::Threads,
            ] {
                let run = |count: bool| {
                    let mut src = input.clone().into_iter().fuse();
                    let mut out = Vec::with_capacity(input.len());
                    let before = ALLOCS.load(Relaxed);
                    let st = prog
                        .run(engine, &mut src, &mut out, &RunOptions::new(1))
                        .unwrap_or_else(|e| panic!("{name} on {engine:?}: {e}"));
                    let n = ALLOCS.load(Relaxed) - before;
                    assert_eq!(out.len(), input.len(), "{name} on {engine:?}");
                    (count.then_some(n), st.box_calls)
                };
                run(false);
                let (n, calls) = run(true);
                let n = n.unwrap_or(0);
                println!(
                    "{name:<36} {:<8} {calls:>10} {n:>12} {:>10.3}",
                    format!("{engine:?}").to_lowercase(),
                    n as f64 / calls.max(1) as f64
                );
            }
        }
    }
}
