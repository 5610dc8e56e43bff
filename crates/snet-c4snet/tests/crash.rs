//! A C box that crashes with a signal is named on standard error and the process exits
//! non-zero. Each crash happens in a child process running the ignored test
//! `crash_child` of this binary.

mod common;

use common::{run, scratch, sig, write_sources};
use snet_core::Arg;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

const CRASHERS: &str = r#"
#include <C4SNet.h>
#include <stdlib.h>

void *segv(void *hnd, int t)
{
    volatile int *p = NULL;
    *p = t;
    return hnd;
}

void *fpe(void *hnd, int t)
{
    volatile int zero = 0;
    volatile int r = t / zero;
    (void)r;
    return hnd;
}

void *aborts(void *hnd, int t)
{
    (void)t;
    abort();
    return hnd;
}

void *fine(void *hnd, int t)
{
    C4SNetOut(hnd, 1, t);
    return hnd;
}

void *exits(void *hnd, int t)
{
    (void)t;
    exit(0);
    return hnd;
}

/* Frees its argument, then crashes: the message still shows the record. */
void *text(void *hnd, c4snet_data_t *s, int t)
{
    volatile int *p = NULL;
    C4SNetFree(s);
    *p = t;
    return hnd;
}

/* box unmapped ((<t>) -> (a)): emits a pointer into unmapped memory (as a value
 * missing from C4SNetOut's arguments may be): the fault comes in C4SNetOut, whose
 * check reads it, and the box is still named. */
void *unmapped(void *hnd, int t)
{
    (void)t;
    C4SNetOut(hnd, 1, (c4snet_data_t *)8);
    return hnd;
}

/* Crashes on several threads at once (the engine may run one box on several). */
void *many(void *hnd, int t)
{
    volatile int *p = NULL;
    *p = t;
    return hnd;
}
"#;

const CHILD_ENV: &str = "SNET_C4SNET_CRASH_CHILD";

#[test]
#[ignore = "run as a child process by the crash tests"]
fn crash_child() {
    let what = std::env::var(CHILD_ENV).expect("run by the crash tests");
    snet_c4snet::install_crash_handler().unwrap();
    snet_c4snet::install_crash_handler().unwrap(); // idempotent
    let dir = scratch("crash-child");
    let srcs = write_sources(&dir, &[("crash.c", CRASHERS)]);
    let mut sigs: Vec<_> = ["segv", "fpe", "aborts", "fine", "exits", "many"]
        .iter()
        .map(|n| sig(n, Some("<t>"), &["<t>"]))
        .collect();
    sigs.push(sig("text", Some("s, <t>"), &["s"]));
    sigs.push(sig("unmapped", Some("<t>"), &["a"]));
    let boxes = snet_c4snet::load_boxes(&sigs, &srcs, &common::options(&dir)).unwrap();
    // A box that returns normally leaves no "current box" behind.
    let (r, _) = run(&boxes, "fine", vec![Arg::Tag(1)]);
    r.unwrap();
    if what == "emitter" {
        // Runtime code called back from a box is not box code.
        struct Crash;
        impl snet_core::Emitter for Crash {
            fn emit(&mut self, _: usize, _: snet_core::Args) -> Result<(), snet_core::BoxFailure> {
                // SAFETY: not safe at all: a deliberate invalid write in runtime code.
                unsafe { std::ptr::write_volatile(std::ptr::without_provenance_mut::<i32>(8), 1) };
                Ok(())
            }
        }
        let f = boxes.table().get("fine").unwrap();
        let _ = f.invoke(snet_core::args![Arg::Tag(1)], &mut Crash);
    } else if what == "outside" {
        // SAFETY: not safe at all: a deliberate invalid write, outside box code, to
        // check that such a fault reaches the handler that was there before ours.
        unsafe { std::ptr::write_volatile(std::ptr::without_provenance_mut::<i32>(8), 1) };
    } else if what == "text" {
        let long = "a\"b\n".to_owned() + &"x".repeat(200);
        let v = snet_core::Value::string(&long);
        let (_r, _) = run(&boxes, "text", vec![Arg::Field(Some(v)), Arg::Tag(7)]);
    } else if what == "many" {
        let boxes = &boxes;
        std::thread::scope(|s| {
            for t in 0..4 {
                s.spawn(move || run(boxes, "many", vec![Arg::Tag(t)]));
            }
        });
    } else {
        let (_r, _) = run(&boxes, &what, vec![Arg::Tag(1)]);
    }
    eprintln!("child survived");
}

/// The test harness's name of this file's test `f`: `crash::f` while the file is a
/// module of `tests/all.rs`, plain `f` in a test crate of its own (`--exact` needs it).
fn test_name(f: &str) -> String {
    module_path!()
        .split_once("::")
        .map_or(f.to_owned(), |(_, m)| format!("{m}::{f}"))
}

fn crash(what: &str) -> (std::process::ExitStatus, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name("crash_child"),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, what)
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_crashing_box_is_named() {
    for (what, signal, text) in [
        ("segv", libc::SIGSEGV, "SIGSEGV"),
        ("fpe", libc::SIGFPE, "SIGFPE"),
        ("aborts", libc::SIGABRT, "SIGABRT"),
    ] {
        let (status, stderr) = crash(what);
        assert!(!status.success(), "{what}: {stderr}");
        assert_eq!(status.signal(), Some(signal), "{what}: {stderr}");
        let want = format!("snet: box `{what}` crashed: {text}");
        assert!(stderr.contains(&want), "{what}: {stderr}");
        assert!(!stderr.contains("child survived"));
    }
}

#[test]
fn a_stray_pointer_emitted_faults_in_c4snetout_with_the_box_named() {
    let (status, stderr) = crash("unmapped");
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{stderr}");
    assert!(
        stderr.contains("snet: box `unmapped` crashed: SIGSEGV"),
        "{stderr}"
    );
    assert!(
        stderr.contains("it crashed in C4SNetOut, reading the values it emitted"),
        "{stderr}"
    );
    // A crash in the box's own code does not say so.
    let (_, stderr) = crash("segv");
    assert!(!stderr.contains("in C4SNetOut"), "{stderr}");
}

#[test]
fn a_signal_outside_box_code_is_left_to_the_previous_handler() {
    for what in ["outside", "emitter"] {
        let (status, stderr) = crash(what);
        assert!(!status.success(), "{what}: {stderr}");
        assert_eq!(status.signal(), Some(libc::SIGSEGV), "{what}: {stderr}");
        assert!(!stderr.contains("snet: box"), "{what}: {stderr}");
    }
}

#[test]
fn a_crash_message_shows_the_record_and_the_expected_prototype_once() {
    let (status, stderr) = crash("segv");
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{stderr}");
    assert!(stderr.contains("  record given: {<t>=1}\n"), "{stderr}");
    assert!(
        stderr.contains("  C prototype expected: void *segv(void *hnd, int t);\n"),
        "{stderr}"
    );
    // A field the box released before it crashed; a long value is cut (64 bytes).
    let (status, stderr) = crash("text");
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{stderr}");
    let want = format!(
        "  record given: {{s=(char[204])\"a\\\"b\\n{}\"... (204 elements, 204 bytes), <t>=7}}\n",
        "x".repeat(60)
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert!(
        stderr.contains("void *text(void *hnd, c4snet_data_t *s, int t);"),
        "{stderr}"
    );
    // Four threads crash at once: one message.
    let (status, stderr) = crash("many");
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{stderr}");
    assert_eq!(stderr.matches("crashed").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("record given").count(), 1, "{stderr}");
}

#[test]
fn a_box_calling_exit_0_ends_the_process_with_status_1_and_names_itself() {
    let (status, stderr) = crash("exits");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("snet: box `exits` called exit(): the run ends here, unfinished"),
        "{stderr}"
    );
    assert!(stderr.contains("  record given: {<t>=1}\n"), "{stderr}");
    assert!(!stderr.contains("child survived"));
}
