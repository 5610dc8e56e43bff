//! Reads S-Net XML records (spec §11.2) from a file or standard input and writes them
//! back in the output format (spec §11.3), reporting malformed records on standard
//! error: the record I/O path of `snet run` without a network.
//!
//! ```sh
//! cargo run --release -p snet-io --example xml_copy -- IN.xml [OUT.xml]
//! ```
//!
//! Without OUT the records are only read and counted (the reader's cost alone).

use snet_io::{XmlReader, XmlWriter};
use std::io::{self, Read, Write};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let input: Box<dyn Read> = match args.first().map(String::as_str) {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("xml_copy: cannot open {path}: {e}");
                std::process::exit(2);
            }
        },
    };
    let mut writer = match args.get(1) {
        None => None,
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => {
                let mut w = XmlWriter::new(io::BufWriter::new(f));
                w.set_flush_each_record(false);
                Some(w)
            }
            Err(e) => {
                eprintln!("xml_copy: cannot create {path}: {e}");
                std::process::exit(2);
            }
        },
    };
    let (mut good, mut bad) = (0u64, 0u64);
    for item in XmlReader::new(input) {
        match item {
            Ok(rec) => {
                good += 1;
                if let Some(w) = &mut writer {
                    if let Err(e) = w.write_record(&rec) {
                        eprintln!("xml_copy: {e}");
                        std::process::exit(1);
                    }
                }
            }
            Err(e) => {
                bad += 1;
                eprintln!("warning: {e}; record discarded");
                if e.is_fatal() {
                    break;
                }
            }
        }
    }
    if let Some(w) = writer {
        if let Err(e) = w.finish().and_then(|mut b| b.flush().map_err(Into::into)) {
            eprintln!("xml_copy: {e}");
            std::process::exit(1);
        }
    }
    println!("{good} records read, {bad} discarded");
}
