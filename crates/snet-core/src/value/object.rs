//! The data object itself (unsafe leaf module).
//!
//! Invariants: the storage (`inline` or `heap`) holds at least `len * ctype.size()` bytes
//! (plus a zero byte after a `char`/`unsigned char` array's data), 16-byte aligned, for
//! the whole life of the object; it is only written through the pointer returned by
//! [`Value::data_ptr`] (by box code that owns a reference) or before the object is
//! shared. Reads through [`Value::bytes`] are therefore racy only if box code mutates a
//! shared object, which spec §12.5 rule 3 forbids.
//!
//! Memory ordering: reference counting is `std::sync::Arc`'s (Release on decrement,
//! Acquire fence before free).
//!
//! Layout: an object (with its reference counts) is one cache line, aligned on one:
//! objects that different workers write (their reference counts) never share a line
//! (false sharing between neighbouring values cost `deep` at two workers about a fifth
//! of its CPU, issue 34).
//!
//! Reuse: an object with inline storage (every scalar) whose last reference goes is kept
//! in a per-thread pool, and the thread's next object that small takes it back, retyped
//! and zeroed (issue 26: a C box that replaces a scalar field costs no heap allocation
//! per firing). A thread that frees more than it makes (the output writer) hands batches
//! to one that makes more than it frees (the input reader) through a small global
//! spare list: aligned allocation through the system allocator is slow, so objects are
//! allocated once and go round.

use std::cell::UnsafeCell;
use std::fmt;
use std::sync::Arc;

/// The twelve C4SNet element types; discriminants are the ABI values of spec §12.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum CType {
    /// `unsigned char`
    UChar = 0,
    /// `signed char`
    Char = 1,
    /// `unsigned short`
    UShort = 2,
    /// `short`
    Short = 3,
    /// `unsigned int`
    UInt = 4,
    /// `int`
    Int = 5,
    /// `unsigned long`
    ULong = 6,
    /// `long`
    Long = 7,
    /// `float`
    Float = 8,
    /// `double`
    Double = 9,
    /// `long double`
    LDouble = 10,
    /// `void *`
    Pointer = 11,
}

impl CType {
    /// All types, in ABI order.
    pub const ALL: [CType; 12] = [
        CType::UChar,
        CType::Char,
        CType::UShort,
        CType::Short,
        CType::UInt,
        CType::Int,
        CType::ULong,
        CType::Long,
        CType::Float,
        CType::Double,
        CType::LDouble,
        CType::Pointer,
    ];

    /// The type with ABI value `v`, if any.
    pub fn from_abi(v: u32) -> Option<CType> {
        CType::ALL.get(v as usize).copied()
    }

    /// `sizeof` of one element on the target (LP64: 1,1,2,2,4,4,8,8,4,8,16,8).
    pub const fn size(self) -> usize {
        match self {
            CType::UChar | CType::Char => 1,
            CType::UShort | CType::Short => 2,
            CType::UInt | CType::Int | CType::Float => 4,
            CType::ULong | CType::Long => std::mem::size_of::<std::ffi::c_long>(),
            CType::Double => 8,
            CType::LDouble => {
                if cfg!(target_arch = "x86_64") || cfg!(target_arch = "aarch64") {
                    16
                } else {
                    8
                }
            }
            CType::Pointer => std::mem::size_of::<*const u8>(),
        }
    }

    /// The type name used by the textual format (spec §12.6).
    pub const fn name(self) -> &'static str {
        match self {
            CType::UChar => "unsigned char",
            CType::Char => "char",
            CType::UShort => "unsigned short",
            CType::Short => "short",
            CType::UInt => "unsigned int",
            CType::Int => "int",
            CType::ULong => "unsigned long",
            CType::Long => "long",
            CType::Float => "float",
            CType::Double => "double",
            CType::LDouble => "long double",
            CType::Pointer => "pointer",
        }
    }

    /// The type whose textual name is exactly `name`.
    pub fn from_name(name: &str) -> Option<CType> {
        CType::ALL.iter().copied().find(|t| t.name() == name)
    }
}

/// A value's storage. `repr(C)` with the type first and the scalar flag next: the C4SNet
/// shim reads them (`snet_c4snet_value_header`) to refuse a pointer box code hands back
/// as a value (to `C4SNetOut` or `C4SNetFree`) that is not one.
#[repr(C, align(64))]
struct Object {
    ctype: CType,
    scalar: bool,
    len: usize,
    /// Element storage of up to 16 bytes (every scalar), inline: a scalar value is one
    /// allocation.
    inline: UnsafeCell<u128>,
    /// Element storage of more than 16 bytes (empty otherwise).
    heap: Box<[UnsafeCell<u128>]>,
}

// The header the C4SNet shim reads: the type at byte 0, the scalar flag at byte 4.
const _: () =
    assert!(std::mem::offset_of!(Object, ctype) == 0 && std::mem::offset_of!(Object, scalar) == 4);

// SAFETY: the storage is plain bytes; concurrent mutation through `data_ptr` is the box
// author's responsibility exactly as in C (spec §12.5 rule 3), and the runtime itself
// only reads shared objects.
unsafe impl Sync for Object {}
// SAFETY: no thread-affine state.
unsafe impl Send for Object {}

/// Objects with inline storage whose last reference went, kept per thread for its next
/// small object (see [`Value::alloc`]).
const POOL_MAX: usize = 128;
/// Objects move between threads in batches of this many (see [`SPARE`]).
const BATCH: usize = 64;
/// Batches the global spare list holds at most (512 KiB of objects); beyond, objects
/// are freed.
const SPARE_MAX: usize = 128;

/// A thread's spare objects, each the only reference to its object (from
/// `Arc::into_raw`).
struct Pool(UnsafeCell<Vec<*const Object>>);

impl Drop for Pool {
    fn drop(&mut self) {
        for p in self.0.get_mut().drain(..) {
            // SAFETY: every pointer in the pool came from `Arc::into_raw` and is the
            // only reference to its object.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

thread_local! {
    static POOL: Pool = const { Pool(UnsafeCell::new(Vec::new())) };
}

/// A batch of spare objects moving between threads.
struct Batch(Vec<*const Object>);

// SAFETY: a batch holds the only references to its objects (pooled pointers, see
// `Pool`); moving it moves them, and `Object` is `Send`.
unsafe impl Send for Batch {}

/// Batches of spare objects any thread may take.
static SPARE: std::sync::Mutex<Vec<Batch>> = std::sync::Mutex::new(Vec::new());
/// Batches in [`SPARE`] (read without the lock: a thread with an empty pool looks only
/// when there is something).
static SPARE_BATCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn spare() -> std::sync::MutexGuard<'static, Vec<Batch>> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps `p`, the only reference to an object with inline storage (from
/// `Arc::into_raw`), in this thread's pool; frees it when the thread's pool is gone.
#[inline]
fn pool_put(p: *const Object) {
    let kept = POOL
        .try_with(|pool| {
            // SAFETY: this thread's pool; nothing below reaches it again (freeing an
            // object drops no value).
            let v = unsafe { &mut *pool.0.get() };
            if v.len() >= POOL_MAX {
                spill(v);
            }
            v.push(p);
        })
        .is_ok();
    if !kept {
        // SAFETY: the only reference, released once.
        drop(unsafe { Arc::from_raw(p) });
    }
}

/// Moves a batch of a full pool to the spare list (or frees it when that is full).
#[cold]
fn spill(v: &mut Vec<*const Object>) {
    let batch = Batch(v.split_off(v.len() - BATCH));
    let mut sp = spare();
    if sp.len() < SPARE_MAX {
        sp.push(batch);
        SPARE_BATCHES.store(sp.len(), std::sync::atomic::Ordering::Relaxed);
        return;
    }
    drop(sp);
    for p in batch.0 {
        // SAFETY: pooled pointers are the only references to their objects.
        drop(unsafe { Arc::from_raw(p) });
    }
}

/// A pooled object (the only reference to it), if this thread or the spare list has
/// one.
#[inline]
fn pool_take() -> Option<*const Object> {
    POOL.try_with(|pool| {
        // SAFETY: this thread's pool; nothing below reaches it again.
        let v = unsafe { &mut *pool.0.get() };
        match v.pop() {
            Some(p) => Some(p),
            None => refill(v),
        }
    })
    .ok()
    .flatten()
}

/// Refills an empty pool with a batch from the spare list and takes one object.
#[cold]
fn refill(v: &mut Vec<*const Object>) -> Option<*const Object> {
    if SPARE_BATCHES.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return None;
    }
    let mut sp = spare();
    let batch = sp.pop()?;
    SPARE_BATCHES.store(sp.len(), std::sync::atomic::Ordering::Relaxed);
    drop(sp);
    *v = batch.0;
    v.pop()
}

/// The element count and storage bytes of an object of `len` elements of `ctype`: a
/// scalar has one element, and a `char` or `unsigned char` array gets one zero byte
/// more than it holds (see [`Value::alloc`]). Storage of up to 16 bytes is inline.
fn storage(ctype: CType, len: usize, scalar: bool) -> (usize, usize) {
    let len = if scalar { 1 } else { len };
    let terminated = !scalar && matches!(ctype, CType::Char | CType::UChar);
    (len, len * ctype.size() + usize::from(terminated))
}

/// A reference-counted C4SNet data object (spec §12.5). `Clone` is `C4SNetShallowCopy`.
#[derive(Clone)]
pub struct Value(std::mem::ManuallyDrop<Arc<Object>>);

impl Drop for Value {
    /// The last reference to an object with inline storage keeps the object for reuse
    /// (see the module doc); any other drop is `Arc`'s.
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the reference is taken once, here; `self.0` is not used afterwards.
        drop_ref(unsafe { std::mem::ManuallyDrop::take(&mut self.0) });
    }
}

/// Drops one reference: the last one to an object with inline storage puts the object
/// in the pool (see the module doc), any other goes the way of `Arc`.
#[inline(always)]
fn drop_ref(a: Arc<Object>) {
    if a.heap.is_empty() && Arc::strong_count(&a) == 1 {
        // The last reference (values never make weak ones): nobody else can reach the
        // object. The fence orders its reuse after every other owner's release, as
        // `Arc`'s own free does.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        pool_put(Arc::into_raw(a));
    } else {
        release(a);
    }
}

/// Drops a reference that is not the last one to a small object (kept out of line: the
/// common drop is the pooled one).
#[inline(never)]
fn release(a: Arc<Object>) {
    drop(a);
}

/// A value holding `a`.
#[inline]
fn wrap(a: Arc<Object>) -> Value {
    Value(std::mem::ManuallyDrop::new(a))
}

impl Value {
    /// A new object of `len` zeroed elements; `scalar` objects have exactly one element.
    ///
    /// A `char` or `unsigned char` array gets one zero byte more than it holds, never
    /// part of its data: C4SNet promises no terminator (spec §12.5), but box code
    /// written for the classic runtime often treats such an array as a C string
    /// (`strlen`, `printf("%s")`) and must not read past its end.
    #[inline]
    pub fn alloc(ctype: CType, len: usize, scalar: bool) -> Value {
        let (len, bytes) = storage(ctype, len, scalar);
        if bytes <= 16 {
            if let Some(obj) = pool_take() {
                // SAFETY: a pooled pointer is the only reference to its object (see
                // `Value::drop`), so the object may be written, and it becomes the
                // reference returned.
                unsafe {
                    let o = &mut *obj.cast_mut();
                    o.ctype = ctype;
                    o.scalar = scalar;
                    o.len = len;
                    *o.inline.get_mut() = 0;
                    return wrap(Arc::from_raw(obj));
                }
            }
        }
        Value::alloc_new(ctype, len, scalar, bytes)
    }

    /// [`Value::alloc`] of a new object (`len` elements, `bytes` of storage).
    #[inline(never)]
    fn alloc_new(ctype: CType, len: usize, scalar: bool, bytes: usize) -> Value {
        let words = bytes.div_ceil(16).max(1);
        wrap(Arc::new(Object {
            ctype,
            scalar,
            len,
            inline: UnsafeCell::new(0),
            heap: if bytes <= 16 {
                Box::default()
            } else {
                (0..words).map(|_| UnsafeCell::new(0)).collect()
            },
        }))
    }

    /// A new object holding a copy of `bytes` (which must be `len * size` long; shorter
    /// input is zero-padded, longer input truncated).
    pub fn from_bytes(ctype: CType, len: usize, scalar: bool, bytes: &[u8]) -> Value {
        let v = Value::alloc(ctype, len, scalar);
        let n = bytes.len().min(v.byte_len());
        // SAFETY: `v` is not shared yet and its storage holds at least `byte_len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.data_ptr(), n) };
        v
    }

    /// An `int` scalar.
    pub fn int(x: i32) -> Value {
        Value::from_bytes(CType::Int, 1, true, &x.to_ne_bytes())
    }

    /// A `double` scalar.
    pub fn double(x: f64) -> Value {
        Value::from_bytes(CType::Double, 1, true, &x.to_ne_bytes())
    }

    /// A `char` array holding the bytes of `s` (no terminating NUL), as C boxes create
    /// strings with `C4SNetCreate(CTYPE_char, strlen(s), s)`.
    pub fn string(s: &str) -> Value {
        Value::from_bytes(CType::Char, s.len(), false, s.as_bytes())
    }

    /// An array of `int`.
    pub fn int_array(xs: &[i32]) -> Value {
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_ne_bytes()).collect();
        Value::from_bytes(CType::Int, xs.len(), false, &bytes)
    }

    /// An array of `double`.
    pub fn double_array(xs: &[f64]) -> Value {
        let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_ne_bytes()).collect();
        Value::from_bytes(CType::Double, xs.len(), false, &bytes)
    }

    /// Element type.
    pub fn ctype(&self) -> CType {
        self.0.ctype
    }
    /// True for a scalar, false for an array (even of length 1).
    pub fn is_scalar(&self) -> bool {
        self.0.scalar
    }
    /// Number of elements (1 for a scalar).
    pub fn len(&self) -> usize {
        self.0.len
    }
    /// True for an array of zero elements.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
    /// Size of the element storage in bytes.
    pub fn byte_len(&self) -> usize {
        self.0.len * self.0.ctype.size()
    }

    /// Pointer to the element storage (`C4SNetGetData`).
    pub fn data_ptr(&self) -> *mut u8 {
        // `UnsafeCell<u128>` is `repr(transparent)`: a pointer to the cells is a pointer
        // to the bytes; no reference to the contents is created.
        if self.0.heap.is_empty() {
            self.0.inline.get().cast::<u8>()
        } else {
            self.0.heap.as_ptr().cast_mut().cast::<u8>()
        }
    }

    /// The element bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the storage holds at least `byte_len` bytes for the life of `self`;
        // writers are box code that exclusively owns the object (module invariant).
        unsafe { std::slice::from_raw_parts(self.data_ptr(), self.byte_len()) }
    }

    /// Element `i` as an `i32`, for `int` values.
    pub fn get_i32(&self, i: usize) -> Option<i32> {
        (self.ctype() == CType::Int && i < self.len()).then(|| {
            let b = &self.bytes()[i * 4..i * 4 + 4];
            i32::from_ne_bytes([b[0], b[1], b[2], b[3]])
        })
    }

    /// Element `i` as an `f64`, for `double` values.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        (self.ctype() == CType::Double && i < self.len()).then(|| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&self.bytes()[i * 8..i * 8 + 8]);
            f64::from_ne_bytes(a)
        })
    }

    /// The scalar `int` value, if this is one (or an `int` array of length 1).
    pub fn as_i32(&self) -> Option<i32> {
        self.get_i32(0)
    }

    /// The elements as `f64`s, for `double` values.
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        (self.ctype() == CType::Double)
            .then(|| (0..self.len()).filter_map(|i| self.get_f64(i)).collect())
    }

    /// The elements as `i32`s, for `int` values.
    pub fn to_i32_vec(&self) -> Option<Vec<i32>> {
        (self.ctype() == CType::Int)
            .then(|| (0..self.len()).filter_map(|i| self.get_i32(i)).collect())
    }

    /// The characters of a `char`/`uchar` value, lossily as UTF-8.
    pub fn to_string_lossy(&self) -> Option<String> {
        matches!(self.ctype(), CType::Char | CType::UChar)
            .then(|| String::from_utf8_lossy(self.bytes()).into_owned())
    }

    /// A new object with a copy of the contents (`C4SNetDeepCopy`).
    pub fn deep_copy(&self) -> Value {
        Value::from_bytes(self.ctype(), self.len(), self.is_scalar(), self.bytes())
    }

    /// Number of references currently held.
    pub fn ref_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Hands this reference to C as an opaque `c4snet_data_t *`.
    pub fn into_raw(self) -> *mut std::ffi::c_void {
        let mut me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped; its reference is taken once, here.
        let a = unsafe { std::mem::ManuallyDrop::take(&mut me.0) };
        Arc::into_raw(a).cast_mut().cast()
    }

    /// Takes back one reference handed out by [`Value::into_raw`].
    ///
    /// # Safety
    /// `p` must come from `into_raw` and its reference must not have been taken back yet.
    pub unsafe fn from_raw(p: *mut std::ffi::c_void) -> Value {
        // SAFETY: guaranteed by the caller.
        wrap(unsafe { Arc::from_raw(p.cast_const().cast::<Object>()) })
    }

    /// Releases one reference handed out by [`Value::into_raw`] (`C4SNetFree`); the
    /// last reference to an object with inline storage (every scalar) is kept for the
    /// thread's next small object, so that box code that frees a scalar and creates
    /// the next one allocates nothing (issue 26).
    ///
    /// # Safety
    /// As for [`Value::from_raw`]: `p` must come from `into_raw`, and its reference
    /// must not have been taken back yet.
    #[inline(always)]
    pub unsafe fn release_raw(p: *mut std::ffi::c_void) {
        // SAFETY: the caller's reference, released once; dropped here without a call
        // to the drop glue (every C box firing releases a value).
        drop_ref(unsafe { Arc::from_raw(p.cast_const().cast::<Object>()) });
    }

    /// A new object of `len` zeroed elements, or `None` when the memory cannot be had
    /// (a size that overflows, or that the allocator refuses) instead of ending the
    /// process as [`Value::alloc`] does. The storage comes zeroed from the allocator
    /// (`calloc`), so a huge object the system grants lazily is not touched here.
    pub fn try_alloc(ctype: CType, len: usize, scalar: bool) -> Option<Value> {
        let n = if scalar { 1 } else { len };
        let terminated = !scalar && matches!(ctype, CType::Char | CType::UChar);
        let bytes = n
            .checked_mul(ctype.size())?
            .checked_add(usize::from(terminated))?;
        if bytes <= 16 {
            return Some(Value::alloc(ctype, len, scalar));
        }
        let words = bytes.div_ceil(16);
        let layout = std::alloc::Layout::array::<UnsafeCell<u128>>(words).ok()?;
        // SAFETY: `layout` has a non-zero size (words >= 2).
        let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<UnsafeCell<u128>>();
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a fresh allocation of `words` zeroed cells with the layout of
        // `[UnsafeCell<u128>]` from the global allocator, which `Box` frees with it.
        let heap = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, words)) };
        Some(wrap(Arc::new(Object {
            ctype,
            scalar,
            len: n,
            inline: UnsafeCell::new(0),
            heap,
        })))
    }

    /// Adds one reference to a raw object (`C4SNetShallowCopy`).
    ///
    /// # Safety
    /// `p` must be a live pointer from `into_raw` whose reference the caller holds.
    pub unsafe fn increment_raw(p: *mut std::ffi::c_void) {
        // SAFETY: guaranteed by the caller.
        unsafe { Arc::increment_strong_count(p.cast_const().cast::<Object>()) }
    }

    /// Borrows a raw object without taking a reference.
    ///
    /// # Safety
    /// `p` must be a live pointer from `into_raw` for the whole of `f`.
    pub unsafe fn with_raw<R>(p: *mut std::ffi::c_void, f: impl FnOnce(&Value) -> R) -> R {
        // SAFETY: the caller holds a reference for the duration; ManuallyDrop keeps us
        // from releasing it.
        let v = std::mem::ManuallyDrop::new(unsafe { Value::from_raw(p) });
        f(&v)
    }

    /// True if both values are the same object.
    pub fn ptr_eq(a: &Value, b: &Value) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = Vec::new();
        super::text::write_value(self, &mut s);
        f.write_str(&String::from_utf8_lossy(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_one_cache_line_and_is_reused_only_after_its_last_reference() {
        let addr = |v: &Value| Arc::as_ptr(&v.0) as usize;
        let a = Value::int(7);
        assert_eq!(addr(&a) % 64, 0, "line-aligned");
        assert_eq!(std::mem::size_of::<Object>() % 64, 0);
        // A live object is never handed out again.
        let keep = a.clone();
        drop(a);
        let b = Value::double(1.5);
        assert_ne!(addr(&b), addr(&keep));
        assert_eq!(keep.as_i32(), Some(7));
        // After its last reference, the thread's next small object is that one, new.
        let at = addr(&keep);
        drop(keep);
        let c = Value::alloc(CType::Char, 3, false);
        assert_eq!(addr(&c), at, "reused");
        assert_eq!((c.ctype(), c.len(), c.is_scalar()), (CType::Char, 3, false));
        assert_eq!(c.bytes(), [0, 0, 0], "zeroed");
        // Objects with heap storage are not pooled: a big array's drop frees it.
        let big = Value::alloc(CType::Int, 100, false);
        drop(big);
        assert_eq!(b.get_f64(0), Some(1.5));
    }

    #[test]
    fn try_alloc_refuses_what_cannot_be_had_and_agrees_with_alloc_otherwise() {
        assert!(Value::try_alloc(CType::Int, usize::MAX / 2, false).is_none());
        assert!(Value::try_alloc(CType::Double, 1 << 60, false).is_none());
        for (t, n, scalar) in [
            (CType::Int, 1, true),
            (CType::Char, 5, false),
            (CType::Double, 100, false),
        ] {
            let v = Value::try_alloc(t, n, scalar).unwrap();
            let w = Value::alloc(t, n, scalar);
            assert_eq!(
                (v.len(), v.is_scalar(), v.bytes()),
                (w.len(), w.is_scalar(), w.bytes())
            );
        }
    }

    #[test]
    fn a_scalar_c_code_freed_is_reused_zeroed_and_retyped() {
        let a = Value::int(7);
        let addr = a.data_ptr();
        let a = a.into_raw();
        // SAFETY: `a` came from `into_raw`; its only reference is released here.
        unsafe { Value::release_raw(a) };
        // The next small object C code asks for on this thread is the same memory.
        let b = Value::alloc(CType::Double, 1, true);
        assert_eq!(b.data_ptr(), addr, "the freed object is reused");
        assert_eq!(
            (b.ctype(), b.len(), b.is_scalar()),
            (CType::Double, 1, true)
        );
        assert_eq!(b.get_f64(0), Some(0.0));
        assert_eq!(b.ref_count(), 1);
        // Arrays too, if their storage is inline.
        let c = Value::alloc(CType::Char, 3, false);
        assert_eq!((c.len(), c.byte_len(), c.is_scalar()), (3, 3, false));
    }

    #[test]
    fn a_shared_object_is_not_pooled_when_c_code_frees_its_reference() {
        let keep = Value::int(5);
        let raw = keep.clone().into_raw();
        // SAFETY: `raw` is one reference from `into_raw`, released once.
        unsafe { Value::release_raw(raw) };
        let b = Value::alloc(CType::Int, 1, true);
        assert_ne!(
            b.data_ptr(),
            keep.data_ptr(),
            "reused while `keep` refers to it"
        );
        assert_eq!(keep.as_i32(), Some(5));
        assert_eq!(keep.ref_count(), 1);
    }

    #[test]
    fn char_arrays_are_followed_by_a_zero_byte() {
        for n in [0, 1, 15, 16, 17, 31, 32, 100] {
            let s = "x".repeat(n);
            for v in [Value::string(&s), Value::alloc(CType::UChar, n, false)] {
                assert_eq!(v.byte_len(), n);
                // SAFETY: the storage holds byte_len + 1 bytes for char arrays.
                let after = unsafe { *v.data_ptr().add(n) };
                assert_eq!(after, 0, "length {n}");
            }
            assert_eq!(Value::string(&s).bytes(), s.as_bytes());
        }
    }

    #[test]
    fn shallow_copy_shares_and_deep_copy_does_not() {
        let a = Value::int(7);
        let b = a.clone();
        assert!(Value::ptr_eq(&a, &b));
        assert_eq!(a.ref_count(), 2);
        let c = a.deep_copy();
        assert!(!Value::ptr_eq(&a, &c));
        assert_eq!(c.as_i32(), Some(7));
        assert!(c.is_scalar());
    }

    #[test]
    fn raw_round_trip_keeps_count() {
        let a = Value::double_array(&[1.0, 2.5]);
        let keep = a.clone();
        let p = a.into_raw();
        // SAFETY: `p` came from into_raw just above.
        unsafe { Value::increment_raw(p) };
        // SAFETY: two references are outstanding on `p`.
        let (x, y) = unsafe { (Value::from_raw(p), Value::from_raw(p)) };
        assert_eq!(keep.ref_count(), 3);
        drop((x, y));
        assert_eq!(keep.ref_count(), 1);
        assert_eq!(keep.to_f64_vec(), Some(vec![1.0, 2.5]));
    }
}
