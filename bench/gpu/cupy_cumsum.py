#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""cupy.cumsum (CUB's device scan) on the sizes of kiln-bench-gpu's cumsum rows, timed with CUDA events.

    python3 bench/gpu/cupy_cumsum.py [--n N] [--side S] [--reps R]

Prints one line per row: median milliseconds and GB/s of the minimum traffic (read x, write out), the
figures to put next to `kiln-bench-gpu --filter cumsum` (same n and side defaults).
"""
import argparse
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from cupy_bench import timed  # noqa: E402  (CUDA events, median after two warm-up calls)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 27)
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    rng = cp.random.default_rng(1)
    x = rng.uniform(-1, 1, a.n, dtype=cp.float64)
    out = cp.empty_like(x)
    m = rng.uniform(-1, 1, (a.side, a.side), dtype=cp.float64)
    mout = cp.empty_like(m)
    # The other forms kiln-bench-gpu's cumsum rows time (types, operators, the last axis), same names.
    x32 = x.astype(cp.float32)
    o32 = cp.empty_like(x32)
    xi64 = rng.integers(-1000, 1000, a.n, dtype=cp.int64)
    oi64 = cp.empty_like(xi64)
    xi32 = xi64.astype(cp.int32)
    oi32 = cp.empty_like(xi32)
    xp = rng.uniform(0.999, 1.001, a.n, dtype=cp.float64)
    short = a.n // 256
    r32 = rng.uniform(-1, 1, (short, 256), dtype=cp.float32)
    ro32 = cp.empty_like(r32)
    rows = [
        (f"cumsum f64 n={a.n}", lambda: cp.cumsum(x, out=out), 16.0 * a.n),
        (f"cumsum f64 axis 0 {a.side}^2", lambda: cp.cumsum(m, axis=0, out=mout), 16.0 * a.side * a.side),
        (f"cumsum f64 axis 1 {a.side}^2", lambda: cp.cumsum(m, axis=1, out=mout), 16.0 * a.side * a.side),
        (f"cumsum f32 n={a.n}", lambda: cp.cumsum(x32, out=o32), 8.0 * a.n),
        (f"cumsum i64 n={a.n}", lambda: cp.cumsum(xi64, out=oi64), 16.0 * a.n),
        (f"cumsum i32 n={a.n}", lambda: cp.cumsum(xi32, dtype=cp.int32, out=oi32), 8.0 * a.n),
        (f"cummax f64 n={a.n}", lambda: cp.maximum.accumulate(x, out=out), 16.0 * a.n),
        (f"cumprod f64 n={a.n}", lambda: cp.cumprod(xp, out=out), 16.0 * a.n),
        (f"cumsum f32 axis 1 {short}x256", lambda: cp.cumsum(r32, axis=1, out=ro32), 8.0 * a.n),
    ]
    print(f"cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    for name, fn, nbytes in rows:
        try:
            ms = timed(fn, a.reps)
        except Exception as e:  # a form this CuPy lacks (ufunc.accumulate): say so, time the rest
            print(f"{name:32s} not timed: {type(e).__name__}: {e}")
            continue
        print(f"{name:32s} {ms:9.3f} ms {nbytes / (ms * 1e6):8.0f} GB/s")


if __name__ == "__main__":
    main()
