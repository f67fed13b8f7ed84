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


@stencil
def _smooth1d_kernel(a):
    return (a[-1] + a[0] + a[1]) * (1.0 / 3.0)


@njit(**PAR)
def smooth1d(a):
    # Numba's stencil leaves the border at its constant (0); kiln's row uses the same constant border.
    return _smooth1d_kernel(a)


@stencil
def _jacobi_kernel(a):
    return 0.25 * (a[-1, 0] + a[1, 0] + a[0, -1] + a[0, 1])


@njit(**PAR)
def jacobi2d(a, sweeps):
    b = a.copy()
    for _ in range(sweeps):
        b = _jacobi_kernel(a)
        a, b = b, a
    return a


@stencil
def _heat3d_kernel(a):
    return a[0, 0, 0] + 0.1 * (a[-1, 0, 0] + a[1, 0, 0] + a[0, -1, 0] + a[0, 1, 0] + a[0, 0, -1] + a[0, 0, 1] -
                              6.0 * a[0, 0, 0])


@njit(**PAR)
def heat3d(a, steps):
    for _ in range(steps):
        a = _heat3d_kernel(a)
    return a


@stencil(neighborhood=((-2, 2), (-2, 2)), standard_indexing=("w",))
def _conv5x5_kernel(a, w):
    s = 0.0
    for i in range(-2, 3):
        for j in range(-2, 3):
            s += w[i + 2, j + 2] * a[i, j]
    return s


@njit(**PAR)
def conv2d(a, w):
    return _conv5x5_kernel(a, w)
