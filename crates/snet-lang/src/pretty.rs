//! Pretty-printer: renders a syntax tree as S-Net source that parses back to the same
//! tree.
