//! Distributed S-Net (spec §16), lower layer: the record wire format and the
//! transports that carry messages between nodes.
//!
//! * [`wire`]: a versioned binary encoding of [`snet_core::Record`] for one direction
//!   of one pair of nodes (labels announced by name once per peer, then numbered), plus
//!   the integer helpers message envelopes use.
//! * [`transport`]: the [`Transport`] trait — ranks `0..size`, FIFO per pair, blocking
//!   receive without busy-polling — with [`LocalTransport`] (ranks as threads of one
//!   process, for tests) and, with cargo feature `mpi`, `MpiTransport` (one MPI rank
//!   per process, one communication thread, non-blocking sends).
//!
//! This crate knows nothing of nets, placement or termination: those live in
//! `snet-core` and the engines, which use it.

pub mod transport;
pub mod wire;

#[cfg(feature = "mpi")]
pub use transport::MpiTransport;
pub use transport::{LocalTransport, Transport, TransportError};
pub use wire::{PeerDecoder, PeerEncoder, WireError, WIRE_VERSION};
