//! The box-language-neutral box interface (DESIGN rule 7): every box, whether written in
//! Rust or C, is a [`BoxFn`] stored in a [`BoxTable`] under its S-Net name.

use crate::label::Label;
use crate::record::Field;
use std::collections::HashMap;
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
}

impl<F> BoxFn for F
where
    F: Fn(Args, &mut dyn Emitter) -> Result<(), BoxFailure> + Send + Sync,
{
    fn invoke(&self, args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self(args, out)
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
