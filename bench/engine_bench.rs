//! In-process engine benchmark with Rust boxes (no XML): `deep D`, `synchro N`,
//! `pipe COUNT` (10 identity boxes), on each engine at 1 and 2 workers.
//! Run: `cargo run --release -p snet --example engine_bench -- deep 1000 [ENGINE...]`

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, RunOptions, Value};
use std::time::Instant;

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args.first().map(String::as_str).unwrap_or("deep");
    let n: i32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let engines: Vec<EngineKind> = args
        .iter()
        .skip(2)
        .filter_map(|s| EngineKind::parse(s))
        .collect();
    let engines = if engines.is_empty() {
        EngineKind::ALL.to_vec()
    } else {
        engines
    };
    let (prog, input) = match kind {
        "deep" => {
            let mut p = Program::from_source(
                "deep.snet",
                "net deep { box foo((A) -> (A) | (B)); } connect foo*{B};",
            )?;
            p.bind("foo", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
                let a = i.int("A").unwrap_or(0);
                if a > 0 {
                    o.emit(1, vec![Arg::int(a - 1)])
                } else {
                    o.emit(2, vec![Arg::int(0)])
                }
            })?;
            let mut seed = 42;
            let input: Vec<Record> = (0..1000)
                .map(|_| {
                    Record::new()
                        .with_field("A", Value::int((lcg(&mut seed) % (n as u64 + 1)) as i32))
                })
                .collect();
            (p, input)
        }
        "synchro" => {
            let p = Program::from_source("synchro.snet", "net synchro connect [|{A},{B}|]*{A,B};")?;
            let mut input = Vec::new();
            for k in 0..n {
                for j in 0..5 {
                    input.push(Record::new().with_field("A", Value::int(k * 5 + j)));
                }
                for j in 0..5 {
                    input.push(Record::new().with_field("B", Value::int(k * 5 + j)));
                }
            }
            (p, input)
        }
        _ => {
            let stages = ["stage"; 10].join(" .. ");
            let src = format!(
                "net stage {{ box id((A) -> (A)); }} connect id; net pipe connect {stages};"
            );
            let mut p = Program::from_source("pipe.snet", &src)?;
            p.bind("id", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
                o.emit(
                    1,
                    vec![Arg::field(
                        i.field("A").cloned().unwrap_or_else(|| Value::int(0)),
                    )],
                )
            })?;
            let input: Vec<Record> = (0..n)
                .map(|i| Record::new().with_field("A", Value::int(i)))
                .collect();
            (p, input)
        }
    };
    for e in engines {
        for w in [1, 2] {
            let mut out = Vec::new();
            let mut src = input.clone().into_iter().fuse();
            let t = Instant::now();
            let stats = prog.run(e, &mut src, &mut out, &RunOptions { workers: w })?;
            let dt = t.elapsed();
            println!(
                "{kind} {n} {:8} -w{w}: {:8.3} s  {} out, {} box calls ({:.0} ns/call), {} entities, peak {}",
                e.name(),
                dt.as_secs_f64(),
                out.len(),
                stats.box_calls,
                dt.as_nanos() as f64 / stats.box_calls.max(1) as f64,
                stats.entities_created,
                stats.peak_in_flight
            );
            if e == EngineKind::Seq {
                break;
            }
        }
    }
    Ok(())
}
