//! One place for atomics and interior mutability, switching to `loom` under `cfg(loom)`
//! so that the lock-free leaf modules can be model-checked unchanged.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize,
};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU64, AtomicUsize,
};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

pub(crate) use std::sync::atomic::{compiler_fence, Ordering};

/// `UnsafeCell` with loom's closure-based API, so that loom can track accesses.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `UnsafeCell` with loom's closure-based API (plain `std` version).
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[inline]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Gives `f` a shared raw pointer to the contents.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Gives `f` a mutable raw pointer to the contents.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Pads and aligns a value to a cache line so that owner-written and thief-written
/// words do not share a line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
