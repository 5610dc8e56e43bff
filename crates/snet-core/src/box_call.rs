//! Box invocation with flow inheritance (spec §7.3, §7.4).

use crate::boxes::{
    field_of_slot, release_slots, Arg, Args, BoxFailure, BoxFn, BoxSig, Emitter, RawKind, RawSlot,
};
use crate::det::{ctx_add, Ctx, Token};
use crate::error::RunError;
use crate::label::{Label, LabelKind};
use crate::record::{DataMode, Rec, Record};
use crate::value::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The empty record: what is left to inherit once an emission took the input's slot.
static EMPTY: Record = Record::EMPTY;

/// Builds emitted records and hands them to the engine as they are emitted.
struct BoxEmitter<'a, S> {
    sig: &'a BoxSig,
    /// What the box did not take of its input, in the input's slot; `None` once an
    /// emission took the slot, which it does when nothing is left to inherit (then a
    /// firing that emits one record makes no slot and frees none).
    rest: Option<Rec>,
    mode: DataMode,
    ctx: &'a Ctx,
    /// Where emitted records go: a closure of the caller's type, so that the walk it
    /// starts is compiled into the emit path (a record passed through calls by value
    /// is copied at each).
    sink: &'a mut S,
    /// The last record emitted, not yet handed to `sink`, when it was built in a slot
    /// (the input's, when nothing was left in it to inherit): an emission hands over
    /// the one before it, and the last goes back to the firing's caller when the box
    /// returned. A firing that emits one record makes no call through `sink`, and no
    /// walk (nor the boxes it may run) is nested in the box's frame for it.
    held: Option<Rec>,
    /// Where an emission is built while the rest is not empty. The last one is made
    /// into the output where the rest lies when the call returns (the emitted labels
    /// put before the inherited ones, which stay in place); an earlier one moves into a
    /// slot of its own and inherits a copy of the rest when the next one comes.
    scratch: Option<Record>,
    /// The last record emitted is in `scratch` (not in `held`).
    in_scratch: bool,
    failed: Option<RunError>,
    emitted: usize,
}

impl<'a, S: FnMut(Token) -> Result<(), RunError>> BoxEmitter<'a, S> {
    /// The labels of output `variant` (1-based), or the error for a variant the box
    /// does not declare or a value count that does not fit it.
    #[inline(always)]
    fn variant(&self, variant: usize, given: usize) -> Result<&'a [Label], BoxFailure> {
        let sig: &'a BoxSig = self.sig;
        if self.failed.is_some() {
            return Err(BoxFailure("the run is stopping".into()));
        }
        let Some(labels) = variant.checked_sub(1).and_then(|i| sig.outputs.get(i)) else {
            let msg = format!(
                "box emitted variant {variant}, but it declares {} output variant(s)",
                sig.outputs.len()
            );
            return Err(BoxFailure(msg));
        };
        if given < labels.len() {
            return Err(BoxFailure(format!(
                "variant {variant} has {} labels but {given} values were emitted",
                labels.len(),
            )));
        }
        Ok(labels)
    }

    /// What the box did not take of its input (nothing once the slot was taken).
    #[inline(always)]
    fn rest(&self) -> &Record {
        match &self.rest {
            Some(r) => r,
            None => &EMPTY,
        }
    }

    /// Hands the record of the previous emission, if any, to `sink`, completed with
    /// a copy of what the box did not take of its input (spec §7.2).
    #[inline(always)]
    fn flush(&mut self) -> Result<(), BoxFailure> {
        let mut rec = if self.in_scratch {
            self.in_scratch = false;
            let mut rec = Rec::empty();
            if let Some(s) = &mut self.scratch {
                std::mem::swap(&mut *rec, s);
            }
            rec
        } else {
            match self.held.take() {
                Some(rec) => rec,
                None => return Ok(()),
            }
        };
        // A box that takes every label of its input leaves nothing to inherit (and
        // its first emission took the input's slot: no rest to look at).
        if let Some(rest) = &self.rest {
            if !rest.is_empty() {
                rec.inherit_from(rest);
            }
        }
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

    /// The empty record an emission is built in, with the input's data mode: the
    /// input's own slot when nothing is left in it (a new slot for an initialiser),
    /// else the scratch record.
    #[inline(always)]
    fn start(&mut self) -> &mut Record {
        let mode = self.mode;
        let rec: &mut Record = match self.rest.take_if(|r| r.is_empty()) {
            Some(r) => self.held.insert(r),
            None if self.rest.is_none() => self.held.insert(Rec::empty()),
            None => {
                self.in_scratch = true;
                self.scratch.get_or_insert_with(Record::new)
            }
        };
        rec.mode = mode;
        rec
    }

    /// Drops the record of an emission that failed half-way (it never happened).
    #[cold]
    fn abandon(&mut self) {
        self.held = None;
        if std::mem::take(&mut self.in_scratch) {
            self.scratch = None;
        }
    }

    /// Counts a completed emission.
    #[inline(always)]
    fn emitted_one(&mut self) {
        ctx_add(self.ctx, 1);
        self.emitted += 1;
    }

    /// The record the firing emitted last, completed with what the box did not take
    /// of its input: made where that lies when the record was built in `scratch`.
    #[inline(always)]
    fn take_last(&mut self) -> Option<Rec> {
        if !self.in_scratch {
            return self.held.take();
        }
        self.in_scratch = false;
        let (Some(mut rest), Some(out)) = (self.rest.take(), self.scratch.as_mut()) else {
            unreachable!("an emission is built in scratch only while there is a rest")
        };
        rest.inherit_into(out);
        Some(rest)
    }
}

impl<S: FnMut(Token) -> Result<(), RunError>> Emitter for BoxEmitter<'_, S> {
    fn emit(&mut self, variant: usize, mut values: Args) -> Result<(), BoxFailure> {
        let r = self.emit_from(variant, &mut values);
        forget_if_empty(values);
        r
    }

    fn emit_from(&mut self, variant: usize, values: &mut Args) -> Result<(), BoxFailure> {
        let labels = self.variant(variant, values.len())?;
        if let Err(e) = self.flush() {
            values.clear();
            return Err(e);
        }
        let rec = self.start();
        // The labels of a variant are distinct (the front end checks it, spec §9 item
        // 12), so each is appended without a search. Each value is taken out in place
        // (a `drain` cost more than the record it fills); what is left owns nothing.
        for (l, v) in labels.iter().zip(values.iter_mut()) {
            match (l.kind(), std::mem::replace(v, Arg::Tag(0))) {
                (LabelKind::Field, Arg::Field(f)) => rec.push_field(*l, f),
                (LabelKind::Tag | LabelKind::BTag, Arg::Tag(t)) => rec.push_tag(*l, t),
                (_, v) => {
                    values.clear();
                    self.abandon();
                    return Err(BoxFailure(format!(
                        "variant {variant}: label {l} got a value of the wrong kind ({v:?})"
                    )));
                }
            }
        }
        // Values beyond the variant's labels are dropped, as a drain dropped them.
        values.truncate(labels.len());
        // SAFETY: every element left (the first `labels.len()`) was replaced by a tag,
        // which owns nothing: forgetting them leaks nothing.
        unsafe { values.set_len(0) };
        self.emitted_one();
        Ok(())
    }

    /// The record path of a C box's `C4SNetOut` (issue 34): the slots go straight
    /// into the record, no value list on the way.
    unsafe fn emit_raw(
        &mut self,
        variant: usize,
        kinds: &[RawKind],
        slots: &[RawSlot],
    ) -> Result<(), BoxFailure> {
        let labels = match self.variant(variant, slots.len().min(kinds.len())) {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: the caller's contract; nothing was taken yet.
                unsafe { release_slots(kinds, slots) };
                return Err(e);
            }
        };
        if let Err(e) = self.flush() {
            // SAFETY: the caller's contract; nothing was taken yet.
            unsafe { release_slots(kinds, slots) };
            return Err(e);
        }
        let rec = self.start();
        for (i, (l, (k, s))) in labels.iter().zip(kinds.iter().zip(slots)).enumerate() {
            if RawKind::of(*l) != *k {
                // SAFETY: the caller's contract; slots before `i` were taken into `rec`.
                unsafe { release_slots(&kinds[i..], &slots[i..]) };
                self.abandon();
                return Err(BoxFailure(format!(
                    "variant {variant}: label {l} got a value of the wrong kind ({k:?})"
                )));
            }
            match k {
                // SAFETY: the caller's contract: a field slot with one reference.
                RawKind::Field => rec.push_field(*l, unsafe { field_of_slot(*s) }),
                // SAFETY: the caller's contract: a tag slot.
                RawKind::Tag => rec.push_tag(*l, unsafe { s.tag }),
            }
        }
        // Values beyond the variant's labels (the count check lets more through, as
        // `emit_from` drops them).
        let n = labels.len();
        if kinds.len() > n {
            // SAFETY: the caller's contract; these slots were not taken.
            unsafe { release_slots(&kinds[n..], &slots[n..]) };
        }
        self.emitted_one();
        Ok(())
    }
}

/// Drops an argument list, skipping the drop call when it is empty and inline (the
/// usual list once its values were taken: its drop was a call per firing).
#[inline(always)]
fn forget_if_empty(values: Args) {
    if values.is_empty() && !values.spilled() {
        std::mem::forget(values);
    }
}

/// `msg` without a leading "box `NAME`" naming box `name`, since the run's error names
/// the box as its entity: "box `f`: x" becomes "x", "box `f` returned NULL" becomes "it
/// returned NULL".
fn without_box_name<'m>(msg: &'m str, name: &str) -> std::borrow::Cow<'m, str> {
    let rest = msg
        .strip_prefix("box `")
        .and_then(|r| r.strip_prefix(name))
        .and_then(|r| r.strip_prefix('`'));
    match rest {
        Some(r) if r.starts_with(": ") && r.len() > 2 => r[2..].into(),
        Some(r) if r.starts_with(' ') && r.len() > 1 => format!("it{r}").into(),
        _ => msg.into(),
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

/// What a firing of one box needs besides the record and the box, made once per box
/// when a walker binds it (issue 34): the firing does not look anything up.
#[derive(Debug)]
pub struct FiringPlan {
    /// The box's signature.
    pub sig: BoxSig,
    /// The implementation.
    pub f: std::sync::Arc<dyn BoxFn>,
    /// The input slot kinds in argument order, when the box takes its arguments as raw
    /// slots ([`BoxFn::raw_inputs`]): the labels go from the record straight into them.
    raw: Option<Box<[RawKind]>>,
    /// Whether any input label is a pass-through one (`sig.passthrough` is searched
    /// only then).
    any_keep: bool,
}

impl FiringPlan {
    /// The plan of box `sig` bound to `f`.
    pub fn new(sig: &BoxSig, f: std::sync::Arc<dyn BoxFn>) -> FiringPlan {
        let raw = match (&sig.input, f.raw_inputs()) {
            (Some(labels), true) => Some(labels.iter().map(|l| RawKind::of(*l)).collect()),
            _ => None,
        };
        FiringPlan {
            sig: sig.clone(),
            f,
            raw,
            any_keep: !sig.passthrough.is_empty(),
        }
    }

    fn keeps(&self, l: &Label) -> bool {
        self.any_keep && self.sig.passthrough.contains(l)
    }
}

/// Slots kept on the stack for a raw call (more spill to the heap).
const STACK_SLOTS: usize = 8;

/// Invokes the planned box on `input` (or, for an initialiser, on nothing): removes the
/// input labels, calls the box, and passes every emitted record (with flow inheritance
/// and the input's causal context) to `sink` in emission order, each when the box
/// emits the next one. Returns the number of records emitted and the last of them,
/// which the caller walks on: after the box's call, and without a call through `sink`
/// (a failed call's last record is dropped with the call). The caller releases the input's context unit afterwards.
pub fn invoke_planned(
    plan: &FiringPlan,
    loc: &str,
    input: Option<Rec>,
    ctx: &Ctx,
    sink: &mut impl FnMut(Token) -> Result<(), RunError>,
) -> Result<(usize, Option<Token>), RunError> {
    match (&plan.raw, input) {
        (Some(kinds), Some(rest)) => invoke_raw(plan, loc, kinds, rest, ctx, sink),
        (_, input) => invoke_with(plan, loc, input, ctx, sink),
    }
}

/// The error of a record that lacks input label `l` (only a program whose routing is
/// wrong gets one past the type check), the labels taken before it put back.
fn lacks_label(
    plan: &FiringPlan,
    loc: &str,
    labels: &[Label],
    l: Label,
    rest: &Record,
) -> RunError {
    let mut msg = format!("record lacks input label {l}");
    let others = rest.labels().filter(|m| !labels.contains(m));
    if let Some(hint) = crate::label::suggest(l, others) {
        msg.push_str(&format!("; {hint}"));
    }
    RunError::new(
        format!("box `{}` ({loc})", plan.sig.name),
        Some(format!("{rest:?}")),
        msg,
    )
}

/// Runs the call `call` with an emitter over `rest`, mapping a failure or panic to the
/// run's error (`taken_tags` names the tags the box took, for it).
fn call_box<S: FnMut(Token) -> Result<(), RunError>>(
    plan: &FiringPlan,
    loc: &str,
    rest: Option<Rec>,
    ctx: &Ctx,
    sink: &mut S,
    taken_tags: &dyn Fn() -> Vec<(Label, i32)>,
    call: impl FnOnce(&mut dyn Emitter) -> Result<(), BoxFailure>,
) -> Result<(usize, Option<Token>), RunError> {
    let mut em = BoxEmitter {
        sig: &plan.sig,
        // An initialiser's records are textual (spec §7.3.3).
        mode: match (&plan.sig.input, &rest) {
            (Some(_), Some(r)) => r.mode,
            _ => DataMode::Textual,
        },
        rest,
        ctx,
        sink,
        held: None,
        scratch: None,
        in_scratch: false,
        failed: None,
        emitted: 0,
    };
    let result = catch_unwind(AssertUnwindSafe(|| call(&mut em)));
    if let Some(e) = em.failed.take() {
        return Err(e);
    }
    let msg = match result {
        // The last record goes to the caller (a failed call's is dropped with it),
        // completed with what the box did not take of its input: made where that
        // lies, the emitted labels put before it, so that inherited values stay where
        // they are (copying them cost a reference count update each, and another when
        // the rest was dropped, and the output a slot of its own).
        Ok(Ok(())) => {
            let last = em.take_last().map(|rec| Token {
                rec,
                ctx: ctx.clone(),
            });
            return Ok((em.emitted, last));
        }
        // The error names the box already (the entity); a foreign interface's message
        // that starts with the same name does not say it again.
        Ok(Err(e)) => format!("box failed: {}", without_box_name(&e.0, &plan.sig.name)),
        Err(panic) => format!("box panicked: {}", panic_message(&*panic)),
    };
    Err(box_error(&plan.sig, loc, em.rest(), &taken_tags(), msg))
}

/// A firing of a box that takes raw slots: each input label goes from the record into
/// its slot (a field's reference moves, a pass-through field's is copied).
fn invoke_raw(
    plan: &FiringPlan,
    loc: &str,
    kinds: &[RawKind],
    mut input: Rec,
    ctx: &Ctx,
    sink: &mut impl FnMut(Token) -> Result<(), RunError>,
) -> Result<(usize, Option<Token>), RunError> {
    let rest: &mut Record = &mut input;
    let labels = plan.sig.input.as_deref().unwrap_or_default();
    let mut stack = [RawSlot { tag: 0 }; STACK_SLOTS];
    let mut heap = Vec::new();
    let slots: &mut [RawSlot] = if kinds.len() <= STACK_SLOTS {
        &mut stack[..kinds.len()]
    } else {
        heap.resize(kinds.len(), RawSlot { tag: 0 });
        &mut heap
    };
    for (i, (l, k)) in labels.iter().zip(kinds).enumerate() {
        let keep = plan.keeps(l);
        let slot = match k {
            RawKind::Field => {
                let f = if keep {
                    rest.field(*l).cloned()
                } else {
                    rest.take_field(*l)
                };
                f.map(|f| RawSlot {
                    field: f.map_or(std::ptr::null_mut(), Value::into_raw),
                })
            }
            RawKind::Tag => if keep {
                rest.tag(*l)
            } else {
                rest.take_tag(*l)
            }
            .map(|t| RawSlot { tag: t }),
        };
        match slot {
            Some(s) => slots[i] = s,
            None => {
                for ((l, k), s) in labels.iter().zip(kinds).zip(&slots[..i]) {
                    // SAFETY: slots before `i` were filled above, each with what its
                    // kind says; each is taken back once.
                    let a = unsafe { crate::boxes::arg_of_slot(*k, *s) };
                    match a {
                        _ if plan.keeps(l) => {}
                        Arg::Field(f) => rest.push_field(*l, f),
                        Arg::Tag(t) => rest.push_tag(*l, t),
                    }
                }
                return Err(lacks_label(plan, loc, labels, *l, rest));
            }
        }
    }
    let slots = &*slots;
    let taken = || {
        labels
            .iter()
            .zip(kinds.iter().zip(slots))
            .filter(|(_, (k, _))| **k == RawKind::Tag)
            // SAFETY: a tag slot holds a tag (filled above, not changed by the call).
            .map(|(l, (_, s))| (*l, unsafe { s.tag }))
            .collect()
    };
    call_box(plan, loc, Some(input), ctx, sink, &taken, |em| {
        // SAFETY: one slot per input label of the kinds given, each field slot one
        // reference made by `into_raw` (or null) that passes to the box.
        unsafe { plan.f.invoke_raw(kinds, slots, em) }
    })
}

/// A firing through a value list (Rust boxes, initialisers, boxes without a plan).
fn invoke_with(
    plan: &FiringPlan,
    loc: &str,
    mut input: Option<Rec>,
    ctx: &Ctx,
    sink: &mut impl FnMut(Token) -> Result<(), RunError>,
) -> Result<(usize, Option<Token>), RunError> {
    let sig = &plan.sig;
    // The input record becomes what the box does not take, in place, in its slot (a
    // record is about a hundred bytes: moving it cost a copy, often with a
    // store-forwarding stall).
    // An initialiser's stand-in: nothing is ever put in it (it has no input labels),
    // so it owns nothing and is not dropped (its drop was a call per firing).
    let mut empty = std::mem::ManuallyDrop::new(Record::EMPTY);
    let rest: &mut Record = match &mut input {
        Some(r) => r,
        None => &mut empty,
    };
    let mut args = Args::new();
    // Tag values the box takes, for an error message (copies of integers, no cost worth
    // the name; fields are named without their values, see `box_error`).
    let mut taken_tags: smallvec::SmallVec<[(Label, i32); 4]> = smallvec::SmallVec::new();
    if let Some(labels) = &sig.input {
        for (i, l) in labels.iter().enumerate() {
            // A pass-through label is received but not consumed (§7.3.6).
            let keep = plan.keeps(l);
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
                    // The labels taken so far go back, for the message.
                    for (l, a) in labels[..i].iter().zip(args.drain(..)) {
                        if plan.keeps(l) {
                            continue;
                        }
                        match a {
                            Arg::Field(f) => rest.push_field(*l, f),
                            Arg::Tag(t) => rest.push_tag(*l, t),
                        }
                    }
                    return Err(lacks_label(plan, loc, labels, *l, rest));
                }
            }
        }
    }
    let taken = || taken_tags.to_vec();
    let r = call_box(plan, loc, input, ctx, sink, &taken, |em| {
        plan.f.invoke_from(&mut args, em)
    });
    forget_if_empty(args);
    r
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

    /// Fires box `f` of signature `sig` on `rec` through its plan, each emitted record
    /// to `sink`.
    fn fire(
        sig: &BoxSig,
        f: impl Fn(Args, &mut dyn Emitter) -> Result<(), BoxFailure> + Send + Sync + 'static,
        rec: &Record,
        sink: &mut impl FnMut(Token) -> Result<(), RunError>,
    ) -> Result<usize, RunError> {
        let plan = FiringPlan::new(sig, std::sync::Arc::new(f));
        run_plan(&plan, rec.clone(), sink)
    }

    /// Fires `plan` on `rec`, every emitted record (the last one too) to `sink`.
    fn run_plan(
        plan: &FiringPlan,
        rec: Record,
        sink: &mut impl FnMut(Token) -> Result<(), RunError>,
    ) -> Result<usize, RunError> {
        let (n, last) = invoke_planned(plan, "here", Some(rec.into()), &None, sink)?;
        if let Some(t) = last {
            sink(t)?;
        }
        Ok(n)
    }

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
        let rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("x", Value::int(2));
        let e = fire(&sig(), f, &rec, &mut |_| Ok(())).expect_err("b is missing");
        assert!(e.message.contains("record lacks input label b"), "{e}");
        let shown = e.record.clone().unwrap_or_default();
        for l in ["a=", "<t>=5", "x="] {
            assert!(shown.contains(l), "{shown} lacks {l}");
        }
        // The labels taken before the missing one are back in the record shown, once.
        assert_eq!(shown.matches("<t>=5").count(), 1, "{shown}");
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
        let rec = Record::new()
            .with_field("text", Value::string(&text))
            .with_tag("k", 1);
        let e = fire(&sig, f, &rec, &mut |_| Ok(())).expect_err("txt is missing");
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
        let e = fire(&sig, f, &rec, &mut |_| Ok(())).expect_err("k is missing");
        assert!(
            e.message.ends_with("; the record has tag <k>, not field k"),
            "{e}"
        );
        // A label the box wants as well is no suggestion for the one missing.
        let sig = BoxSig {
            input: Some(vec![Label::field("row1"), Label::field("row2")]),
            ..sig
        };
        let rec = Record::new().with_field("row1", Value::int(1));
        let e = fire(&sig, f, &rec, &mut |_| Ok(())).expect_err("row2 is missing");
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
        let rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("b", Value::int(3))
            .with_tag("keep", 9);
        let mut got = Vec::new();
        let n = fire(&sig(), f, &rec, &mut |t| {
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

    #[test]
    fn every_output_of_a_firing_inherits_the_rest_after_its_own_labels_in_order() {
        // Input (a, <t>, b) taken from {a, <t>, b, x, <u>, <w>, <#q>}: the rest
        // {x, <u>, <w>, <#q>}; each output (c, <u>) overrides the rest's <u>. The
        // second emission has a value of the wrong kind: refused (the box goes on), and
        // no half-made record comes out. The last output is made where the rest lies,
        // the others inherit a copy: all must be the record `inherit_from` makes.
        let f = |_: Args, out: &mut dyn Emitter| -> Result<(), BoxFailure> {
            out.emit(
                1,
                crate::args![Arg::Field(Some(Value::int(10))), Arg::Tag(1)],
            )?;
            let refused = out.emit(1, crate::args![Arg::Tag(7), Arg::Tag(2)]);
            assert!(refused.is_err());
            out.emit(
                1,
                crate::args![Arg::Field(Some(Value::int(30))), Arg::Tag(3)],
            )
        };
        let rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("b", Value::int(3))
            .with_field("x", Value::int(4))
            .with_tag("u", 8)
            .with_tag("w", 9)
            .with_btag("q", 4);
        let mut got = Vec::new();
        let n = fire(&sig(), f, &rec, &mut |t| {
            got.push(t.rec.into_record());
            Ok(())
        })
        .expect("runs");
        assert_eq!(n, 2);
        let rest = Record::new()
            .with_field("x", Value::int(4))
            .with_tag("u", 8)
            .with_tag("w", 9)
            .with_btag("q", 4);
        for (o, (c, u)) in got.iter().zip([(10, 1), (30, 3)]) {
            let mut want = Record::new()
                .with_field("c", Value::int(c))
                .with_tag("u", u);
            want.inherit_from(&rest);
            assert_eq!(o, &want, "{o:?}");
            assert_eq!(o.fields()[0].0, Label::field("c"), "own labels first");
            assert_eq!(o.tags()[0], (Label::tag("u"), u), "own value wins");
        }
    }

    #[test]
    fn a_failure_message_does_not_name_the_box_twice() {
        assert_eq!(
            without_box_name("box `f`: C4SNetFree: bad", "f"),
            "C4SNetFree: bad"
        );
        assert_eq!(
            without_box_name("box `f` returned NULL; must return hnd", "f"),
            "it returned NULL; must return hnd"
        );
        // Another box, or the name as a prefix of another, is left alone.
        assert_eq!(without_box_name("box `g`: x", "f"), "box `g`: x");
        assert_eq!(without_box_name("box `ff`: x", "f"), "box `ff`: x");
        assert_eq!(without_box_name("no box here", "f"), "no box here");
        let f = |_: Args, _: &mut dyn Emitter| -> Result<(), BoxFailure> {
            Err(BoxFailure("box `f`: gave up".into()))
        };
        let e = fire(
            &sig(),
            f,
            &Record::new()
                .with_field("a", Value::int(1))
                .with_tag("t", 1)
                .with_field("b", Value::int(2)),
            &mut |_| Ok(()),
        )
        .unwrap_err();
        assert_eq!(e.message, "box failed: gave up");
    }

    /// A box of a "foreign" interface: takes raw slots and emits them back as raw
    /// slots, `copies` times, the first field in `variant` (issue 34's record path).
    struct RawEcho {
        variant: usize,
        copies: usize,
        /// Emit a tag where the variant wants a field.
        wrong_kind: bool,
    }

    impl BoxFn for RawEcho {
        fn invoke(&self, _: Args, _: &mut dyn Emitter) -> Result<(), BoxFailure> {
            Err(BoxFailure("only raw calls".into()))
        }
        fn raw_inputs(&self) -> bool {
            true
        }
        unsafe fn invoke_raw(
            &self,
            kinds: &[RawKind],
            args: &[RawSlot],
            out: &mut dyn Emitter,
        ) -> Result<(), BoxFailure> {
            assert_eq!(kinds, &[RawKind::Field, RawKind::Tag, RawKind::Field]);
            // SAFETY: slot 0 and 2 are fields (checked above); each reference is
            // taken once.
            let (a, b) = unsafe { (field_of_slot(args[0]), field_of_slot(args[2])) };
            // SAFETY: slot 1 is a tag (checked above).
            let t = unsafe { args[1].tag };
            for _ in 0..self.copies {
                let f = a.clone().map_or(std::ptr::null_mut(), Value::into_raw);
                let (k, s) = if self.wrong_kind {
                    (RawKind::Tag, RawSlot { tag: 1 })
                } else {
                    (RawKind::Field, RawSlot { field: f })
                };
                if self.wrong_kind {
                    // SAFETY: `f` was made just above and is not used again.
                    drop(unsafe { field_of_slot(RawSlot { field: f }) });
                }
                // SAFETY: the kinds say what the slots hold; the field's reference
                // passes to the emitter.
                unsafe {
                    out.emit_raw(
                        self.variant,
                        &[k, RawKind::Tag],
                        &[s, RawSlot { tag: t + 1 }],
                    )?
                };
            }
            drop(b);
            Ok(())
        }
    }

    fn raw_run(echo: RawEcho, rec: Record) -> (Result<usize, RunError>, Vec<Record>) {
        let plan = FiringPlan::new(&sig(), std::sync::Arc::new(echo));
        let mut got = Vec::new();
        let r = run_plan(&plan, rec, &mut |t: Token| {
            got.push(t.rec.into_record());
            Ok(())
        });
        (r, got)
    }

    #[test]
    fn a_raw_firing_takes_the_slots_and_inherits_into_every_output() {
        let a = Value::int(1);
        let rec = Record::new()
            .with_field("a", a.clone())
            .with_tag("t", 5)
            .with_field("b", Value::int(3))
            .with_tag("keep", 9)
            .with_btag("q", 4);
        let echo = RawEcho {
            variant: 1,
            copies: 2,
            wrong_kind: false,
        };
        let (r, got) = raw_run(echo, rec);
        assert_eq!(r.expect("runs"), 2);
        for o in &got {
            assert!(Value::ptr_eq(
                o.field(Label::field("c")).unwrap().as_ref().unwrap(),
                &a
            ));
            assert_eq!(o.tag(Label::tag("u")), Some(6));
            // The rest, but not the binding tag, is inherited by every output.
            assert_eq!(o.tag(Label::tag("keep")), Some(9));
            assert!(!o.has(Label::btag("q")) && !o.has(Label::field("a")));
            assert_eq!(o.len(), 3, "{o:?}");
        }
        // Every reference the firing made went away with its records.
        drop(got);
        assert_eq!(a.ref_count(), 1);
    }

    #[test]
    fn a_firing_with_nothing_left_to_inherit_emits_clean_records_every_time() {
        // The first output takes the input's slot; the second must not see anything
        // the first one was.
        let rec = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_field("b", Value::int(3));
        let echo = RawEcho {
            variant: 1,
            copies: 3,
            wrong_kind: false,
        };
        let (r, got) = raw_run(echo, rec);
        assert_eq!(r.expect("runs"), 3);
        for o in &got {
            assert_eq!(o.len(), 2, "{o:?}");
            assert_eq!(o.tag(Label::tag("u")), Some(6));
        }
    }

    #[test]
    fn a_raw_emission_of_the_wrong_kind_or_variant_fails_the_box_and_leaks_nothing() {
        let a = Value::int(1);
        let mk = || {
            Record::new()
                .with_field("a", a.clone())
                .with_tag("t", 5)
                .with_field("b", Value::int(3))
        };
        let (r, got) = raw_run(
            RawEcho {
                variant: 1,
                copies: 1,
                wrong_kind: true,
            },
            mk(),
        );
        let e = r.expect_err("a tag where a field belongs");
        assert!(
            e.message.contains("label c got a value of the wrong kind"),
            "{e}"
        );
        assert!(got.is_empty());
        let (r, got) = raw_run(
            RawEcho {
                variant: 2,
                copies: 1,
                wrong_kind: false,
            },
            mk(),
        );
        let e = r.expect_err("no variant 2");
        assert!(e.message.contains("declares 1 output variant(s)"), "{e}");
        assert!(got.is_empty());
        assert_eq!(a.ref_count(), 1, "every slot's reference was released");
    }
}
