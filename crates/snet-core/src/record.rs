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
        let (nf, nt) = (self.fields.len(), self.tags.len());
        for (l, v) in &from.fields {
            if !self.fields[..nf].iter().any(|(k, _)| k == l) {
                self.fields.push((*l, v.clone()));
            }
        }
        for (l, v) in &from.tags {
            if !self.tags[..nt].iter().any(|(k, _)| k == l) {
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
                Some(v) => write!(f, "{l}={v:?}")?,
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
