//! Interned labels.
//!
//! A label is a (kind, name) pair: fields, tags and binding tags live in separate
//! namespaces (spec §1). Names are interned once into a process-wide table, so a
//! [`Label`] is a `u32`: the name id shifted left by two bits, plus the kind in the low
//! two bits. Sorting labels therefore groups nothing by kind but is total and cheap;
//! record types are sorted slices of labels and matching is a merge (DESIGN rule 4).

use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// The three disjoint label namespaces of spec §1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LabelKind {
    /// A field `x`: value opaque to S-Net.
    Field,
    /// A tag `<t>`: an `int` visible to S-Net.
    Tag,
    /// A binding tag `<#b>`: an `int` with stricter routing, never flow-inherited.
    BTag,
}

impl LabelKind {
    const fn bits(self) -> u32 {
        match self {
            LabelKind::Field => 0,
            LabelKind::Tag => 1,
            LabelKind::BTag => 2,
        }
    }
}

/// An interned label: kind plus name, as one small integer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(u32);

struct Interner {
    ids: HashMap<&'static str, u32>,
    names: Vec<&'static str>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| {
        RwLock::new(Interner {
            ids: HashMap::new(),
            names: Vec::new(),
        })
    })
}

/// Interns a name and returns its id (shared by all three kinds).
fn intern_name(name: &str) -> u32 {
    {
        let guard = interner().read().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = guard.ids.get(name) {
            return id;
        }
    }
    let mut guard = interner().write().unwrap_or_else(|e| e.into_inner());
    if let Some(&id) = guard.ids.get(name) {
        return id;
    }
    // Names live for the whole process: programs and inputs have few distinct labels.
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    let id = guard.names.len() as u32;
    guard.names.push(leaked);
    guard.ids.insert(leaked, id);
    id
}

impl Label {
    /// The label of `kind` named `name`, interning the name if it is new.
    pub fn new(kind: LabelKind, name: &str) -> Label {
        Label((intern_name(name) << 2) | kind.bits())
    }
    /// A field label.
    pub fn field(name: &str) -> Label {
        Label::new(LabelKind::Field, name)
    }
    /// A tag label.
    pub fn tag(name: &str) -> Label {
        Label::new(LabelKind::Tag, name)
    }
    /// A binding-tag label.
    pub fn btag(name: &str) -> Label {
        Label::new(LabelKind::BTag, name)
    }
    /// The kind of this label.
    pub fn kind(self) -> LabelKind {
        match self.0 & 3 {
            0 => LabelKind::Field,
            1 => LabelKind::Tag,
            _ => LabelKind::BTag,
        }
    }
    /// The name, without brackets.
    pub fn name(self) -> &'static str {
        let guard = interner().read().unwrap_or_else(|e| e.into_inner());
        guard.names[(self.0 >> 2) as usize]
    }
    /// The raw id (stable within one process).
    pub fn id(self) -> u32 {
        self.0
    }
}

/// "Did you mean" candidate: the name of `candidates` closest to `name` within a
/// small edit distance (none for names of two characters or fewer; a third of the
/// length otherwise; case differences and swapped neighbours count one each).
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = match name.chars().count() {
        0..=2 => 0,
        n => (n / 3).max(1),
    };
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Edit distance of `a` and `b`: insertions, deletions, substitutions (a case
/// difference costs nothing) and transpositions of neighbours.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(!a[i - 1].eq_ignore_ascii_case(&b[j - 1]));
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                // Transposition of two neighbours counts as one edit.
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, std::mem::take(&mut cur));
        cur = vec![0; b.len() + 1];
    }
    prev[b.len()]
}

impl LabelKind {
    /// `field`, `tag` or `binding tag`, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            LabelKind::Field => "field",
            LabelKind::Tag => "tag",
            LabelKind::BTag => "binding tag",
        }
    }
}

/// A hint for a record that lacks label `want` but has `have`: the same name as
/// another kind (`it has tag <k>, not field k`) or a close spelling of the same kind
/// (`did you mean text?`). `None` if nothing is similar.
pub fn suggest(want: Label, have: impl IntoIterator<Item = Label>) -> Option<String> {
    let have: Vec<Label> = have.into_iter().collect();
    if let Some(l) = have.iter().find(|l| l.name() == want.name() && **l != want) {
        return Some(format!(
            "the record has {} {l}, not {} {want}",
            l.kind().noun(),
            want.kind().noun()
        ));
    }
    let same: Vec<Label> = have
        .into_iter()
        .filter(|l| l.kind() == want.kind())
        .collect();
    let c = closest(want.name(), same.iter().map(|l| l.name()))?;
    let l = same.iter().find(|l| l.name() == c)?;
    Some(format!("did you mean {l}?"))
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            LabelKind::Field => write!(f, "{}", self.name()),
            LabelKind::Tag => write!(f, "<{}>", self.name()),
            LabelKind::BTag => write!(f, "<#{}>", self.name()),
        }
    }
}

impl fmt::Debug for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_separate_namespaces() {
        let f = Label::field("T");
        let t = Label::tag("T");
        let b = Label::btag("T");
        assert_ne!(f, t);
        assert_ne!(t, b);
        assert_eq!(f.name(), "T");
        assert_eq!(t.kind(), LabelKind::Tag);
        assert_eq!(b.to_string(), "<#T>");
        assert_eq!(Label::tag("T"), t);
    }
}
