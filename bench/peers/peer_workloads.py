# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The workloads every JIT peer (peer_halide.py, peer_drjit.py, peer_taichi.py, peer_devito.py) runs, as
`numba_suite.Case`s: the public kernel suite's cases are numba_suite.cases() unchanged (kiln-suite's sizes,
constants and input distributions, NumPy references, kiln-suite's tolerances); the kiln-bench rows are built
here from numba_bench.workloads() (kiln-bench's sizes and distributions for --n) with NumPy references added.

`workloads(sets, n, smoke, dtype, side)` -> name -> a maker of its Case. With dtype float32 (the GPU machine's
kiln-bench-gpu rows are f32) every float array is converted and tolerances widen to F32_TOL.
"""
import math

import numpy as np

import numba_bench
import numba_suite
from numba_suite import Case

F32_TOL = 2e-3  # f32 sums of up to 2^27 terms: relative error well above f64's 1e-12


def ref_stencil_nearest(a, offsets_weights):
    """sum_k w_k * a[i + off_k] with indices clamped to the array (kiln's Border::nearest)."""
    r = max(abs(o) for off, _ in offsets_weights for o in off)
    p = np.pad(a, r, mode="edge")
    out = np.zeros_like(a)
    for off, w in offsets_weights:
        out += w * p[tuple(slice(r + o, r + o + s) for o, s in zip(off, a.shape))]
    return out


def bench_cases(n, side=None, vol=None):
    """The kiln-bench rows (bench/rows_*.cpp) but copy (the bandwidth yardstick, no peer code to compare)."""
    made = numba_bench.workloads(n)
    scale = n / 2e7
    side = side or max(5, round(4096 * scale ** 0.5))
    vol = vol or max(5, round(256 * scale ** (1 / 3)))
    rng = np.random.default_rng(1)
    out = {}

    def case(name, kernel_args, reference, outputs, tols, shape):
        out[name] = lambda: Case(name, "kiln-bench", name, shape, kernel_args(), reference, outputs, tols)

    returned = lambda a, ret: (np.atleast_1d(np.asarray(ret)),)  # noqa: E731
    case("saxpy", made["saxpy"], lambda a: (a[0] * a[1] + a[2],), lambda a, ret: (a[2],), [("y", 1e-15, 1.0)],
         f"n={n}")
    case("triad", made["triad"], lambda a: (a[0] * a[1] + a[2],), lambda a, ret: (a[3],), [("out", 1e-15, 1.0)],
         f"n={n}")
    case("dot", made["dot"], lambda a: (np.array([a[0] @ a[1]]),), returned, [("dot", 1e-15 * n, 0.0)], f"n={n}")
    # The midpoint rule errs by about 1/(24 n^2) besides rounding: the tolerance of small --n (--smoke).
    case("pi", made["pi"], lambda a: (np.array([math.pi]),), returned, [("pi", max(1e-12, 1.0 / n ** 2), 1.0)], f"n={n}")

    def ref_softmax(a):
        e = np.exp(a[0] - a[0].max())
        return (e / e.sum(),)

    # Relative to each element, 1e-15 per term of the sum (kiln-suite's rule for sums of n terms): the order
    # of a parallel sum moves its last bits.
    case("softmax", made["softmax"], ref_softmax, returned, [("p", 1e-15 * n, 0.0)], f"n={n}")

    def ref_black_scholes(a):
        from scipy.special import erf
        S, K, T, r, v = a
        d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * np.sqrt(T))
        d2 = d1 - v * np.sqrt(T)
        return (S * 0.5 * (1 + erf(d1 / math.sqrt(2))) - K * np.exp(-r * T) * 0.5 * (1 + erf(d2 / math.sqrt(2))),)

    case("black_scholes", made["black_scholes"], ref_black_scholes, returned, [("call", 1e-12, "max")], f"n={n // 2}")

    def ref_normalize(a):
        x = a[0]
        return ((x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True),)

    case("normalize", made["normalize"], ref_normalize, returned, [("z", 1e-12, 1.0)], "4000x5000")

    def ref_histogram(a):
        x, hist = a
        return (hist + np.bincount((x * hist.shape[0]).astype(np.int64), minlength=hist.shape[0]),)

    case("histogram", made["histogram"], ref_histogram, lambda a, ret: (a[1],), [("hist", 0, "exact")],
         f"n={n // 2} bins=256")

    def ref_logreg(a):
        X, Y, w, iters = a
        w = w.copy()
        for _ in range(iters):
            w -= (((1.0 / (1.0 + np.exp(-Y * (X @ w)))) - 1.0) * Y) @ X
        return (w,)

    case("logistic_regression", made["logistic_regression"], ref_logreg, lambda a, ret: (a[2],),
         [("w", 1e-10, "max")], f"n={max(1, n // 100)}x10 iterations=10")
    # The stencils: one sweep into an existing output (bench/rows_stencils.cpp). jacobi2d skips its border (the
    # output's border keeps what it held: zeros here), the others clamp indices (Border::nearest).
    case("smooth1d", lambda: (rng.random(n), np.zeros(n)),
         lambda a: (ref_stencil_nearest(a[0], [((-1,), 0.25), ((0,), 0.5), ((1,), 0.25)]),), first_out(1),
         [("out", 1e-15, 1.0)], f"n={n}")

    def ref_jacobi(a):
        o = a[1].copy()
        x = a[0]
        o[1:-1, 1:-1] = 0.25 * (x[1:-1, 2:] + x[1:-1, :-2] + x[:-2, 1:-1] + x[2:, 1:-1])
        return (o,)

    case("jacobi2d", lambda: (rng.random((side, side)), np.zeros((side, side))), ref_jacobi, first_out(1),
         [("out", 1e-15, 1.0)], f"{side}^2")
    heat = [((0, 0, 0), 1.0 - 6 * 0.125)] + [(o, 0.125) for o in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0),
                                                                   (0, 0, -1), (0, 0, 1))]
    case("heat3d", lambda: (rng.random((vol, vol, vol)), np.zeros((vol, vol, vol))),
         lambda a: (ref_stencil_nearest(a[0], heat),), first_out(1), [("out", 1e-14, 1.0)], f"{vol}^3")
    case("conv2d", lambda: (rng.random((side, side)), rng.random((5, 5)), np.zeros((side, side))),
         lambda a: (ref_stencil_nearest(a[0], [((i - 2, j - 2), a[1][i, j]) for i in range(5) for j in range(5)]),),
         lambda a, ret: (a[2],), [("out", 1e-14, 25.0)], f"5x5 on {side}^2")
    return out


def first_out(k):
    """outputs(): the argument after the k inputs (a stencil's output array)."""
    return lambda a, ret: (a[k],)


def as_dtype(case, dtype):
    """The case with its float arrays and scalars in `dtype` and tolerances at least F32_TOL for float32."""
    if dtype == np.float64:
        return case
    conv = lambda v: v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v  # noqa: E731
    args = tuple(conv(v) for v in case.args)
    tols = [(name, tol if scale == "exact" else max(tol, F32_TOL), scale) for name, tol, scale in case.tols]
    reference = case.reference
    # The reference in f64 from the converted inputs: what the f32 kernel approximates.
    ref = lambda a: reference(tuple(v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f"  # noqa
                                    else v for v in a))
    return Case(case.name, case.origin, case.kernel, case.shape, args, ref, case.outputs, tols)


def workloads(sets, n=20_000_000, smoke=False, dtype=np.float64, side=None, vol=None):
    out = {}
    if "bench" in sets:
        out.update(bench_cases(n, side, vol))
    if "suite" in sets:
        out.update(numba_suite.cases(smoke))
    return {name: (lambda make=make: as_dtype(make(), dtype)) for name, make in out.items()}
