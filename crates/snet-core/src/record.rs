//! Records: finite maps from labels to values (spec §1).
//!
//! A record keeps fields, tags and binding tags in three small vectors in insertion
//! order (the output order of spec §11.3). Records are small, so lookup is a linear scan
//! over `u32` labels. Records move between entities; field payloads are shared
//! ([`Value`] is reference counted).

use crate::label::{Label, LabelKind};
use crate::value::Value;
use smallvec::SmallVec;
use std::fmt;

/// A field payload: a value, or `None` for a `NULL` field emitted by a C box (spec §12.5
/// rule 4), which is carried untouched and is an error at global output.
pub type Field = Option<Value>;

/// The data mode of a record (spec §7.3.3); only used for global output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataMode {
    /// Fields are written with the textual encoder.
    #[default]
    Textual,
    /// Fields are written with the binary encoder.
    Binary,
}

/// A data record.
#[derive(Clone, Default, PartialEq)]
pub struct Record {
    fields: SmallVec<[(Label, Field); 2]>,
    tags: SmallVec<[(Label, i32); 3]>,
    btags: SmallVec<[(Label, i32); 3]>,
    /// Data mode (textual unless read from a binary-mode record).
    pub mode: DataMode,
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        Value::ptr_eq(self, other)
            || (self.ctype() == other.ctype()
                && self.is_scalar() == other.is_scalar()
                && self.len() == other.len()
                && self.bytes() == other.bytes())
    }
}

impl Record {
    /// The empty record, as a constant.
    pub const EMPTY: Record = Record {
        fields: SmallVec::new_const(),
        tags: SmallVec::new_const(),
        btags: SmallVec::new_const(),
        mode: DataMode::Textual,
    };

    /// An empty record.
    pub fn new() -> Record {
        Record::default()
    }

    /// Builder: adds field `name`.
    pub fn with_field(mut self, name: &str, v: Value) -> Record {
        self.set_field(Label::field(name), Some(v));
        self
    }
    /// Builder: adds tag `name`.
    pub fn with_tag(mut self, name: &str, v: i32) -> Record {
        self.set_tag(Label::tag(name), v);
        self
    }
    /// Builder: adds binding tag `name`.
    pub fn with_btag(mut self, name: &str, v: i32) -> Record {
        self.set_tag(Label::btag(name), v);
        self
    }

    /// Sets a field (replacing an existing value, keeping its position).
    pub fn set_field(&mut self, l: Label, v: Field) {
        debug_assert_eq!(l.kind(), LabelKind::Field);
        match self.fields.iter_mut().find(|(k, _)| *k == l) {
            Some(slot) => slot.1 = v,
            None => self.fields.push((l, v)),
        }
    }

    /// Sets a tag or binding tag (by the label's kind).
    pub fn set_tag(&mut self, l: Label, v: i32) {
        let list = match l.kind() {
            LabelKind::Tag => &mut self.tags,
            LabelKind::BTag => &mut self.btags,
            LabelKind::Field => {
                debug_assert!(false, "set_tag on a field label");
                return;
            }
        };
        match list.iter_mut().find(|(k, _)| *k == l) {
            Some(slot) => slot.1 = v,
            None => list.push((l, v)),
        }
    }

    /// Appends field `l`, which the record must not carry yet (readers that track the
    /// labels they have seen; [`Record::set_field`] otherwise).
    pub fn push_field(&mut self, l: Label, v: Field) {
        debug_assert!(l.kind() == LabelKind::Field && !self.has(l));
        self.fields.push((l, v));
    }

    /// Appends tag or binding tag `l`, which the record must not carry yet (see
    /// [`Record::push_field`]).
    pub fn push_tag(&mut self, l: Label, v: i32) {
        debug_assert!(!self.has(l));
        match l.kind() {
            LabelKind::Tag => self.tags.push((l, v)),
            LabelKind::BTag => self.btags.push((l, v)),
            LabelKind::Field => debug_assert!(false, "push_tag on a field label"),
        }
    }

    /// True if the record carries label `l`.
    pub fn has(&self, l: Label) -> bool {
        match l.kind() {
            LabelKind::Field => self.fields.iter().any(|(k, _)| *k == l),
            LabelKind::Tag => self.tags.iter().any(|(k, _)| *k == l),
            LabelKind::BTag => self.btags.iter().any(|(k, _)| *k == l),
        }
    }

    /// The field `l`, if present (`Some(None)` is a NULL field).
    pub fn field(&self, l: Label) -> Option<&Field> {
        self.fields.iter().find(|(k, _)| *k == l).map(|(_, v)| v)
    }

    /// The value of tag or binding tag `l`, if present.
    pub fn tag(&self, l: Label) -> Option<i32> {
        let list = match l.kind() {
            LabelKind::Tag => &self.tags,
            LabelKind::BTag => &self.btags,
            LabelKind::Field => return None,
        };
        list.iter().find(|(k, _)| *k == l).map(|(_, v)| *v)
    }

    /// Removes and returns field `l`.
    pub fn take_field(&mut self, l: Label) -> Option<Field> {
        let i = self.fields.iter().position(|(k, _)| *k == l)?;
        // The last label (every label of a one-field record) comes off without a shift.
        if i + 1 == self.fields.len() {
            return self.fields.pop().map(|(_, v)| v);
        }
        Some(self.fields.remove(i).1)
    }

    /// Removes and returns tag or binding tag `l`.
    pub fn take_tag(&mut self, l: Label) -> Option<i32> {
        let list = match l.kind() {
            LabelKind::Tag => &mut self.tags,
            LabelKind::BTag => &mut self.btags,
            LabelKind::Field => return None,
        };
        let i = list.iter().position(|(k, _)| *k == l)?;
        if i + 1 == list.len() {
            return list.pop().map(|(_, v)| v);
        }
        Some(list.remove(i).1)
    }

    /// Removes label `l` of any kind; true if it was present.
    pub fn remove(&mut self, l: Label) -> bool {
        match l.kind() {
            LabelKind::Field => self.take_field(l).is_some(),
            _ => self.take_tag(l).is_some(),
        }
    }

    /// Keeps only the labels for which `keep` is true (one pass, order kept).
    pub fn retain_labels(&mut self, mut keep: impl FnMut(Label) -> bool) {
        retain_list(&mut self.fields, &mut keep);
        retain_list(&mut self.tags, &mut keep);
        retain_list(&mut self.btags, &mut keep);
    }

    /// Fields in insertion order.
    pub fn fields(&self) -> &[(Label, Field)] {
        &self.fields
    }
    /// Tags in insertion order.
    pub fn tags(&self) -> &[(Label, i32)] {
        &self.tags
    }
    /// Binding tags in insertion order.
    pub fn btags(&self) -> &[(Label, i32)] {
        &self.btags
    }

    /// Every label the record carries (fields, tags, binding tags).
    pub fn labels(&self) -> impl Iterator<Item = Label> + '_ {
        self.fields
            .iter()
            .map(|(l, _)| *l)
            .chain(self.tags.iter().map(|(l, _)| *l))
            .chain(self.btags.iter().map(|(l, _)| *l))
    }

    /// Bytes of field payload the record refers to (shared payloads counted in full):
    /// what queueing it costs in memory, for engines that bound their queues by size.
    pub fn payload_bytes(&self) -> usize {
        self.fields
            .iter()
            .map(|(_, v)| v.as_ref().map_or(0, Value::byte_len))
            .sum()
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.fields.len() + self.tags.len() + self.btags.len()
    }

    /// True for the record with no labels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Flow inheritance (spec §7.2): attaches every field and tag of `from` that `self`
    /// does not already carry. Binding tags are never inherited. `from` has already had
    /// its consumed labels removed.
    ///
    /// Only the labels `self` carried before are searched (`from` has no duplicates), so
    /// the cost is `|self| * |from|`, not quadratic in the labels inherited.
    pub fn inherit_from(&mut self, from: &Record) {
        self.inherit_from_where(from, |_| true);
    }

    /// Like [`Record::inherit_from`] from the labels of `from` that `keep` accepts (a
    /// filter's input, without first removing what the filter consumed).
    pub fn inherit_from_where(&mut self, from: &Record, keep: impl Fn(Label) -> bool) {
        let (nf, nt) = (self.fields.len(), self.tags.len());
        for (l, v) in &from.fields {
            if keep(*l) && !self.fields[..nf].iter().any(|(k, _)| k == l) {
                self.fields.push((*l, v.clone()));
            }
        }
        for (l, v) in &from.tags {
            if keep(*l) && !self.tags[..nt].iter().any(|(k, _)| k == l) {
                self.tags.push((*l, *v));
            }
        }
    }

    /// Like [`Record::inherit_from`] but moves the labels out of `from` (last output).
    pub fn inherit_from_owned(&mut self, from: Record) {
        let (nf, nt) = (self.fields.len(), self.tags.len());
        for (l, v) in from.fields {
            if !self.fields[..nf].iter().any(|(k, _)| *k == l) {
                self.fields.push((l, v));
            }
        }
        for (l, v) in from.tags {
            if !self.tags[..nt].iter().any(|(k, _)| *k == l) {
                self.tags.push((l, v));
            }
        }
    }

    /// Flow inheritance the other way round: makes `self` (what a box did not take of
    /// its input) the output record `out` completed with it, `out`'s labels first (in
    /// its order), then each field and tag of `self` that `out` does not carry (binding
    /// tags are never inherited); `out` is left empty. The same record as
    /// `out.inherit_from(self)`, made where the inherited labels already lie: they stay
    /// in place, and only `out`'s few labels move (a box's last output, which nothing
    /// after it inherits into).
    pub fn inherit_into(&mut self, out: &mut Record) {
        // Last to first, each put in front (a box emits few labels: one search and one
        // move of the list each; the generic bulk operations cost several times more).
        while let Some((l, v)) = out.fields.pop() {
            if let Some(i) = self.fields.iter().position(|(k, _)| *k == l) {
                self.fields.remove(i);
            }
            self.fields.insert(0, (l, v));
        }
        while let Some((l, v)) = out.tags.pop() {
            if let Some(i) = self.tags.iter().position(|(k, _)| *k == l) {
                self.tags.remove(i);
            }
            self.tags.insert(0, (l, v));
        }
        self.btags.clear();
        if !out.btags.is_empty() {
            std::mem::swap(&mut self.btags, &mut out.btags);
        }
        self.mode = out.mode;
    }

    /// Makes the record `fields` and `tags` (tags and binding tags, by their labels'
    /// kinds; written in this order, a later value of a label replacing an earlier one)
    /// followed by those of its own labels that `inherit` keeps and that are not among
    /// them: a filter's output built where its input lies (spec §7.2, §11.3 order).
    pub fn rebuild(
        &mut self,
        fields: impl IntoIterator<Item = (Label, Field)>,
        tags: impl IntoIterator<Item = (Label, i32)>,
        inherit: impl Fn(Label) -> bool,
    ) {
        let old_fields = std::mem::take(&mut self.fields);
        let old_tags = std::mem::take(&mut self.tags);
        self.btags.clear();
        for (l, v) in fields {
            self.set_field(l, v);
        }
        for (l, v) in tags {
            self.set_tag(l, v);
        }
        let (nf, nt) = (self.fields.len(), self.tags.len());
        for (l, v) in old_fields {
            if inherit(l) && !self.fields[..nf].iter().any(|(k, _)| *k == l) {
                self.fields.push((l, v));
            }
        }
        for (l, v) in old_tags {
            if inherit(l) && !self.tags[..nt].iter().any(|(k, _)| *k == l) {
                self.tags.push((l, v));
            }
        }
    }

    /// Empties the record for reuse as a recycled slot: removes every label and resets
    /// the mode, keeping the lists' storage, except that a list grown beyond
    /// [`REUSE_CAP`] labels gives its storage back (pools of slots never hold on to the
    /// memory of a few very wide records).
    fn clear_for_reuse(&mut self) {
        if self.fields.capacity() > REUSE_CAP
            || self.tags.capacity() > REUSE_CAP
            || self.btags.capacity() > REUSE_CAP
        {
            *self = Record::default();
        } else {
            self.fields.clear();
            self.tags.clear();
            self.btags.clear();
            self.mode = DataMode::Textual;
        }
    }

    /// A short label listing such as `{A, <T>, <#b>}` for diagnostics.
    pub fn describe(&self) -> String {
        let mut s = String::from("{");
        for (i, l) in self.labels().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&l.to_string());
        }
        s.push('}');
        s
    }
}

/// A record in a heap slot of its own: what tokens carry between entities.
///
/// A [`Record`] is about a hundred bytes; moving one through the emit path, a job queue
/// and the walk cost a copy at every step (often with a store-forwarding stall), which
/// was most of a hop. A `Rec` moves as one pointer. Slots are recycled through a small
/// per-thread pool, so making and dropping one is no heap allocation in steady state
/// (issue 26); a slot freed on another thread than the one that made it joins that
/// thread's pool.
pub struct Rec(std::mem::ManuallyDrop<Box<Record>>);

/// Labels per list a recycled slot keeps storage for (see `Record::clear_for_reuse`).
const REUSE_CAP: usize = 16;

/// Slots move between threads in batches of this many: a thread that frees more records
/// than it makes (a consumer at the end of a pipeline) hands a batch to one that makes
/// more than it frees (the input reader), through [`SPARE`].
const BATCH: usize = 64;
/// Slots a thread keeps for reuse (each about a hundred bytes, plus the spilled label
/// lists of the records it held); beyond this, a batch goes to [`SPARE`].
const POOL_CAP: usize = 2 * BATCH;
/// Batches kept in [`SPARE`]; beyond this, slots are freed.
const SPARE_CAP: usize = 64;

/// Free slots. Boxed each: a slot is handed out as it is (its address is the record's
/// place while a token carries it), so the list cannot hold the records inline.
#[allow(clippy::vec_box)]
type Slots = Vec<Box<Record>>;

thread_local! {
    static POOL: std::cell::RefCell<Slots> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Batches of free slots any thread may take.
static SPARE: std::sync::Mutex<Vec<Slots>> = std::sync::Mutex::new(Vec::new());
/// Batches in [`SPARE`] (read without the lock: a thread with an empty pool looks
/// before it locks).
static SPARE_BATCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn spare() -> std::sync::MutexGuard<'static, Vec<Slots>> {
    // The list stays consistent whatever a panicking holder did (push or pop only).
    SPARE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A free slot for a thread whose pool is empty: a batch from [`SPARE`] if there is one
/// (the rest of it becomes the pool), else a new slot.
#[cold]
fn refill(pool: &mut Slots) -> Box<Record> {
    use std::sync::atomic::Ordering;
    if SPARE_BATCHES.load(Ordering::Relaxed) > 0 {
        let mut sp = spare();
        if let Some(batch) = sp.pop() {
            SPARE_BATCHES.store(sp.len(), Ordering::Relaxed);
            drop(sp);
            *pool = batch;
            if let Some(slot) = pool.pop() {
                return slot;
            }
        }
    }
    Box::default()
}

/// A full pool hands its oldest slots to [`SPARE`] (or frees them if it is full too).
#[cold]
fn spill(pool: &mut Slots) {
    use std::sync::atomic::Ordering;
    let batch: Slots = pool.drain(..BATCH).collect();
    let mut sp = spare();
    if sp.len() < SPARE_CAP {
        sp.push(batch);
        SPARE_BATCHES.store(sp.len(), Ordering::Relaxed);
    }
}

impl Rec {
    /// An empty record in a slot.
    #[inline]
    pub fn empty() -> Rec {
        let slot = POOL
            .try_with(|p| {
                p.try_borrow_mut()
                    .ok()
                    .map(|mut p| p.pop().unwrap_or_else(|| refill(&mut p)))
            })
            .ok()
            .flatten()
            .unwrap_or_default();
        Rec(std::mem::ManuallyDrop::new(slot))
    }

    /// `rec` in a slot.
    #[inline]
    pub fn new(rec: Record) -> Rec {
        let mut r = Rec::empty();
        *r = rec;
        r
    }

    /// The record, out of its slot (the slot goes back to the pool).
    pub fn into_record(mut self) -> Record {
        std::mem::take(&mut *self)
    }
}

impl Drop for Rec {
    fn drop(&mut self) {
        // SAFETY: `self.0` is taken once, here, and `self` is not used afterwards.
        let mut slot = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        slot.clear_for_reuse();
        // The slot is freed instead when the pool is borrowed (a record dropped while
        // another is being recycled cannot happen, but costs nothing to allow) or gone
        // (thread exit).
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() >= POOL_CAP {
                    spill(&mut p);
                }
                p.push(slot);
            }
        });
    }
}

impl std::ops::Deref for Rec {
    type Target = Record;
    #[inline]
    fn deref(&self) -> &Record {
        &self.0
    }
}

impl std::ops::DerefMut for Rec {
    #[inline]
    fn deref_mut(&mut self) -> &mut Record {
        &mut self.0
    }
}

impl fmt::Debug for Rec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<Record> for Rec {
    fn from(r: Record) -> Rec {
        Rec::new(r)
    }
}

/// `retain` for the short label lists of a record (removing in place beats the general
/// algorithm for a handful of entries).
fn retain_list<T, const N: usize>(
    v: &mut SmallVec<[(Label, T); N]>,
    keep: &mut impl FnMut(Label) -> bool,
) {
    let mut i = 0;
    while i < v.len() {
        if keep(v[i].0) {
            i += 1;
        } else {
            v.remove(i);
        }
    }
}

/// Longest value a record shows in full in a message ([`Record`]'s `Debug`, which every
/// run-time error uses); a longer one is cut to about that many bytes and its length.
pub const SHOWN_VALUE_BYTES: usize = 64;

/// Writes `v` in the textual notation, cut after [`SHOWN_VALUE_BYTES`] bytes (at a
/// character boundary) with its whole length: a 35 KB field must not fill a message.
fn write_cut(f: &mut fmt::Formatter<'_>, v: &crate::value::Value) -> fmt::Result {
    let mut s = Vec::new();
    crate::value::text::write_value(v, &mut s);
    let text = String::from_utf8_lossy(&s);
    if text.len() <= SHOWN_VALUE_BYTES + 16 {
        return f.write_str(&text);
    }
    let mut end = SHOWN_VALUE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    write!(f, "{}... ({} bytes)", &text[..end], text.len())
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            if !std::mem::take(&mut first) {
                write!(f, ", ")?;
            }
            Ok(())
        };
        for (l, v) in &self.fields {
            sep(f)?;
            match v {
                Some(v) => {
                    write!(f, "{l}=")?;
                    write_cut(f, v)?;
                }
                None => write!(f, "{l}=NULL")?,
            }
        }
        for (l, v) in self.tags.iter().chain(&self.btags) {
            sep(f)?;
            write!(f, "{l}={v}")?;
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A record over a few labels of each kind (some shared by name across kinds), in
    /// a random order, with up to 20 of them (more than the inline lists hold).
    fn record() -> impl Strategy<Value = Record> {
        let names = ["A", "B", "C", "D", "E", "F", "G"];
        proptest::collection::vec((0usize..3, 0usize..7, -5i32..5), 0..20).prop_map(move |ls| {
            let mut r = Record::new();
            for (kind, n, v) in ls {
                match kind {
                    0 => r.set_field(Label::field(names[n]), Some(Value::int(v))),
                    1 => r.set_tag(Label::tag(names[n]), v),
                    _ => r.set_tag(Label::btag(names[n]), v),
                }
            }
            r
        })
    }

    proptest! {
        /// The last output of a box is made where the rest lies (`inherit_into`): the
        /// same record, label order and values as inheriting a copy of the rest.
        #[test]
        fn inheriting_into_the_rest_makes_the_record_inheriting_from_it_makes(
            out in record(),
            rest in record(),
            binary in any::<bool>(),
        ) {
            let mut out = out;
            out.mode = if binary { DataMode::Binary } else { DataMode::Textual };
            let mut expected = out.clone();
            expected.inherit_from(&rest);
            let mut got = rest.clone();
            let mut emptied = out.clone();
            got.inherit_into(&mut emptied);
            prop_assert!(emptied.is_empty());
            prop_assert_eq!(got.fields(), expected.fields());
            prop_assert_eq!(got.tags(), expected.tags());
            prop_assert_eq!(got.btags(), expected.btags());
            prop_assert_eq!(got.mode, expected.mode);
        }
    }

    #[test]
    fn a_recycled_slot_comes_back_empty_and_is_reused() {
        let v = Value::int(7);
        let mut r = Rec::new(
            Record::new()
                .with_field("a", v.clone())
                .with_tag("t", 1)
                .with_btag("b", 2),
        );
        r.mode = DataMode::Binary;
        let slot: *const Record = &*r;
        drop(r);
        // The field's reference was released when the slot was recycled.
        assert_eq!(v.ref_count(), 1);
        let again = Rec::empty();
        assert_eq!(
            &*again as *const Record, slot,
            "the pool gives the slot back"
        );
        assert!(again.is_empty());
        assert_eq!(again.mode, DataMode::Textual);
        let out = Rec::new(Record::new().with_tag("x", 3)).into_record();
        assert_eq!(out.tag(Label::tag("x")), Some(3));
    }

    #[test]
    fn a_recycled_slot_does_not_keep_the_storage_of_a_wide_record() {
        let mut wide = Record::new();
        for i in 0..1000 {
            wide.push_tag(Label::tag(&format!("t{i}")), i);
        }
        let r = Rec::new(wide);
        assert!(r.tags().len() == 1000);
        drop(r);
        let again = Rec::empty();
        assert!(
            again.tags.capacity() <= REUSE_CAP,
            "{}",
            again.tags.capacity()
        );
        let mut narrow = Record::new().with_tag("a", 1).with_tag("b", 2);
        narrow.clear_for_reuse();
        assert!(narrow.is_empty() && narrow.tags.capacity() >= 2);
    }

    #[test]
    fn inheritance_skips_btags_and_explicit_labels() {
        let from = Record::new()
            .with_field("a", Value::int(1))
            .with_tag("t", 5)
            .with_btag("b", 9);
        let mut out = Record::new().with_tag("t", 2);
        out.inherit_from(&from);
        assert_eq!(out.tag(Label::tag("t")), Some(2));
        assert!(out.has(Label::field("a")));
        assert!(!out.has(Label::btag("b")));
    }
}
