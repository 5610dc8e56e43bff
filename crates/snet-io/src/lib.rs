//! S-Net record I/O: the XML textual record format (§11) and JSON lines.
