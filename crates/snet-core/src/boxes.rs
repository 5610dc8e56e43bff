//! The box-language-neutral box interface (DESIGN rule 7): every box, whether written in
//! Rust or C, is a [`BoxFn`] stored in a [`BoxTable`] under its S-Net name.

use crate::label::Label;
use crate::record::Field;
use crate::value::Value;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fmt;
use std::sync::Arc;

/// One argument passed to, or emitted by, a box: a field value or a tag value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A field (possibly NULL).
    Field(Field),
    /// A tag or binding tag.
    Tag(i32),
}

/// The static description of a box, taken from its S-Net declaration: input labels in
/// written order, and output variants (1-based in the API) with labels in written order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxSig {
    /// Box name (also its C symbol).
    pub name: String,
    /// Input labels in declaration order; `None` for an initialiser box.
    pub input: Option<Vec<Label>>,
    /// Output variants in declaration order.
    pub outputs: Vec<Vec<Label>>,
    /// Input labels with a pass-through qualifier (`(a=, <t>=)`, spec §7.3.6): the box
    /// receives them (a field as one more reference to the same value) and they stay
    /// in the record, so flow inheritance re-attaches them to every output that does
    /// not name them itself (§7.3.2). Never binding tags (the front end rejects that).
    pub passthrough: Vec<Label>,
}

/// A box failure reported by box code (error return or caught panic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxFailure(pub String);

impl fmt::Display for BoxFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BoxFailure {}

/// The values passed to or emitted by one box invocation, in label order. Up to four
/// live inline (no allocation per invocation for typical boxes).
pub type Args = smallvec::SmallVec<[Arg; 4]>;

/// One argument or emitted value as a foreign box interface passes it (the C4SNet
/// ABI's slot, issue 34): a field as one reference made by [`Value::into_raw`] (null
/// for a NULL field), or a tag value. Which of the two a slot holds is said by the
/// [`RawKind`] beside it; slots let a firing go from a record to a C call and back
/// without building a value list on the way.
#[repr(C)]
#[derive(Clone, Copy)]
pub union RawSlot {
    /// A field: `Value::into_raw`, or null.
    pub field: *mut c_void,
    /// A tag or binding tag.
    pub tag: c_int,
}

impl fmt::Debug for RawSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Which member is live is not known here (a tag leaves half the bytes unset).
        f.write_str("RawSlot(..)")
    }
}

/// What a [`RawSlot`] holds.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawKind {
    /// A field reference (`c4snet_data_t *`).
    Field = 0,
    /// A tag or binding tag (`int`).
    Tag = 1,
}

impl RawKind {
    /// The kind of slot label `l` travels in.
    #[inline]
    pub fn of(l: Label) -> RawKind {
        match l.kind() {
            crate::label::LabelKind::Field => RawKind::Field,
            _ => RawKind::Tag,
        }
    }
}

/// The value of slot `s` of kind `k` as an [`Arg`], taking its reference.
///
/// # Safety
/// `s` must hold what `k` says; a field slot's reference is taken (it must be one
/// made by [`Value::into_raw`] and not taken back yet, or null).
#[inline]
pub unsafe fn arg_of_slot(k: RawKind, s: RawSlot) -> Arg {
    match k {
        // SAFETY: the caller's contract.
        RawKind::Field => Arg::Field(unsafe { field_of_slot(s) }),
        // SAFETY: the caller's contract.
        RawKind::Tag => Arg::Tag(unsafe { s.tag }),
    }
}

/// The field of field slot `s`, taking its reference.
///
/// # Safety
/// As for [`arg_of_slot`] with [`RawKind::Field`].
#[inline]
pub unsafe fn field_of_slot(s: RawSlot) -> Field {
    // SAFETY: the caller's contract: a field slot.
    let p = unsafe { s.field };
    if p.is_null() {
        None
    } else {
        // SAFETY: the caller's contract: one reference made by `into_raw`.
        Some(unsafe { Value::from_raw(p) })
    }
}

/// Releases the references of the field slots among `slots` (an emission refused
/// before its values were taken).
///
/// # Safety
/// As for [`arg_of_slot`], for every slot.
pub unsafe fn release_slots(kinds: &[RawKind], slots: &[RawSlot]) {
    for (k, s) in kinds.iter().zip(slots) {
        // SAFETY: the caller's contract; the value is dropped at once.
        drop(unsafe { arg_of_slot(*k, *s) });
    }
}

/// Receives the records a box emits during one invocation.
pub trait Emitter {
    /// Emits a record of output variant `variant` (1-based, spec §12.4) with one value
    /// per label of that variant, in written order. An out-of-range variant or a wrong
    /// number/kind of values is an error; the box should stop and return it.
    fn emit(&mut self, variant: usize, values: Args) -> Result<(), BoxFailure>;

    /// [`Emitter::emit`] with the values taken out of `values` (left empty): what the
    /// runtime's own callers use, so that the value list is not copied on the way
    /// (implementations on the record path override it; the default forwards).
    fn emit_from(&mut self, variant: usize, values: &mut Args) -> Result<(), BoxFailure> {
        self.emit(variant, std::mem::take(values))
    }

    /// [`Emitter::emit`] with the values as raw slots of the given kinds (one each):
    /// what a foreign interface (`C4SNetOut`) hands over. The record path builds the
    /// record straight from the slots (issue 34); the default makes a value list.
    /// Every field reference is taken, whatever the result.
    ///
    /// # Safety
    /// `kinds` and `slots` have the same length, each slot holds what its kind says,
    /// and each field slot is one reference made by [`Value::into_raw`] (or null) that
    /// is not used again by the caller.
    unsafe fn emit_raw(
        &mut self,
        variant: usize,
        kinds: &[RawKind],
        slots: &[RawSlot],
    ) -> Result<(), BoxFailure> {
        let mut values: Args = kinds
            .iter()
            .zip(slots)
            // SAFETY: the caller's contract, each slot taken once.
            .map(|(k, s)| unsafe { arg_of_slot(*k, *s) })
            .collect();
        self.emit_from(variant, &mut values)
    }
}

/// A box implementation.
///
/// `args` holds one value per input label in declaration order (spec §7.3.1 step 2).
/// Implementations must be callable concurrently from several threads.
pub trait BoxFn: Send + Sync {
    /// Runs the box once.
    fn invoke(&self, args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure>;

    /// [`BoxFn::invoke`] with the arguments taken out of `args` (left in an unspecified
    /// state): what the runtime calls, so that the argument list is not copied on the
    /// way (implementations on the record path override it; the default forwards).
    fn invoke_from(&self, args: &mut Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.invoke(std::mem::take(args), out)
    }

    /// Whether the runtime should call [`BoxFn::invoke_raw`] rather than
    /// [`BoxFn::invoke_from`]: a box of a foreign interface that takes its arguments
    /// as raw slots (C4SNet), so that a firing builds no value list (issue 34). Asked
    /// once, when the box is bound.
    fn raw_inputs(&self) -> bool {
        false
    }

    /// Runs the box once on raw argument slots, one per input label in order, of the
    /// kinds given. The default makes a value list and calls [`BoxFn::invoke_from`].
    ///
    /// # Safety
    /// `kinds` and `args` have the same length and each slot holds what its kind says;
    /// each field slot is one reference made by [`Value::into_raw`] (or null), which
    /// passes to the box (the caller does not use it again).
    unsafe fn invoke_raw(
        &self,
        kinds: &[RawKind],
        args: &[RawSlot],
        out: &mut dyn Emitter,
    ) -> Result<(), BoxFailure> {
        let mut values: Args = kinds
            .iter()
            .zip(args)
            // SAFETY: the caller's contract, each slot taken once.
            .map(|(k, s)| unsafe { arg_of_slot(*k, *s) })
            .collect();
        self.invoke_from(&mut values, out)
    }
}

impl<F> BoxFn for F
where
    F: Fn(Args, &mut dyn Emitter) -> Result<(), BoxFailure> + Send + Sync,
{
    fn invoke(&self, args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self(args, out)
    }
}

impl fmt::Debug for dyn BoxFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<box function>")
    }
}

/// Box implementations by S-Net box name.
#[derive(Clone, Default)]
pub struct BoxTable {
    boxes: HashMap<String, Arc<dyn BoxFn>>,
}

impl BoxTable {
    /// An empty table.
    pub fn new() -> BoxTable {
        BoxTable::default()
    }
    /// Binds `name` to `f` (replacing an earlier binding).
    pub fn insert(&mut self, name: impl Into<String>, f: Arc<dyn BoxFn>) {
        self.boxes.insert(name.into(), f);
    }
    /// The implementation of `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn BoxFn>> {
        self.boxes.get(name)
    }
    /// True if `name` is bound.
    pub fn contains(&self, name: &str) -> bool {
        self.boxes.contains_key(name)
    }
    /// Bound names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.boxes.keys().map(String::as_str)
    }
}

impl fmt::Debug for BoxTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<_> = self.boxes.keys().collect();
        names.sort();
        f.debug_struct("BoxTable").field("boxes", &names).finish()
    }
}
