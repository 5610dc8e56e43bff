//! The FRONT-style work-stealing engine (seed 003 ch. 4).
