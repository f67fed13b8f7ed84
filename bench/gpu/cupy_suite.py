#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The public kernel suite (bench/suite/kernels.hpp) written as a NumPy user writes it, run by CuPy: f64 device
arrays at the sizes of kiln-bench-gpu's suite rows (bench/gpu/suite_rows.cpp), timed with CUDA events, median
after two warm-up calls. Array expressions, `@` (cuBLAS) for the products, reductions with an axis, np.pad and
slices for the clamped 27-point stencil, histogram2d for the histogram; n-body in blocks of rows with
broadcasting (the all-pairs matrices of 32768 bodies do not fit at once).

    python3 bench/gpu/cupy_suite.py [--reps R] [--small] [--filter a,b]

Prints "<row> <ms>" per row (kiln-bench-gpu --cupy FILE reads it) and comment lines starting with '#'.
"""
import argparse
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from cupy_bench import timed  # noqa: E402  (CUDA events, median after two warm-up calls)


def rand(shape, lo=-1.0, hi=1.0, seed=0):
    return cp.random.default_rng(seed).uniform(lo, hi, shape, dtype=cp.float64)


def jacobi_1d(small):
    n, tsteps = (100_003, 3) if small else (1 << 25, 10)
    A, B = rand(n, seed=1), rand(n, seed=2)

    def run():
        for _ in range(tsteps):
            B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
            A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return run


def jacobi_2d(small):
    n, tsteps = (331, 3) if small else (8192, 5)
    A, B = rand((n, n), seed=3), rand((n, n), seed=4)

    def run():
        for _ in range(tsteps):
            B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
            A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return run


def heat_3d(small):
    n, tsteps = (47, 3) if small else (384, 5)
    A, B = rand((n, n, n), seed=5), rand((n, n, n), seed=6)
    i, lo, hi = slice(1, -1), slice(0, -2), slice(2, None)

    def step(a, b):
        b[i, i, i] = (0.125 * (a[hi, i, i] - 2.0 * a[i, i, i] + a[lo, i, i]) +
                      0.125 * (a[i, hi, i] - 2.0 * a[i, i, i] + a[i, lo, i]) +
                      0.125 * (a[i, i, hi] - 2.0 * a[i, i, i] + a[i, i, lo]) + a[i, i, i])

    def run():
        for _ in range(tsteps):
            step(A, B)
            step(B, A)
    return run


def fdtd_2d(small):
    nx, ny, tmax = (231, 293, 4) if small else (6000, 6400, 5)
    ex, ey, hz, fict = rand((nx, ny), seed=7), rand((nx, ny), seed=8), rand((nx, ny), seed=9), rand(tmax, seed=10)

    def run():
        for t in range(tmax):
            ey[0, :] = fict[t]
            ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
            ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
            hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return run


def gemm(small):
    ni, nj, nk = (67, 71, 73) if small else (2000, 2100, 2200)
    C, A, B = rand((ni, nj), seed=11), rand((ni, nk), seed=12), rand((nk, nj), seed=13)

    def run():
        C[:] = 1.5 * (A @ B) + 1.2 * C
    return run


def two_mm(small):
    ni, nj, nk, nl = (53, 59, 61, 67) if small else (1600, 1700, 1800, 1900)
    D, A, B, C = rand((ni, nl), seed=14), rand((ni, nk), seed=15), rand((nk, nj), seed=16), rand((nj, nl), seed=17)

    def run():
        D[:] = (1.5 * (A @ B)) @ C + 1.2 * D
    return run


def atax(small):
    m, n = (301, 283) if small else (15000, 14000)
    A, x = rand((m, n), seed=18), rand(n, seed=19)
    return lambda: (A @ x) @ A


def bicg(small):
    n, m = (301, 283) if small else (15000, 14000)
    A, r, p = rand((n, m), seed=20), rand(n, seed=21), rand(m, seed=22)
    return lambda: (r @ A, A @ p)


def mvt(small):
    n = 307 if small else 15000
    x1, x2, A, y1, y2 = rand(n, seed=23), rand(n, seed=24), rand((n, n), seed=25), rand(n, seed=26), rand(n, seed=27)

    def run():
        x1[:] += A @ y1
        x2[:] += y2 @ A
    return run


def gemver(small):
    n = 311 if small else 15000
    A, x, w = rand((n, n), seed=28), rand(n, seed=29), rand(n, seed=30)
    u1, v1, u2, v2, y, z = (rand(n, seed=s) for s in range(31, 37))

    def run():
        A[:] += cp.outer(u1, v1) + cp.outer(u2, v2)
        x[:] += 1.2 * (y @ A) + z
        w[:] += 1.5 * (A @ x)
    return run


def gesummv(small):
    n = 313 if small else 11000
    A, B, x = rand((n, n), seed=37), rand((n, n), seed=38), rand(n, seed=39)
    return lambda: 1.5 * (A @ x) + 1.2 * (B @ x)


def syrk(small):
    n, m = (97, 89) if small else (2000, 1800)
    C, A = rand((n, n), seed=40), rand((n, m), seed=41)
    lower = cp.tril(cp.ones((n, n), dtype=bool))

    def run():
        C[:] = cp.where(lower, 1.2 * C + 1.5 * (A @ A.T), C)
    return run


def covariance(small):
    n, m = (103, 87) if small else (2000, 1200)
    data = rand((n, m), seed=42)

    def run():
        d = data - data.mean(axis=0)
        return d.T @ d / (n - 1)
    return run


def correlation(small):
    n, m = (103, 87) if small else (2000, 1200)
    data = rand((n, m), seed=43)
    data[:, ::7] = 0.5 + 0.01 * data[:, ::7]

    def run():
        sd = data.std(axis=0)
        d = (data - data.mean(axis=0)) / (cp.sqrt(n) * cp.where(sd <= 0.1, 1.0, sd))
        return d.T @ d
    return run


def doitgen(small):
    nr, nq, np_ = (13, 11, 37) if small else (256, 256, 128)
    A, C4 = rand((nr * nq, np_), seed=44), rand((np_, np_), -0.15, 0.15, seed=45)

    def run():
        A[:] = A @ C4
    return run


def nbody(small):
    n = 1031 if small else 32768
    x, y, z, m = rand(n, seed=50), rand(n, seed=51), rand(n, seed=52), rand(n, 0.5, 1.5, seed=53)
    ax, ay, az = cp.empty(n), cp.empty(n), cp.empty(n)
    rows = 2048

    def run():
        for i0 in range(0, n, rows):
            i1 = min(n, i0 + rows)
            dx = x[None, :] - x[i0:i1, None]
            dy = y[None, :] - y[i0:i1, None]
            dz = z[None, :] - z[i0:i1, None]
            r2 = dx * dx + dy * dy + dz * dz + 1e-3
            f = m[None, :] / (r2 * cp.sqrt(r2))
            ax[i0:i1] = (f * dx).sum(axis=1)
            ay[i0:i1] = (f * dy).sum(axis=1)
            az[i0:i1] = (f * dz).sum(axis=1)
    return run


def row_stats(small):
    rows, cols = (203, 317) if small else (8000, 8000)
    x = rand((rows, cols), 0.0, 4.0, seed=54)
    return lambda: (x.mean(axis=1), x.var(axis=1), x.std(axis=1), x.std(axis=0),
                    (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True))


def norm_clip_sum(small):
    n = 100_019 if small else 1 << 27
    x = rand(n, -3.0, 5.0, seed=55)

    def run():
        z = (x - x.mean()) / x.std()
        return float(cp.clip(z, -1.5, 1.5).sum())  # the scalar read back, as kiln's result is
    return run


def stencil27_clamp(small):
    n = 41 if small else 512
    x, out = rand((n, n, n), seed=56), cp.empty((n, n, n))

    def run():
        p = cp.pad(x, 1, mode="edge")
        s = cp.zeros((n, n, n))
        for di in range(3):
            for dj in range(3):
                for dk in range(3):
                    s += p[di:di + n, dj:dj + n, dk:dk + n]
        out[:] = s * (1.0 / 27.0)
    return run


def hist2d(small):
    n, bins = (100_003, 8) if small else (1 << 26, 64)
    x = (rand(n, 0.0, 1.0, seed=57) + rand(n, 0.0, 1.0, seed=157)) / 2
    y = (rand(n, 0.0, 1.0, seed=58) + rand(n, 0.0, 1.0, seed=158)) / 2
    hist = cp.zeros((bins, bins), dtype=cp.int64)

    def run():
        h, _, _ = cp.histogram2d(x, y, bins=bins, range=[[0.0, 1.0], [0.0, 1.0]])
        hist[:] += h.astype(cp.int64)
    return run


ROWS = [("jacobi-1d", jacobi_1d), ("jacobi-2d", jacobi_2d), ("heat-3d", heat_3d), ("fdtd-2d", fdtd_2d),
        ("gemm", gemm), ("2mm", two_mm), ("atax", atax), ("bicg", bicg), ("mvt", mvt), ("gemver", gemver),
        ("gesummv", gesummv), ("syrk", syrk), ("covariance", covariance), ("correlation", correlation),
        ("doitgen", doitgen), ("nbody", nbody), ("row-stats", row_stats), ("norm-clip-sum", norm_clip_sum),
        ("stencil27-clamp", stencil27_clamp), ("hist2d", hist2d)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--small", action="store_true", help="the sizes of kiln-bench-gpu --small")
    ap.add_argument("--filter", default="", help="comma-separated row names")
    a = ap.parse_args()
    wanted = set(filter(None, a.filter.split(",")))
    print(f"# cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, f64, median of {a.reps}",
          flush=True)
    for name, make in ROWS:
        if wanted and name not in wanted:
            continue
        try:
            run = make(a.small)
            print(f"{name} {timed(run, a.reps):.4f}", flush=True)
            del run
            cp.get_default_memory_pool().free_all_blocks()
        except Exception as e:  # a row that fails is reported, the others still run
            print(f"# {name} failed: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
