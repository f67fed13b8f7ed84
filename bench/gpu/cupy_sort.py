#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# CuPy's sorts on the GPU for kiln-bench-gpu's sort rows (issue 19): cupy.sort and cupy.argsort run CUB's radix
# sort. The same work as the rows: 10^7 f64 keys uniform in [-1, 1), 10^7 i32 keys over the whole range, a copy
# of the keys sorted (or their positions). Device arrays, CUDA events, median of --reps after two warm-ups
# (bench/peers/cupy_bench.py's timer).
#   python3 bench/gpu/cupy_sort.py [--n N] [--reps R]
import argparse
import os
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from cupy_bench import timed  # noqa: E402  (CUDA events, median after two warm-up calls)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    xf = cp.asarray(rng.uniform(-1.0, 1.0, a.n))
    xi = cp.asarray(rng.integers(-(2**31), 2**31 - 1, a.n, dtype=np.int32))
    dev = cp.cuda.Device()
    print(f"device: {cp.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}, CuPy {cp.__version__}, n = {a.n}, "
          f"median of {a.reps}")
    for name, fn in (("sort_f64", lambda: cp.sort(xf)), ("sort_i32", lambda: cp.sort(xi)),
                     ("argsort_f64", lambda: cp.argsort(xf))):
        ms = timed(fn, a.reps)
        print(f"{name:12s} {ms:9.3f} ms  {a.n / ms / 1e6:7.2f} Gkeys/s")


if __name__ == "__main__":
    main()
