//! `snet` command-line interface.

fn main() {
    println!("snet {}", env!("CARGO_PKG_VERSION"));
}
