//! Every error path: compiler errors, missing box functions, bad variants, failing
//! downstream, misuse of the API, panics in the emitter.

mod common;

use common::{build, field, run, scratch, sig, write_sources, Recorder};
use snet_c4snet::{load_boxes, C4SNetError};
use snet_core::{Arg, BoxFailure, Emitter, Value};

#[test]
fn compiler_errors_carry_the_compilers_output() {
    let src = "#include <C4SNet.h>\nvoid *broken(void *hnd)\n{\n    return hnd +* ;\n}\n";
    let err = build("cc-error", &[sig("broken", None, &[""])], src).unwrap_err();
    let C4SNetError::Compile {
        file,
        command,
        output,
    } = &err
    else {
        panic!("expected a compile error, got {err}");
    };
    assert!(file.ends_with("boxes.c"));
    assert!(command.contains("-O2") && command.contains("-fPIC"));
    assert!(output.contains("boxes.c:4"), "{output}");
    assert!(output.contains("error"), "{output}");
    let shown = err.to_string();
    assert!(shown.contains("C compilation failed") && shown.contains("boxes.c:4"));
}

#[test]
fn a_box_without_a_function_names_the_box_and_the_files() {
    let dir = scratch("missing");
    let srcs = write_sources(
        &dir,
        &[
            (
                "a.c",
                "#include <C4SNet.h>\nvoid *here(void *hnd) { return hnd; }\n",
            ),
            ("b.c", "int helper(int x) { return x + 1; }\n"),
        ],
    );
    let sigs = [sig("here", None, &[""]), sig("nowhere", Some("x"), &["x"])];
    let err = load_boxes(&sigs, &srcs, &common::options(&dir)).unwrap_err();
    let C4SNetError::MissingSymbol {
        name,
        searched,
        found_elsewhere,
        closest,
        defined,
    } = &err
    else {
        panic!("expected a missing symbol, got {err}");
    };
    assert_eq!(name, "nowhere");
    assert_eq!(searched, &srcs);
    assert!(found_elsewhere.is_none());
    // Nothing in the sources is spelt like it.
    assert!(closest.is_none(), "{closest:?}");
    // What is there instead: the function taking a handle first, not the helper.
    assert_eq!(defined, &["here".to_string()]);
    let shown = err.to_string();
    assert!(shown.contains("box `nowhere`"), "{shown}");
    assert!(
        shown.contains("the box function there is `here`"),
        "{shown}"
    );
    assert!(shown.contains("a.c") && shown.contains("b.c"), "{shown}");
}

/// Issue 33 item 6: a box whose C function is spelt differently in the sources is told
/// the closest function name there.
#[test]
fn a_misspelt_box_function_gets_the_closest_name_in_the_sources() {
    let dir = scratch("misspelt");
    let srcs = write_sources(
        &dir,
        &[(
            "a.c",
            "#include <C4SNet.h>\nstatic int helper(int x) { if (x) return x; return 0; }\n\
             void *cuont(void *hnd, c4snet_data_t *x) { helper(1); return hnd; }\n",
        )],
    );
    let err = load_boxes(
        &[sig("count", Some("x"), &["x"])],
        &srcs,
        &common::options(&dir),
    )
    .unwrap_err();
    let C4SNetError::MissingSymbol { closest, .. } = &err else {
        panic!("expected a missing symbol, got {err}");
    };
    assert_eq!(closest.as_deref(), Some("cuont"));
    assert!(err.to_string().contains("did you mean `cuont`?"), "{err}");
}

#[test]
fn a_c_library_function_is_not_taken_for_a_box() {
    // `index` exists in the C library; without a box of that name it must not be called.
    let dir = scratch("libc-name");
    let srcs = write_sources(&dir, &[("a.c", "int unrelated;\n")]);
    let err = load_boxes(
        &[sig("index", Some("x"), &["x"])],
        &srcs,
        &common::options(&dir),
    )
    .unwrap_err();
    match &err {
        C4SNetError::MissingSymbol {
            name,
            found_elsewhere: Some(lib),
            ..
        } => {
            assert_eq!(name, "index");
            assert!(lib.to_string_lossy().contains("libc"), "{}", lib.display());
        }
        other => panic!("expected a missing symbol found elsewhere, got {other}"),
    }
}

#[test]
fn invalid_names_and_sources_are_refused() {
    let dir = scratch("invalid");
    let srcs = write_sources(&dir, &[("a.c", "int x;\n")]);
    let opts = common::options(&dir);
    let err = load_boxes(&[sig("while", None, &[])], &srcs, &opts).unwrap_err();
    assert!(matches!(err, C4SNetError::InvalidBoxName { .. }), "{err}");
    let err = load_boxes(
        &[sig("f", Some("x"), &[]), sig("f", Some("<x>"), &[])],
        &srcs,
        &opts,
    )
    .unwrap_err();
    assert!(
        matches!(err, C4SNetError::ConflictingSignatures { .. }),
        "{err}"
    );
    let txt = dir.join("notes.txt");
    std::fs::write(&txt, "x").unwrap();
    let err = load_boxes(&[], &[txt], &opts).unwrap_err();
    assert!(
        matches!(err, C4SNetError::UnsupportedSource { .. }),
        "{err}"
    );
    let err = load_boxes(&[], &[dir.join("absent.c")], &opts).unwrap_err();
    assert!(matches!(err, C4SNetError::Io { .. }), "{err}");
}

const MISUSE: &str = r#"
#include <C4SNet.h>
#include <stdlib.h>

/* box bad ((a) -> (a, <t>)): variant 3 of 1, then more emissions that are ignored */
void *bad(void *hnd, c4snet_data_t *a)
{
    C4SNetOut(hnd, 3, a, 1);
    C4SNetOut(hnd, 1, C4SNetShallowCopy(a), 2);
    C4SNetOut(hnd, 0, a, 3);
    return hnd;
}

/* box many ((a) -> (a, <t>)): three emissions of shared copies */
void *many(void *hnd, c4snet_data_t *a)
{
    for (int i = 0; i < 3; i++) {
        C4SNetOut(hnd, 1, C4SNetShallowCopy(a), i);
    }
    C4SNetFree(a);
    return hnd;
}

/* box str ((a) -> (a)): C4SNetGetString on an int object */
void *str(void *hnd, c4snet_data_t *a)
{
    char *s = C4SNetGetString(a);
    if (s == NULL) {
        C4SNetOut(hnd, 1, a);
    } else {
        free(s);
        C4SNetFree(a);
    }
    return hnd;
}

/* box outer ((a) -> (a)): emits, then misuses the API */
void *outer(void *hnd, c4snet_data_t *a)
{
    c4snet_data_t *keep = C4SNetShallowCopy(a);
    C4SNetOut(hnd, 1, a);
    char *s = C4SNetGetString(keep);
    free(s);
    C4SNetFree(keep);
    return hnd;
}

/* box nullobj ((<t>) -> (<s>)) */
void *nullobj(void *hnd, int t)
{
    C4SNetOut(hnd, 1, C4SNetSizeof(NULL) + t);
    return hnd;
}

/* box huge ((<t>) -> (x)): asks for 2^t doubles */
void *huge(void *hnd, int t)
{
    void *p = &p;
    c4snet_data_t *x = C4SNetAlloc(CTYPE_double, (size_t)1 << t, &p);
    if (x != NULL || p != NULL) {
        C4SNetOut(hnd, 1, x);
    }
    return hnd;
}

/* box badtype ((<t>) -> (x)) */
void *badtype(void *hnd, int t)
{
    void *p;
    C4SNetOut(hnd, 1, C4SNetAlloc((c4snet_type_t)t, 1, &p));
    return hnd;
}
"#;

fn misuse_sigs() -> Vec<snet_core::BoxSig> {
    vec![
        sig("bad", Some("a"), &["a, <t>"]),
        sig("many", Some("a"), &["a, <t>"]),
        sig("str", Some("a"), &["a"]),
        sig("nullobj", Some("<t>"), &["<s>"]),
        sig("outer", Some("a"), &["a"]),
        sig("badtype", Some("<t>"), &["x"]),
        sig("huge", Some("<t>"), &["x"]),
    ]
}

#[test]
fn a_variant_out_of_range_fails_the_call_naming_box_and_variant() {
    let boxes = build("variant", &misuse_sigs(), MISUSE).unwrap();
    let a = Value::int(1);
    let (r, rec) = run(&boxes, "bad", vec![Arg::Field(Some(a.clone()))]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `bad`") && msg.contains("variant 3"),
        "{msg}"
    );
    assert!(msg.contains("1 output variant"), "{msg}");
    assert!(
        rec.emitted.is_empty(),
        "emissions after the error are ignored"
    );
    // The shallow copy emitted after the error was released; the reference passed with
    // the bad variant cannot be (its label kinds are unknown) and stays leaked.
    assert_eq!(a.ref_count(), 2);
}

#[test]
fn a_downstream_failure_stops_further_emissions() {
    let boxes = build("downstream", &misuse_sigs(), MISUSE).unwrap();
    let a = Value::int(1);
    let mut rec = Recorder {
        fail_at: Some(1),
        ..Recorder::default()
    };
    let f = boxes.table().get("many").unwrap();
    let r = f.invoke(snet_core::args![Arg::Field(Some(a.clone()))], &mut rec);
    assert_eq!(r.unwrap_err().0, "downstream refused the record");
    assert_eq!(rec.emitted.len(), 1);
    assert_eq!(rec.emitted[0].1[1], Arg::Tag(0));
    drop(rec);
    assert_eq!(a.ref_count(), 1, "refused and ignored values were released");
}

#[test]
fn api_misuse_fails_the_call() {
    let boxes = build("misuse", &misuse_sigs(), MISUSE).unwrap();
    let a = Value::int(5);
    let (r, rec) = run(&boxes, "str", vec![Arg::Field(Some(a.clone()))]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `str`") && msg.contains("C4SNetGetString"),
        "{msg}"
    );
    assert!(rec.emitted.is_empty());
    assert_eq!(a.ref_count(), 1);
    let (r, _) = run(&boxes, "nullobj", vec![Arg::Tag(0)]);
    let msg = r.unwrap_err().0;
    assert!(msg.contains("C4SNetSizeof: NULL object"), "{msg}");
    let (r, _) = run(&boxes, "badtype", vec![Arg::Tag(12)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("C4SNetAlloc: invalid element type 12"),
        "{msg}"
    );
    // An absurd size fails the call (NULL, and NULL through the data pointer), it does
    // not end the process: more bytes than memory can address, and 2 PiB.
    for t in [62, 48] {
        let (r, rec) = run(&boxes, "huge", vec![Arg::Tag(t)]);
        let msg = r.unwrap_err().0;
        assert!(
            msg.contains("box `huge`: C4SNetAlloc: cannot allocate")
                && msg.contains("elements of type `double`"),
            "{msg}"
        );
        assert!(rec.emitted.is_empty(), "{t}");
    }
    let (r, rec) = run(&boxes, "huge", vec![Arg::Tag(10)]);
    r.unwrap();
    assert_eq!(field(&rec.emitted[0].1[0]).len(), 1024);
    // The box still works afterwards.
    let (r, rec) = run(&boxes, "badtype", vec![Arg::Tag(9)]);
    r.unwrap();
    assert!(field(&rec.emitted[0].1[0]).is_scalar());
}

struct Panicker;

impl Emitter for Panicker {
    fn emit(&mut self, _: usize, _: snet_core::Args) -> Result<(), BoxFailure> {
        panic!("engine bug");
    }
}

#[test]
fn a_panicking_emitter_unwinds_after_the_box_returns() {
    let boxes = build("panic", &misuse_sigs(), MISUSE).unwrap();
    let a = Value::int(1);
    let f = boxes.table().get("many").unwrap().clone();
    let arg = a.clone();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _ = f.invoke(snet_core::args![Arg::Field(Some(arg))], &mut Panicker);
    }));
    let payload = r.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"engine bug"));
    assert_eq!(
        a.ref_count(),
        1,
        "the box ran to completion and released its copies"
    );
}

#[test]
fn old_code_builds_with_warnings_not_errors() {
    // usleep without <unistd.h>, implicit int return: warnings only, and they are shown.
    let src = r#"
#include <C4SNet.h>
void *nap(void *hnd, int t)
{
    usleep(1);
    C4SNetOut(hnd, 1, t);
    return hnd;
}
"#;
    let boxes = build("old", &[sig("nap", Some("<t>"), &["<t>"])], src).unwrap();
    let w = boxes.warnings().join("\n");
    assert!(w.contains("usleep"), "{w}");
    let (r, rec) = run(&boxes, "nap", vec![Arg::Tag(4)]);
    r.unwrap();
    assert_eq!(rec.emitted[0].1, vec![Arg::Tag(4)]);
}

/// Runs box `inner` inline on every emitted record, as an engine walking records
/// through the network on the calling thread would.
struct Inline<'a> {
    inner: &'a dyn snet_core::BoxFn,
    results: Vec<Result<(), BoxFailure>>,
}

impl Emitter for Inline<'_> {
    fn emit(&mut self, _: usize, values: snet_core::Args) -> Result<(), BoxFailure> {
        let r = self.inner.invoke(values, &mut Recorder::default());
        self.results.push(r);
        Ok(())
    }
}

#[test]
fn errors_are_attributed_to_the_right_box_when_boxes_nest() {
    let boxes = build("nested", &misuse_sigs(), MISUSE).unwrap();
    let inner = boxes.table().get("str").unwrap();
    let mut em = Inline {
        inner: &**inner,
        results: Vec::new(),
    };
    let a = Value::int(3);
    let outer = boxes.table().get("outer").unwrap();
    let r = outer.invoke(snet_core::args![Arg::Field(Some(a.clone()))], &mut em);
    // The inner box failed on its own C4SNetGetString ...
    assert_eq!(em.results.len(), 1);
    let inner_msg = em.results[0].clone().unwrap_err().0;
    assert!(inner_msg.starts_with("box `str`"), "{inner_msg}");
    // ... and the outer box's later misuse is reported for the outer box.
    let outer_msg = r.unwrap_err().0;
    assert!(outer_msg.starts_with("box `outer`"), "{outer_msg}");
    assert_eq!(a.ref_count(), 1);
}

const RETURNS: &str = r#"
#include <C4SNet.h>
#include <stddef.h>

/* box nullret ((<t>) -> (<t>)): emits, then returns NULL instead of hnd */
void *nullret(void *hnd, int t)
{
    C4SNetOut(hnd, 1, t);
    return NULL;
}

/* box fallsoff ((<t>) -> (<t>)): old code that forgets `return hnd;` after its last
 * C4SNetOut (the classic runtime's C4SNetOut left the handle as the return value) */
void *fallsoff(void *hnd, int t)
{
    C4SNetOut(hnd, 1, t + 1);
}
"#;

#[test]
fn a_box_returning_null_instead_of_its_handle_fails_the_call() {
    // Spec §12.3: the function MUST return hnd (the reference dereferences it).
    let sigs = [
        sig("nullret", Some("<t>"), &["<t>"]),
        sig("fallsoff", Some("<t>"), &["<t>"]),
    ];
    let boxes = build("nullret", &sigs, RETURNS).unwrap();
    let (r, rec) = run(&boxes, "nullret", vec![Arg::Tag(4)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `nullret`") && msg.contains("returned NULL") && msg.contains("hnd"),
        "{msg}"
    );
    assert_eq!(rec.emitted.len(), 1, "the record emitted before returning");
    let (r, rec) = run(&boxes, "fallsoff", vec![Arg::Tag(4)]);
    r.unwrap();
    assert_eq!(rec.emitted[0].1, vec![Arg::Tag(5)]);
}

const HANDLES: &str = r#"
#include <C4SNet.h>
#include <pthread.h>
#include <stddef.h>

static void *kept = NULL;

/* box keep ((<t>) -> (<t>)): keeps its handle, and emits through the one it kept
 * at the previous call (spec 12.4: only the running call's handle is valid) */
void *keep(void *hnd, int t)
{
    if (kept != NULL) {
        C4SNetOut(kept, 1, t + 100);
    }
    kept = hnd;
    C4SNetOut(hnd, 1, t);
    return hnd;
}

static void *emit_from_thread(void *hnd)
{
    C4SNetOut(hnd, 1, 55);
    return NULL;
}

/* box onthread ((<t>) -> (<t>)): emits from a thread of its own, joined before it
 * returns (spec 12.4: from the thread running the call) */
void *onthread(void *hnd, int t)
{
    pthread_t p;
    (void)t;
    if (pthread_create(&p, NULL, emit_from_thread, hnd) == 0) {
        pthread_join(p, NULL);
    }
    return hnd;
}

/* box nullhnd ((<t>) -> (<t>)): emits through NULL */
void *nullhnd(void *hnd, int t)
{
    C4SNetOut(NULL, 1, t);
    return hnd;
}

/* box otherret ((<t>) -> (<t>)): returns a pointer that is not its handle */
void *otherret(void *hnd, int t)
{
    (void)hnd;
    (void)t;
    return &kept;
}
"#;

/// A call of `keep` from a deeper stack frame than the test's own calls: its handle
/// lies elsewhere, as a handle of an earlier call on another task's stack would.
#[inline(never)]
fn run_deeper(boxes: &snet_c4snet::CBoxes, name: &str, t: i32) -> Result<(), BoxFailure> {
    let pad = std::hint::black_box([0u8; 4096]);
    let r = run(boxes, name, vec![Arg::Tag(t)]).0;
    std::hint::black_box(pad);
    r
}

#[test]
fn emitting_through_a_handle_that_is_not_the_running_calls_fails_the_call() {
    let sigs = [
        sig("keep", Some("<t>"), &["<t>"]),
        sig("onthread", Some("<t>"), &["<t>"]),
        sig("nullhnd", Some("<t>"), &["<t>"]),
        sig("otherret", Some("<t>"), &["<t>"]),
    ];
    let boxes = build("handles", &sigs, HANDLES).unwrap();
    // A handle kept from an earlier call (made at another stack depth, so the new
    // call's handle differs): never read, the call fails.
    run_deeper(&boxes, "keep", 1).unwrap();
    let (r, rec) = run(&boxes, "keep", vec![Arg::Tag(2)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `keep`") && msg.contains("not this call's"),
        "{msg}"
    );
    assert!(
        rec.emitted.iter().all(|(_, a)| a != &vec![Arg::Tag(102)]),
        "nothing through it"
    );
    // From a thread of the box's own: the call that started it fails.
    let (r, rec) = run(&boxes, "onthread", vec![Arg::Tag(1)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `onthread`") && msg.contains("not running a box call"),
        "{msg}"
    );
    assert!(rec.emitted.is_empty());
    // The failure is not left for a later call (`keep` now emits through the handle
    // of its previous call, made at this same depth: the same handle).
    let (r, rec) = run(&boxes, "keep", vec![Arg::Tag(3)]);
    r.unwrap();
    assert_eq!(rec.emitted.len(), 2);
    let (r, _) = run(&boxes, "nullhnd", vec![Arg::Tag(1)]);
    assert!(r.unwrap_err().0.contains("(0x0)"));
    // Spec 12.3: a box returns its handle; another pointer is an error as NULL is.
    let (r, _) = run(&boxes, "otherret", vec![Arg::Tag(1)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `otherret` returned") && msg.contains("not its handle"),
        "{msg}"
    );
}

const STRAYS: &str = r#"
#include <C4SNet.h>

/* box strayout ((<t>) -> (a)): emits a pointer to its own stack, not a value. */
void *strayout(void *hnd, int t)
{
    int junk[16];
    int i;
    for (i = 0; i < 16; i++) {
        junk[i] = 0x7f7f7f7f + t;
    }
    C4SNetOut(hnd, 1, (c4snet_data_t *)junk);
    return hnd;
}

/* box strayfree ((<t>) -> (<t>)): frees a pointer to its own stack. */
void *strayfree(void *hnd, int t)
{
    int junk[16];
    int i;
    for (i = 0; i < 16; i++) {
        junk[i] = 0x7f7f7f7f + t;
    }
    C4SNetFree((c4snet_data_t *)junk);
    C4SNetOut(hnd, 1, t);
    return hnd;
}

/* box nullout ((<t>) -> (a)): a NULL field is allowed (spec §12.5 rule 4). */
void *nullout(void *hnd, int t)
{
    (void)t;
    C4SNetOut(hnd, 1, (c4snet_data_t *)0);
    return hnd;
}
"#;

#[test]
fn a_pointer_that_is_not_a_value_given_to_c4snetout_or_c4snetfree_fails_the_call() {
    // Spec §12.4/§12.5: a stray pointer (or a value missing from C4SNetOut's
    // arguments, read from wherever it would have been) is refused with the box named,
    // instead of crashing the runtime later with nothing named.
    let sigs = [
        sig("strayout", Some("<t>"), &["a"]),
        sig("strayfree", Some("<t>"), &["<t>"]),
        sig("nullout", Some("<t>"), &["a"]),
    ];
    let boxes = build("strays", &sigs, STRAYS).unwrap();
    let (r, rec) = run(&boxes, "strayout", vec![Arg::Tag(1)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `strayout`")
            && msg.contains("C4SNetOut(hnd, 1, ...): value 1")
            && msg.contains("is not a c4snet_data_t"),
        "{msg}"
    );
    assert!(rec.emitted.is_empty(), "nothing emitted");
    let (r, _) = run(&boxes, "strayfree", vec![Arg::Tag(1)]);
    let msg = r.unwrap_err().0;
    assert!(
        msg.contains("box `strayfree`")
            && msg.contains("C4SNetFree(")
            && msg.contains("not a c4snet_data_t"),
        "{msg}"
    );
    let (r, rec) = run(&boxes, "nullout", vec![Arg::Tag(1)]);
    r.unwrap();
    assert_eq!(rec.emitted.len(), 1, "a NULL field passes the check");
}
