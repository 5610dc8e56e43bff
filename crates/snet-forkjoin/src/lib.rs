//! Fork-join micro-parallelism: work-stealing deques, wait-free join, continuation stealing, pooled stacks (seed 002).
