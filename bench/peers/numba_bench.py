#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Times the Numba versions of the kiln-bench workloads (numba_kernels.py) and prints one JSON object a line:
{"name", "numba_s" (median of --reps runs after warm-up), "first_call_s" (the first call in a process whose
Numba cache is empty: type inference + LLVM compile + run), "fresh_s" (the first call in a fresh process with
a warm Numba cache, minus one warm run: the load latency)}.

Sizes follow bench/rows_*.cpp with n = --n (default 2e7, kiln-bench's default). Data is random with the same
distributions as the kiln rows (not the same bits: the driver compares times, kiln-bench checks results).

  numba_bench.py [--n N] [--reps R] [--filter a,b] [--threads T] [--one NAME --phase first|fresh]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def workloads(n):
    """name -> (function name, a maker of the argument tuple, copy_args: whether calls mutate inputs)."""
    rng = np.random.default_rng(1)
    # As kiln-bench's rows scale with --n (bench/rows_stencils.cpp: side(base, dims)).
    scale = n / 2e7
    side = max(5, round(4096 * scale ** 0.5))
    vol = max(5, round(256 * scale ** (1 / 3)))
    rows, cols = 4000, 5000
    lr_n = max(1, n // 100)

    def saxpy():
        return (0.5, rng.random(n), rng.random(n))

    def triad():
        return (rng.random(n), rng.random(n), rng.random(n), np.zeros(n))

    def dot():
        return (rng.random(n), rng.random(n))

    def pi():
        return (n,)

    def softmax():
        return (rng.uniform(-20, 20, n),)

    def logistic_regression():
        X = rng.normal(0, 1, (lr_n, 10)) * 1e-3
        Y = rng.uniform(-1, 1, lr_n)
        return (X, Y, rng.uniform(-1, 1, 10), 10)

    def black_scholes():
        m = n // 2
        return (rng.uniform(5, 30, m), rng.uniform(1, 100, m), rng.uniform(0.25, 10, m), 0.02, 0.30)

    def normalize():
        return (rng.normal(3, 2, (rows, cols)),)

    def histogram():
        return (rng.random(n // 2), np.zeros(256, dtype=np.int64))

    def smooth1d():
        return (rng.random(n), np.zeros(n))

    def jacobi2d():
        return (rng.random((side, side)), np.zeros((side, side)))

    def heat3d():
        return (rng.random((vol, vol, vol)), np.zeros((vol, vol, vol)))

    def conv2d():
        return (rng.random((side, side)), rng.random((5, 5)), np.zeros((side, side)))

    return {
        "saxpy": saxpy, "triad": triad, "dot": dot, "pi": pi, "softmax": softmax, "logistic_regression": logistic_regression,
        "black_scholes": black_scholes, "normalize": normalize, "histogram": histogram, "smooth1d": smooth1d,
        "jacobi2d": jacobi2d, "heat3d": heat3d, "conv2d": conv2d,
    }


def tiny_args(name):
    """Small arguments of the same types: a first call on them measures compile latency, not the work."""
    small = workloads(64)
    args = small[name]()
    if name == "jacobi2d":
        args = (np.random.default_rng(2).random((16, 16)), np.zeros((16, 16)))
    if name == "conv2d":
        args = (np.random.default_rng(2).random((16, 16)), args[1], np.zeros((16, 16)))
    if name == "heat3d":
        args = (np.random.default_rng(2).random((8, 8, 8)), np.zeros((8, 8, 8)))
    return args


def one_call(name, phase):
    """Runs in a child process: the latency of the first call (compile or cache load) of `name`."""
    t0 = time.perf_counter()
    import numba_kernels  # noqa: E402  (import time is part of neither figure: it is the same for all rows)
    t1 = time.perf_counter()
    fn = getattr(numba_kernels, name)
    args = tiny_args(name)
    t2 = time.perf_counter()
    fn(*args)
    t3 = time.perf_counter()
    fn(*args)  # warm: what the call costs without compiling or loading
    t4 = time.perf_counter()
    print(json.dumps({"name": name, "phase": phase, "import_s": t1 - t0, "first_s": t3 - t2, "warm_s": t4 - t3}))


def child(name, phase, cache_dir, threads):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=HERE)
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name, "--phase", phase],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000_000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--filter", default="")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--one", default="")
    ap.add_argument("--phase", default="first")
    ap.add_argument("--no-latency", action="store_true", help="skip the first-call and fresh-process figures")
    a = ap.parse_args()
    if a.one:
        sys.path.insert(0, HERE)
        return one_call(a.one, a.phase)

    if a.threads:
        os.environ["NUMBA_NUM_THREADS"] = str(a.threads)
    sys.path.insert(0, HERE)
    import numba_kernels  # noqa: E402

    wanted = [w for w in a.filter.split(",") if w]
    for name, make in workloads(a.n).items():
        if wanted and name not in wanted:
            continue
        # Compile latency: a fresh process with an empty cache, then a fresh process loading what it wrote.
        first = fresh = None
        if not a.no_latency:
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                first = child(name, "first", cache, a.threads)
                fresh = child(name, "fresh", cache, a.threads)
        fn = getattr(numba_kernels, name)
        args = make()
        mutates = name in ("saxpy", "logistic_regression", "histogram")
        fn(*(tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args) if mutates else args))  # compile
        times = []
        for _ in range(a.reps):
            call_args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args) if mutates else args
            t0 = time.perf_counter()
            fn(*call_args)
            times.append(time.perf_counter() - t0)
        row = {"name": name, "numba_s": statistics.median(times)}
        if first and fresh:
            row.update(first_call_s=first["first_s"] - first["warm_s"], fresh_s=fresh["first_s"] - fresh["warm_s"])
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
