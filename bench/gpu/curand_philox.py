#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""cuRAND's Philox4_32_10 generator through CuPy, on the counts of kiln-bench-gpu's random rows, timed with CUDA events.

    python3 bench/gpu/curand_philox.py [--n N] [--reps R]

Prints median milliseconds and Gnumbers/s for n uniform floats and n standard normal doubles, three ways:
the cuRAND host API (curandGenerateUniform / curandGenerateNormalDouble on a PHILOX4_32_10 generator, into
preallocated arrays: the generator alone), cupy.random.RandomState(method=PHILOX4_32_10) (the same
generator behind CuPy's legacy API, which allocates its output), and cupy.random.Generator(Philox4x3210)
(CuPy's bit-generator API, also allocating). Put them next to `kiln-bench-gpu --filter random` (same n
default). cuRAND computes 4 numbers per Philox block where kiln computes one block per counter (docs/random.md).
"""
import argparse
import os
import sys

import cupy as cp
from cupy.cuda import curand

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from cupy_bench import timed  # noqa: E402  (CUDA events, median after two warm-up calls, as the other CuPy scripts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 27)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    n = a.n
    u = cp.empty(n, dtype=cp.float32)
    z = cp.empty(n + (n & 1), dtype=cp.float64)  # curandGenerateNormal* needs an even count
    gen = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    curand.setPseudoRandomGeneratorSeed(gen, 1234)
    curand.setStream(gen, cp.cuda.get_current_stream().ptr)
    rows = [
        ("curand host API uniform f32", lambda: curand.generateUniform(gen, u.data.ptr, n)),
        ("curand host API normal f64", lambda: curand.generateNormalDouble(gen, z.data.ptr, z.size, 0.0, 1.0)),
    ]
    rs = cp.random.RandomState(1234, method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    rows += [
        ("RandomState(PHILOX) uniform f32", lambda: rs.random_sample(n, dtype=cp.float32)),
        ("RandomState(PHILOX) normal f64", lambda: rs.standard_normal(n, dtype=cp.float64)),
    ]
    try:
        g = cp.random.Generator(cp.random.Philox4x3210(1234))
        rows += [
            ("Generator(Philox4x3210) uniform f32", lambda: g.random(n, dtype=cp.float32)),
            ("Generator(Philox4x3210) normal f64", lambda: g.standard_normal(n, dtype=cp.float64)),
        ]
    except (AttributeError, TypeError) as e:  # older CuPy: no Philox bit generator
        print(f"(cupy.random.Generator(Philox4x3210) not available: {e})")
    print(f"cupy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, n = {n}, median of {a.reps}")
    for name, fn in rows:
        try:
            ms = timed(fn, a.reps)
        except Exception as e:  # noqa: BLE001 - report and go on with the other rows
            print(f"{name:38s} failed: {e}")
            continue
        print(f"{name:38s} {ms:9.3f} ms {n / (ms * 1e6):8.2f} Gnum/s")


if __name__ == "__main__":
    main()
