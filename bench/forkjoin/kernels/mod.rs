//! The benchmark kernels of seed 002 ch. 5 (Fibril's suite), written once against the
//! [`Par`] trait so that the serial elision, snet-forkjoin and rayon run the same code.

pub(crate) mod dense;
pub(crate) mod recursive;

/// A fork-join back end.
pub(crate) trait Par: Copy + Send + Sync + 'static {
    /// Runs `a` and `b`, potentially in parallel.
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

/// Serial elision: `join` is two calls.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Serial;

impl Par for Serial {
    #[inline(always)]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a();
        (ra, b())
    }
}

/// snet-forkjoin.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snet;

impl Par for Snet {
    #[inline(always)]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        snet_forkjoin::join(a, b)
    }
}

/// rayon.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rayon;

impl Par for Rayon {
    #[inline(always)]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// Calls `f(i)` for `i` in `lo..hi`, splitting in halves down to `grain`.
pub(crate) fn par_for<P: Par, F: Fn(usize) + Sync>(
    p: P,
    lo: usize,
    hi: usize,
    grain: usize,
    f: &F,
) {
    if hi - lo <= grain.max(1) {
        for i in lo..hi {
            f(i);
        }
    } else {
        let mid = lo + (hi - lo) / 2;
        p.join(
            || par_for(p, lo, mid, grain, f),
            || par_for(p, mid, hi, grain, f),
        );
    }
}

/// Deterministic xorshift generator for inputs.
#[derive(Clone, Debug)]
pub(crate) struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
