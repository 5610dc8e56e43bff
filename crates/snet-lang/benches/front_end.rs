//! Benchmark: lex + parse + check (+ lowering) of a generated program of at least
//! 10,000 lines. Prints the median of several runs; not a timed test.
//!
//! `cargo bench -p snet-lang --bench front_end` (or `bash bench/lang/run.sh`).
//! Set `SNET_BENCH_DUMP=FILE` to write the generated program.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// One named network of 16 lines: boxes, a synchrocell star, a filter with a guard
/// chain, a nested net with a split, a choice, comments.
fn module(out: &mut String, i: usize) {
    let _ = write!(
        out,
        "// module {i}
net n{i} ({{<k>, a}} -> {{<k>, b}}) {{
  box f{i}((a, <k>) -> (b, <k>) | (c));
  box g{i}((c) -> (b, <k>));
  net s{i} connect [| {{a}}, {{<k>}} |] * {{a, <k>}};
  net flt{i} connect [{{<k>}} -> if <k > 10> then {{<k = k - 1>}}
                      else if <k == 0> then {{<k>, <z>}}
                      else {{<k = (k * 2 + 1) % 0x7f>}}];
  /* a nested net with a split */
  net sub{i} {{
    net inner{i} connect f{i} .. (g{i} | []);
  }} connect inner{i} ! <k>;
  net keep{i} connect [{{<z>}} -> {{}}] .. [{{<k>}} -> {{<k>, <w = k min 3>}}];
}} connect (s{i} .. sub{i}) | (flt{i} .. keep{i});

"
    );
}

fn program(lines: usize) -> String {
    let mut out =
        String::from("<metadata><default><interface value=\"C4SNet\"/></default></metadata>\n");
    let mut i = 0;
    while out.lines().count() < lines {
        module(&mut out, i);
        i += 1;
    }
    out.push_str("net bench connect ");
    for j in 0..i {
        if j > 0 {
            out.push_str(if j % 8 == 0 { "\n  .. " } else { " .. " });
        }
        let _ = write!(out, "n{j}");
    }
    out.push_str(";\n");
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let src = program(10_000);
    if let Some(path) = std::env::var_os("SNET_BENCH_DUMP") {
        std::fs::write(path, &src).expect("write program");
    }
    let lines = src.lines().count();
    let runs = 21;
    let mut parse = Vec::new();
    let mut full = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let (p, d) = snet_lang::parse(&src);
        parse.push(t.elapsed());
        assert!(d.is_empty() && !p.defs.is_empty());
        let t = Instant::now();
        let c =
            snet_lang::compile_str("bench.snet", &src).unwrap_or_else(|d| panic!("{}", d.render()));
        full.push(t.elapsed());
        assert!(c.net.nodes.len() > 1000);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("front_end: {lines} lines, {} bytes, {runs} runs", src.len());
    println!(
        "  parse only               median {:8.2} ms",
        ms(median(parse))
    );
    println!(
        "  parse+resolve+check+lower median {:8.2} ms  (target < 100 ms)",
        ms(median(full))
    );
}
