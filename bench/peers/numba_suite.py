#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Times the Numba versions of kiln-suite's kernels (numba_suite_kernels.py) and prints one JSON object a line:
{"kernel", "origin", "shape", "numba_ms" (median of --reps calls after two warm-up calls), "first_call_ms"
(the first call in this process: type inference + LLVM compile + one run at the timed size; NUMBA_CACHE_DIR
empty, as run_suite_peers.py arranges, or it is a cache load), "threads", "reps", "status" ("ok",
"mismatch: ..." or "error: ...")}.

Sizes, time steps, constants and input distributions are those of each KILN_SUITE case in
bench/suite/kernels_*.cpp (kiln's --smoke sizes with --smoke). The data is drawn with NumPy, not kiln's
generator: each result is checked against a plain NumPy computation of the same mathematics on the same
inputs (the first call's, from fresh inputs), with kiln-suite's tolerances. As in kiln-suite, kernels that
update their arrays in place keep updating them over the timed calls.

  numba_suite.py [--threads T] [--reps R] [--filter a,b] [--smoke] [--reference-only]

--reference-only runs only the NumPy side: it draws the inputs, computes the reference results, and checks the
reference functions against direct Python loops on tiny inputs (a self-check that needs no Numba).
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Case:
    """One kernel at one size. `args`: the kernel's arguments (arrays are copied for the first call);
    `reference(args)`: the expected outputs, by NumPy, from the initial arguments; `outputs(args, ret)`: what to
    compare after a call (the mutated arguments or the returned values); `tols`: per output, (name, tolerance,
    scale) as kiln-suite's suite::compare: |got - want| <= tol * max(scale, |want|); scale "max" is the largest
    |want| of that output (results that are sums of terms of either sign); "exact" compares integers."""

    def __init__(self, name, origin, kernel, shape, args, reference, outputs, tols):
        self.name, self.origin, self.kernel, self.shape = name, origin, kernel, shape
        self.args, self.reference, self.outputs, self.tols = args, reference, outputs, tols


def dims(**kw):
    return " ".join(f"{k}={v}" for k, v in kw.items())


def copied(args):
    import numpy as np
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


# --- NumPy references (plain NumPy, run by CPython) ----------------------------------------------------------

def ref_jacobi_1d(A, B, tsteps):
    A, B = A.copy(), B.copy()
    for _ in range(tsteps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def ref_jacobi_2d(A, B, tsteps):
    A, B = A.copy(), B.copy()

    def sweep(a, b):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])

    for _ in range(tsteps):
        sweep(A, B)
        sweep(B, A)
    return A, B


def ref_heat_3d(A, B, tsteps):
    A, B = A.copy(), B.copy()

    def sweep(a, b):
        c = a[1:-1, 1:-1, 1:-1]
        b[1:-1, 1:-1, 1:-1] = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * c + a[:-2, 1:-1, 1:-1]) +
                               0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * c + a[1:-1, :-2, 1:-1]) +
                               0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * c + a[1:-1, 1:-1, :-2]) + c)

    for _ in range(tsteps):
        sweep(A, B)
        sweep(B, A)
    return A, B


def ref_fdtd_2d(ex, ey, hz, fict, tmax):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(tmax):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


def ref_gemver(A, x, w, u1, v1, u2, v2, y, z, alpha, beta):
    import numpy as np
    A = A + np.outer(u1, v1) + np.outer(u2, v2)
    x = x + beta * (y @ A) + z
    return A, x, w + alpha * (A @ x)


def ref_syrk(C, A, alpha, beta):
    import numpy as np
    out = C.copy()
    low = np.tril_indices(C.shape[0])
    out[low] = beta * C[low] + alpha * (A @ A.T)[low]
    return (out,)


def ref_correlation(data):
    import numpy as np
    n = data.shape[0]
    mean = data.mean(axis=0)
    sd = data.std(axis=0)
    d = (data - mean) / (np.sqrt(n) * np.where(sd <= 0.1, 1.0, sd))
    return (d.T @ d,)


def ref_nbody(x, y, z, m, eps2):
    """All pairs by blocks of rows (the full n x n matrices would take gigabytes)."""
    import numpy as np
    n = x.shape[0]
    acc = [np.empty(n) for _ in range(3)]
    for i0 in range(0, n, 256):
        sl = slice(i0, min(n, i0 + 256))
        dx, dy, dz = x[None, :] - x[sl, None], y[None, :] - y[sl, None], z[None, :] - z[sl, None]
        r2 = dx * dx + dy * dy + dz * dz + eps2
        f = m[None, :] / (r2 * np.sqrt(r2))
        for a, d in zip(acc, (dx, dy, dz)):
            a[sl] = (f * d).sum(axis=1)
    return tuple(acc)


def ref_row_stats(x):
    mean = x.mean(axis=1, keepdims=True)
    sd = x.std(axis=1, keepdims=True)
    return x.mean(axis=1), x.var(axis=1), x.std(axis=1), x.std(axis=0), (x - mean) / sd


def ref_stencil27(a):
    import numpy as np
    n = a.shape[0]
    p = np.pad(a, 1, mode="edge")  # clamped indices = the edge value repeated
    s = np.zeros_like(a)
    for di in range(3):
        for dj in range(3):
            for dk in range(3):
                s += p[di:di + n, dj:dj + n, dk:dk + n]
    return (s * (1.0 / 27.0),)


def ref_hist2d(hist, x, y):
    import numpy as np
    bins = hist.shape[0]
    flat = (x * bins).astype(np.int64) * bins + (y * bins).astype(np.int64)
    return (hist + np.bincount(flat, minlength=bins * bins).reshape(bins, bins),)


# --- the cases: sizes and data of bench/suite/kernels_*.cpp ---------------------------------------------------

def cases(smoke):
    """name -> a maker of its Case (data is drawn only for the kernels that run)."""
    import numpy as np

    def uniform(seed, shape, lo=-1.0, hi=1.0):
        # kiln-suite draws each array from its own seed; so do we (NumPy's generator, not kiln's).
        return np.random.default_rng(seed).uniform(lo, hi, shape)

    alpha, beta = 1.5, 1.2
    out = {}

    def case(name, origin):
        def register(fn):
            out[name] = lambda: fn(name, origin)
            return fn
        return register

    def twins(args, k):
        """outputs(): the first k arguments (arrays updated in place)."""
        return lambda a, ret: a[:k]

    @case("jacobi-1d", "polybench")
    def _(name, origin):
        n, t = (101, 3) if smoke else (2_000_000, 20)
        args = (uniform(1, n), uniform(2, n), t)
        return Case(name, origin, "jacobi_1d", dims(n=n, tsteps=t), args, lambda a: ref_jacobi_1d(*a),
                    twins(args, 2), [("A", 1e-13, 1.0), ("B", 1e-13, 1.0)])

    @case("jacobi-2d", "polybench")
    def _(name, origin):
        n, t = (31, 3) if smoke else (2000, 8)
        args = (uniform(3, (n, n)), uniform(4, (n, n)), t)
        return Case(name, origin, "jacobi_2d", dims(n=n, tsteps=t), args, lambda a: ref_jacobi_2d(*a),
                    twins(args, 2), [("A", 1e-13, 1.0), ("B", 1e-13, 1.0)])

    @case("heat-3d", "polybench")
    def _(name, origin):
        n, t = (13, 3) if smoke else (120, 15)
        args = (uniform(5, (n, n, n)), uniform(6, (n, n, n)), t)
        return Case(name, origin, "heat_3d", dims(n=n, tsteps=t), args, lambda a: ref_heat_3d(*a),
                    twins(args, 2), [("A", 1e-12, 1.0), ("B", 1e-12, 1.0)])

    @case("fdtd-2d", "polybench")
    def _(name, origin):
        nx, ny, t = (23, 29, 4) if smoke else (1500, 1600, 10)
        args = (uniform(7, (nx, ny)), uniform(8, (nx, ny)), uniform(9, (nx, ny)), uniform(10, t), t)
        return Case(name, origin, "fdtd_2d", dims(nx=nx, ny=ny, tmax=t), args, lambda a: ref_fdtd_2d(*a),
                    twins(args, 3), [("ex", 1e-12, 4.0), ("ey", 1e-12, 4.0), ("hz", 1e-12, 4.0)])

    @case("gemm", "polybench")
    def _(name, origin):
        ni, nj, nk = (17, 19, 23) if smoke else (740, 760, 720)
        args = (uniform(11, (ni, nj)), uniform(12, (ni, nk)), uniform(13, (nk, nj)), alpha, beta)
        return Case(name, origin, "gemm", dims(ni=ni, nj=nj, nk=nk), args,
                    lambda a: (a[3] * (a[1] @ a[2]) + a[4] * a[0],), twins(args, 1), [("C", 1e-14 * nk, 1.0)])

    @case("2mm", "polybench")
    def _(name, origin):
        ni, nj, nk, nl = (13, 15, 17, 19) if smoke else (600, 620, 640, 660)
        args = (uniform(14, (ni, nl)), uniform(15, (ni, nk)), uniform(16, (nk, nj)), uniform(17, (nj, nl)), alpha, beta)
        return Case(name, origin, "two_mm", dims(ni=ni, nj=nj, nk=nk, nl=nl), args,
                    lambda a: ((a[4] * (a[1] @ a[2])) @ a[3] + a[5] * a[0],), twins(args, 1),
                    [("D", 1e-15 * nj * nk, 1.0)])

    @case("atax", "polybench")
    def _(name, origin):
        m, n = (37, 41) if smoke else (6000, 5800)
        args = (uniform(18, (m, n)), uniform(19, n))
        return Case(name, origin, "atax", dims(m=m, n=n), args, lambda a: ((a[0] @ a[1]) @ a[0],),
                    lambda a, ret: (ret,), [("y", 1e-15 * (m + n), "max")])

    @case("bicg", "polybench")
    def _(name, origin):
        n, m = (37, 41) if smoke else (6000, 5800)
        args = (uniform(20, (n, m)), uniform(21, n), uniform(22, m))
        return Case(name, origin, "bicg", dims(n=n, m=m), args, lambda a: (a[1] @ a[0], a[0] @ a[2]),
                    lambda a, ret: ret, [("s", 1e-15 * n, 1.0), ("q", 1e-15 * m, 1.0)])

    @case("mvt", "polybench")
    def _(name, origin):
        n = 43 if smoke else 5000
        args = (uniform(23, n), uniform(24, n), uniform(25, (n, n)), uniform(26, n), uniform(27, n))
        return Case(name, origin, "mvt", dims(n=n), args, lambda a: (a[0] + a[2] @ a[3], a[1] + a[4] @ a[2]),
                    twins(args, 2), [("x1", 1e-15 * n, 1.0), ("x2", 1e-15 * n, 1.0)])

    @case("gemver", "polybench")
    def _(name, origin):
        n = 47 if smoke else 4000
        args = (uniform(28, (n, n)),) + tuple(uniform(s, n) for s in range(29, 37)) + (alpha, beta)
        return Case(name, origin, "gemver", dims(n=n), args, lambda a: ref_gemver(*a), twins(args, 3),
                    [("A", 1e-15, 1.0), ("x", 1e-15 * n, 1.0), ("w", 1e-15 * n, "max")])

    @case("gesummv", "polybench")
    def _(name, origin):
        n = 39 if smoke else 5000
        args = (uniform(37, (n, n)), uniform(38, (n, n)), uniform(39, n), alpha, beta)
        return Case(name, origin, "gesummv", dims(n=n), args, lambda a: (a[3] * (a[0] @ a[2]) + a[4] * (a[1] @ a[2]),),
                    lambda a, ret: (ret,), [("y", 1e-15 * n, 1.0)])

    @case("syrk", "polybench")
    def _(name, origin):
        n, m = (29, 31) if smoke else (520, 480)
        args = (uniform(40, (n, n)), uniform(41, (n, m)), alpha, beta)
        return Case(name, origin, "syrk", dims(n=n, m=m), args, lambda a: ref_syrk(*a), twins(args, 1),
                    [("C", 1e-15 * m, 1.0)])

    @case("covariance", "polybench")
    def _(name, origin):
        n, m = (33, 27) if smoke else (1000, 600)
        args = (uniform(42, (n, m)),)
        return Case(name, origin, "covariance", dims(n=n, m=m), args, lambda a: (np.cov(a[0], rowvar=False),),
                    lambda a, ret: (ret,), [("cov", 1e-12, 1.0)])

    @case("correlation", "polybench")
    def _(name, origin):
        n, m = (33, 27) if smoke else (1000, 600)
        data = uniform(43, (n, m))
        data[:, ::7] = 0.5 + 0.01 * data[:, ::7]  # nearly constant columns: the std <= 0.1 rule matters
        return Case(name, origin, "correlation", dims(n=n, m=m), (data,), lambda a: ref_correlation(*a),
                    lambda a, ret: (ret,), [("corr", 1e-12, 1.0)])

    @case("doitgen", "polybench")
    def _(name, origin):
        nr, nq, np_ = (5, 7, 11) if smoke else (128, 128, 128)
        args = (uniform(44, (nr * nq, np_)), uniform(45, (np_, np_), -0.15, 0.15))
        return Case(name, origin, "doitgen", dims(nr=nr, nq=nq, np=np_), args, lambda a: (a[0] @ a[1],),
                    twins(args, 1), [("A", 1e-15 * np_, 1.0)])

    @case("nbody", "user")
    def _(name, origin):
        n = 53 if smoke else 4000
        eps2 = 1e-3
        args = (np.empty(n), np.empty(n), np.empty(n), uniform(50, n), uniform(51, n), uniform(52, n),
                uniform(53, n, 0.5, 1.5), eps2)
        return Case(name, origin, "nbody", dims(n=n), args, lambda a: ref_nbody(*a[3:]), twins(args, 3),
                    [("ax", 1e-11, "max"), ("ay", 1e-11, "max"), ("az", 1e-11, "max")])

    @case("row-stats", "user")
    def _(name, origin):
        rows, cols = (23, 37) if smoke else (4000, 4000)
        x = uniform(54, (rows, cols), 0.0, 4.0) + (np.arange(rows) % 5)[:, None]
        return Case(name, origin, "row_stats", dims(rows=rows, cols=cols), (x,), lambda a: ref_row_stats(*a),
                    lambda a, ret: ret,
                    [("mean", 1e-13, 1.0), ("var", 1e-13, 1.0), ("std", 1e-13, 1.0), ("col_std", 1e-13, 1.0),
                     ("z", 1e-13, 1.0)])

    @case("norm-clip-sum", "user")
    def _(name, origin):
        n = 1001 if smoke else 20_000_000
        clip = 1.5
        args = (uniform(55, n, -3.0, 5.0), clip)

        def ref(a):
            x, c = a
            return (np.array([np.clip((x - x.mean()) / x.std(), -c, c).sum()]),)

        return Case(name, origin, "normalize_clip_sum", dims(n=n), args, ref, lambda a, ret: (np.array([ret]),),
                    [("sum", 1e-13, clip * n)])

    @case("stencil27-clamp", "user")
    def _(name, origin):
        n = 11 if smoke else 160
        args = (np.empty((n, n, n)), uniform(56, (n, n, n)))
        return Case(name, origin, "stencil27_clamp", dims(n=n), args, lambda a: ref_stencil27(a[1]), twins(args, 1),
                    [("out", 1e-14, 1.0)])

    @case("hist2d", "user")
    def _(name, origin):
        n, bins = (4099, 8) if smoke else (24_000_000, 64)
        # Points clustered around the centre (a sum of two uniforms), as kiln-suite's.
        x = uniform(57, n, 0.0, 0.5) + uniform(59, n, 0.0, 0.5)
        y = uniform(58, n, 0.0, 0.5) + uniform(60, n, 0.0, 0.5)
        args = (np.zeros((bins, bins), dtype=np.int64), x, y)
        return Case(name, origin, "hist2d", f"n={n} bins={bins}^2", args, lambda a: ref_hist2d(*a), twins(args, 1),
                    [("hist", 0, "exact")])

    return out


# --- checking and timing -------------------------------------------------------------------------------------

def compare(got, want, tols, who="numba"):
    """"" or where the outputs differ, in kiln-suite's terms (`who`: the system whose outputs `got` are)."""
    import numpy as np
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for g, w, (name, tol, scale) in zip(got, want, tols):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"{name}: shape {g.shape}, expected {w.shape}"
        if scale == "exact":
            bad = np.flatnonzero(g.ravel() != w.ravel())
        else:
            s = float(np.max(np.abs(w))) if scale == "max" else scale
            err = np.abs(g - w).ravel()
            bad = np.flatnonzero(~(err <= tol * np.maximum(s, np.abs(w).ravel())))
        if bad.size:
            k = int(bad[0])
            return (f"{name}[{k}]: {who} {g.ravel()[k].item()!r}, numpy {w.ravel()[k].item()!r} "
                    f"({bad.size} of {g.size} elements off, tolerance {tol:.1e})")
    return ""


def run_case(c, kernels, reps):
    fn = getattr(kernels, c.kernel)
    work = copied(c.args)
    t0 = time.perf_counter()
    ret = fn(*work)
    first = time.perf_counter() - t0
    status = compare(c.outputs(work, ret), c.reference(c.args), c.tols)
    fn(*work)  # a second warm-up call, as kiln-suite makes
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*work)
        times.append(time.perf_counter() - t0)
    return {"numba_ms": statistics.median(times) * 1e3, "first_call_ms": first * 1e3,
            "status": "ok" if not status else "mismatch: " + status}


def loop_self_check():
    """The NumPy references against direct loops on tiny inputs (the references are what Numba is checked
    against, so they are checked too)."""
    import math
    import numpy as np
    rng = np.random.default_rng(0)
    problems = []

    def expect(what, got, want, tol=1e-12):
        if not np.allclose(got, want, rtol=tol, atol=tol):
            problems.append(what)

    # syrk: the lower triangle only.
    C, A = rng.uniform(-1, 1, (6, 6)), rng.uniform(-1, 1, (6, 5))
    want = C.copy()
    for i in range(6):
        for j in range(i + 1):
            want[i, j] = 1.2 * C[i, j] + 1.5 * sum(A[i, k] * A[j, k] for k in range(5))
    expect("syrk", ref_syrk(C, A, 1.5, 1.2)[0], want)
    # stencil27: clamped indices.
    a = rng.uniform(-1, 1, (4, 4, 4))
    want = np.empty_like(a)
    cl = lambda v: min(max(v, 0), 3)
    for i, j, k in np.ndindex(4, 4, 4):
        want[i, j, k] = sum(a[cl(i + di), cl(j + dj), cl(k + dk)] for di in (-1, 0, 1) for dj in (-1, 0, 1)
                            for dk in (-1, 0, 1)) * (1.0 / 27.0)
    expect("stencil27", ref_stencil27(a)[0], want)
    # nbody: pairs in order.
    x, y, z, m = (rng.uniform(-1, 1, 7) for _ in range(4))
    got = ref_nbody(x, y, z, m, 1e-3)
    for i in range(7):
        s = [0.0, 0.0, 0.0]
        for j in range(7):
            d = (x[j] - x[i], y[j] - y[i], z[j] - z[i])
            r2 = d[0] ** 2 + d[1] ** 2 + d[2] ** 2 + 1e-3
            for c in range(3):
                s[c] += m[j] / (r2 * math.sqrt(r2)) * d[c]
        expect(f"nbody[{i}]", [g[i] for g in got], s)
    # hist2d: counts.
    x, y = rng.uniform(0, 1, 50), rng.uniform(0, 1, 50)
    want = np.zeros((4, 4), dtype=np.int64)
    for a_, b_ in zip(x, y):
        want[int(a_ * 4), int(b_ * 4)] += 1
    if not np.array_equal(ref_hist2d(np.zeros((4, 4), dtype=np.int64), x, y)[0], want):
        problems.append("hist2d")
    # correlation: the 0.1 rule, per column.
    data = rng.uniform(-1, 1, (9, 5))
    data[:, 2] = 0.5 + 0.01 * data[:, 2]
    n = 9
    d = np.empty_like(data)
    for j in range(5):
        mu = sum(data[:, j]) / n
        sd = math.sqrt(sum((v - mu) ** 2 for v in data[:, j]) / n)
        d[:, j] = (data[:, j] - mu) / (math.sqrt(n) * (1.0 if sd <= 0.1 else sd))
    expect("correlation", ref_correlation(data)[0], [[sum(d[:, i] * d[:, j]) for j in range(5)] for i in range(5)])
    # jacobi-1d: one step by hand.
    A, B = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    wB = B.copy()
    for i in range(1, 5):
        wB[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1])
    wA = A.copy()
    for i in range(1, 5):
        wA[i] = 0.33333 * (wB[i - 1] + wB[i] + wB[i + 1])
    gA, gB = ref_jacobi_1d(A, B, 1)
    expect("jacobi-1d", np.concatenate([gA, gB]), np.concatenate([wA, wB]))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--filter", default="", help="comma-separated substrings of kernel names (as kiln-suite)")
    ap.add_argument("--smoke", action="store_true", help="kiln-suite's tiny sizes")
    ap.add_argument("--reference-only", action="store_true", help="only the NumPy side: no Numba needed")
    a = ap.parse_args()
    if a.threads:
        # Before Numba and NumPy load: Numba's pool and the BLAS under np.dot get the same thread count.
        for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(a.threads)
    wanted = [w for w in a.filter.split(",") if w]
    makers = {k: v for k, v in cases(a.smoke).items() if not wanted or any(w in k for w in wanted)}
    if not makers:
        sys.stderr.write(f"numba_suite: no kernel matches --filter {a.filter}\n")
        return 2

    if a.reference_only:
        import numpy as np
        failed = loop_self_check()
        for name, make in makers.items():
            c = make()
            want = c.reference(c.args)
            if len(want) != len(c.tols):
                failed.append(f"{name}: {len(want)} reference outputs, {len(c.tols)} tolerances")
            print(json.dumps({"kernel": name, "origin": c.origin, "shape": c.shape,
                              "outputs": [list(np.shape(w)) for w in want]}))
        for f in failed:
            sys.stderr.write(f"numba_suite: reference self-check failed: {f}\n")
        return 1 if failed else 0

    sys.path.insert(0, HERE)
    import numba
    import numba_suite_kernels as kernels

    status = 0
    for name, make in makers.items():
        c = make()
        row = {"kernel": name, "origin": c.origin, "shape": c.shape}
        try:
            row.update(run_case(c, kernels, a.reps))
        except Exception as e:  # a kernel Numba cannot compile or run is a row, not the end of the table
            row.update(numba_ms=None, first_call_ms=None, status=f"error: {type(e).__name__}: {str(e)[:300]}")
        try:
            layer = numba.threading_layer()  # which of tbb, omp, workqueue ran the parallel loops
        except ValueError:  # no parallel region has run in this process yet
            layer = ""
        row.update(threads=numba.get_num_threads(), threading_layer=layer, reps=a.reps)
        if row["status"] != "ok":
            status = 1
        print(json.dumps(row), flush=True)
        del c
    return status


if __name__ == "__main__":
    sys.exit(main())
