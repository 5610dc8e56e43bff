//! The C4SNet box interface: header, C shim, wrapper generation, compiling and loading C boxes.
