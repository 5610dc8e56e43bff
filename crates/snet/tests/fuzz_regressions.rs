//! Regressions found by the fuzzers under `tools/` (fuzz_records.py, fuzz_engines.py).

use snet::{EngineKind, Program, Record};

/// A record that no exit pattern of a star accepts and that its operand passes on
/// unchanged (an identity, a synchrocell it does not match) used to walk through new
/// stages until memory ran out (an abort). Every engine now stops with an error naming
/// the star and the record.
#[test]
fn a_record_that_can_never_leave_a_star_is_an_error() {
    for src in [
        "net s connect [|{<a>},{<b>}|] * {<a>,<b>};",
        "net s connect [] * {<a>};",
        "net s connect ([|{<a>},{<b>} if <b > 0>|] .. []) ** {<a>,<b>};",
    ] {
        let p = Program::from_source("s.snet", src).unwrap();
        for &e in EngineKind::ALL {
            let input = vec![
                Record::new().with_tag("a", 1),
                Record::new().with_tag("c", 1),
            ];
            let err = p.run_records(e, input).unwrap_err().to_string();
            assert!(err.contains("never leave the star"), "{src} {e:?}: {err}");
            assert!(err.contains("<c>"), "{src} {e:?}: {err}");
        }
    }
}

/// Issue 33 item 2: a stage that routes the record to an identity branch, a filter that
/// gives it back as it was, or a split around such a stage passes it on unchanged just
/// as surely; the record used to circulate for ever. Stages that change the record
/// (a counter, here) still run to the exit.
#[test]
fn a_record_a_stage_routes_or_filters_back_unchanged_can_never_leave_a_star() {
    for src in [
        "net s connect ([{<a>, <b>} -> {<h>}] | []) * {<h>};",
        "net s connect ([{<c>} -> {<c>}] .. []) ** {<h>};",
        "net s connect (([{<a>} -> {<h>}] | []) ! <c>) * {<h>};",
        "net s connect ([{<c>} -> {<c>}] || [{<a>} -> {<h>}]) * {<h>}, {<c>} if <c == 0>;",
    ] {
        let p = Program::from_source("s.snet", src).unwrap();
        for &e in EngineKind::ALL {
            let err = p
                .run_records(e, vec![Record::new().with_tag("c", 1)])
                .unwrap_err()
                .to_string();
            assert!(err.contains("never leave the star"), "{src} {e:?}: {err}");
            assert!(err.contains("<c>=1"), "{src} {e:?}: {err}");
        }
    }
    let p = Program::from_source(
        "s.snet",
        "net s connect ([{<n>} -> {<n = n + 1>}] | [{<a>} -> {<h>}] | []) * {<n>} if <n > 5>;",
    )
    .unwrap();
    for &e in EngineKind::ALL {
        let out = p
            .run_records(e, vec![Record::new().with_tag("n", 1)])
            .unwrap();
        assert_eq!(out.len(), 1, "{e:?}: {out:?}");
        assert_eq!(format!("{:?}", out[0]), "{<n>=6}", "{e:?}");
    }
}

/// The check does not stop records that a stage does change or store: the continuous
/// synchronisation idiom (spec §7.6) still pairs records, and a record matching a
/// pattern only through a guard that fails in no stage is stored.
#[test]
fn records_that_a_stage_stores_still_go_on() {
    let p = Program::from_source("s.snet", "net s connect [|{<a>},{<b>}|] * {<a>,<b>};").unwrap();
    for &e in EngineKind::ALL {
        let input = vec![
            Record::new().with_tag("a", 1),
            Record::new().with_tag("a", 2),
            Record::new().with_tag("b", 1),
            Record::new().with_tag("b", 2),
        ];
        let out = p.run_records(e, input).unwrap();
        assert_eq!(out.len(), 2, "{e:?}: {out:?}");
    }
}

/// `-w` far beyond what the system lets a process start: the front engine panicked
/// ("cannot start a worker thread") and aborted; now the run fails with an error.
#[test]
fn front_with_more_workers_than_threads_fails_cleanly() {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!("snet-fuzz-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("w.snet");
    std::fs::write(&prog, "net w connect [];\n").unwrap();
    let input = dir.join("in.xml");
    std::fs::write(
        &input,
        "<record type=\"data\" mode=\"textual\"><tag label=\"t\">1</tag></record>\n",
    )
    .unwrap();
    // A small address space makes thread creation fail well before 100000 threads.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000; exec '{}' run --engine front -w 1024 '{}' -i '{}'",
            env!("CARGO_BIN_EXE_snet"),
            prog.display(),
            input.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot start worker thread"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
