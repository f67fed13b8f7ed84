# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The kernels of kiln-suite (bench/suite/kernels_*.cpp) written as a Numba user would first write them:
# @njit(parallel=True, cache=True, fastmath=False), NumPy array expressions and slices where the kiln kernel
# uses them, np.dot for the products, a prange where the kiln kernel has one. Where Numba lacks what NumPy
# users reach for (np.mean/np.var/np.std take no axis), the form Numba's documentation suggests: a prange over
# rows, or np.sum with an axis. The same mathematics, term for term, as the kiln kernels.
# Imported by numba_suite.py (after it has set NUMBA_NUM_THREADS); no side effects at import time.
import math

import numpy as np
from numba import njit, prange

PAR = dict(parallel=True, cache=True, fastmath=False)


# --- PolyBench/C 4.2 -----------------------------------------------------------------------------------------

@njit(**PAR)
def jacobi_1d(A, B, tsteps):
    for _ in range(tsteps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


@njit(**PAR)
def jacobi_2d(A, B, tsteps):
    for _ in range(tsteps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@njit(**PAR)
def heat_3d(A, B, tsteps):
    for _ in range(tsteps):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]) +
                               0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1]) +
                               0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2]) +
                               A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]) +
                               0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1]) +
                               0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2]) +
                               B[1:-1, 1:-1, 1:-1])


@njit(**PAR)
def fdtd_2d(ex, ey, hz, fict, tmax):
    for t in range(tmax):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


@njit(**PAR)
def gemm(C, A, B, alpha, beta):
    C[:, :] = alpha * np.dot(A, B) + beta * C


@njit(**PAR)
def two_mm(D, A, B, C, alpha, beta):
    D[:, :] = np.dot(alpha * np.dot(A, B), C) + beta * D


@njit(**PAR)
def atax(A, x):
    return np.dot(np.dot(A, x), A)


@njit(**PAR)
def bicg(A, r, p):
    return np.dot(r, A), np.dot(A, p)


@njit(**PAR)
def mvt(x1, x2, A, y1, y2):
    x1 += np.dot(A, y1)
    x2 += np.dot(y2, A)


@njit(**PAR)
def gemver(A, x, w, u1, v1, u2, v2, y, z, alpha, beta):
    # A += outer(u1, v1) + outer(u2, v2) as a prange: np.outer would build two n x n temporaries.
    n = A.shape[0]
    for i in prange(n):
        for j in range(A.shape[1]):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    x += beta * np.dot(y, A) + z
    w += alpha * np.dot(A, x)


@njit(**PAR)
def gesummv(A, B, x, alpha, beta):
    return alpha * np.dot(A, x) + beta * np.dot(B, x)


@njit(**PAR)
def syrk(C, A, alpha, beta):
    # Only C's lower triangle, row i against row j, the sum in order (as the kiln kernel).
    m = A.shape[1]
    for i in prange(C.shape[0]):
        for j in range(i + 1):
            s = 0.0
            for k in range(m):
                s += A[i, k] * A[j, k]
            C[i, j] = beta * C[i, j] + alpha * s


@njit(**PAR)
def covariance(data):
    # np.mean takes no axis in Numba: the column means as np.sum(axis=0) / n.
    n = data.shape[0]
    d = data - np.sum(data, axis=0) / n
    return np.dot(d.T, d) / (n - 1)


@njit(**PAR)
def correlation(data):
    n = data.shape[0]
    d = data - np.sum(data, axis=0) / n
    sd = np.sqrt(np.sum(d * d, axis=0) / n)
    d = d / (math.sqrt(n) * np.where(sd <= 0.1, 1.0, sd))
    return np.dot(d.T, d)


@njit(**PAR)
def doitgen(A, C4):
    # A (nr, nq, np) seen as (nr * nq, np), as in the kiln kernel: A[...] = A @ C4.
    A[:, :] = np.dot(A, C4)


# --- kernels users commonly write ----------------------------------------------------------------------------

@njit(**PAR)
def nbody(ax, ay, az, x, y, z, m, eps2):
    n = x.shape[0]
    for i in prange(n):
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for j in range(n):
            dx = x[j] - x[i]
            dy = y[j] - y[i]
            dz = z[j] - z[i]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            f = m[j] / (r2 * math.sqrt(r2))
            sx += f * dx
            sy += f * dy
            sz += f * dz
        ax[i] = sx
        ay[i] = sy
        az[i] = sz


@njit(**PAR)
def row_stats(x):
    # Row statistics: a prange over rows with the array methods (Numba's mean/var/std take no axis). Column
    # standard deviations: np.sum with axis=0, the NumPy form Numba accepts.
    rows, cols = x.shape
    mean = np.empty(rows)
    var = np.empty(rows)
    sd = np.empty(rows)
    z = np.empty_like(x)
    for i in prange(rows):
        r = x[i]
        mean[i] = r.mean()
        var[i] = r.var()
        sd[i] = r.std()
        z[i] = (r - mean[i]) / sd[i]
    col_mean = np.sum(x, axis=0) / rows
    col_sd = np.sqrt(np.sum((x - col_mean) ** 2, axis=0) / rows)
    return mean, var, sd, col_sd, z


@njit(**PAR)
def normalize_clip_sum(x, c):
    z = (x - x.mean()) / x.std()
    return np.sum(np.minimum(np.maximum(z, -c), c))


@njit(**PAR)
def stencil27_clamp(out, a):
    # A prange with clamped indices, as the kiln kernel (Numba's @stencil has only a constant border).
    n = a.shape[0]
    for i in prange(n):
        for j in range(n):
            for k in range(n):
                s = 0.0
                for di in range(-1, 2):
                    ii = min(max(i + di, 0), n - 1)
                    for dj in range(-1, 2):
                        jj = min(max(j + dj, 0), n - 1)
                        for dk in range(-1, 2):
                            s += a[ii, jj, min(max(k + dk, 0), n - 1)]
                out[i, j, k] = s * (1.0 / 27.0)


@njit(**PAR)
def hist2d(hist, x, y):
    # `hist[bx, by] += 1` in a prange races in Numba (numba issues #3522/#3681): the documented idiom is
    # per-chunk private bins combined after (as numba_kernels.histogram).
    bins = hist.shape[0]
    chunks = 64
    part = np.zeros((chunks, bins, bins), dtype=np.int64)
    n = x.shape[0]
    per = (n + chunks - 1) // chunks
    for c in prange(chunks):
        for i in range(c * per, min(n, (c + 1) * per)):
            part[c, int(x[i] * bins), int(y[i] * bins)] += 1
    for c in range(chunks):
        for a in range(bins):
            for b in range(bins):
                hist[a, b] += part[c, a, b]
