//! One pool, two users: a Mandelbrot image rendered by an S-Net network whose single
//! `render` box forks each row's pixels with `snet_forkjoin::for_each` onto the FRONT
//! engine's own workers (`FrontOptions::forkjoin`).
//!
//! The network is one box instance, so the S-Net level offers no parallelism at all:
//! any speed-up at 2 workers comes from the box's forks, run by the worker that is
//! otherwise idle. The same program also runs on plain FRONT (no pool: the forks run
//! sequentially) for comparison. Every image is checked against a direct computation.
//!
//! Run: `cargo run --release -p snet --example mandel_forkjoin -- [WIDTH HEIGHT RUNS]`

use snet::{Arg, ArgExt, BoxInput, BoxOutput, Program, Record, Value};
use snet_core::{BoxFailure, Label, RunOptions};
use snet_front::{forkjoin, FrontEngine, FrontOptions};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

const PROGRAM: &str = r#"
net mandel {
    box render((<y>, <width>, <height>) -> (<y>, counts));
} connect render;
"#;

const MAX_ITER: i32 = 1000;

fn escape(cx: f64, cy: f64) -> i32 {
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < MAX_ITER && x * x + y * y <= 4.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        i += 1;
    }
    i
}

fn coords(x: i32, y: i32, w: i32, h: i32) -> (f64, f64) {
    (
        -2.2 + 3.2 * f64::from(x) / f64::from(w),
        -1.2 + 2.4 * f64::from(y) / f64::from(h),
    )
}

/// Row `y`, pixels split with `for_each` (in parallel on a pool worker, sequential
/// elsewhere).
fn row_forked(y: i32, w: i32, h: i32) -> Vec<i32> {
    let cells: Vec<AtomicI32> = (0..w).map(|_| AtomicI32::new(0)).collect();
    forkjoin::for_each_with_grain(0..w as usize, 16, &|x| {
        let (cx, cy) = coords(x as i32, y, w, h);
        cells[x].store(escape(cx, cy), Ordering::Relaxed);
    });
    cells.into_iter().map(AtomicI32::into_inner).collect()
}

fn row_direct(y: i32, w: i32, h: i32) -> Vec<i32> {
    (0..w)
        .map(|x| {
            let (cx, cy) = coords(x, y, w, h);
            escape(cx, cy)
        })
        .collect()
}

/// User + system CPU time of this process (from /proc; zero where unavailable).
fn cpu_time() -> Duration {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Duration::from_millis(f.iter().sum::<u64>() * 10)
}

struct Measure {
    wall: Duration,
    cpu: Duration,
}

fn run_once(
    prog: &Program,
    forkjoin: bool,
    workers: usize,
    w: i32,
    h: i32,
    expect: &[Vec<i32>],
) -> Result<Measure, Box<dyn std::error::Error>> {
    let engine = FrontEngine::new(FrontOptions {
        forkjoin,
        ..FrontOptions::default()
    });
    let input: Vec<Record> = (0..h)
        .map(|y| {
            Record::new()
                .with_tag("y", y)
                .with_tag("width", w)
                .with_tag("height", h)
        })
        .collect();
    let mut src = input.into_iter().fuse();
    let mut out: Vec<Record> = Vec::new();
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    prog.run_on(&engine, &mut src, &mut out, &RunOptions::new(workers))?;
    let wall = t0.elapsed();
    let cpu = cpu_time().saturating_sub(cpu0);
    if out.len() != h as usize {
        return Err(format!("{} rows out, expected {h}", out.len()).into());
    }
    for r in &out {
        let y = r.tag(Label::tag("y")).ok_or("output without <y>")?;
        let counts = r
            .field(Label::field("counts"))
            .and_then(|f| f.as_ref())
            .and_then(|v| v.to_i32_vec())
            .ok_or("output without counts")?;
        if counts != expect[y as usize] {
            return Err(format!("row {y} differs from the direct computation").into());
        }
    }
    Ok(Measure { wall, cpu })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<i32> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let (w, h, runs) = match args[..] {
        [w, h, r] => (w, h, r.max(1) as usize),
        [w, h] => (w, h, 5),
        _ => (4000, 200, 5),
    };

    let mut prog = Program::from_source("mandel.snet", PROGRAM)?;
    prog.bind("render", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let y = i.tag("y").ok_or_else(|| BoxFailure("no <y>".into()))?;
        let counts = row_forked(y, i.tag("width").unwrap_or(0), i.tag("height").unwrap_or(0));
        o.emit(1, vec![Arg::tag(y), Arg::field(Value::int_array(&counts))])
    })?;

    let t0 = Instant::now();
    let expect: Vec<Vec<i32>> = (0..h).map(|y| row_direct(y, w, h)).collect();
    let direct = t0.elapsed();
    let iters: i64 = expect.iter().flatten().map(|&c| i64::from(c)).sum();
    println!(
        "mandel_forkjoin: {w}x{h}, max {MAX_ITER} iterations ({iters} in total), one `render` \
         entity; {runs} runs each, medians; direct sequential loop {direct:.2?}"
    );

    // Configurations interleaved run by run, so that load from other processes on a
    // shared machine hits all of them alike.
    let configs = [(false, 1), (false, 2), (true, 1), (true, 2)];
    let mut walls = vec![Vec::new(); configs.len()];
    let mut cpus = vec![Vec::new(); configs.len()];
    for _ in 0..runs {
        for (k, &(fj, workers)) in configs.iter().enumerate() {
            let m = run_once(&prog, fj, workers, w, h, &expect)?;
            walls[k].push(m.wall);
            cpus[k].push(m.cpu);
        }
    }
    let mut results = Vec::new();
    for (k, &(fj, workers)) in configs.iter().enumerate() {
        let (wall, cpu) = (median(walls[k].clone()), median(cpus[k].clone()));
        println!(
            "  front{:<9} -w{workers}: wall {wall:>9.2?}  cpu {cpu:>9.2?}  (cpu/wall {:.2})",
            if fj { "+forkjoin" } else { "" },
            cpu.as_secs_f64() / wall.as_secs_f64()
        );
        results.push(wall);
    }
    // Baseline without S-Net: the same rows, forked the same way, on a bare pool.
    let mut pool_walls = Vec::new();
    for threads in [1, 2] {
        let pool = forkjoin::Pool::new(threads)?;
        let mut walls = Vec::new();
        for _ in 0..runs {
            let t0 = Instant::now();
            let img: Vec<Vec<i32>> = pool.install(|| (0..h).map(|y| row_forked(y, w, h)).collect());
            walls.push(t0.elapsed());
            if img != expect {
                return Err("the bare pool's image differs from the direct computation".into());
            }
        }
        let wall = median(walls);
        println!("  bare forkjoin pool -w{threads}: wall {wall:>9.2?}");
        pool_walls.push(wall);
    }
    println!(
        "  bare pool speed-up at 2 over 1: {:.2}x",
        pool_walls[0].as_secs_f64() / pool_walls[1].as_secs_f64()
    );
    println!(
        "  speed-up at 2 workers over 1: front+forkjoin {:.2}x, plain front {:.2}x; \
         forkjoin -w1 vs plain -w1 {:.2}x",
        results[2].as_secs_f64() / results[3].as_secs_f64(),
        results[0].as_secs_f64() / results[1].as_secs_f64(),
        results[0].as_secs_f64() / results[2].as_secs_f64(),
    );
    println!("  every image matches the direct computation");
    Ok(())
}
