// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written C++/OpenMP references of the suite's kernels (reference_polybench.cpp,
// reference_user.cpp; compiled -O3 -march=native -fopenmp). Arrays are row-major; `threads` is the OpenMP
// team size, kiln's thread count at the call. Each does the arithmetic of its kiln twin in the natural loop
// order of a careful C++ programmer; the comment of each names what it computes.
#pragma once

#include <cstdint>

namespace suite::ref {

// --- PolyBench/C 4.2 kernels (from their mathematical descriptions) ---
/// tsteps times: B[1:-1] = c (A[:-2] + A[1:-1] + A[2:]), then A[1:-1] from B alike (c = 0.33333).
void jacobi_1d(double* A, double* B, long n, long tsteps, int threads);
/// tsteps times: the 5-point average of A's interior into B (0.2 each), then of B's into A.
void jacobi_2d(double* A, double* B, long n, long tsteps, int threads);
/// tsteps times: B = A + 0.125 (the 3-d second differences of A) on the interior, then A from B alike.
void heat_3d(double* A, double* B, long n, long tsteps, int threads);
/// tmax steps of the 2-d FDTD update of ex, ey, hz (nx x ny), ey's first row set to fict[t].
void fdtd_2d(double* ex, double* ey, double* hz, const double* fict, long nx, long ny, long tmax, int threads);
/// C = alpha A B + beta C; A ni x nk, B nk x nj.
void gemm(double* C, const double* A, const double* B, double alpha, double beta, long ni, long nj, long nk, int threads);
/// D = (alpha A B) C + beta D; A ni x nk, B nk x nj, C nj x nl; tmp ni x nj scratch.
void two_mm(double* D, const double* A, const double* B, const double* C, double* tmp, double alpha, double beta,
            long ni, long nj, long nk, long nl, int threads);
/// y = A^T (A x); A m x n; tmp (m) receives A x.
void atax(double* y, const double* A, const double* x, double* tmp, long m, long n, int threads);
/// s = r^T A, q = A p; A n x m.
void bicg(double* s, double* q, const double* A, const double* r, const double* p, long n, long m, int threads);
/// x1 += A y1, x2 += A^T y2; A n x n.
void mvt(double* x1, double* x2, const double* A, const double* y1, const double* y2, long n, int threads);
/// A += u1 v1^T + u2 v2^T; x += beta A^T y + z; w += alpha A x.
void gemver(double* A, double* x, double* w, const double* u1, const double* v1, const double* u2, const double* v2,
            const double* y, const double* z, double alpha, double beta, long n, int threads);
/// y = alpha A x + beta B x; A, B n x n.
void gesummv(double* y, const double* A, const double* B, const double* x, double alpha, double beta, long n,
             int threads);
/// The lower triangle (j <= i) of C = alpha A A^T + beta C; A n x m.
void syrk(double* C, const double* A, double alpha, double beta, long n, long m, int threads);
/// cov = (D^T D) / (n - 1), D = data - its column means; data n x m, cov m x m, d (n x m) scratch.
void covariance(double* cov, const double* data, double* d, long n, long m, int threads);
/// corr = D^T D, D = (data - column means) / (sqrt(n) * column std, 1 where std <= 0.1); d (n x m) scratch.
void correlation(double* corr, const double* data, double* d, long n, long m, int threads);
/// A = A C4 row by row; A rows x np, C4 np x np.
void doitgen(double* A, const double* C4, long rows, long np, int threads);

// --- kernels users commonly write ---
/// Gravitational accelerations of all pairs (softening eps2), bodies in order of j for each i.
void nbody(double* ax, double* ay, double* az, const double* x, const double* y, const double* z, const double* m,
           double eps2, long n, int threads);
/// Per-row mean, var, std (two-pass), per-column std and row z-scores of x (rows x cols).
void row_stats(double* mean, double* var, double* sd, double* col_sd, double* z, const double* x, long rows, long cols,
               int threads);
/// sum(clip((x - mean(x)) / std(x), -c, c)).
double normalize_clip_sum(const double* x, long n, double c, int threads);
/// The 27-point mean of in (n^3) with indices clamped to the array.
void stencil27(double* out, const double* in, long n, int threads);
/// hist[bin(x)][bin(y)] += 1 for points in [0, 1)^2 (bins x bins).
void hist2d(std::int64_t* hist, const double* x, const double* y, long n, long bins, int threads);

}  // namespace suite::ref
