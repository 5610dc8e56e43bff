//! The C4SNet box interface: C boxes written against the classic `C4SNet.h`, compiled
//! with the system C compiler and loaded as [`snet_core::BoxFn`]s (spec §12, DESIGN
//! "The C box path").
//!
//! # Use
//!
//! ```no_run
//! use snet_c4snet::{load_boxes, BuildOptions};
//! # fn sigs() -> Vec<snet_core::BoxSig> { Vec::new() }
//! let boxes = load_boxes(&sigs(), &["boxes.c".into()], &BuildOptions::default())?;
//! for w in boxes.warnings() {
//!     eprintln!("{w}");
//! }
//! let table = boxes.into_table(); // hand to Engine::run; the library stays loaded
//! # Ok::<(), snet_c4snet::C4SNetError>(())
//! ```
//!
//! The CLI also calls [`install_crash_handler`] once at start-up.
//!
//! # How a C box is called
//!
//! [`build_library`] generates one C wrapper per box from its [`snet_core::BoxSig`]
//! (unpack the arguments in signature order, call `void *NAME(void *hnd, ...)`) and a
//! table of output variants with their label kinds, compiles them with the shim
//! (`csrc/shim.c`: the `C4SNet*` entry points and the variadic `C4SNetOut`) and the
//! user's sources, and links one shared object, cached by content hash. [`load_library`]
//! opens it, installs the Rust entry points into the shim (so the library needs no
//! symbols from the executable) and binds every box. `C4SNetOut` reads the chosen
//! variant's label kinds, collects the values with `va_arg` and calls back into Rust,
//! which builds the `Args` and passes it to the engine's [`snet_core::Emitter`].
//!
//! # What box authors may assume
//!
//! * A box function may run concurrently on several threads, also for the same box; the
//!   runtime keeps no state between calls. Globals the box writes need its own locking.
//! * `hnd` is valid on the calling thread until the box returns; `C4SNetOut` emits the
//!   record before it returns, in call order.
//! * `C4SNetFree` and `C4SNetShallowCopy` are atomic; objects can be shared across
//!   threads and released anywhere. The other functions are safe to call concurrently on
//!   objects that nobody is writing.
//! * The runtime never copies an object implicitly: an argument object may be shared
//!   with other records, so modify it in place only if it is not (spec §12.5 rule 3).
//! * A `NULL` field passed to `C4SNetOut` is carried as a NULL field and handed to the
//!   box that receives it as `NULL`; the runtime never frees it.
//! * Errors a box makes that C cannot report (a bad variant number, `C4SNetGetString` on
//!   an `int` object, a NULL object) fail the box call with a message naming the box;
//!   emissions after the error are ignored.

mod abi;
mod cache;
mod compile;
mod crash;
mod error;
mod load;
mod wrapgen;

pub use cache::CACHE_DIR_ENV;
pub use compile::{build_library, split_flags, BuildOptions, BuiltLibrary};
pub use crash::{install_crash_handler, set_crash_flush, set_crash_node};
pub use error::C4SNetError;
pub use load::{load_library, CBoxes};
pub use wrapgen::{c_prototype, c_stub};

use snet_core::BoxSig;
use std::path::{Path, PathBuf};

/// Builds (or takes from the cache) and loads the C boxes `sigs` from `sources` (`.c`,
/// `.o`, `.a`, `.so` files). Box name = C symbol.
///
/// Box code from the classic runtime's time (spec §12.1: "other people's C, often
/// old") was compiled with GNU89 inline semantics, GCC's default before GCC 5: a plain
/// `inline` function in a `.c` file was also an external function. Today's default
/// (C99) makes it an inline definition only, so a call the compiler does not inline
/// leaves an undefined symbol and the library fails to load. In that case (and only
/// then) the sources are rebuilt with `-fgnu89-inline`; if that does not load either,
/// the first error is reported. Code that loads as it is is never rebuilt, so C99
/// `inline` code keeps its meaning.
pub fn load_boxes(
    sigs: &[BoxSig],
    sources: &[PathBuf],
    opts: &BuildOptions,
) -> Result<CBoxes, C4SNetError> {
    let built = build_library(sigs, sources, opts)?;
    let err = match load_library(&built) {
        Err(e @ C4SNetError::Load { .. }) if e.to_string().contains("undefined symbol") => e,
        other => return other,
    };
    let mut gnu89 = opts.clone();
    gnu89.cflags.push(GNU89_INLINE.to_owned());
    let Ok(mut rebuilt) = build_library(sigs, sources, &gnu89) else {
        return Err(err);
    };
    rebuilt.warnings.push(format!(
        "warning: the C boxes were rebuilt with {GNU89_INLINE} (GNU89 inline semantics, \
         the default of the classic runtime's compilers); built with today's C99 \
         semantics they do not load: {err}"
    ));
    load_library(&rebuilt).map_err(|_| err)
}

/// The flag that selects GNU89 inline semantics (GCC and clang).
const GNU89_INLINE: &str = "-fgnu89-inline";

/// The directory of the shipped headers in the source tree (`C4SNet.h`, `bool.h`,
/// `memfun.h`). Builds use a copy in the cache, so this is only for tools and tests that
/// compile box code themselves.
pub fn source_include_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}
