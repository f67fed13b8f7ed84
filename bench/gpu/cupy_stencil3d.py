#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""cupyx.scipy.ndimage.correlate with a nearest border on kiln-bench-gpu's 3-d stencil rows (star7, cube27:
the same weights, float32 cube of side S), timed with CUDA events.

    python3 bench/gpu/cupy_stencil3d.py [--side S] [--reps R]

Prints one line per row: median milliseconds and GB/s of the minimum traffic (read the cube, write the
result), the figures to put next to `kiln-bench-gpu --filter stencil3d` (same side default).
"""
import argparse
import os
import sys

import cupy as cp
import cupyx.scipy.ndimage as ndi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from cupy_bench import timed  # noqa: E402  (CUDA events, median after two warm-up calls)

WEIGHT = [0.5, 0.05, 0.02, 0.01]  # by |dz| + |dy| + |dx|, as bench/gpu/kiln_kernels.hpp


def weights(points):
    w = cp.zeros((3, 3, 3), dtype=cp.float32)
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                d = abs(dz) + abs(dy) + abs(dx)
                if points == 27 or d <= 1:
                    w[dz + 1, dy + 1, dx + 1] = WEIGHT[d]
    return w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=512)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    rng = cp.random.default_rng(1)
    x = rng.uniform(0, 1, (a.side, a.side, a.side), dtype=cp.float32)
    out = cp.empty_like(x)
    nbytes = 8.0 * a.side ** 3
    print(f"cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    for points in (7, 27):
        w = weights(points)
        ms = timed(lambda: ndi.correlate(x, w, output=out, mode="nearest"), a.reps)
        name = f"{'star7' if points == 7 else 'cube27'} correlate {a.side}^3"
        print(f"{name:32s} {ms:9.3f} ms {nbytes / (ms * 1e6):8.0f} GB/s")


if __name__ == "__main__":
    main()
