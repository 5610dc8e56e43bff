//! A Mandelbrot set rendered by an S-Net network with Rust boxes.
//!
//! `rows` turns one request into one record per image row; a filter assigns each row a
//! lane; `render` (replicated per lane by `!!`, so rows come out in order) computes the
//! escape counts of one row and emits them as an `int` array field.
//!
//! Run: `cargo run --release -p snet --example mandelbrot -- [--engine seq|threads] [WIDTH HEIGHT]`

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, Value};
use snet_core::{BoxFailure, Label};

const PROGRAM: &str = r#"
net mandelbrot {
    box rows((<width>, <height>) -> (<y>, <width>, <height>));
    box render((<y>, <width>, <height>) -> (<y>, counts));
} connect rows .. [{<y>} -> {<y>, <lane=y%4>}] .. (render !! <lane>);
"#;

const MAX_ITER: i32 = 255;

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

fn row(y: i32, w: i32, h: i32) -> Vec<i32> {
    let cy = -1.2 + 2.4 * f64::from(y) / f64::from(h);
    (0..w)
        .map(|x| escape(-2.2 + 3.2 * f64::from(x) / f64::from(w), cy))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut engine = EngineKind::Seq;
    let mut dims = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--engine" {
            let name = it.next().ok_or("--engine needs a value")?;
            engine = EngineKind::parse(name).ok_or("unknown engine")?;
        } else {
            dims.push(a.parse::<i32>()?);
        }
    }
    let (w, h) = match dims[..] {
        [w, h] => (w, h),
        _ => (72, 28),
    };

    let mut prog = Program::from_source("mandelbrot.snet", PROGRAM)?;
    prog.bind("rows", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let (w, h) = (i.tag("width").unwrap_or(0), i.tag("height").unwrap_or(0));
        for y in 0..h {
            o.emit(1, vec![Arg::tag(y), Arg::tag(w), Arg::tag(h)])?;
        }
        Ok(())
    })?;
    prog.bind("render", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let y = i.tag("y").ok_or_else(|| BoxFailure("no <y>".into()))?;
        let counts = row(y, i.tag("width").unwrap_or(0), i.tag("height").unwrap_or(0));
        o.emit(1, vec![Arg::tag(y), Arg::field(Value::int_array(&counts))])
    })?;

    let start = std::time::Instant::now();
    let out = prog.run_records(
        engine,
        vec![Record::new().with_tag("width", w).with_tag("height", h)],
    )?;
    let elapsed = start.elapsed();

    let mut total: i64 = 0;
    for (expect_y, r) in out.iter().enumerate() {
        let y = r.tag(Label::tag("y")).ok_or("output without <y>")?;
        assert_eq!(y as usize, expect_y, "`!!` keeps rows in order");
        let counts = r
            .field(Label::field("counts"))
            .and_then(|f| f.as_ref())
            .and_then(|v| v.to_i32_vec())
            .ok_or("output without counts")?;
        assert_eq!(counts, row(y, w, h), "row {y} matches a direct computation");
        total += counts.iter().map(|&c| i64::from(c)).sum::<i64>();
        let line: String = counts
            .iter()
            .map(|&c| match c {
                MAX_ITER => '#',
                c if c > 16 => '+',
                c if c > 6 => '.',
                _ => ' ',
            })
            .collect();
        println!("{line}");
    }
    println!(
        "{} rows, {total} iterations, {:?} on {}",
        out.len(),
        elapsed,
        engine.name()
    );
    Ok(())
}
