//! Golden tests: every example with `input.xml` and `expected.xml` runs through the real
//! `snet run` binary on every engine and must produce the expected output, compared as
//! spec §11.4 says (multiset; in order for programs marked `// deterministic`).

use common::{find_examples, Example};
use std::path::{Path, PathBuf};

mod common;
use std::process::Command;

fn examples_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run_case(case: &Example, engine: &str, workers: usize) -> Result<(), String> {
    let out = std::env::temp_dir().join(format!(
        "snet-golden-{}-{}-{engine}-{workers}.xml",
        std::process::id(),
        case.dir.file_name().and_then(|n| n.to_str()).unwrap_or("x")
    ));
    let result = Command::new(env!("CARGO_BIN_EXE_snet"))
        .arg("run")
        .arg(&case.program)
        .args(&case.sources)
        .arg("-i")
        .arg(case.dir.join("input.xml"))
        .arg("-o")
        .arg(&out)
        .args(["--engine", engine, "-w", &workers.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    if !result.status.success() {
        return Err(format!(
            "exit {:?}\n{}",
            result.status.code(),
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    let actual = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&out);
    let expected =
        std::fs::read_to_string(case.dir.join("expected.xml")).map_err(|e| e.to_string())?;
    snet_io::compare_outputs(&expected, &actual, case.ordered)
}

/// Worker counts and repetitions: 1 and 2 workers once, or what `SNET_GOLDEN_WORKERS`
/// (e.g. `3,8`) and `SNET_GOLDEN_REPEAT` ask for (a stress run with oversubscribed
/// workers: `SNET_GOLDEN_WORKERS=4,8 SNET_GOLDEN_REPEAT=10 cargo test --profile fast
/// -p snet --test all golden::`).
fn worker_plan() -> (Vec<usize>, usize) {
    let workers = std::env::var("SNET_GOLDEN_WORKERS")
        .ok()
        .map(|v| {
            v.split(',')
                .map(|w| w.trim().parse().expect("SNET_GOLDEN_WORKERS: numbers"))
                .collect()
        })
        .unwrap_or_else(|| vec![1, 2]);
    let repeat = std::env::var("SNET_GOLDEN_REPEAT")
        .ok()
        .map(|v| v.parse().expect("SNET_GOLDEN_REPEAT: a number"))
        .unwrap_or(1);
    (workers, repeat)
}

#[test]
fn every_example_matches_its_expected_output_on_every_engine() {
    let (plan, repeat) = worker_plan();
    let mut cases = Vec::new();
    find_examples(&examples_root(), &mut cases);
    assert!(
        cases.len() >= 10,
        "expected golden examples, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        for engine in snet::EngineKind::ALL {
            for &workers in &plan {
                for _ in 0..repeat {
                    if let Err(e) = run_case(case, engine.name(), workers) {
                        failures.push(format!(
                            "{} [{} -w {workers}]: {e}",
                            case.program.display(),
                            engine.name()
                        ));
                        break;
                    }
                }
                if *engine == snet::EngineKind::Seq {
                    break;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
