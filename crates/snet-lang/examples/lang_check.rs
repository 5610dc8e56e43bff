//! `cargo run -p snet-lang --example lang_check -- FILE...`: the front end alone, like
//! `snet check` (used while the CLI crate is being built, and for quick timing).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for arg in std::env::args().skip(1) {
        let t = Instant::now();
        let r = snet_lang::compile_file(Path::new(&arg));
        let dt = t.elapsed();
        match r {
            Ok(c) => {
                eprint!("{}", c.warnings.render());
                println!("{}", c.signature_line());
            }
            Err(d) => {
                eprint!("{}", d.render());
                status = ExitCode::from(1);
            }
        }
        eprintln!("[{arg}: {:.3} ms]", dt.as_secs_f64() * 1e3);
    }
    status
}
