//! Comparing two XML outputs as the reference test driver does (spec §11.4).
//!
//! An output is read as a sequence of records, each reduced to its `type` and the
//! sorted maps label → text of its fields, tags and binding tags. Layout is ignored:
//! XML declarations, comments and white space between elements do not matter, so the
//! current, older (no newlines) and FRONT layouts all compare equal. Field text is
//! compared exactly (e.g. `(int)5`); tag text is normalised with `atoi`, so `<tag
//! label="T"> 2</tag>` equals `<tag label="T">2</tag>`. Unlike the reference driver,
//! which splits the text at every `<` and `>`, field values are read up to the next
//! `<`, so a `>` inside a character value does not break the comparison.

use crate::xml::atoi;
use std::collections::BTreeMap;
use std::fmt;

/// One record of an output, reduced for comparison.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutputRecord {
    /// The `type` attribute (`data`, `terminate`).
    pub kind: String,
    /// Field label → value text, sorted by label.
    pub fields: Vec<(String, String)>,
    /// Tag label → value, sorted by label.
    pub tags: Vec<(String, i32)>,
    /// Binding-tag label → value, sorted by label.
    pub btags: Vec<(String, i32)>,
}

impl fmt::Display for OutputRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {{", self.kind)?;
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            if std::mem::take(&mut first) {
                Ok(())
            } else {
                f.write_str(", ")
            }
        };
        for (l, v) in &self.fields {
            sep(f)?;
            write!(f, "{l}={v}")?;
        }
        for (l, v) in &self.tags {
            sep(f)?;
            write!(f, "<{l}>={v}")?;
        }
        for (l, v) in &self.btags {
            sep(f)?;
            write!(f, "<#{l}>={v}")?;
        }
        f.write_str("}")
    }
}

/// The value of attribute `name` in the inside of a start tag (`record type="x"`).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = tag;
    while let Some(p) = rest.find(name) {
        let before_ok = p == 0 || rest[..p].ends_with(|c: char| c.is_ascii_whitespace());
        let after = rest[p + name.len()..].trim_start();
        if before_ok {
            if let Some(after) = after.strip_prefix('=') {
                let after = after.trim_start();
                let q = after.chars().next()?;
                if q == '"' || q == '\'' {
                    let body = &after[1..];
                    return body.find(q).map(|e| &body[..e]);
                }
            }
        }
        rest = &rest[p + name.len()..];
    }
    None
}

/// True if `tag` (the inside of `<...>`) is an element named `name`.
fn is_elem(tag: &str, name: &str) -> bool {
    tag.strip_prefix(name).is_some_and(|r| {
        r.is_empty() || r.starts_with(|c: char| c.is_ascii_whitespace() || c == '/')
    })
}

/// Reads an XML output into its records, in order.
pub fn parse_output(text: &str) -> Result<Vec<OutputRecord>, String> {
    let mut records = Vec::new();
    let mut cur: Option<OutputRecord> = None;
    let mut rest = text;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        if let Some(r) = rest.strip_prefix("!--") {
            rest = r.find("-->").map_or("", |e| &r[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else {
            return Err("unterminated `<` at the end of the output".into());
        };
        let tag = &rest[..gt];
        rest = &rest[gt + 1..];
        let self_closing = tag.ends_with('/');
        if tag.starts_with('?') {
            continue;
        }
        if is_elem(tag, "record") {
            if let Some(open) = cur.take() {
                return Err(format!("record `{open}` not closed before the next one"));
            }
            let r = OutputRecord {
                kind: attr(tag, "type").unwrap_or("").to_owned(),
                fields: Vec::new(),
                tags: Vec::new(),
                btags: Vec::new(),
            };
            if self_closing {
                records.push(r);
            } else {
                cur = Some(r);
            }
        } else if tag.trim_end() == "/record" {
            let Some(mut r) = cur.take() else {
                return Err("</record> without <record>".into());
            };
            r.fields.sort();
            r.tags.sort();
            r.btags.sort();
            records.push(r);
        } else if is_elem(tag, "field") || is_elem(tag, "tag") || is_elem(tag, "btag") {
            let Some(r) = cur.as_mut() else {
                return Err(format!("<{tag}> outside a record"));
            };
            let label = attr(tag, "label")
                .ok_or_else(|| format!("<{tag}> has no label"))?
                .to_owned();
            let value = if self_closing {
                ""
            } else {
                let end = rest.find('<').unwrap_or(rest.len());
                let v = &rest[..end];
                rest = &rest[end..];
                v
            };
            if is_elem(tag, "field") {
                r.fields.push((label, value.to_owned()));
            } else if is_elem(tag, "tag") {
                r.tags.push((label, atoi(value.as_bytes())));
            } else {
                r.btags.push((label, atoi(value.as_bytes())));
            }
        }
        // Closing tags of entries and anything else: nothing to record.
    }
    if let Some(open) = cur {
        return Err(format!(
            "record `{open}` not closed at the end of the output"
        ));
    }
    Ok(records)
}

/// Compares two XML outputs (spec §11.4): as multisets of records, or, if `ordered`,
/// as sequences. `Err` describes the difference.
pub fn compare_outputs(expected: &str, actual: &str, ordered: bool) -> Result<(), String> {
    let exp = parse_output(expected).map_err(|e| format!("expected output: {e}"))?;
    let act = parse_output(actual).map_err(|e| format!("actual output: {e}"))?;
    if ordered {
        for (i, (e, a)) in exp.iter().zip(&act).enumerate() {
            if e != a {
                return Err(format!(
                    "record {} differs:\n  expected {e}\n  actual   {a}",
                    i + 1
                ));
            }
        }
        if exp.len() != act.len() {
            let (what, extra) = if exp.len() > act.len() {
                ("missing", &exp[act.len()..])
            } else {
                ("unexpected", &act[exp.len()..])
            };
            return Err(format!(
                "{} records expected, {} found; first {what}: {}",
                exp.len(),
                act.len(),
                extra.first().map(ToString::to_string).unwrap_or_default()
            ));
        }
        return Ok(());
    }
    let mut counts: BTreeMap<&OutputRecord, i64> = BTreeMap::new();
    for r in &exp {
        *counts.entry(r).or_default() += 1;
    }
    for r in &act {
        *counts.entry(r).or_default() -= 1;
    }
    let missing: Vec<_> = counts.iter().filter(|(_, &c)| c > 0).collect();
    let extra: Vec<_> = counts.iter().filter(|(_, &c)| c < 0).collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let mut msg = format!(
        "outputs differ ({} records expected, {} found)",
        exp.len(),
        act.len()
    );
    for (title, list) in [("missing", &missing), ("unexpected", &extra)] {
        for (r, c) in list.iter().take(10) {
            msg.push_str(&format!("\n  {title} {}x {r}", c.abs()));
        }
        if list.len() > 10 {
            msg.push_str(&format!("\n  ... and {} more {title}", list.len() - 10));
        }
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = "<?xml version=\"1.0\" ?>\n<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >\n<field label=\"A\" interface=\"C4SNet\">(int)10</field>\n<tag label=\"T\">2</tag>\n</record>\n<?xml version=\"1.0\" ?>\n<record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" >\n<field label=\"A\" interface=\"C4SNet\">(int)11</field>\n<tag label=\"T\">3</tag>\n<btag label=\"b\">1</btag>\n</record>\n<?xml version=\"1.0\" ?>\n<record type=\"terminate\" />\n";

    #[test]
    fn same_records_in_another_layout_and_order_compare_equal() {
        let older = "<?xml version=\"1.0\" ?><record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" ><btag label=\"b\">1</btag><tag label=\"T\">3</tag><field label=\"A\" interface=\"C4SNet\">(int)11</field></record><?xml version=\"1.0\" ?><record xmlns=\"snet-home.org\" type=\"data\" mode=\"textual\" ><field label=\"A\" interface=\"C4SNet\">(int)10</field><tag label=\"T\"> 2</tag></record><?xml version=\"1.0\" ?><record type=\"terminate\" />";
        assert_eq!(compare_outputs(CURRENT, older, false), Ok(()));
        let err = compare_outputs(CURRENT, older, true)
            .err()
            .unwrap_or_default();
        assert!(err.contains("record 1 differs"), "{err}");
    }

    #[test]
    fn differences_are_reported() {
        let changed = CURRENT.replace("(int)11", "(int)12");
        let err = compare_outputs(CURRENT, &changed, false)
            .err()
            .unwrap_or_default();
        assert!(
            err.contains("missing 1x data {A=(int)11, <T>=3, <#b>=1}"),
            "{err}"
        );
        assert!(err.contains("unexpected 1x data {A=(int)12"), "{err}");
        // duplicates count
        let doubled = format!("{CURRENT}{CURRENT}");
        assert!(compare_outputs(CURRENT, &doubled, false).is_err());
        // a missing terminate record is a difference
        let cut = &CURRENT[..CURRENT.rfind("<?xml").unwrap_or(0)];
        assert!(compare_outputs(CURRENT, cut, false).is_err());
        assert!(compare_outputs(CURRENT, cut, true).is_err());
    }

    #[test]
    fn field_text_is_exact_and_may_contain_gt() {
        let a = "<record type=\"data\"><field label=\"s\">(char[3])a,>,b</field></record>";
        let b = "<record type=\"data\"><field label=\"s\">(char[3])a,>,c</field></record>";
        let recs = parse_output(a).unwrap_or_default();
        assert_eq!(recs[0].fields, vec![("s".into(), "(char[3])a,>,b".into())]);
        assert!(compare_outputs(a, b, false).is_err());
        assert!(compare_outputs(
            a,
            "<record type='data'>\n<field label='s'>(char[3])a,>,b</field>\n</record>",
            false
        )
        .is_ok());
    }

    #[test]
    fn malformed_outputs_are_errors() {
        assert!(parse_output("<record type=\"data\">").is_err());
        assert!(parse_output("</record>").is_err());
        assert!(parse_output("<field label=\"a\">x</field>").is_err());
    }
}
