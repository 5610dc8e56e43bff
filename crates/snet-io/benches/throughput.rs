//! Reader and writer throughput of the XML and JSON-lines formats.
//!
//! `cargo bench -p snet-io --bench throughput` prints, per workload, the median of 5
//! runs of writing and of reading N records from memory, in records/s and MB/s.

use snet_core::record::Record;
use snet_core::value::Value;
use snet_io::{JsonReader, JsonWriter, XmlReader, XmlWriter};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run(name: &str, rec: &Record, n: usize) {
    const RUNS: usize = 5;
    let mut xml = Vec::new();
    let (mut wx, mut rx, mut wj, mut rj) = (vec![], vec![], vec![], vec![]);
    let mut json = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let mut w = XmlWriter::new(Vec::with_capacity(xml.len()));
        w.set_flush_each_record(false);
        for _ in 0..n {
            w.write_record(rec).expect("write");
        }
        xml = w.finish().expect("finish");
        wx.push(t.elapsed().as_secs_f64());

        let t = Instant::now();
        let count = XmlReader::new(xml.as_slice()).filter(Result::is_ok).count();
        rx.push(t.elapsed().as_secs_f64());
        assert_eq!(count, n);

        let t = Instant::now();
        let mut w = JsonWriter::new(Vec::with_capacity(json.len()));
        w.set_flush_each_record(false);
        for _ in 0..n {
            w.write_record(rec).expect("write");
        }
        json = w.finish().expect("finish");
        wj.push(t.elapsed().as_secs_f64());

        let t = Instant::now();
        let count = JsonReader::new(json.as_slice())
            .filter(Result::is_ok)
            .count();
        rj.push(t.elapsed().as_secs_f64());
        assert_eq!(count, n);
    }
    for (what, times, bytes) in [
        ("xml write", wx, xml.len()),
        ("xml read", rx, xml.len()),
        ("json write", wj, json.len()),
        ("json read", rj, json.len()),
    ] {
        let t = median(times);
        println!(
            "{name:<22} {what:<10} {n:>7} records {:>10.0} rec/s {:>8.1} MB/s",
            n as f64 / t,
            bytes as f64 / t / 1e6
        );
    }
}

fn main() {
    let small = Record::new()
        .with_field("A", Value::int(10))
        .with_tag("T", 2)
        .with_tag("K", -7);
    run("int + 2 tags", &small, 200_000);
    let ints: Vec<i32> = (0..1000).map(|i| i * 7919 - 300_000).collect();
    run(
        "int[1000]",
        &Record::new().with_field("v", Value::int_array(&ints)),
        2_000,
    );
    let doubles: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.37 - 11.0).collect();
    run(
        "double[1000]",
        &Record::new().with_field("m", Value::double_array(&doubles)),
        500,
    );
    let floats: Vec<u8> = (0..1000)
        .flat_map(|i| (i as f32 * 0.37 - 11.0).to_ne_bytes())
        .collect();
    run(
        "float[1000]",
        &Record::new().with_field(
            "f",
            Value::from_bytes(snet_core::value::CType::Float, 1000, false, &floats),
        ),
        500,
    );
    let text = "The quick brown fox <jumps> over the lazy dog & co. ".repeat(20);
    run(
        "char[1040]",
        &Record::new().with_field("s", Value::string(&text)),
        5_000,
    );
}
