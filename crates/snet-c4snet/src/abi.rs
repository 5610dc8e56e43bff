//! The Rust half of the C ABI (unsafe leaf module): `#[repr(C)]` mirrors of the types in
//! `csrc/snet_c4snet_internal.h`, the entry points the C shim forwards to, and the
//! invocation context that C box code sees as its opaque `hnd`.
//!
//! Invariants:
//! 1. A `c4snet_data_t *` handed to C is exactly one reference obtained with
//!    [`Value::into_raw`]; C gives it back to us either through `C4SNetFree` (released
//!    here) or through `C4SNetOut` (taken back with [`Value::from_raw`] and moved into the
//!    emitted record). NULL is a legal "no value" and is never dereferenced.
//! 2. `hnd` points to an [`Invocation`] living on the stack of [`invoke`] for exactly the
//!    duration of the C call; the C side only reads its first field (the box descriptor).
//!    While C runs, Rust holds no other reference to the invocation, so the callbacks may
//!    turn `hnd` into `&mut Invocation`.
//! 3. No Rust panic unwinds into C: every callback that can run user-supplied Rust code
//!    (the engine's [`Emitter`]) catches it and stores it in the invocation; [`invoke`]
//!    resumes it after the C function has returned.
//! 4. The thread-local [`CURRENT`] is the invocation whose C code this thread is running,
//!    or null. [`invoke`] sets it before calling C and clears it afterwards; `c_emit`
//!    clears it while the engine's emitter runs and sets it again before returning to C.
//!    So it is right even when the emitter runs further boxes inline on this thread, or
//!    suspends the calling task and resumes it on another thread (a stackful-task engine
//!    blocking on a full stream): whenever C code runs, `CURRENT` names its invocation.
//!    It is a `const`-initialised `Cell` of a raw pointer, so reading it is
//!    async-signal-safe; the crash handler uses it to name the box.
//!
//! Memory ordering: none of its own; reference counts are `Value`'s (`Arc`'s).

use crate::wrapgen::SlotKind;
use snet_core::{BoxFailure, CType, Emitter, Value};
use std::any::Any;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::io::Write as _;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;

/// One argument or emitted value (`snet_c4snet_slot`): the core's raw slot, whose
/// layout is the C union's.
pub(crate) use snet_core::RawSlot as Slot;

/// One output variant of a box (`snet_c4snet_variant`).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CVariant {
    pub(crate) nlabels: c_int,
    pub(crate) kinds: *const u8,
}

/// The wrapper that unpacks the slots, calls the user's function and returns what it
/// returned.
pub(crate) type CallFn = unsafe extern "C" fn(hnd: *mut c_void, args: *const Slot) -> *mut c_void;

/// One box of the generated table (`snet_c4snet_box`).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CBoxDesc {
    pub(crate) name: *const c_char,
    pub(crate) call: Option<CallFn>,
    pub(crate) user_fn: Option<unsafe extern "C" fn()>,
    pub(crate) ninputs: c_int,
    pub(crate) input_kinds: *const u8,
    pub(crate) nvariants: c_int,
    pub(crate) variants: *const CVariant,
}

/// The table of Rust entry points (`snet_c4snet_api`).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Api {
    version: c_uint,
    ntypes: c_uint,
    alloc: unsafe extern "C" fn(c_int, usize, *mut *mut c_void) -> *mut c_void,
    create: unsafe extern "C" fn(c_int, usize, *const c_void) -> *mut c_void,
    release: unsafe extern "C" fn(*mut c_void),
    shallow_copy: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    deep_copy: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    size_of: unsafe extern "C" fn(*mut c_void) -> c_int,
    array_size: unsafe extern "C" fn(*mut c_void) -> usize,
    get_data: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    get_type: unsafe extern "C" fn(*mut c_void) -> c_int,
    get_string: unsafe extern "C" fn(*mut c_void) -> *mut c_char,
    emit: unsafe extern "C" fn(*mut c_void, c_int, c_int, *const Slot),
    bad_variant: unsafe extern "C" fn(*mut c_void, c_int),
    current: unsafe extern "C" fn() -> *mut c_void,
    bad_handle: unsafe extern "C" fn(*mut c_void),
    bad_value: unsafe extern "C" fn(*mut c_void, c_int, c_int, *const c_void),
    bad_free: unsafe extern "C" fn(*const c_void),
}

/// Must equal `SNET_C4SNET_API_VERSION` in the internal header.
const API_VERSION: c_uint = 5;

/// The entry points installed into every loaded box library.
pub(crate) static API: Api = Api {
    version: API_VERSION,
    // The shim's check of a value's header (`snet_c4snet_is_value`) reads it.
    ntypes: CType::ALL.len() as c_uint,
    alloc: c_alloc,
    create: c_create,
    release: c_release,
    shallow_copy: c_shallow_copy,
    deep_copy: c_deep_copy,
    size_of: c_size_of,
    array_size: c_array_size,
    get_data: c_get_data,
    get_type: c_get_type,
    get_string: c_get_string,
    emit: c_emit,
    bad_variant: c_bad_variant,
    current: c_current,
    bad_handle: c_bad_handle,
    bad_value: c_bad_value,
    bad_free: c_bad_free,
};

/// What the crash handler says about a box besides its name, prepared when the box is
/// bound (the handler cannot allocate).
#[derive(Debug)]
pub(crate) struct CallInfo {
    /// The C prototype snet calls the box through, with a final `;`.
    pub(crate) prototype: Box<str>,
    /// The input labels as written (`A`, `<t>`, `<#b>`), in argument order.
    pub(crate) labels: Vec<Box<str>>,
    /// `"node N: "` when the box's library runs as node N of a distributed run.
    pub(crate) node: std::sync::Arc<std::sync::OnceLock<Box<[u8]>>>,
}

/// The box a thread runs, as the crash handler sees it (see [`current_box`]).
pub(crate) struct Current {
    /// Box name.
    pub(crate) name: &'static [u8],
    /// The first C4SNet error the box made, if any.
    pub(crate) failure: Option<&'static [u8]>,
    /// Its prototype and labels.
    pub(crate) info: &'static CallInfo,
    /// The arguments it was given (one more reference to each field, so they are alive
    /// even if the box released them), with their kinds.
    pub(crate) given: &'static [Slot],
    /// The kinds of `given`.
    pub(crate) kinds: &'static [SlotKind],
    /// The crash came while `C4SNetOut` read the values the box emitted.
    pub(crate) checking_values: bool,
}

/// The invocation context behind `hnd` (invariant 2).
#[repr(C)]
pub(crate) struct Invocation<'a> {
    /// Read by `C4SNetOut` in C; must stay the first field.
    desc: *const CBoxDesc,
    /// Set by `C4SNetOut` in C while it checks the values it was given (a fault there
    /// is a missing value or a stray pointer, not the box's own code); must stay the
    /// second field (`snet_c4snet_invocation`).
    checking_values: c_int,
    /// Box name bytes, for messages and the crash handler.
    name: &'a str,
    /// Prototype and labels, for the crash handler.
    info: &'a CallInfo,
    /// The arguments as given, for the crash handler, and their kinds.
    given: &'a [Slot],
    kinds: &'a [SlotKind],
    /// Output label kinds per variant (the same as the C table's).
    outputs: &'a [Vec<SlotKind>],
    out: &'a mut dyn Emitter,
    failure: Option<BoxFailure>,
    panic: Option<Box<dyn Any + Send>>,
}

thread_local! {
    /// The invocation whose C code this thread is running, or null (invariant 4).
    static CURRENT: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
}

/// The box running on this thread, for the crash handler: its name, and the first
/// C4SNet error it made (e.g. `C4SNetGetString` on an int object, which returns NULL;
/// a crash is then usually its consequence).
///
/// Async-signal-safe: one thread-local read and plain loads; no allocation.
pub(crate) fn current_box() -> Option<Current> {
    let inv = CURRENT.with(Cell::get);
    if inv.is_null() {
        return None;
    }
    // The name and message outlive the invocation's C code; 'static only extends them to
    // the handler, which never returns to code that could change or free them.
    // SAFETY: a non-null CURRENT points to the invocation whose C code this thread runs
    // (invariant 4); the signal interrupted that code, so the invocation is alive.
    let inv = unsafe { &*inv.cast::<Invocation<'static>>() };
    let failure = inv.failure.as_ref().map(|f| f.0.as_bytes());
    Some(Current {
        name: inv.name.as_bytes(),
        failure,
        info: inv.info,
        given: inv.given,
        kinds: inv.kinds,
        checking_values: inv.checking_values != 0,
    })
}

/// Calls a box wrapper with argument slots `args` of `kinds` (checked against the
/// signature when the box was bound) and returns when the box has returned.
///
/// # Safety
/// `desc` must point to the live descriptor of the box and `call` be its wrapper, from a
/// library that is loaded and whose API table is installed; `outputs` must match the
/// descriptor's variants; `args` holds one slot per input of the kinds `kinds` (the
/// descriptor's), each field slot one reference made by `Value::into_raw` (or null),
/// which passes to the box.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn invoke(
    desc: *const CBoxDesc,
    call: CallFn,
    name: &str,
    info: &CallInfo,
    outputs: &[Vec<SlotKind>],
    kinds: &[SlotKind],
    args: &[Slot],
    out: &mut dyn Emitter,
) -> Result<(), BoxFailure> {
    // The record as given, for a crash message: one more reference to each field (the
    // box may release its own before it crashes); released after the call.
    for (k, a) in kinds.iter().zip(args) {
        if *k == SlotKind::Field {
            // SAFETY: a field slot (the caller's contract) holds a live reference or
            // null.
            let p = unsafe { a.field };
            if !p.is_null() {
                // SAFETY: `p` is a live reference made by `into_raw`.
                unsafe { Value::increment_raw(p) };
            }
        }
    }
    let mut inv = Invocation {
        desc,
        checking_values: 0,
        name,
        info,
        given: args,
        kinds,
        outputs,
        out,
        failure: None,
        panic: None,
    };
    let hnd: *mut c_void = ptr::addr_of_mut!(inv).cast();
    CURRENT.with(|c| c.set(hnd));
    // SAFETY: the caller guarantees `call` is the loaded wrapper of `desc`; `hnd` is a
    // valid invocation for the whole call (invariant 2) and `args` holds one slot per
    // input label in order, as the wrapper reads them.
    let returned = unsafe { call(hnd, args.as_ptr()) };
    CURRENT.with(|c| c.set(ptr::null_mut()));
    // Release the kept references as C4SNetFree does, so that the last reference to a
    // scalar the box released goes to the per-thread pool: a box that frees its input
    // and creates its output still allocates nothing (issue 26).
    for (k, a) in kinds.iter().zip(args) {
        if *k == SlotKind::Field {
            // SAFETY: the reference taken before the call, released once.
            let p = unsafe { a.field };
            if !p.is_null() {
                // SAFETY: as above.
                unsafe { Value::release_raw(p) };
            }
        }
    }
    if let Some(p) = inv.panic {
        resume_unwind(p);
    }
    // A misuse on another thread started by this call (or one that ended since).
    if inv.failure.is_none() {
        if let Some(m) = take_orphan() {
            inv.failure = Some(BoxFailure(format!(
                "box `{name}` (or code it started): {m}"
            )));
        }
    }
    // Spec §12.3: the function MUST return `hnd` (the classic runtime dereferences the
    // result). Old code that forgets `return hnd;` after its last C4SNetOut returns
    // `hnd` anyway (the shim's C4SNetOut leaves it as its return value, as the classic
    // one did); any other pointer is an error, not read here.
    if inv.failure.is_none() && returned != hnd {
        inv.failure = Some(BoxFailure(if returned.is_null() {
            format!(
                "box `{name}` returned NULL; a C4SNet box function must return its handle \
                 (`return hnd;`, spec §12.3)"
            )
        } else {
            format!(
                "box `{name}` returned {returned:p}, not its handle {hnd:p}; a C4SNet box \
                 function must return the handle it was given (`return hnd;`, spec §12.3)"
            )
        }));
    }
    match inv.failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

// The header C reads (`snet_c4snet_invocation`): the descriptor, then the flag.
const _: () = assert!(
    std::mem::offset_of!(Invocation<'static>, desc) == 0
        && std::mem::offset_of!(Invocation<'static>, checking_values)
            == std::mem::size_of::<usize>()
);

/// Records a failure in the innermost running invocation (the first one wins); outside
/// any box call, reports it on standard error, the only channel C code leaves us.
fn fail(message: String) {
    let inv = CURRENT.with(Cell::get);
    if inv.is_null() {
        // Never a panic here (this runs under C code): a full or closed stderr is ignored.
        let _ = writeln!(
            std::io::stderr(),
            "snet: C4SNet error outside a box call: {message}"
        );
        return;
    }
    // SAFETY: invariant 4: CURRENT is the invocation whose C code called us; no other
    // reference to it is live while C runs.
    let inv = unsafe { &mut *inv.cast::<Invocation<'_>>() };
    if inv.failure.is_none() {
        inv.failure = Some(BoxFailure(format!("box `{}`: {message}", inv.name)));
    }
}

fn ctype_of(ty: c_int, func: &str) -> Option<CType> {
    let t = u32::try_from(ty).ok().and_then(CType::from_abi);
    if t.is_none() {
        fail(format!("{func}: invalid element type {ty}"));
    }
    t
}

/// A new object of `size` elements of `t` (a scalar for 1) for `func`, or `None`
/// with a failure of the box when the memory cannot be had: an absurd size fails the
/// box call with a message instead of ending the process.
fn alloc_value(func: &str, t: CType, size: usize) -> Option<Value> {
    // Small objects (every scalar) may come from the per-thread pool.
    let v = if size.checked_mul(t.size()).is_some_and(|b| b < 16) {
        Some(Value::alloc(t, size, size == 1))
    } else {
        Value::try_alloc(t, size, size == 1)
    };
    if v.is_none() {
        fail(format!(
            "{func}: cannot allocate {size} elements of type `{}` ({}); the call \
             returned NULL",
            t.name(),
            size.checked_mul(t.size()).map_or_else(
                || "more bytes than memory can address".to_owned(),
                |b| format!("{b} bytes")
            ),
        ));
    }
    v
}

/// `C4SNetAlloc`.
unsafe extern "C" fn c_alloc(ty: c_int, size: usize, data: *mut *mut c_void) -> *mut c_void {
    let Some(t) = ctype_of(ty, "C4SNetAlloc") else {
        if !data.is_null() {
            // SAFETY: a non-null `data` points to a `void *` the caller owns.
            unsafe { *data = ptr::null_mut() };
        }
        return ptr::null_mut();
    };
    let Some(v) = alloc_value("C4SNetAlloc", t, size) else {
        if !data.is_null() {
            // SAFETY: a non-null `data` points to a `void *` the caller owns.
            unsafe { *data = ptr::null_mut() };
        }
        return ptr::null_mut();
    };
    if !data.is_null() {
        // SAFETY: a non-null `data` points to a `void *` the caller owns.
        unsafe { *data = v.data_ptr().cast() };
    }
    v.into_raw()
}

/// `C4SNetCreate`.
unsafe extern "C" fn c_create(ty: c_int, size: usize, data: *const c_void) -> *mut c_void {
    let Some(t) = ctype_of(ty, "C4SNetCreate") else {
        return ptr::null_mut();
    };
    // The common call: one small scalar (from the per-thread pool, see `alloc_value`).
    if size == 1 && t.size() < 16 && !data.is_null() {
        let v = Value::alloc(t, 1, true);
        let (src, dst) = (data.cast::<u8>(), v.data_ptr());
        // SAFETY: the caller passes one element of `type` at `data` (spec §12.5); `v`
        // is not shared yet and holds `t.size()` bytes. Constant sizes: no `memcpy`.
        unsafe {
            match t.size() {
                1 => ptr::copy_nonoverlapping(src, dst, 1),
                2 => ptr::copy_nonoverlapping(src, dst, 2),
                4 => ptr::copy_nonoverlapping(src, dst, 4),
                8 => ptr::copy_nonoverlapping(src, dst, 8),
                n => ptr::copy_nonoverlapping(src, dst, n),
            }
        }
        return v.into_raw();
    }
    let Some(bytes) = size.checked_mul(t.size()) else {
        fail(format!("C4SNetCreate: {size} elements are too many"));
        return ptr::null_mut();
    };
    if data.is_null() && bytes > 0 {
        fail("C4SNetCreate: NULL data pointer".to_owned());
        return ptr::null_mut();
    }
    let src: &[u8] = if bytes == 0 {
        &[]
    } else {
        // SAFETY: the caller passes `size` elements of `type` at `data` (spec §12.5).
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes) }
    };
    let Some(v) = alloc_value("C4SNetCreate", t, size) else {
        return ptr::null_mut();
    };
    let n = src.len().min(v.byte_len());
    // SAFETY: `v` is not shared yet and its storage holds at least `byte_len` bytes.
    unsafe { ptr::copy_nonoverlapping(src.as_ptr(), v.data_ptr(), n) };
    v.into_raw()
}

/// `C4SNetFree`: releases one reference; NULL is ignored.
unsafe extern "C" fn c_release(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: invariant 1: the box owns the reference it releases (the shim's
    // C4SNetFree checked that `p` looks like a value).
    unsafe { Value::release_raw(p) };
}

/// `C4SNetFree` given `p`, which is not a value (the shim checked its header): fails
/// the running call, naming the box.
unsafe extern "C" fn c_bad_free(p: *const c_void) {
    fail(format!(
        "C4SNetFree({p:p}): not a c4snet_data_t made by C4SNetCreate, C4SNetAlloc or a \
         copy (a stray pointer, or one freed already; spec §12.5)"
    ));
}

/// `C4SNetShallowCopy`.
unsafe extern "C" fn c_shallow_copy(p: *mut c_void) -> *mut c_void {
    if !p.is_null() {
        // SAFETY: invariant 1: the caller holds a reference to `p`.
        unsafe { Value::increment_raw(p) };
    }
    p
}

/// Borrows the object `p`, or records a failure if it is NULL.
fn with_object<R>(p: *mut c_void, func: &str, default: R, f: impl FnOnce(&Value) -> R) -> R {
    if p.is_null() {
        fail(format!("{func}: NULL object"));
        return default;
    }
    // SAFETY: invariant 1: the caller holds a reference to `p` for the whole call.
    unsafe { Value::with_raw(p, f) }
}

/// `C4SNetDeepCopy`.
unsafe extern "C" fn c_deep_copy(p: *mut c_void) -> *mut c_void {
    with_object(p, "C4SNetDeepCopy", ptr::null_mut(), |v| {
        v.deep_copy().into_raw()
    })
}

/// `C4SNetSizeof`.
unsafe extern "C" fn c_size_of(p: *mut c_void) -> c_int {
    with_object(p, "C4SNetSizeof", 0, |v| v.ctype().size() as c_int)
}

/// `C4SNetArraySize`.
unsafe extern "C" fn c_array_size(p: *mut c_void) -> usize {
    with_object(p, "C4SNetArraySize", 0, Value::len)
}

/// `C4SNetGetData`.
unsafe extern "C" fn c_get_data(p: *mut c_void) -> *mut c_void {
    with_object(p, "C4SNetGetData", ptr::null_mut(), |v| v.data_ptr().cast())
}

/// `C4SNetGetType`.
unsafe extern "C" fn c_get_type(p: *mut c_void) -> c_int {
    with_object(p, "C4SNetGetType", -1, |v| v.ctype() as c_int)
}

/// `C4SNetGetString`: a `malloc`ed NUL-terminated copy of a char/uchar object.
unsafe extern "C" fn c_get_string(p: *mut c_void) -> *mut c_char {
    with_object(p, "C4SNetGetString", ptr::null_mut(), |v| {
        if !matches!(v.ctype(), CType::Char | CType::UChar) {
            fail(format!(
                "C4SNetGetString on an object of type `{}` (only char and unsigned char)",
                v.ctype().name()
            ));
            return ptr::null_mut();
        }
        let bytes = v.bytes();
        // SAFETY: plain C allocation of len + 1 bytes; the box frees it with `free`.
        let s = unsafe { libc::malloc(bytes.len() + 1) }.cast::<u8>();
        if s.is_null() {
            fail("C4SNetGetString: out of memory".to_owned());
            return ptr::null_mut();
        }
        // SAFETY: `s` has room for len + 1 bytes and does not overlap the object.
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), s, bytes.len());
            *s.add(bytes.len()) = 0;
        }
        s.cast()
    })
}

/// `C4SNetOut` with a valid variant: `values` holds one slot per label of the variant.
unsafe extern "C" fn c_emit(hnd: *mut c_void, variant: c_int, n: c_int, values: *const Slot) {
    // SAFETY: invariant 2: `hnd` is the running invocation, called back from its C code.
    let inv = unsafe { &mut *hnd.cast::<Invocation<'_>>() };
    // The shim checked 1 <= variant <= nvariants against the C table, which was
    // generated from the same signature as `outputs` (checked at load time).
    let kinds = &inv.outputs[(variant - 1) as usize];
    debug_assert_eq!(kinds.len(), n as usize);
    let values: &[Slot] = if kinds.is_empty() {
        &[]
    } else {
        // SAFETY: the shim passes one slot per label of the variant.
        unsafe { std::slice::from_raw_parts(values, kinds.len()) }
    };
    if inv.failure.is_some() || inv.panic.is_some() {
        // The call already failed: ignore further emissions (releasing their fields).
        // SAFETY: invariant 1: C4SNetOut consumes one reference per field slot.
        unsafe { snet_core::boxes::release_slots(kinds, values) };
        return;
    }
    let out = &mut *inv.out;
    // Invariant 4: runtime code is not box code; the emitter may also run other boxes or
    // move this call to another thread.
    CURRENT.with(|c| c.set(ptr::null_mut()));
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: invariant 1: C4SNetOut consumes one reference per field slot, which
        // passes to the emitted record; the kinds are the variant's.
        unsafe { out.emit_raw(variant as usize, kinds, values) }
    }));
    CURRENT.with(|c| c.set(hnd));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(f)) => inv.failure = Some(f),
        Err(p) => inv.panic = Some(p),
    }
}

/// `C4SNetOut` given value `index` (from 1) of `variant`, `p`, as a field, which is not a
/// value (the shim checked its header): fails the call with the box named.
unsafe extern "C" fn c_bad_value(hnd: *mut c_void, variant: c_int, index: c_int, p: *const c_void) {
    // SAFETY: invariant 2: `hnd` is the running invocation, called back from its C code
    // (the shim checked it is the thread's current one, which `fail` fails).
    let inv = unsafe { &*hnd.cast::<Invocation<'_>>() };
    let labels = usize::try_from(variant - 1)
        .ok()
        .and_then(|v| inv.outputs.get(v))
        .map_or(0, Vec::len);
    fail(format!(
        "C4SNetOut(hnd, {variant}, ...): value {index} ({p:p}) is not a c4snet_data_t made \
             by C4SNetCreate, C4SNetAlloc or a copy (fewer values than the variant's \
             {labels} labels, or a stray or freed pointer; spec §12.4)"
    ));
}

/// The handle of the invocation this thread runs the C code of, or null (invariant 4).
unsafe extern "C" fn c_current() -> *mut c_void {
    CURRENT.with(Cell::get)
}

/// A misuse of the API on a thread that runs no box call, kept for the next box call
/// that returns (which then fails with it): the thread that made it has no invocation
/// to fail, and the run must not go on as if nothing happened.
static ORPHAN: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
/// Whether [`ORPHAN`] holds a message (read after every box call).
static ORPHANED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `C4SNetOut` with a handle that is not the running invocation's: one kept from an
/// earlier call, or used on another thread (spec §12.4). Its values are not read (the
/// handle says which variant's kinds they have, and it cannot be trusted).
unsafe extern "C" fn c_bad_handle(hnd: *mut c_void) {
    let running = CURRENT.with(Cell::get);
    let msg = if running.is_null() {
        format!(
            "C4SNetOut({hnd:p}, ...) was called on a thread that is not running a box call; \
             a box may only emit through the handle of its running call, from the thread \
             that runs it (spec §12.4)"
        )
    } else {
        format!(
            "C4SNetOut was called with a handle ({hnd:p}) that is not this call's \
             ({running:p}): a handle kept from an earlier call, or another call's, is no \
             longer valid (spec §12.4)"
        )
    };
    if running.is_null() {
        let mut g = ORPHAN.lock().unwrap_or_else(|e| e.into_inner());
        g.get_or_insert(msg);
        ORPHANED.store(true, std::sync::atomic::Ordering::Release);
    } else {
        fail(msg);
    }
}

/// The misuse [`c_bad_handle`] kept for a box call, if any.
fn take_orphan() -> Option<String> {
    if !ORPHANED.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    let mut g = ORPHAN.lock().unwrap_or_else(|e| e.into_inner());
    ORPHANED.store(false, std::sync::atomic::Ordering::Relaxed);
    g.take()
}

/// `C4SNetOut` with a variant outside `1..=nvariants`.
unsafe extern "C" fn c_bad_variant(hnd: *mut c_void, variant: c_int) {
    // SAFETY: invariant 2.
    let inv = unsafe { &mut *hnd.cast::<Invocation<'_>>() };
    if inv.failure.is_none() {
        inv.failure = Some(BoxFailure(format!(
            "box `{}` emitted output variant {variant}, but it has {} output variant(s) \
             (C4SNetOut variants are numbered from 1)",
            inv.name,
            inv.outputs.len()
        )));
    }
}
