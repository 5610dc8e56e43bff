//! `snet bench`: every engine runs the benchmark, its output is checked, and the
//! table reports the same number of box firings for every configuration.

use std::process::Command;

fn bench(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_snet"))
        .arg("bench")
        .args(args)
        .output()
        .expect("run snet bench");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// (engine, workers, box calls) of every table row.
fn rows(stdout: &str) -> Vec<(String, usize, u64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let engine = *f.first()?;
            if !["seq", "threads", "front", "lpel"].contains(&engine) || f.len() < 5 {
                return None;
            }
            Some((engine.to_string(), f[1].parse().ok()?, f[4].parse().ok()?))
        })
        .collect()
}

/// Σ(A+1) over the benchmark's 1000 inputs: the box firings `deep D` must make.
fn deep_firings(d: u64) -> u64 {
    let mut seed: u64 = 42;
    (0..1000)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % (d + 1) + 1
        })
        .sum()
}

#[test]
fn deep_runs_on_every_engine_with_the_expected_firings() {
    let (code, out, err) = bench(&["deep", "30", "--runs", "1"]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let rows = rows(&out);
    let configs: Vec<(&str, usize)> = rows.iter().map(|(e, w, _)| (e.as_str(), *w)).collect();
    assert_eq!(
        configs,
        [
            ("seq", 1),
            ("threads", 1),
            ("threads", 2),
            ("front", 1),
            ("front", 2),
            ("lpel", 1),
            ("lpel", 2)
        ]
    );
    let want = deep_firings(30);
    assert!(rows.iter().all(|r| r.2 == want), "{want} firings: {rows:?}");
}

#[test]
fn deep_with_the_c_box_and_fibtree_give_checked_results() {
    let (code, out, err) = bench(&[
        "deep",
        "20",
        "--c-boxes",
        "-e",
        "front",
        "-w",
        "2",
        "--runs",
        "1",
    ]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(rows(&out), [("front".to_string(), 2, deep_firings(20))]);
    let (code, out, err) = bench(&[
        "fibtree",
        "12",
        "-e",
        "lpel,front",
        "-w",
        "1",
        "--runs",
        "1",
    ]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(rows(&out).len(), 2);
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        &["nope"][..],
        &["deep", "10", "-e", "fast"],
        &["deep", "10", "-w", "0"],
        &["synchro", "10", "--c-boxes"],
    ] {
        let (code, out, err) = bench(args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains("error:"), "{args:?}: {err}");
    }
    // A slip in an engine name gets the name meant.
    let (code, _, err) = bench(&["deep", "10", "-e", "fornt"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `front`?"), "{err}");
}
