//! Monitoring output: seed 000 §5.4.3 log lines, tasks.map, the Chrome trace, and
//! `tools/lpel_log_totals.py` run on a generated log.

use snet_lpel::{stream, Config, MonitorConfig, MonitorLevel, Quiescence, Runtime, TaskSpec};
use std::path::{Path, PathBuf};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snet-lpel-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run_monitored(dir: &Path, level: MonitorLevel) {
    let cfg = Config {
        monitoring: Some(MonitorConfig {
            level,
            dir: dir.to_path_buf(),
            trace: true,
        }),
        ..Config::with_workers(2)
    };
    let rt = Runtime::start(cfg).unwrap();
    let (mut tx, mut rx) = stream::<u32>(2);
    let (mut tx2, mut rx2) = stream::<u32>(2);
    rt.spawn(TaskSpec::new("source"), move || {
        for i in 0..50 {
            tx.write(i).unwrap();
        }
    });
    rt.spawn(TaskSpec::boxed("work"), move || {
        while let Some(v) = rx.read() {
            tx2.write(v * 3).unwrap();
        }
    });
    rt.spawn(TaskSpec::new("sink"), move || {
        let mut s = 0;
        while let Some(v) = rx2.read() {
            s += v;
        }
        assert_eq!(s, 3 * 49 * 50 / 2);
    });
    assert_eq!(rt.wait(), Quiescence::Finished);
    rt.shutdown();
}

/// Checks one dispatch line against the format of seed 000 §5.4.3; returns
/// (tid, state, stream entries).
fn check_line(line: &str) -> (u64, String, Vec<String>) {
    let toks: Vec<&str> = line.splitn(10, ' ').collect();
    assert!(toks.len() >= 8, "short line {line:?}");
    toks[0].parse::<u64>().expect("timestamp");
    assert_eq!(toks[1], "tid");
    let tid = toks[2].parse::<u64>().expect("tid");
    assert_eq!(toks[3], "disp");
    toks[4].parse::<u64>().expect("disp");
    assert_eq!(toks[5], "st");
    let st = toks[6].to_string();
    assert!(
        ["R", "Bi", "Bo", "Ba", "Z"].contains(&st.as_str()),
        "state {st}"
    );
    assert_eq!(toks[7], "et");
    let rest = line.split(" et ").nth(1).unwrap();
    let (et, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    et.parse::<u64>().expect("et");
    let mut tail = tail.to_string();
    if st == "Z" {
        assert!(tail.starts_with("creat "), "zombie without creat: {line}");
        let t = tail[6..].to_string();
        let (c, r) = t.split_once(' ').unwrap_or((&t, ""));
        c.parse::<u64>().expect("creat");
        tail = r.to_string();
    }
    let mut entries = vec![];
    if !tail.is_empty() {
        assert!(
            tail.starts_with('[') && tail.ends_with(']'),
            "stream list {tail:?}"
        );
        for e in tail[1..tail.len() - 1].split(';').filter(|e| !e.is_empty()) {
            let f: Vec<&str> = e.split(',').collect();
            assert_eq!(f.len(), 5, "entry {e}");
            f[0].parse::<u64>().unwrap();
            assert!(f[1] == "r" || f[1] == "w");
            assert!(["O", "I", "C"].contains(&f[2]));
            f[3].parse::<u64>().unwrap();
            let fl: Vec<char> = f[4].chars().collect();
            assert_eq!(fl.len(), 3);
            assert!(fl[0] == '?' || fl[0] == '-');
            assert!(fl[1] == '!' || fl[1] == '-');
            assert!(fl[2] == '*' || fl[2] == '-');
            entries.push(e.to_string());
        }
    }
    (tid, st, entries)
}

#[test]
fn level_d_logs_match_the_seed_format() {
    let dir = temp_dir("mon-d");
    run_monitored(&dir, MonitorLevel::D);
    let map = std::fs::read_to_string(dir.join("tasks.map")).unwrap();
    assert_eq!(map.lines().count(), 3);
    let mut zombies = 0;
    let mut worker_exits = 0;
    let mut writes_total = 0;
    for w in 0..2 {
        let log = std::fs::read_to_string(dir.join(format!("mon_w{w}.log"))).unwrap();
        for line in log.lines() {
            if line.contains(" *** ") {
                if line.contains("exited. wait_cnt") {
                    worker_exits += 1;
                }
                continue;
            }
            let (_, st, entries) = check_line(line);
            if st == "Z" {
                zombies += 1;
                // The task's last dispatch closes its streams.
                assert!(
                    entries.iter().all(|e| e.split(',').nth(2) == Some("C")),
                    "{line}"
                );
            }
            for e in entries {
                let f: Vec<&str> = e.split(',').collect();
                if f[1] == "w" && f[2] == "C" {
                    writes_total += f[3].parse::<u64>().unwrap();
                }
            }
        }
    }
    assert_eq!(zombies, 3);
    assert_eq!(worker_exits, 2);
    // Both producers closed their streams after 50 items each.
    assert_eq!(writes_total, 100);
    let trace = std::fs::read_to_string(dir.join("trace.json")).unwrap();
    assert!(trace.starts_with("{\"traceEvents\":["));
    assert!(trace.trim_end().ends_with("]}"));
    assert!(trace.contains("\"ph\":\"X\""));
    assert!(trace.contains("\"ph\":\"C\"") && trace.contains("\"fill\":"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn level_a_logs_only_box_tasks_without_streams() {
    let dir = temp_dir("mon-a");
    run_monitored(&dir, MonitorLevel::A);
    let map = std::fs::read_to_string(dir.join("tasks.map")).unwrap();
    let box_tid: u64 = map
        .lines()
        .find(|l| l.ends_with(" box work"))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    let mut lines = 0;
    for w in 0..2 {
        let log = std::fs::read_to_string(dir.join(format!("mon_w{w}.log"))).unwrap();
        for line in log.lines() {
            let (tid, _, entries) = check_line(line);
            assert_eq!(tid, box_tid);
            assert!(!line.contains('['));
            assert!(entries.is_empty());
            lines += 1;
        }
    }
    assert!(lines >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn log_totals_script_sums_a_generated_log() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/lpel_log_totals.py");
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("python3 not available: skipping");
        return;
    }
    let dir = temp_dir("mon-py");
    run_monitored(&dir, MonitorLevel::C);
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for name in ["source", "work", "sink"] {
        assert!(
            text.contains(&format!("*** {name}: total ")),
            "{name} missing in:\n{text}"
        );
    }
    // The script's totals equal the sum of `et` fields.
    let mut sum_ns = 0u64;
    for w in 0..2 {
        let log = std::fs::read_to_string(dir.join(format!("mon_w{w}.log"))).unwrap();
        for line in log.lines() {
            let et = line
                .split(" et ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            sum_ns += et.parse::<u64>().unwrap();
        }
    }
    let script_sum: f64 = text
        .lines()
        .filter_map(|l| l.split("total ").nth(1))
        .map(|t| t.split(',').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(
        (script_sum - sum_ns as f64 / 1e9).abs() < 1e-5 * 6.0,
        "{script_sum} vs {sum_ns}"
    );
    let st = std::process::Command::new("python3")
        .arg(&script)
        .arg("--self-test")
        .output()
        .unwrap();
    assert!(st.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
