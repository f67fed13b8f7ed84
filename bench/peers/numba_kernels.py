# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The kiln-bench workloads written idiomatically for Numba: @njit(parallel=True) with prange, array
# expressions and @stencil, each with cache=True so that a second process can load it from Numba's cache.
# Sizes and data follow the rows of bench/rows_*.cpp so that the driver can put the numbers side by side.
# This module is imported by numba_bench.py; it has no side effects at import time.
import math

import numpy as np
from numba import njit, prange, stencil

PAR = dict(parallel=True, cache=True, fastmath=False)


@njit(**PAR)
def saxpy(a, x, y):
    for i in prange(x.shape[0]):
        y[i] = a * x[i] + y[i]


@njit(**PAR)
def triad(a, b, c, out):
    out[:] = a * b + c


@njit(**PAR)
def dot(x, y):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i] * y[i]
    return s


@njit(**PAR)
def pi(n):
    step = 1.0 / n
    s = 0.0
    for i in prange(n):
        x = (i + 0.5) * step
        s += 4.0 / (1.0 + x * x)
    return s * step


@njit(**PAR)
def softmax(a):
    e = np.exp(a - np.max(a))
    return e / np.sum(e)


@njit(**PAR)
def logistic_regression(X, Y, w, iterations):
    for _ in range(iterations):
        w -= np.dot(((1.0 / (1.0 + np.exp(-Y * np.dot(X, w)))) - 1.0) * Y, X)


@njit(**PAR)
def black_scholes(S, K, T, r, v):
    # Numba has no vectorized erf for arrays: the idiomatic form is a prange loop over math.erf.
    out = np.empty_like(S)
    for i in prange(S.shape[0]):
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * v * v) * T[i]) / (v * sqrt_t)
        d2 = d1 - v * sqrt_t
        cnd1 = 0.5 * (1.0 + math.erf(d1 * 0.7071067811865476))
        cnd2 = 0.5 * (1.0 + math.erf(d2 * 0.7071067811865476))
        out[i] = S[i] * cnd1 - K[i] * math.exp(-r * T[i]) * cnd2
    return out


@njit(**PAR)
def normalize(x):
    # Numba's np.mean/np.std take no axis argument: the idiomatic parallel form is a prange over rows.
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        m = x[i].mean()
        s = x[i].std()
        out[i] = (x[i] - m) / s
    return out


@njit(**PAR)
def histogram(x, hist):
    # The documented Numba idiom for a race-free parallel histogram: per-chunk private bins, combined after
    # (a plain `hist[k] += 1` in a prange races: numba issues #3522/#3681).
    bins = hist.shape[0]
    chunks = 64
    part = np.zeros((chunks, bins), dtype=np.int64)
    n = x.shape[0]
    per = (n + chunks - 1) // chunks
    for c in prange(chunks):
        for i in range(c * per, min(n, (c + 1) * per)):
            part[c, int(x[i] * bins)] += 1
    for c in range(chunks):
        for b in range(bins):
            hist[b] += part[c, b]


# The stencil rows apply one sweep into an existing output, as kiln-bench's rows do (bench/rows_stencils.cpp).
# Numba's @stencil has only a constant border and, given `out=`, leaves the output's border untouched; kiln's
# rows use nearest (smooth1d, heat3d, conv2d) and skip (jacobi2d): the interiors, which dominate, are the
# same work.
@stencil
def _smooth1d_kernel(a):
    return 0.25 * a[-1] + 0.5 * a[0] + 0.25 * a[1]


@njit(**PAR)
def smooth1d(a, out):
    _smooth1d_kernel(a, out=out)


@stencil
def _jacobi_kernel(a):
    return 0.25 * (a[0, 1] + a[0, -1] + a[-1, 0] + a[1, 0])


@njit(**PAR)
def jacobi2d(a, out):
    _jacobi_kernel(a, out=out)


@stencil
def _heat3d_kernel(u):
    return u[0, 0, 0] + 0.125 * (u[-1, 0, 0] + u[1, 0, 0] + u[0, -1, 0] + u[0, 1, 0] + u[0, 0, -1] + u[0, 0, 1] -
                                 6.0 * u[0, 0, 0])


@njit(**PAR)
def heat3d(u, out):
    _heat3d_kernel(u, out=out)


@stencil(neighborhood=((-2, 2), (-2, 2)), standard_indexing=("w",))
def _conv5x5_kernel(a, w):
    s = 0.0
    for i in range(-2, 3):
        for j in range(-2, 3):
            s += w[i + 2, j + 2] * a[i, j]
    return s


@njit(**PAR)
def conv2d(a, w, out):
    _conv5x5_kernel(a, w, out=out)
