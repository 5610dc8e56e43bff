//! C boxes called through the BoxFn interface: argument order, C4SNetOut decoding,
//! ownership and reference counts, NULL fields, every C4SNet function and type.

mod common;

use common::{build, field, run, sig, tag};
use snet_core::{Arg, CType, Value};

const BASIC: &str = r#"
#include <C4SNet.h>

/* box inc ((x, <t>, <#b>) -> (x, <t>) | (y, <#b>)) */
void *inc(void *hnd, c4snet_data_t *x, int t, int b)
{
    int v = *(int *)C4SNetGetData(x);
    c4snet_data_t *nx = C4SNetCreate(CTYPE_int, 1, &(int){v + 1});
    C4SNetFree(x);
    if (t >= 0) {
        C4SNetOut(hnd, 1, nx, t * 10);
    } else {
        C4SNetOut(hnd, 2, nx, b);
    }
    return hnd;
}

/* box count ((<n>) -> (i, <k>)): n records from a loop */
void *count(void *hnd, int n)
{
    for (int k = 0; k < n; k++) {
        c4snet_data_t *d = C4SNetCreate(CTYPE_int, 1, &k);
        C4SNetOut(hnd, 1, d, k * k);
    }
    return hnd;
}

/* box keep ((a) -> (a) | (b)): the input in two records */
void *keep(void *hnd, c4snet_data_t *a)
{
    C4SNetOut(hnd, 1, a);
    C4SNetOut(hnd, 2, C4SNetShallowCopy(a));
    return hnd;
}

/* box bump ((v) -> (v)): updates an int array in place and re-emits it */
void *bump(void *hnd, c4snet_data_t *v)
{
    int *p = C4SNetGetData(v);
    for (size_t i = 0; i < C4SNetArraySize(v); i++) {
        p[i] += 100;
    }
    C4SNetOut(hnd, 1, v);
    return hnd;
}

/* box probe ((<i>) -> (p, <i>) | ()): a NULL field, extra trailing argument ignored */
void *probe(void *hnd, int i)
{
    C4SNetOut(hnd, 1, NULL, i, 12345);
    C4SNetOut(hnd, 2);
    return hnd;
}

/* box isnull ((p, q) -> (<pnull>, <qnull>)) */
void *isnull(void *hnd, c4snet_data_t *p, c4snet_data_t *q)
{
    C4SNetOut(hnd, 1, p == NULL, q == NULL);
    if (q != NULL) {
        C4SNetFree(q);
    }
    return hnd;
}

/* box init ( -> (X, <n>)) */
void *init(void *hnd)
{
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, 5, "hello"), 5);
    return hnd;
}

/* box empty (() -> (e)) */
void *empty(void *hnd)
{
    double d = 0.5;
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_double, 1, &d));
    return hnd;
}
"#;

fn basic_sigs() -> Vec<snet_core::BoxSig> {
    vec![
        sig("inc", Some("x, <t>, <#b>"), &["x, <t>", "y, <#b>"]),
        sig("count", Some("<n>"), &["i, <k>"]),
        sig("keep", Some("a"), &["a", "b"]),
        sig("bump", Some("v"), &["v"]),
        sig("probe", Some("<i>"), &["p, <i>", ""]),
        sig("isnull", Some("p, q"), &["<pnull>, <qnull>"]),
        sig("init", None, &["X, <n>"]),
        sig("empty", Some(""), &["e"]),
    ]
}

#[test]
fn arguments_in_signature_order_and_variants() {
    let boxes = build("basic", &basic_sigs(), BASIC).unwrap();
    let x = Value::int(41);
    let (r, rec) = run(
        &boxes,
        "inc",
        vec![Arg::Field(Some(x.clone())), Arg::Tag(3), Arg::Tag(-7)],
    );
    r.unwrap();
    assert_eq!(x.ref_count(), 1, "the box released its argument");
    assert_eq!(rec.emitted.len(), 1);
    let (variant, vals) = &rec.emitted[0];
    assert_eq!(*variant, 1);
    assert_eq!(field(&vals[0]).as_i32(), Some(42));
    assert!(field(&vals[0]).is_scalar());
    assert_eq!(field(&vals[0]).ref_count(), 1);
    assert_eq!(tag(&vals[1]), 30);

    let (r, rec) = run(
        &boxes,
        "inc",
        vec![Arg::Field(Some(Value::int(1))), Arg::Tag(-1), Arg::Tag(-7)],
    );
    r.unwrap();
    assert_eq!(rec.emitted[0].0, 2);
    assert_eq!(field(&rec.emitted[0].1[0]).as_i32(), Some(2));
    assert_eq!(tag(&rec.emitted[0].1[1]), -7);
}

#[test]
fn several_records_per_call_in_order() {
    let boxes = build("loop", &basic_sigs(), BASIC).unwrap();
    let (r, rec) = run(&boxes, "count", vec![Arg::Tag(5)]);
    r.unwrap();
    let got: Vec<(i32, i32)> = rec
        .emitted
        .iter()
        .map(|(v, a)| {
            assert_eq!(*v, 1);
            (field(&a[0]).as_i32().unwrap(), tag(&a[1]))
        })
        .collect();
    assert_eq!(got, vec![(0, 0), (1, 1), (2, 4), (3, 9), (4, 16)]);
    let (r, rec) = run(&boxes, "count", vec![Arg::Tag(0)]);
    r.unwrap();
    assert!(rec.emitted.is_empty());
}

#[test]
fn shallow_copy_shares_the_object() {
    let boxes = build("keep", &basic_sigs(), BASIC).unwrap();
    let a = Value::double_array(&[1.0, 2.0]);
    let (r, rec) = run(&boxes, "keep", vec![Arg::Field(Some(a.clone()))]);
    r.unwrap();
    assert_eq!(rec.emitted.len(), 2);
    assert_eq!(rec.emitted[0].0, 1);
    assert_eq!(rec.emitted[1].0, 2);
    let (e1, e2) = (field(&rec.emitted[0].1[0]), field(&rec.emitted[1].1[0]));
    assert!(Value::ptr_eq(&a, e1) && Value::ptr_eq(&a, e2));
    assert_eq!(a.ref_count(), 3);
    drop(rec);
    assert_eq!(a.ref_count(), 1);
}

#[test]
fn in_place_update_is_not_copied() {
    let boxes = build("bump", &basic_sigs(), BASIC).unwrap();
    let v = Value::int_array(&[1, 2, 3]);
    let (r, rec) = run(&boxes, "bump", vec![Arg::Field(Some(v.clone()))]);
    r.unwrap();
    let out = field(&rec.emitted[0].1[0]);
    assert!(Value::ptr_eq(&v, out));
    assert_eq!(v.to_i32_vec(), Some(vec![101, 102, 103]));
}

#[test]
fn null_fields_are_carried_untouched() {
    let boxes = build("null", &basic_sigs(), BASIC).unwrap();
    let (r, rec) = run(&boxes, "probe", vec![Arg::Tag(9)]);
    r.unwrap();
    assert_eq!(rec.emitted.len(), 2);
    assert_eq!(rec.emitted[0], (1, vec![Arg::Field(None), Arg::Tag(9)]));
    assert_eq!(rec.emitted[1], (2, vec![]));
    // A NULL field reaches the next box as NULL.
    let q = Value::int(1);
    let (r, rec) = run(
        &boxes,
        "isnull",
        vec![Arg::Field(None), Arg::Field(Some(q.clone()))],
    );
    r.unwrap();
    assert_eq!(rec.emitted[0], (1, vec![Arg::Tag(1), Arg::Tag(0)]));
    assert_eq!(q.ref_count(), 1);
}

#[test]
fn initialiser_and_empty_input_boxes() {
    let boxes = build("init", &basic_sigs(), BASIC).unwrap();
    let (r, rec) = run(&boxes, "init", vec![]);
    r.unwrap();
    let x = field(&rec.emitted[0].1[0]);
    assert_eq!(x.ctype(), CType::Char);
    assert!(!x.is_scalar());
    assert_eq!(x.to_string_lossy().as_deref(), Some("hello"));
    assert_eq!(tag(&rec.emitted[0].1[1]), 5);
    let (r, rec) = run(&boxes, "empty", vec![]);
    r.unwrap();
    assert_eq!(field(&rec.emitted[0].1[0]).get_f64(0), Some(0.5));
}

#[test]
fn wrong_arguments_are_refused_before_calling_c() {
    let boxes = build("args", &basic_sigs(), BASIC).unwrap();
    let (r, rec) = run(&boxes, "count", vec![]);
    assert!(r.unwrap_err().0.contains("takes 1 argument"));
    assert!(rec.emitted.is_empty());
    let v = Value::int(1);
    let (r, _) = run(&boxes, "count", vec![Arg::Field(Some(v.clone()))]);
    assert!(r.unwrap_err().0.contains("must be a tag"));
    assert_eq!(v.ref_count(), 1);
}

const API: &str = r#"
#include <stdlib.h>
#include <string.h>
#include "C4SNet.h"

/* box info ((x) -> (x, <type>, <size>, <n>)) */
void *info(void *hnd, c4snet_data_t *x)
{
    C4SNetOut(hnd, 1, x, (int)C4SNetGetType(x), C4SNetSizeof(x), (int)C4SNetArraySize(x));
    return hnd;
}

/* box alloc ((<type>, <n>) -> (x)): bytes 0, 1, 2, ... */
void *alloc(void *hnd, int type, int n)
{
    void *data = NULL;
    c4snet_data_t *x = C4SNetAlloc((c4snet_type_t)type, (size_t)n, &data);
    unsigned char *b = data;
    for (int i = 0; i < n * C4SNetSizeof(x); i++) {
        b[i] = (unsigned char)i;
    }
    C4SNetOut(hnd, 1, x);
    return hnd;
}

/* box deep ((x) -> (x, y)): y is a deep copy of x with its first byte changed */
void *deep(void *hnd, c4snet_data_t *x)
{
    c4snet_data_t *y = C4SNetDeepCopy(x);
    ((unsigned char *)C4SNetGetData(y))[0] ^= 0xff;
    C4SNetOut(hnd, 1, x, y);
    return hnd;
}

/* box upper ((s) -> (s)): a string through C4SNetGetString */
void *upper(void *hnd, c4snet_data_t *s)
{
    char *str = C4SNetGetString(s);
    size_t n = strlen(str);
    for (size_t i = 0; i < n; i++) {
        if (str[i] >= 'a' && str[i] <= 'z') {
            str[i] = (char)(str[i] - 'a' + 'A');
        }
    }
    C4SNetFree(s);
    C4SNetOut(hnd, 1, C4SNetCreate(CTYPE_char, n, str));
    free(str);
    return hnd;
}
"#;

fn api_sigs() -> Vec<snet_core::BoxSig> {
    vec![
        sig("info", Some("x"), &["x, <type>, <size>, <n>"]),
        sig("alloc", Some("<type>, <n>"), &["x"]),
        sig("deep", Some("x"), &["x, y"]),
        sig("upper", Some("s"), &["s"]),
    ]
}

#[test]
fn every_type_through_every_accessor() {
    let boxes = build("api", &api_sigs(), API).unwrap();
    for t in CType::ALL {
        for (n, scalar) in [(1usize, true), (3, false), (0, false), (1, false)] {
            let x = Value::alloc(t, n, scalar);
            let (r, rec) = run(&boxes, "info", vec![Arg::Field(Some(x.clone()))]);
            r.unwrap();
            let a = &rec.emitted[0].1;
            assert!(Value::ptr_eq(field(&a[0]), &x));
            assert_eq!(tag(&a[1]), t as i32, "{t:?}");
            assert_eq!(tag(&a[2]) as usize, t.size(), "{t:?}");
            assert_eq!(tag(&a[3]) as usize, n, "{t:?}");
        }
        // Alloc: size 1 makes a scalar, otherwise an array.
        for n in [0, 1, 4] {
            let (r, rec) = run(&boxes, "alloc", vec![Arg::Tag(t as i32), Arg::Tag(n)]);
            r.unwrap();
            let x = field(&rec.emitted[0].1[0]);
            assert_eq!(x.ctype(), t);
            assert_eq!(x.len(), n as usize);
            assert_eq!(x.is_scalar(), n == 1);
            let want: Vec<u8> = (0..n as usize * t.size()).map(|i| i as u8).collect();
            assert_eq!(x.bytes(), &want[..]);
        }
    }
}

#[test]
fn deep_copy_is_independent() {
    let boxes = build("deep", &api_sigs(), API).unwrap();
    for x in [
        Value::int(7),
        Value::double_array(&[1.0, 2.0, 3.0]),
        Value::string(""),
    ] {
        let (r, rec) = run(&boxes, "deep", vec![Arg::Field(Some(x.clone()))]);
        r.unwrap();
        let (a, y) = (field(&rec.emitted[0].1[0]), field(&rec.emitted[0].1[1]));
        assert!(Value::ptr_eq(a, &x));
        assert!(!Value::ptr_eq(y, &x));
        assert_eq!(y.ref_count(), 1);
        assert_eq!(
            (y.ctype(), y.len(), y.is_scalar()),
            (x.ctype(), x.len(), x.is_scalar())
        );
        if !x.is_empty() {
            assert_eq!(y.bytes()[0], x.bytes()[0] ^ 0xff);
            assert_eq!(y.bytes()[1..], x.bytes()[1..]);
        }
    }
}

#[test]
fn strings_through_get_string() {
    let boxes = build("str", &api_sigs(), API).unwrap();
    let s = Value::string("Hello, World.");
    let (r, rec) = run(&boxes, "upper", vec![Arg::Field(Some(s.clone()))]);
    r.unwrap();
    assert_eq!(s.ref_count(), 1);
    let out = field(&rec.emitted[0].1[0]);
    assert_eq!(out.to_string_lossy().as_deref(), Some("HELLO, WORLD."));
    assert_eq!(out.ctype(), CType::Char);
    assert_eq!(out.len(), 13);
    // unsigned char works too; an int object is a box failure naming the box.
    let u = Value::from_bytes(CType::UChar, 2, false, b"ab");
    let (r, rec) = run(&boxes, "upper", vec![Arg::Field(Some(u))]);
    r.unwrap();
    assert_eq!(
        field(&rec.emitted[0].1[0]).to_string_lossy().as_deref(),
        Some("AB")
    );
}

#[test]
fn boxes_run_concurrently() {
    let boxes = build("conc", &basic_sigs(), BASIC).unwrap();
    let shared = Value::int_array(&[5; 16]);
    std::thread::scope(|s| {
        for t in 0..4 {
            let boxes = &boxes;
            let shared = &shared;
            s.spawn(move || {
                for i in 0..2000 {
                    let (r, rec) = run(boxes, "keep", vec![Arg::Field(Some(shared.clone()))]);
                    r.unwrap();
                    assert_eq!(rec.emitted.len(), 2);
                    let (r, rec) = run(
                        boxes,
                        "inc",
                        vec![Arg::Field(Some(Value::int(i))), Arg::Tag(t), Arg::Tag(0)],
                    );
                    r.unwrap();
                    assert_eq!(field(&rec.emitted[0].1[0]).as_i32(), Some(i + 1));
                }
            });
        }
    });
    assert_eq!(shared.ref_count(), 1);
}
