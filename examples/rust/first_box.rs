//! The Rust-boxes chapter's example, whole: docs/guide/04-rust-boxes.md shows this
//! file as it is, and `crates/snet/tests/guide.rs` checks that the two agree and that
//! it prints what the chapter says. Run: `cargo run -p snet --example first_box`.

use snet::{Arg, ArgExt, BoxInput, BoxOutput, EngineKind, Program, Record, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `dec` counts the field A down; at 0 it emits B instead, which leaves the star.
    let mut prog = Program::from_source(
        "dec.snet",
        "net dec { box dec((A) -> (A) | (B)); } connect dec * {B};",
    )?;
    prog.bind("dec", |i: &BoxInput<'_>, o: &mut BoxOutput<'_>| {
        let a = i.int("A").unwrap_or(0);
        if a > 0 {
            o.emit(1, vec![Arg::int(a - 1)]) // variant 1: (A)
        } else {
            o.emit(2, vec![Arg::int(0)]) // variant 2: (B)
        }
    })?;
    let input = vec![Record::new()
        .with_field("A", Value::int(3))
        .with_tag("id", 7)];
    let output = prog.run_records(EngineKind::Front, input)?;
    for rec in &output {
        // Fields and tags by label; `<id>` was inherited through every stage.
        let fields: Vec<String> = rec
            .fields()
            .iter()
            .map(|(label, v)| match v {
                Some(v) => format!("{label}={v:?}"), // the C4SNet text: (int)0
                None => format!("{label}=NULL"),
            })
            .collect();
        let tags: Vec<String> = rec.tags().iter().map(|(l, v)| format!("{l}={v}")).collect();
        println!("{}", [fields, tags].concat().join(", "));
    }
    Ok(())
}
