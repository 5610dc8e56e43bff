//! Dense kernels on row-major `f64` matrices: matmul, cholesky, heat, lu, strassen.
//!
//! Sub-matrices are raw views (pointer + row stride); every recursive step hands
//! disjoint output blocks to the two sides of a `join`.

use super::{par_for, Par, Rng};

/// A view of a row-major block (pointer to element (0,0) and row stride).
#[derive(Clone, Copy, Debug)]
pub(crate) struct M {
    p: *mut f64,
    s: usize,
}

// SAFETY: views are only used by the kernels below, which give concurrent tasks
// disjoint blocks to write and only read blocks that nobody writes meanwhile.
unsafe impl Send for M {}
// SAFETY: as above.
unsafe impl Sync for M {}

impl M {
    /// View of a whole `n`-column matrix stored in `v`.
    pub(crate) fn of(v: &mut [f64], cols: usize) -> Self {
        M {
            p: v.as_mut_ptr(),
            s: cols,
        }
    }

    #[inline(always)]
    fn at(self, i: usize, j: usize) -> *mut f64 {
        // SAFETY: the kernels only index inside the viewed block, which lies inside
        // the allocation the view was made from.
        unsafe { self.p.add(i * self.s + j) }
    }

    #[inline(always)]
    fn get(self, i: usize, j: usize) -> f64 {
        // SAFETY: in-bounds by construction of the kernels.
        unsafe { *self.at(i, j) }
    }

    #[inline(always)]
    fn set(self, i: usize, j: usize, x: f64) {
        // SAFETY: in-bounds, and this task owns the block it writes.
        unsafe { *self.at(i, j) = x }
    }

    #[inline(always)]
    fn sub(self, i: usize, j: usize) -> M {
        M {
            p: self.at(i, j),
            s: self.s,
        }
    }
}

/// Deterministic random matrix.
pub(crate) fn random_matrix(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    (0..n * n).map(|_| r.unit() - 0.5).collect()
}

const MM_LEAF: usize = 32;

/// c (m×n) += a (m×k) · b (k×n), leaf kernel.
#[inline(never)]
fn mm_leaf(c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    for i in 0..m {
        for l in 0..k {
            let x = a.get(i, l);
            for j in 0..n {
                c.set(i, j, c.get(i, j) + x * b.get(l, j));
            }
        }
    }
}

/// c += a·b for n×n blocks (n a power of two), Cilk's `matmul`: the four quadrants
/// of c in parallel, the two halves of the inner dimension in sequence.
pub(crate) fn matmul<P: Par>(p: P, c: M, a: M, b: M, n: usize) {
    if n <= MM_LEAF {
        mm_leaf(c, a, b, n, n, n);
        return;
    }
    let h = n / 2;
    for kk in [0, h] {
        p.join(
            || {
                p.join(
                    || matmul(p, c.sub(0, 0), a.sub(0, kk), b.sub(kk, 0), h),
                    || matmul(p, c.sub(0, h), a.sub(0, kk), b.sub(kk, h), h),
                )
            },
            || {
                p.join(
                    || matmul(p, c.sub(h, 0), a.sub(h, kk), b.sub(kk, 0), h),
                    || matmul(p, c.sub(h, h), a.sub(h, kk), b.sub(kk, h), h),
                )
            },
        );
    }
}

#[inline(never)]
fn gemm_nt_leaf(c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for l in 0..k {
                s += a.get(i, l) * b.get(j, l);
            }
            c.set(i, j, c.get(i, j) - s);
        }
    }
}

/// c (m×n) -= a (m×k) · op(b), cache-oblivious: the largest of m, n, k is halved, m and
/// n in parallel, k in sequence (both halves update the same c), down to leaves with
/// every dimension ≤ `MM_LEAF` (their operands fit in L1). op(b) is bᵀ for b (n×k) when
/// `BT` (cholesky's updates), b (k×n) itself otherwise (lu's Schur complement).
fn rank_update<P: Par, const BT: bool>(p: P, c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    if m <= MM_LEAF && n <= MM_LEAF && k <= MM_LEAF {
        if BT {
            gemm_nt_leaf(c, a, b, m, n, k);
        } else {
            schur_leaf(c, a, b, m, n, k);
        }
        return;
    }
    // The block of op(b) from inner index `l` and column `j` on.
    let b_at = |l: usize, j: usize| if BT { b.sub(j, l) } else { b.sub(l, j) };
    if k >= m && k >= n {
        let h = k / 2;
        rank_update::<P, BT>(p, c, a, b, m, n, h);
        rank_update::<P, BT>(p, c, a.sub(0, h), b_at(h, 0), m, n, k - h);
    } else if m >= n {
        let h = m / 2;
        p.join(
            || rank_update::<P, BT>(p, c, a, b, h, n, k),
            || rank_update::<P, BT>(p, c.sub(h, 0), a.sub(h, 0), b, m - h, n, k),
        );
    } else {
        let h = n / 2;
        p.join(
            || rank_update::<P, BT>(p, c, a, b, m, h, k),
            || rank_update::<P, BT>(p, c.sub(0, h), a, b_at(0, h), m, n - h, k),
        );
    }
}

/// c (m×n) -= a (m×k) · b(n×k)ᵀ (see `rank_update`).
fn gemm_nt_sub<P: Par>(p: P, c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    rank_update::<P, true>(p, c, a, b, m, n, k);
}

#[inline(never)]
fn syrk_leaf(c: M, a: M, n: usize, k: usize) {
    for i in 0..n {
        for j in 0..=i {
            let mut s = 0.0;
            for l in 0..k {
                s += a.get(i, l) * a.get(j, l);
            }
            c.set(i, j, c.get(i, j) - s);
        }
    }
}

/// Lower triangle of c (n×n) -= a (n×k) · aᵀ, cache-oblivious like `rank_update`
/// (a k larger than n is halved in sequence).
fn syrk_sub<P: Par>(p: P, c: M, a: M, n: usize, k: usize) {
    if n <= MM_LEAF && k <= MM_LEAF {
        syrk_leaf(c, a, n, k);
        return;
    }
    if k > n {
        let h = k / 2;
        syrk_sub(p, c, a, n, h);
        syrk_sub(p, c, a.sub(0, h), n, k - h);
        return;
    }
    let h = n / 2;
    p.join(
        || syrk_sub(p, c, a, h, k),
        || {
            p.join(
                || gemm_nt_sub(p, c.sub(h, 0), a.sub(h, 0), a, n - h, h, k),
                || syrk_sub(p, c.sub(h, h), a.sub(h, 0), n - h, k),
            )
        },
    );
}

#[inline(never)]
fn trsm_leaf(b: M, l: M, m: usize, n: usize) {
    for r in 0..m {
        for j in 0..n {
            let mut x = b.get(r, j);
            for q in 0..j {
                x -= b.get(r, q) * l.get(j, q);
            }
            b.set(r, j, x / l.get(j, j));
        }
    }
}

/// b (m×n) := b · L⁻ᵀ with L (n×n) lower triangular, cache-oblivious: rows in
/// parallel while m ≥ n; otherwise the columns in sequence,
/// X1 = B1·L11⁻ᵀ, B2 -= X1·L21ᵀ, X2 = B2·L22⁻ᵀ.
fn trsm_right_lt<P: Par>(p: P, b: M, l: M, m: usize, n: usize) {
    if m <= MM_LEAF && n <= MM_LEAF {
        trsm_leaf(b, l, m, n);
        return;
    }
    if n > m {
        let h = n / 2;
        trsm_right_lt(p, b, l, m, h);
        gemm_nt_sub(p, b.sub(0, h), b, l.sub(h, 0), m, n - h, h);
        trsm_right_lt(p, b.sub(0, h), l.sub(h, h), m, n - h);
        return;
    }
    let h = m / 2;
    p.join(
        || trsm_right_lt(p, b, l, h, n),
        || trsm_right_lt(p, b.sub(h, 0), l, m - h, n),
    );
}

#[inline(never)]
fn cholesky_leaf(a: M, n: usize) {
    for j in 0..n {
        let mut d = a.get(j, j);
        for q in 0..j {
            d -= a.get(j, q) * a.get(j, q);
        }
        let d = d.sqrt();
        a.set(j, j, d);
        for i in j + 1..n {
            let mut x = a.get(i, j);
            for q in 0..j {
                x -= a.get(i, q) * a.get(j, q);
            }
            a.set(i, j, x / d);
        }
    }
}

/// In-place Cholesky factorisation (lower) of the n×n SPD block `a`, recursive:
/// L11 = chol(A11); L21 = A21·L11⁻ᵀ; A22 -= L21·L21ᵀ; L22 = chol(A22).
pub(crate) fn cholesky<P: Par>(p: P, a: M, n: usize) {
    if n <= MM_LEAF {
        cholesky_leaf(a, n);
        return;
    }
    let h = n / 2;
    cholesky(p, a, h);
    trsm_right_lt(p, a.sub(h, 0), a, n - h, h);
    syrk_sub(p, a.sub(h, h), a.sub(h, 0), n - h, h);
    cholesky(p, a.sub(h, h), n - h);
}

/// A symmetric positive definite n×n matrix: B·Bᵀ/n + I.
pub(crate) fn spd_matrix(n: usize) -> Vec<f64> {
    let b = random_matrix(n, 77);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = 0.0;
            for l in 0..n {
                s += b[i * n + l] * b[j * n + l];
            }
            let v = s / n as f64 + if i == j { 1.0 } else { 0.0 };
            a[i * n + j] = v;
            a[j * n + i] = v;
        }
    }
    a
}

/// Max |(L·Lᵀ − A)ij| over a sample of entries.
pub(crate) fn cholesky_residual(l: &[f64], a: &[f64], n: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for i in (0..n).step_by(7) {
        for j in (0..=i).step_by(5) {
            let mut s = 0.0;
            for q in 0..=j {
                s += l[i * n + q] * l[j * n + q];
            }
            worst = worst.max((s - a[i * n + j]).abs());
        }
    }
    worst
}

#[inline(never)]
fn heat_row(src: M, dst: M, i: usize, ny: usize, c: f64) {
    for j in 1..ny - 1 {
        let x = src.get(i, j);
        let lap =
            src.get(i - 1, j) + src.get(i + 1, j) + src.get(i, j - 1) + src.get(i, j + 1) - 4.0 * x;
        dst.set(i, j, x + c * lap);
    }
}

/// Jacobi heat diffusion on an nx×ny grid for `nt` steps (rows in parallel per step).
pub(crate) fn heat<P: Par>(p: P, nx: usize, ny: usize, nt: usize) -> Vec<f64> {
    let mut u: Vec<f64> = (0..nx * ny)
        .map(|k| {
            let (i, j) = (k / ny, k % ny);
            if i == 0 || j == 0 || i == nx - 1 || j == ny - 1 {
                1.0
            } else {
                ((i * 31 + j * 17) % 97) as f64 / 97.0
            }
        })
        .collect();
    let mut v = u.clone();
    let c = 0.2;
    for _ in 0..nt {
        let src = M {
            p: u.as_mut_ptr(),
            s: ny,
        };
        let dst = M {
            p: v.as_mut_ptr(),
            s: ny,
        };
        par_for(p, 1, nx - 1, 8, &|i| heat_row(src, dst, i, ny, c));
        std::mem::swap(&mut u, &mut v);
    }
    u
}

#[inline(never)]
fn lu_leaf(a: M, n: usize) {
    for k in 0..n {
        let d = a.get(k, k);
        for i in k + 1..n {
            let f = a.get(i, k) / d;
            a.set(i, k, f);
            for j in k + 1..n {
                a.set(i, j, a.get(i, j) - f * a.get(k, j));
            }
        }
    }
}

/// In-place LU factorisation without pivoting of the n×n block `a` (n a power of two):
/// LU(A00); A01 := L00⁻¹A01 ∥ A10 := A10·U00⁻¹; A11 -= A10·A01; LU(A11).
pub(crate) fn lu<P: Par>(p: P, a: M, n: usize) {
    if n <= MM_LEAF {
        lu_leaf(a, n);
        return;
    }
    let h = n / 2;
    lu(p, a, h);
    p.join(
        || lower_solve(p, a.sub(0, h), a, h, n - h),
        || upper_solve(p, a.sub(h, 0), a, n - h, h),
    );
    schur(p, a.sub(h, h), a.sub(h, 0), a.sub(0, h), n - h, n - h, h);
    lu(p, a.sub(h, h), n - h);
}

#[inline(never)]
fn lower_solve_leaf(b: M, l: M, n: usize, m: usize) {
    for i in 0..n {
        for q in 0..i {
            let f = l.get(i, q);
            for j in 0..m {
                b.set(i, j, b.get(i, j) - f * b.get(q, j));
            }
        }
    }
}

/// b (n×m) := L⁻¹·b with L unit lower triangular (n×n), cache-oblivious: columns
/// in parallel while m ≥ n; otherwise the rows in sequence,
/// X1 = L11⁻¹B1, B2 -= L21·X1, X2 = L22⁻¹B2.
fn lower_solve<P: Par>(p: P, b: M, l: M, n: usize, m: usize) {
    if m <= MM_LEAF && n <= MM_LEAF {
        lower_solve_leaf(b, l, n, m);
        return;
    }
    if n > m {
        let h = n / 2;
        lower_solve(p, b, l, h, m);
        schur(p, b.sub(h, 0), l.sub(h, 0), b, n - h, m, h);
        lower_solve(p, b.sub(h, 0), l.sub(h, h), n - h, m);
        return;
    }
    let h = m / 2;
    p.join(
        || lower_solve(p, b, l, n, h),
        || lower_solve(p, b.sub(0, h), l, n, m - h),
    );
}

#[inline(never)]
fn upper_solve_leaf(b: M, u: M, m: usize, n: usize) {
    for r in 0..m {
        for j in 0..n {
            let mut x = b.get(r, j);
            for q in 0..j {
                x -= b.get(r, q) * u.get(q, j);
            }
            b.set(r, j, x / u.get(j, j));
        }
    }
}

/// b (m×n) := b·U⁻¹ with U upper triangular (n×n), cache-oblivious: rows in
/// parallel while m ≥ n; otherwise the columns in sequence,
/// X1 = B1·U11⁻¹, B2 -= X1·U12, X2 = B2·U22⁻¹.
fn upper_solve<P: Par>(p: P, b: M, u: M, m: usize, n: usize) {
    if m <= MM_LEAF && n <= MM_LEAF {
        upper_solve_leaf(b, u, m, n);
        return;
    }
    if n > m {
        let h = n / 2;
        upper_solve(p, b, u, m, h);
        schur(p, b.sub(0, h), b, u.sub(0, h), m, n - h, h);
        upper_solve(p, b.sub(0, h), u.sub(h, h), m, n - h);
        return;
    }
    let h = m / 2;
    p.join(
        || upper_solve(p, b, u, h, n),
        || upper_solve(p, b.sub(h, 0), u, m - h, n),
    );
}

#[inline(never)]
fn schur_leaf(c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    for i in 0..m {
        for l in 0..k {
            let x = a.get(i, l);
            for j in 0..n {
                c.set(i, j, c.get(i, j) - x * b.get(l, j));
            }
        }
    }
}

/// c (m×n) -= a (m×k)·b (k×n) (see `rank_update`).
fn schur<P: Par>(p: P, c: M, a: M, b: M, m: usize, n: usize, k: usize) {
    rank_update::<P, false>(p, c, a, b, m, n, k);
}

/// A diagonally dominant matrix (LU without pivoting is stable on it).
pub(crate) fn dominant_matrix(n: usize) -> Vec<f64> {
    let mut a = random_matrix(n, 99);
    for i in 0..n {
        a[i * n + i] += n as f64;
    }
    a
}

/// Max |(L·U − A)ij| over a sample of entries.
pub(crate) fn lu_residual(lu: &[f64], a: &[f64], n: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for i in (0..n).step_by(7) {
        for j in (0..n).step_by(5) {
            let mut s = 0.0;
            for q in 0..=i.min(j) {
                let l = if q == i { 1.0 } else { lu[i * n + q] };
                s += l * lu[q * n + j];
            }
            worst = worst.max((s - a[i * n + j]).abs());
        }
    }
    worst
}

const STRASSEN_LEAF: usize = 64;

fn add(c: M, a: M, b: M, n: usize, sign: f64) {
    for i in 0..n {
        for j in 0..n {
            c.set(i, j, a.get(i, j) + sign * b.get(i, j));
        }
    }
}

/// c := a·b (n×n, n a power of two) by Strassen's seven products, all forked.
pub(crate) fn strassen<P: Par>(p: P, c: M, a: M, b: M, n: usize) {
    if n <= STRASSEN_LEAF {
        for i in 0..n {
            for j in 0..n {
                c.set(i, j, 0.0);
            }
        }
        mm_leaf(c, a, b, n, n, n);
        return;
    }
    let h = n / 2;
    let (a11, a12, a21, a22) = (a, a.sub(0, h), a.sub(h, 0), a.sub(h, h));
    let (b11, b12, b21, b22) = (b, b.sub(0, h), b.sub(h, 0), b.sub(h, h));
    // Seven products, each with its own operand temporaries.
    let mut buf = vec![0.0; 7 * 3 * h * h];
    let blocks: Vec<[M; 3]> = buf
        .chunks_mut(3 * h * h)
        .map(|ch| {
            let (x, rest) = ch.split_at_mut(h * h);
            let (y, z) = rest.split_at_mut(h * h);
            [M::of(x, h), M::of(y, h), M::of(z, h)]
        })
        .collect();
    let prod = |k: usize| {
        let [x, y, m] = blocks[k];
        match k {
            0 => {
                add(x, a11, a22, h, 1.0);
                add(y, b11, b22, h, 1.0);
            }
            1 => {
                add(x, a21, a22, h, 1.0);
                add(y, b11, b11, h, 0.0);
            }
            2 => {
                add(x, a11, a11, h, 0.0);
                add(y, b12, b22, h, -1.0);
            }
            3 => {
                add(x, a22, a22, h, 0.0);
                add(y, b21, b11, h, -1.0);
            }
            4 => {
                add(x, a11, a12, h, 1.0);
                add(y, b22, b22, h, 0.0);
            }
            5 => {
                add(x, a21, a11, h, -1.0);
                add(y, b11, b12, h, 1.0);
            }
            _ => {
                add(x, a12, a22, h, -1.0);
                add(y, b21, b22, h, 1.0);
            }
        }
        strassen(p, m, x, y, h);
    };
    p.join(
        || {
            p.join(
                || p.join(|| prod(0), || prod(1)),
                || p.join(|| prod(2), || prod(3)),
            )
        },
        || p.join(|| p.join(|| prod(4), || prod(5)), || prod(6)),
    );
    let m: Vec<M> = blocks.iter().map(|b| b[2]).collect();
    par_for(p, 0, h, 16, &|i| {
        for j in 0..h {
            let g = |k: usize| m[k].get(i, j);
            c.set(i, j, g(0) + g(3) - g(4) + g(6));
            c.set(i, j + h, g(2) + g(4));
            c.set(i + h, j, g(1) + g(3));
            c.set(i + h, j + h, g(0) - g(1) + g(2) + g(5));
        }
    });
    drop(buf);
}

/// Max |c − a·b| over a sample of entries.
pub(crate) fn product_error(c: &[f64], a: &[f64], b: &[f64], n: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for i in (0..n).step_by(13) {
        for j in (0..n).step_by(11) {
            let mut s = 0.0;
            for l in 0..n {
                s += a[i * n + l] * b[l * n + j];
            }
            worst = worst.max((s - c[i * n + j]).abs());
        }
    }
    worst
}
