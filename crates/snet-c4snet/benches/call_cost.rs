//! Cost of one C box call (wrapper, C4SNetOut decoding, record values) against the same
//! box written in Rust, measured in one run through the same `BoxFn` interface.
//!
//! Two boxes, each in C and in Rust:
//! * `pass ((x, <t>) -> (x, <t>))` re-emits its field and `t + 1`;
//! * `make ((x, <t>) -> (y, <t>))` reads the int, creates a new int object, frees `x`.
//!
//! Prints the build time (cold and cached), then ns/call (minimum and median of several
//! runs) and the extra cost of C per call.
//! Run: `cargo bench -p snet-c4snet --bench call_cost`.

use snet_c4snet::{load_boxes, BuildOptions};
use snet_core::{Arg, BoxFailure, BoxFn, BoxSig, Emitter, Label, Value};
use std::hint::black_box;
use std::time::Instant;

const SOURCE: &str = r#"
#include <C4SNet.h>

void *pass(void *hnd, c4snet_data_t *x, int t)
{
    C4SNetOut(hnd, 1, x, t + 1);
    return hnd;
}

void *make(void *hnd, c4snet_data_t *x, int t)
{
    int v = *(int *)C4SNetGetData(x) + 1;
    C4SNetFree(x);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_int, 1, &v), t);
    return hnd;
}
"#;

/// Counts emissions and drops the values, as a cheap downstream.
struct Sink(u64);

impl Emitter for Sink {
    fn emit(&mut self, variant: usize, values: snet_core::Args) -> Result<(), BoxFailure> {
        self.0 += variant as u64 + values.len() as u64;
        drop(black_box(values));
        Ok(())
    }
}

fn rust_pass(args: snet_core::Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
    let mut it = args.into_iter();
    let (Some(x), Some(Arg::Tag(t))) = (it.next(), it.next()) else {
        return Err(BoxFailure("bad args".into()));
    };
    out.emit(1, snet_core::args![x, Arg::Tag(t + 1)])
}

fn rust_make(args: snet_core::Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
    let mut it = args.into_iter();
    let (Some(Arg::Field(Some(x))), Some(Arg::Tag(t))) = (it.next(), it.next()) else {
        return Err(BoxFailure("bad args".into()));
    };
    let v = x.as_i32().unwrap_or(0) + 1;
    drop(x);
    out.emit(
        1,
        snet_core::args![Arg::Field(Some(Value::int(v))), Arg::Tag(t)],
    )
}

/// ns per call of `f` over one run of `n` calls.
fn measure(f: &dyn BoxFn, x: &Value, n: u32) -> f64 {
    let mut sink = Sink(0);
    let start = Instant::now();
    for i in 0..n {
        let args = snet_core::args![Arg::Field(Some(x.clone())), Arg::Tag(i as i32)];
        f.invoke(args, &mut sink).expect("box call");
    }
    let t = start.elapsed().as_nanos() as f64 / f64::from(n);
    black_box(sink.0);
    t
}

/// (minimum, median) of `xs`.
fn min_median(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[0], xs[xs.len() / 2])
}

fn main() {
    let dir = std::env::temp_dir().join(format!("snet-c4snet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let src = dir.join("boxes.c");
    std::fs::write(&src, SOURCE).expect("write source");
    let sig = |name: &str, out: &str| BoxSig {
        name: name.to_owned(),
        input: Some(vec![Label::field("x"), Label::tag("t")]),
        outputs: vec![vec![Label::field(out), Label::tag("t")]],
        passthrough: Vec::new(),
    };
    let opts = BuildOptions {
        cache_dir: Some(dir.join("cache")),
        ..BuildOptions::default()
    };
    let sigs = [sig("pass", "x"), sig("make", "y")];
    let t0 = Instant::now();
    let cold =
        load_boxes(&sigs, std::slice::from_ref(&src), &opts).unwrap_or_else(|e| panic!("{e}"));
    let t1 = Instant::now();
    let boxes = load_boxes(&sigs, &[src], &opts).unwrap_or_else(|e| panic!("{e}"));
    let t2 = Instant::now();
    println!(
        "build: cold {:.0} ms ({} compiler runs), cached {:.2} ms ({} compiler runs)",
        (t1 - t0).as_secs_f64() * 1e3,
        cold.compiler_runs(),
        (t2 - t1).as_secs_f64() * 1e3,
        boxes.compiler_runs()
    );
    drop(cold);
    let c_pass = boxes.table().get("pass").expect("pass").clone();
    let c_make = boxes.table().get("make").expect("make").clone();

    let n = 200_000;
    let runs = 41;
    let x = Value::int(1);
    println!(
        "C box call cost vs the same box in Rust ({runs} alternating runs of {n} calls; \
         min and median ns/call)"
    );
    // `SNET_BENCH_ONLY=c|rust SNET_BENCH_BOX=pass|make SNET_BENCH_CALLS=N` runs one box on
    // one side only, for counting instructions (e.g. `valgrind --tool=callgrind`), which
    // measures the work independently of machine load.
    if let Ok(only) = std::env::var("SNET_BENCH_ONLY") {
        let which = std::env::var("SNET_BENCH_BOX").unwrap_or_else(|_| "pass".into());
        let calls = std::env::var("SNET_BENCH_CALLS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(n);
        let f: &dyn BoxFn = match (only.as_str(), which.as_str()) {
            ("c", "pass") => &*c_pass,
            ("c", _) => &*c_make,
            (_, "pass") => &rust_pass,
            _ => &rust_make,
        };
        let t = measure(f, &x, calls);
        println!("{only} {which}: {t:.1} ns/call over {calls} calls");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // Warm up caches and the allocator.
    measure(&*c_pass, &x, n);
    measure(&rust_pass, &x, n);
    for (name, c, r) in [
        ("pass (re-emit field)", &*c_pass, &rust_pass as &dyn BoxFn),
        ("make (new int object)", &*c_make, &rust_make as &dyn BoxFn),
    ] {
        // Alternate C and Rust runs so that changes in machine load hit both alike.
        let mut cs = Vec::with_capacity(runs);
        let mut rs = Vec::with_capacity(runs);
        for _ in 0..runs {
            cs.push(measure(c, &x, n));
            rs.push(measure(r, &x, n));
        }
        let ((cmin, cmed), (rmin, rmed)) = (min_median(cs), min_median(rs));
        println!(
            "{name:22} C min {cmin:6.1} med {cmed:6.1} | Rust min {rmin:6.1} med {rmed:6.1} \
             | extra min {:+6.1} med {:+6.1} ns/call",
            cmin - rmin,
            cmed - rmed
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
