#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU workloads of kiln-bench-gpu (bench/gpu/kiln_kernels.hpp) written for CuPy, f32, on device arrays:
idiomatic unfused array code (what a NumPy user writes), and where CuPy offers it a fused form (cupy.fuse,
ElementwiseKernel, ReductionKernel). Timed with CUDA events, medians; prints one JSON object a line:
{"name", "variant", "ms", "GBps"} with GB/s over the same minimum traffic kiln-bench-gpu counts, and a row
"copy" with CuPy's device-to-device copy bandwidth (the ceiling).

  cupy_bench.py [--n 134217728] [--side 16384] [--reps 20] [--pi 200000000]
"""
import argparse
import json
import statistics

import cupy as cp


def timed(fn, reps):
    fn()  # compile / warm up
    fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def report(name, variant, ms, nbytes):
    gbps = nbytes / (ms * 1e-3) / 1e9 if nbytes else 0.0
    print(json.dumps({"name": name, "variant": variant, "ms": ms, "GBps": gbps}), flush=True)


@cp.fuse()
def fused_abc(a, b, c):
    return a * b + c


black_scholes_kernel = cp.ElementwiseKernel(
    "float32 s, float32 k, float32 t, float32 r, float32 v", "float32 call, float32 put",
    """
    const float sq = sqrtf(t);
    const float d1 = (logf(s / k) + (r + 0.5f * v * v) * t) / (v * sq);
    const float d2 = d1 - v * sq;
    const float n1 = 0.5f + 0.5f * erff(d1 * 0.70710678f);
    const float n2 = 0.5f + 0.5f * erff(d2 * 0.70710678f);
    const float disc = k * expf(-r * t);
    call = s * n1 - disc * n2;
    put = disc * (1.0f - n2) - s * (1.0f - n1);
    """, "black_scholes")

pi_kernel = cp.ReductionKernel(
    "int64 i, float64 step", "float64 out",
    "4.0 / (1.0 + ((i + 0.5) * step) * ((i + 0.5) * step))", "a + b", "out = a * step", "0", "pi_sum")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 27)
    ap.add_argument("--side", type=int, default=16384)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--pi", type=int, default=200_000_000)
    a = ap.parse_args()
    n, side, reps = a.n, a.side, a.reps
    f = cp.float32
    rng = cp.random.default_rng(1)
    x, y, z = (rng.random(n, dtype=f) for _ in range(3))
    out = cp.empty(n, dtype=f)

    big = cp.empty(n, dtype=f)
    report("copy", "cupy", timed(lambda: big.__setitem__(slice(None), x), reps), 2 * 4 * n)

    report("fused a*b+c", "unfused", timed(lambda: cp.add(x * y, z, out=out), reps), 4 * 4 * n)
    report("fused a*b+c", "fused", timed(lambda: fused_abc(x, y, z), reps), 4 * 4 * n)

    report("dot", "cupy.dot", timed(lambda: cp.dot(x, y).item(), reps), 2 * 4 * n)

    idx = cp.arange(a.pi, dtype=cp.int64)  # the ReductionKernel's index input (CuPy has no index-only form)
    report("pi", "ReductionKernel", timed(lambda: pi_kernel(idx, 1.0 / a.pi).item(), reps), 0)
    del idx

    def pi_unfused():
        step = 1.0 / a.pi
        xs = (cp.arange(a.pi, dtype=cp.float64) + 0.5) * step
        return (cp.sum(4.0 / (1.0 + xs * xs)) * step).item()

    report("pi", "unfused", timed(pi_unfused, reps), 0)

    def softmax_unfused():
        e = cp.exp(x - x.max())
        cp.divide(e, e.sum(), out=out)

    report("softmax", "unfused", timed(softmax_unfused, reps), 2 * 4 * n)

    def smooth_unfused():
        out[1:-1] = (x[:-2] + x[1:-1] + x[2:]) * f(1.0 / 3.0)
        out[0] = x[0]
        out[-1] = x[-1]

    report("smooth1d", "unfused", timed(smooth_unfused, reps), 2 * 4 * n)
    del y, z

    g = rng.random((side, side), dtype=f)
    go = cp.zeros((side, side), dtype=f)

    def jacobi_unfused():
        go[1:-1, 1:-1] = f(0.25) * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])

    report("jacobi2d", "unfused", timed(jacobi_unfused, reps), 2 * 4 * side * side)
    del g, go

    s = rng.random(n, dtype=f) * f(25) + f(5)
    k = rng.random(n, dtype=f) * f(99) + f(1)
    t = rng.random(n, dtype=f) * f(9.75) + f(0.25)
    call, put = cp.empty(n, dtype=f), cp.empty(n, dtype=f)
    r, v = f(0.02), f(0.30)

    def bs_unfused():
        sq = cp.sqrt(t)
        d1 = (cp.log(s / k) + (r + f(0.5) * v * v) * t) / (v * sq)
        d2 = d1 - v * sq
        import cupyx.scipy.special as sp
        n1 = f(0.5) + f(0.5) * sp.erf(d1 * f(0.70710678))
        n2 = f(0.5) + f(0.5) * sp.erf(d2 * f(0.70710678))
        disc = k * cp.exp(-r * t)
        cp.subtract(s * n1, disc * n2, out=call)
        cp.subtract(disc * (f(1) - n2), s * (f(1) - n1), out=put)

    report("black_scholes", "unfused", timed(bs_unfused, reps), 5 * 4 * n)
    report("black_scholes", "ElementwiseKernel", timed(lambda: black_scholes_kernel(s, k, t, r, v, call, put), reps),
           5 * 4 * n)
    print(json.dumps({"name": "device", "variant": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                      "cupy": cp.__version__, "ms": 0, "GBps": 0}))


if __name__ == "__main__":
    main()
