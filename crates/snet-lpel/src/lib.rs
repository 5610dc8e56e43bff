//! LPEL-style user-level tasks, bounded streams, monitoring, placement, and a Kahn-process-network API (seeds 000, 001, 004).
