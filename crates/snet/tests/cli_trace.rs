//! `snet trace`: the summary of a trace written by `snet run --trace` accounts for
//! every box invocation (front) or task dispatch (lpel) of the run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn snet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_snet"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run snet")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (name, kind, events) of the per-name table.
fn name_rows(summary: &str) -> Vec<(String, String, u64)> {
    summary
        .lines()
        .skip_while(|l| !l.starts_with("name "))
        .skip(1)
        .map_while(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.get(2)?.parse().ok()?;
            (f.len() == 7).then(|| (f[0].to_string(), f[1].to_string(), n))
        })
        .collect()
}

#[test]
fn front_trace_counts_every_box_call_and_lpel_trace_every_dispatch() {
    let dir = std::env::temp_dir().join(format!("snet-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for engine in ["front", "lpel"] {
        let trace = dir.join(format!("{engine}.json"));
        let run = snet(&[
            "run",
            "examples/c/collatz/collatz.snet",
            "examples/c/collatz/cstep.c",
            "examples/c/collatz/fmt.c",
            "examples/c/collatz/parity.c",
            "-i",
            "examples/c/collatz/input.xml",
            "-o",
            "/dev/null",
            "--engine",
            engine,
            "-w",
            "2",
            "--stats",
            "--trace",
            trace.to_str().unwrap(),
        ]);
        let err = text(&run.stderr);
        assert!(run.status.success(), "{engine}: {err}");
        let calls: u64 = err
            .lines()
            .find_map(|l| l.strip_prefix("box calls"))
            .and_then(|v| v.trim().parse().ok())
            .expect("box calls in --stats");
        let sum = snet(&["trace", trace.to_str().unwrap(), "--top", "100"]);
        let out = text(&sum.stdout);
        assert!(sum.status.success(), "{engine}: {}", text(&sum.stderr));
        let rows = name_rows(&out);
        let boxes: u64 = rows.iter().filter(|r| r.1 == "box").map(|r| r.2).sum();
        if engine == "front" {
            // One event per invocation, named after the box.
            assert_eq!(boxes, calls, "{out}");
            for b in ["cstep", "parity", "fmt"] {
                assert!(rows.iter().any(|r| r.0 == b), "{b} in\n{out}");
            }
        } else {
            // One event per dispatch; a dispatch runs one or more invocations.
            assert!(
                boxes > 0 && boxes <= calls,
                "{boxes} dispatches, {calls} calls:\n{out}"
            );
        }
        // Every busy worker has a row (a small run may keep one of the two idle).
        let workers = out
            .lines()
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 2 && f[0] == "worker" && f[1].parse::<usize>().is_ok()
            })
            .count();
        assert!((1..=2).contains(&workers), "{out}");
    }
    std::fs::write(dir.join("bad.json"), "{\"traceEvents\": [").unwrap();
    let bad = snet(&["trace", dir.join("bad.json").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("bad.json:1:"),
        "{}",
        text(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_trace_or_profile_that_cannot_be_written_is_a_warning_and_the_run_keeps_its_status() {
    // /dev/full: opening works (checked before the run), writing fails (at its end).
    if !Path::new("/dev/full").exists() {
        return;
    }
    for engine in ["front", "lpel"] {
        for (flag, what) in [("--trace", "trace file"), ("--profile", "profile")] {
            let out = snet(&[
                "run",
                "examples/lang/triangle/triangle.snet",
                "-i",
                "examples/lang/triangle/input.xml",
                "--engine",
                engine,
                flag,
                "/dev/full",
            ]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{engine} {flag}: {err}");
            assert!(
                err.contains(&format!("warning: cannot write the {what} /dev/full")),
                "{engine} {flag}: {err}"
            );
            assert!(
                text(&out.stdout).contains("type=\"terminate\""),
                "{engine} {flag}"
            );
        }
    }
}
