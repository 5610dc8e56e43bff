//! The XML record format: reader (spec §11.2) and writer (§11.3).

mod reader;
#[cfg(test)]
mod tests;
mod writer;

pub(crate) use reader::atoi;
pub use reader::XmlReader;
pub use writer::XmlWriter;
