//! Word statistics: Rust boxes, string fields, routing by type and flow inheritance.
//!
//! Each input line is a record `{text, <line>}`. `split` emits one `{word}` per word and
//! one `{<words>}` with the count; words are routed to `measure`, which turns each into
//! `{<len>}`, renamed by a filter to `<chars>`; the count passes the `[]` branch. Every
//! output still carries `<line>`, inherited from its input record.
//!
//! Run: `cargo run --release -p snet --example wordstats`

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, Value};
use snet_core::Label;

const PROGRAM: &str = r#"
net wordstats {
    box split((text) -> (word) | (<words>));
    box measure((word) -> (<len>));
} connect split .. ((measure .. [{<len>} -> {<chars=len>}]) | []);
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut prog = Program::from_source("wordstats.snet", PROGRAM)?;
    prog.bind("split", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let text = i
            .field("text")
            .and_then(Value::to_string_lossy)
            .unwrap_or_default();
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in &words {
            o.emit(1, vec![Arg::field(Value::string(w))])?;
        }
        o.emit(2, vec![Arg::tag(words.len() as i32)])
    })?;
    prog.bind("measure", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let n = i.field("word").map_or(0, Value::len);
        o.emit(1, vec![Arg::tag(n as i32)])
    })?;

    let lines = [
        "the quick brown fox",
        "jumps over",
        "the lazy dog again and again",
    ];
    let input: Vec<Record> = lines
        .iter()
        .enumerate()
        .map(|(n, l)| {
            Record::new()
                .with_field("text", Value::string(l))
                .with_tag("line", n as i32)
        })
        .collect();
    let out = prog.run_records(EngineKind::Seq, input)?;

    for (n, l) in lines.iter().enumerate() {
        let of_line = |r: &&Record| r.tag(Label::tag("line")) == Some(n as i32);
        let words = out
            .iter()
            .filter(of_line)
            .find_map(|r| r.tag(Label::tag("words")))
            .unwrap_or(0);
        let chars: i32 = out
            .iter()
            .filter(of_line)
            .filter_map(|r| r.tag(Label::tag("chars")))
            .sum();
        // Every output carries <line> by flow inheritance.
        assert_eq!(words as usize, l.split_whitespace().count());
        assert_eq!(
            chars as usize,
            l.split_whitespace().map(str::len).sum::<usize>()
        );
        println!("line {n}: {words} words, {chars} letters  ({l:?})");
    }
    Ok(())
}
