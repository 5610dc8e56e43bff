//! Box invocation with flow inheritance (spec §7.3, §7.4).

use crate::boxes::{Arg, Args, BoxFailure, BoxFn, BoxSig, Emitter};
use crate::det::{ctx_add, Ctx, Token};
use crate::error::RunError;
use crate::label::{Label, LabelKind};
use crate::record::{DataMode, Rec, Record};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Builds emitted records and hands them to the engine as they are emitted.
struct BoxEmitter<'a, S> {
    sig: &'a BoxSig,
    rest: &'a Record,
    mode: DataMode,
    ctx: &'a Ctx,
    /// Where emitted records go: a closure of the caller's type, so that the walk it
    /// starts is compiled into the emit path (a record passed through calls by value
    /// is copied at each).
    sink: &'a mut S,
    failed: Option<RunError>,
    emitted: usize,
}

impl<S: FnMut(Token) -> Result<(), RunError>> Emitter for BoxEmitter<'_, S> {
    fn emit(&mut self, variant: usize, mut values: Args) -> Result<(), BoxFailure> {
        self.emit_from(variant, &mut values)
    }

    fn emit_from(&mut self, variant: usize, values: &mut Args) -> Result<(), BoxFailure> {
        if self.failed.is_some() {
            return Err(BoxFailure("the run is stopping".into()));
        }
        let Some(labels) = variant.checked_sub(1).and_then(|i| self.sig.outputs.get(i)) else {
            let msg = format!(
                "box emitted variant {variant}, but it declares {} output variant(s)",
                self.sig.outputs.len()
            );
            return Err(BoxFailure(msg));
        };
        if values.len() < labels.len() {
            return Err(BoxFailure(format!(
                "variant {variant} has {} labels but {} values were emitted",
                labels.len(),
                values.len()
            )));
        }
        // Built in its slot: the token carrying it moves as two pointers.
        let mut rec = Rec::empty();
        rec.mode = self.mode;
        // The labels of a variant are distinct (the front end checks it, spec §9 item
        // 12), so each is appended without a search.
        for (l, v) in labels.iter().zip(values.drain(..)) {
            match (l.kind(), v) {
                (LabelKind::Field, Arg::Field(f)) => rec.push_field(*l, f),
                (LabelKind::Tag | LabelKind::BTag, Arg::Tag(t)) => rec.push_tag(*l, t),
                (_, v) => {
                    return Err(BoxFailure(format!(
                        "variant {variant}: label {l} got a value of the wrong kind ({v:?})"
                    )))
                }
            }
        }
        rec.inherit_from(self.rest);
        ctx_add(self.ctx, 1);
        self.emitted += 1;
        let tok = Token {
            rec,
            ctx: self.ctx.clone(),
        };
        if let Err(e) = (self.sink)(tok) {
            self.failed = Some(e);
            return Err(BoxFailure("the run is stopping".into()));
        }
        Ok(())
    }
}

/// A failed call's error, naming the record the box received (spec §10): `rest`, the
/// labels it did not take, with its input labels put back: tags with their values
/// (`taken_tags`), fields by name only (the box owned their values and may have freed
/// them; keeping a reference to each for a message would cost every call).
fn box_error(
    sig: &BoxSig,
    loc: &str,
    rest: &Record,
    taken_tags: &[(Label, i32)],
    msg: impl Into<String>,
) -> RunError {
    let mut shown = format!("{rest:?}");
    shown.pop(); // the closing brace
    let mut sep = if shown.len() > 1 { ", " } else { "" };
    for l in sig.input.iter().flatten().filter(|l| !rest.has(**l)) {
        match taken_tags.iter().find(|(t, _)| t == l) {
            Some((_, v)) => shown.push_str(&format!("{sep}{l}={v}")),
            None => shown.push_str(&format!("{sep}{l}=<given to the box>")),
        }
        sep = ", ";
    }
    shown.push('}');
    RunError::new(format!("box `{}` ({loc})", sig.name), Some(shown), msg)
}

/// Invokes box `f` on `tok` (or, for an initialiser, on nothing): removes the input
/// labels, calls the box, and passes every emitted record (with flow inheritance and
/// the input's causal context) to `sink` as it is emitted. Returns the number of
/// records emitted. The caller releases the input's context unit afterwards.
pub fn invoke(
    sig: &BoxSig,
    loc: &str,
    f: &dyn BoxFn,
    input: Option<&mut Record>,
    ctx: &Ctx,
    sink: &mut impl FnMut(Token) -> Result<(), RunError>,
) -> Result<usize, RunError> {
    // The input record becomes what the box does not take, in place, in its slot (a
    // record is about a hundred bytes: moving it cost a copy, often with a
    // store-forwarding stall).
    let mut empty;
    let rest: &mut Record = match input {
        Some(r) => r,
        None => {
            empty = Record::new();
            &mut empty
        }
    };
    let mut args = Args::new();
    // Tag values the box takes, for an error message (copies of integers, no cost worth
    // the name; fields are named without their values, see `box_error`).
    let mut taken_tags: smallvec::SmallVec<[(Label, i32); 4]> = smallvec::SmallVec::new();
    let mode = match &sig.input {
        Some(labels) => {
            for (i, l) in labels.iter().enumerate() {
                // A pass-through label is received but not consumed (§7.3.6).
                let keep = sig.passthrough.contains(l);
                let a = match l.kind() {
                    LabelKind::Field if keep => rest.field(*l).cloned().map(Arg::Field),
                    LabelKind::Field => rest.take_field(*l).map(Arg::Field),
                    _ if keep => rest.tag(*l).map(Arg::Tag),
                    _ => rest.take_tag(*l).map(Arg::Tag),
                };
                match a {
                    Some(a) => {
                        if let Arg::Tag(t) = a {
                            taken_tags.push((*l, t));
                        }
                        args.push(a);
                    }
                    None => {
                        // A record the type check let through without a label (only
                        // a program whose routing is wrong): the labels taken so far
                        // go back, for the message.
                        for (l, a) in labels[..i].iter().zip(args.drain(..)) {
                            if sig.passthrough.contains(l) {
                                continue;
                            }
                            match a {
                                Arg::Field(f) => rest.push_field(*l, f),
                                Arg::Tag(t) => rest.push_tag(*l, t),
                            }
                        }
                        let mut msg = format!("record lacks input label {l}");
                        let others = rest.labels().filter(|m| !labels.contains(m));
                        if let Some(hint) = crate::label::suggest(*l, others) {
                            msg.push_str(&format!("; {hint}"));
                        }
                        return Err(RunError::new(
                            format!("box `{}` ({loc})", sig.name),
                            Some(format!("{rest:?}")),
                            msg,
                        ));
                    }
                }
            }
            // Binding tags are never inherited (`inherit_from` skips them).
            rest.mode
        }
        None => DataMode::Textual,
    };
    let mut em = BoxEmitter {
        sig,
        rest,
        mode,
        ctx,
        sink,
        failed: None,
        emitted: 0,
    };
    let result = catch_unwind(AssertUnwindSafe(|| f.invoke_from(&mut args, &mut em)));
    if let Some(e) = em.failed.take() {
        return Err(e);
    }
    match result {
        Ok(Ok(())) => Ok(em.emitted),
        Ok(Err(e)) => Err(box_error(
            sig,
            loc,
            rest,
            &taken_tags,
            format!("box failed: {e}"),
        )),
        Err(panic) => {
            let msg = panic_message(&*panic);
            Err(box_error(
                sig,
                loc,
                rest,
                &taken_tags,
                format!("box panicked: {msg}"),
            ))
        }
    }
}

/// The message of a panic payload (`&str` or `String`; "unknown panic" otherwise).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boxes::Emitter;
    use crate::value::Value;

    fn sig() -> BoxSig {
        BoxSig {
            name: "f".into(),
            input: Some(vec![Label::field("a"), Label::tag("t"), Label::field("b")]),
            outputs: vec![vec![Label::field("c"), Label::tag("u")]],
            passthrough: vec![],
        }
    }

    #[test]
    fn a_missing_input_label_is_named_and_the_record_is_shown_whole() {
        let f = |_: Args, _: &mut dyn Emitter| -> Result<(), BoxFailure> { panic!("never called") };
        let mut rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("x", Value::int(2));
        let e = invoke(&sig(), "here", &f, Some(&mut rec), &None, &mut |_| Ok(()))
            .expect_err("b is missing");
        assert!(e.message.contains("record lacks input label b"), "{e}");
        let shown = e.record.clone().unwrap_or_default();
        for l in ["a=", "<t>=5", "x="] {
            assert!(shown.contains(l), "{shown} lacks {l}");
        }
        // The labels taken before the missing one are back in the record.
        assert!(rec.has(Label::field("a")) && rec.tag(Label::tag("t")) == Some(5));
    }

    /// Issue 33 item 6: a 35 KB field is shown by its first bytes and its length, and
    /// the label the record has instead is suggested.
    #[test]
    fn a_missing_label_suggests_the_closest_and_cuts_long_values() {
        let f = |_: Args, _: &mut dyn Emitter| -> Result<(), BoxFailure> { panic!("never called") };
        let text = "word ".repeat(7000);
        let sig = BoxSig {
            name: "count".into(),
            input: Some(vec![Label::field("txt")]),
            outputs: vec![],
            passthrough: vec![],
        };
        let mut rec = Record::new()
            .with_field("text", Value::string(&text))
            .with_tag("k", 1);
        let e = invoke(&sig, "here", &f, Some(&mut rec), &None, &mut |_| Ok(()))
            .expect_err("txt is missing");
        assert!(
            e.message
                .ends_with("record lacks input label txt; did you mean text?"),
            "{e}"
        );
        let shown = e.to_string();
        assert!(shown.len() < 300, "{} bytes: {shown}", shown.len());
        assert!(shown.contains("text=(char[35000])"), "{shown}");
        assert!(shown.contains(",w... (70012 bytes), <k>=1}"), "{shown}");
        // A field where a tag of that name is: the kind is named.
        let sig = BoxSig {
            input: Some(vec![Label::field("k")]),
            ..sig
        };
        let e = invoke(&sig, "here", &f, Some(&mut rec), &None, &mut |_| Ok(()))
            .expect_err("k is missing");
        assert!(
            e.message.ends_with("; the record has tag <k>, not field k"),
            "{e}"
        );
        // A label the box wants as well is no suggestion for the one missing.
        let sig = BoxSig {
            input: Some(vec![Label::field("row1"), Label::field("row2")]),
            ..sig
        };
        let mut rec = Record::new().with_field("row1", Value::int(1));
        let e = invoke(&sig, "here", &f, Some(&mut rec), &None, &mut |_| Ok(()))
            .expect_err("row2 is missing");
        assert!(e.message.ends_with("record lacks input label row2"), "{e}");
    }

    #[test]
    fn emitted_values_become_the_variant_labels_with_the_rest_inherited() {
        let f = |mut a: Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
            let t = match a[1] {
                Arg::Tag(t) => t,
                _ => unreachable!(),
            };
            let v = std::mem::replace(&mut a[0], Arg::Tag(0));
            out.emit(1, crate::args![v, Arg::Tag(t + 1)])
        };
        let mut rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("b", Value::int(3))
            .with_tag("keep", 9);
        let mut got = Vec::new();
        let n = invoke(&sig(), "here", &f, Some(&mut rec), &None, &mut |t| {
            got.push(t.rec.into_record());
            Ok(())
        })
        .expect("runs");
        assert_eq!(n, 1);
        let o = &got[0];
        assert!(o.has(Label::field("c")) && !o.has(Label::field("a")));
        assert_eq!(o.tag(Label::tag("u")), Some(6));
        assert_eq!(o.tag(Label::tag("keep")), Some(9));
        assert_eq!(o.len(), 3);
    }
}
