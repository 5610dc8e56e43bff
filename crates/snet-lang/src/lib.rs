//! S-Net language front end: lexer, parser, name resolution, type inference, diagnostics.
