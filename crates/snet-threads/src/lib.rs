//! The thread-per-entity baseline engine.
