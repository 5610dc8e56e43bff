//! A type-erased per-instance slot for engine state, whose typed access costs no
//! virtual call (unsafe leaf module).
//!
//! Engines keep per-entity state (a queue, an owner flag) in box leaves without the core
//! knowing its type. `Box<dyn Any>::downcast_ref` asks the value for its `TypeId`
//! through the vtable on every access; engines read their slot several times per box
//! firing, so the slot stores the `TypeId` next to the box and compares constants.
//!
//! Invariant: the stored `TypeId` is the type of the boxed value; both are written
//! together, once, from the same `T`.

use std::any::{Any, TypeId};
use std::sync::OnceLock;

/// Engine state of one instance, created on first use.
#[derive(Default)]
pub(crate) struct EngineSlot {
    cell: OnceLock<(TypeId, Box<dyn Any + Send + Sync>)>,
}

impl EngineSlot {
    /// The state, created by `init` on first use. Panics if the slot was created with
    /// another type.
    #[inline]
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> &T {
        let (id, b) = self
            .cell
            .get_or_init(|| (TypeId::of::<T>(), Box::new(init())));
        assert!(
            *id == TypeId::of::<T>(),
            "engine slot used with two different types"
        );
        let p: *const (dyn Any + Send + Sync) = &**b;
        // SAFETY: `id` is the type of the value in `b` (module invariant) and equals
        // `T`'s, so the data pointer of `p` points to a live `T`, borrowed from `self`.
        unsafe { &*p.cast::<T>() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_access_and_type_mismatch() {
        let s = EngineSlot::default();
        assert_eq!(*s.get_or_init(|| 7u64), 7);
        assert_eq!(*s.get_or_init(|| 9u64), 7, "created once");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *s.get_or_init(|| 1u32)));
        assert!(r.is_err(), "another type is refused");
    }
}
