//! Scaling regressions found by `tools/scale_probe.py`: costs that grew faster than the
//! work (records with many labels), and memory or stacks that grew with the number of
//! records or replicas on the lpel engine. Each test checks the output and a bound the
//! old behaviour broke by a wide margin.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, Value};
use snet_core::{Label, RunStats};
use snet_lpel::snet_engine::{LpelConfig, LpelEngine};
use std::time::{Duration, Instant};

fn run_lpel(
    prog: &Program,
    cfg: LpelConfig,
    workers: usize,
    input: Vec<Record>,
) -> (Vec<Record>, RunStats) {
    prog.run_records_on(&LpelEngine::new(cfg), input, workers)
        .unwrap_or_else(|e| panic!("lpel, {workers} workers: {e}"))
}

fn tag(r: &Record, name: &str) -> Option<i32> {
    r.tag(Label::tag(name))
}

/// The fastest of three runs of `f` (the least disturbed by other work on the machine).
fn fastest(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

/// `count` records with `labels` tags `<t0>..` each, plus `<k>`.
fn wide_records(count: usize, labels: usize) -> Vec<Record> {
    (0..count)
        .map(|i| {
            let mut r = Record::new().with_tag("k", i as i32);
            for j in 0..labels {
                r.push_tag(Label::tag(&format!("t{j}")), j as i32);
            }
            r
        })
        .collect()
}

#[test]
fn flow_inheritance_is_linear_in_the_labels_of_a_record() {
    // Ten boxes in a row consume and emit <k>; every other label is inherited. The
    // same number of labels passes in 160 records of 1000 labels and in 10 of 16000.
    // Flow inheritance searched the growing output record for every inherited label
    // (quadratic per record): the wide records took ~16x as long as the narrow ones.
    let src = format!(
        "net wide {{ box inc((<k>) -> (<k>)); }} connect {};",
        ["inc"; 10].join(" .. ")
    );
    let mut p = Program::from_source("wide.snet", &src).unwrap();
    p.bind("inc", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(0) + 1)])
    })
    .unwrap();
    let run = |count: usize, labels: usize| {
        let input = wide_records(count, labels);
        let expect_k: i32 = (0..count as i32).map(|k| k + 10).sum();
        fastest(|| {
            let out = p.run_records(EngineKind::Seq, input.clone()).unwrap();
            assert_eq!(out.len(), count);
            assert_eq!(
                out.iter().map(|r| tag(r, "k").unwrap()).sum::<i32>(),
                expect_k
            );
            assert!(out.iter().all(|r| r.len() == labels + 1));
            assert_eq!(
                tag(&out[0], &format!("t{}", labels - 1)),
                Some(labels as i32 - 1)
            );
        })
    };
    let narrow = run(160, 1000);
    let wide = run(10, 16_000);
    assert!(
        wide < narrow * 5 + Duration::from_millis(20),
        "10 records x 16000 labels took {wide:?}, 160 x 1000 took {narrow:?}"
    );
}

#[test]
fn reading_a_record_is_linear_in_its_labels() {
    // A repeated label replaces the earlier value (spec 11.2), so the reader looked up
    // every label in the record read so far: quadratic in the labels of one record.
    let xml = |count: usize, labels: usize| {
        let mut s = String::from("<?xml version=\"1.0\" ?>\n");
        for _ in 0..count {
            s.push_str("<record type=\"data\" mode=\"textual\">");
            for j in 0..labels {
                s.push_str(&format!("<tag label=\"t{j}\">{j}</tag>"));
            }
            // A repeated label in a wide record still replaces the first value.
            s.push_str("<tag label=\"t0\">-1</tag></record>\n");
        }
        s.push_str("<record type=\"terminate\" />\n");
        s
    };
    let read = |count: usize, labels: usize| {
        let text = xml(count, labels);
        fastest(|| {
            let recs: Vec<Record> = snet_io::XmlReader::new(text.as_bytes())
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(recs.len(), count);
            assert!(recs.iter().all(|r| r.len() == labels));
            assert!(recs.iter().all(|r| tag(r, "t0") == Some(-1)));
            assert_eq!(
                tag(&recs[0], &format!("t{}", labels - 1)),
                Some(labels as i32 - 1)
            );
        })
    };
    let narrow = read(320, 500);
    let wide = read(5, 32_000);
    assert!(
        wide < narrow * 5 + Duration::from_millis(20),
        "5 records x 32000 labels took {wide:?}, 320 x 500 took {narrow:?}"
    );
}

#[test]
fn lpel_inboxes_bound_big_records_by_bytes() {
    // 200 records of a 4 MiB field (one shared payload, counted in full per record)
    // through six boxes. Counting jobs only, the reader queued 64 of them at the first
    // box and each box took batches of 64: ~128 records (512 MiB) in flight. With the
    // byte budget (4 MiB) a box holds about one queued, one taken and one output.
    let src = format!(
        "net big {{ box pass((x, <i>) -> (x, <i>)); }} connect {};",
        ["pass"; 6].join(" .. ")
    );
    let mut p = Program::from_source("big.snet", &src).unwrap();
    p.bind("pass", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let x = i.field("x").cloned().expect("x");
        o.emit(1, vec![Arg::field(x), Arg::tag(i.tag("i").unwrap_or(-1))])
    })
    .unwrap();
    let payload = Value::int_array(&vec![7; 1 << 20]);
    let input: Vec<Record> = (0..200)
        .map(|i| {
            Record::new()
                .with_field("x", payload.clone())
                .with_tag("i", i)
        })
        .collect();
    for workers in [1, 2] {
        let (out, stats) = run_lpel(&p, LpelConfig::default(), workers, input.clone());
        let got: Vec<i32> = out.iter().map(|r| tag(r, "i").unwrap()).collect();
        assert_eq!(got, (0..200).collect::<Vec<_>>(), "a pipeline keeps order");
        assert!(out
            .iter()
            .all(|r| r.field(Label::field("x")).unwrap().as_ref().unwrap().len() == 1 << 20));
        assert!(
            stats.peak_in_flight <= 6 * 3 + 2,
            "{workers} workers: {} records of 4 MiB in flight",
            stats.peak_in_flight
        );
    }
}

#[test]
fn lpel_replicas_spawned_faster_than_they_run_recycle_their_stacks() {
    // 40000 replicas of `tpass ! <k>` at one worker: the reader spawns a task per
    // replica much faster than the worker runs them. Parked tasks beyond `max_parked`
    // are evicted, but an evicted task gave its stack back only when it reached the
    // head of the ready queue, behind the fresh tasks, each of which took a new stack:
    // ~40000 stacks (past vm.max_map_count at 80000 replicas, the run failed).
    let mut p = Program::from_source(
        "reps.snet",
        "net reps { box tpass((<k>) -> (<k>)); } connect tpass ! <k>;",
    )
    .unwrap();
    p.bind("tpass", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        o.emit(1, vec![Arg::tag(i.tag("k").unwrap_or(-1))])
    })
    .unwrap();
    let n = 40_000;
    let input: Vec<Record> = (0..n).map(|k| Record::new().with_tag("k", k)).collect();
    for workers in [1, 2] {
        let cfg = LpelConfig::default();
        let max_parked = cfg.max_parked as u64;
        let (out, stats) = run_lpel(&p, cfg, workers, input.clone());
        let mut got: Vec<i32> = out.iter().map(|r| tag(r, "k").unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        assert_eq!(stats.box_calls, n as u64);
        assert!(
            stats.stacks_created <= max_parked + 64 * workers as u64,
            "{workers} workers: {} task stacks for {n} replicas",
            stats.stacks_created
        );
    }
}

/// `mkfast .. slowsum` on the threads engine with `n` records: `mkfast` turns each
/// small record into a 4 MiB one much faster than `slowsum` reads it
/// (`tools/scale_probe.py big_slow`). Returns the sums.
fn threads_big_slow(n: i32) -> Vec<i32> {
    let mut p = Program::from_source(
        "bigslow.snet",
        "net bigslow { box mkfast((<sz>) -> (x)); box slowsum((x) -> (<s>)); } \
         connect mkfast .. slowsum;",
    )
    .unwrap();
    p.bind("mkfast", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let sz = i.tag("sz").unwrap_or(0) as usize;
        o.emit(1, vec![Arg::field(Value::int_array(&vec![1; sz]))])
    })
    .unwrap();
    p.bind("slowsum", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let x = i.field("x").expect("x");
        let mut s = 0u32;
        for _ in 0..8 {
            for b in std::hint::black_box(x.bytes()) {
                s = s.wrapping_add(u32::from(*b));
            }
        }
        o.emit(1, vec![Arg::tag((s & 0x7fff_ffff) as i32)])
    })
    .unwrap();
    let input: Vec<Record> = (0..n)
        .map(|i| Record::new().with_tag("sz", 1 << 20).with_tag("id", i))
        .collect();
    let (out, _) = p
        .run_records_on(&snet_threads::ThreadsEngine::default(), input, 2)
        .unwrap_or_else(|e| panic!("threads: {e}"));
    out.iter().map(|r| tag(r, "s").unwrap()).collect()
}

/// Run in a child process by [`threads_inboxes_bound_big_records_by_bytes`]: one
/// `threads_big_slow` run of `SNET_BIG_SLOW_N` records, then the process's peak RSS.
#[test]
#[ignore = "run in a child process by threads_inboxes_bound_big_records_by_bytes"]
fn threads_big_slow_child() {
    let n: i32 = std::env::var("SNET_BIG_SLOW_N")
        .expect("SNET_BIG_SLOW_N")
        .parse()
        .unwrap();
    let sums = threads_big_slow(n);
    assert_eq!(sums.len(), n as usize);
    // 2^20 ints of value 1 (one byte of 1 each), read 8 times.
    assert!(sums.iter().all(|&s| s == 8 << 20), "{:?}", &sums[..1]);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .expect("VmHWM");
    println!("PEAK_RSS_KB {}", hwm.trim().trim_end_matches("kB").trim());
}

/// The test harness's name of this file's test `f`: `scaling::f` while the file is a
/// module of `tests/all.rs`, plain `f` in a test crate of its own (`--exact` needs it).
fn test_name(f: &str) -> String {
    module_path!()
        .split_once("::")
        .map_or(f.to_owned(), |(_, m)| format!("{m}::{f}"))
}

/// Peak RSS (MiB) of this test binary running only `threads_big_slow_child` with `n`.
fn big_slow_peak_rss_mib(n: i32) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name("threads_big_slow_child"),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SNET_BIG_SLOW_N", n.to_string())
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kb: u64 = stdout
        .split("PEAK_RSS_KB ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no peak RSS in {stdout}"))
        .parse()
        .unwrap();
    kb >> 10
}

#[test]
fn threads_inboxes_bound_big_records_by_bytes() {
    // threads engine, 16 and 128 records of 4 MiB made faster than they are consumed.
    // With unbounded channels the records piled up in `slowsum`'s channel: peak RSS
    // grew by ~4 MiB per record (16: ~70 MiB, 128: ~500 MiB). With the byte budget
    // `mkfast` waits for `slowsum`: a few records at a time, whatever the input size.
    let small = big_slow_peak_rss_mib(16);
    let large = big_slow_peak_rss_mib(128);
    assert!(
        large < small + 64,
        "peak RSS {small} MiB with 16 records of 4 MiB, {large} MiB with 128"
    );
}

/// Peak RSS (KiB) of `snet run` on a split of synchrocells, `cells` index values each
/// paired by two records (`a`, then `b` 64 cells later), and the number of merged
/// records it wrote. The input is streamed from a file, so what stays is what
/// the network keeps.
fn split_of_cells_peak_rss_kib(dir: &std::path::Path, cells: usize) -> (i64, usize) {
    use std::io::Write;
    let prog = dir.join("cells.snet");
    std::fs::write(&prog, "net cells connect [| {a}, {b} |] ! <k>;\n").unwrap();
    let input = dir.join(format!("cells{cells}.xml"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    let rec = |f: &mut std::io::BufWriter<std::fs::File>, l: &str, k: usize| {
        writeln!(
            f,
            "<record type=\"data\" mode=\"textual\" interface=\"C4SNet\">\
             <field label=\"{l}\">(int){k}</field><tag label=\"k\">{k}</tag></record>"
        )
        .unwrap();
    };
    for k in 0..cells {
        rec(&mut f, "a", k);
        if k >= 64 {
            rec(&mut f, "b", k - 64);
        }
    }
    for k in cells.saturating_sub(64)..cells {
        rec(&mut f, "b", k);
    }
    writeln!(f, "<record type=\"terminate\"/>").unwrap();
    drop(f);
    let out = dir.join(format!("cells{cells}.out"));
    // Reaped by `wait4` below, which also reports the child's peak RSS (`Child::wait`
    // would reap it without).
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_snet"))
        .arg("run")
        .arg(&prog)
        .arg("-i")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .spawn()
        .expect("run snet");
    let mut status = 0;
    // SAFETY: `rusage` is plain integers, for which all zero bytes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid of our own child, not reaped yet (its `Child` handle is never
    // waited on; dropping it does not reap), and valid pointers for the two results.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "snet run failed"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let merged = text.matches("label=\"b\"").count();
    (usage.ru_maxrss, merged)
}

#[test]
fn a_split_of_synchrocells_on_a_long_stream_keeps_only_the_waiting_cells() {
    // Every index value made a replica that stayed for the whole run (a fired cell is
    // an identity for ever): 10^5 cells took 16 MB more than 10^4, 2 * 10^5 about 34 MB.
    // Fired replicas are now retired (remembered by index value, the instance freed):
    // under 2 MB more.
    let dir = std::env::temp_dir().join(format!("snet-cells-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (small, n_small) = split_of_cells_peak_rss_kib(&dir, 10_000);
    let (large, n_large) = split_of_cells_peak_rss_kib(&dir, 200_000);
    let _ = std::fs::remove_dir_all(&dir);
    // Every pair merged and written (each record counted: none lost, none left).
    assert_eq!((n_small, n_large), (10_000, 200_000));
    assert!(
        large < small + 12 * 1024,
        "peak RSS {small} KiB with 10^4 cells, {large} KiB with 2 * 10^5"
    );
}
