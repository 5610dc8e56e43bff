//! The `snet` facade: embedding API for running S-Net programs with Rust and C boxes.
