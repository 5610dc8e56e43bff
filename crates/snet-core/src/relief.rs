//! Bounded box outputs: the policy shared by the engines whose streams are unbounded
//! (`seq`, `front`).
//!
//! A box that emits many records in one call (a generator) used to have every one of
//! them queued at the next box until the call returned: memory grew with the number of
//! records of one call. Now, once a call has queued [`RELIEF_EVERY`] records, the engine
//! runs the queued work downstream *from inside the emit path* (nested, on the same
//! stack), in stream order, and then lets the box go on. The box whose call is in
//! progress is never entered again (its records stay queued), nor is any other box
//! whose call is in progress further out on the same stack.
//!
//! Nesting is bounded: at most [`MAX_NEST`] levels, and only while the stack used so
//! far is below [`STACK_BUDGET`] (a chain of generators, or a box with large local
//! arrays, falls back to buffering instead of overflowing the stack). Buffering is
//! always correct; relief only bounds memory.

/// Records queued by one box call (or one walk) between two reliefs.
pub const RELIEF_EVERY: usize = 256;

/// Records in flight in the whole run above which a relief (in an engine with several
/// workers) also waits for a destination another worker owns whose stream is short:
/// records that wait in a deterministic collector for one held up there count too.
pub const IN_FLIGHT_HIGH: i64 = 4 * RELIEF_EVERY as i64;

/// Nested reliefs at most (a relief runs boxes, whose calls may need relief too).
pub const MAX_NEST: u32 = 8;

/// Stack bytes in use (measured from the engine's outermost frame) above which a relief
/// does not nest further. Engines run on stacks of at least 2 MiB (a test thread);
/// this leaves the nested box code at least 1 MiB.
pub const STACK_BUDGET: usize = 1 << 20;

/// The address of a local of the caller's frame (roughly the current stack pointer).
#[inline(never)]
pub fn stack_addr() -> usize {
    let x = 0u8;
    std::hint::black_box(&x) as *const u8 as usize
}

/// True if a relief may nest one more level: `nest` levels are running, and the stack
/// was at `base` (see [`stack_addr`]) at the engine's outermost frame.
pub fn may_nest(nest: u32, base: usize) -> bool {
    // Stacks grow downwards on every target we build for; `abs_diff` keeps a wrong
    // guess harmless (it only makes relief rarer).
    nest < MAX_NEST && base.abs_diff(stack_addr()) < STACK_BUDGET
}
