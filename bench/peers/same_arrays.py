#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Numba against kiln-bench's hand-written C++/OpenMP reference on the SAME NumPy arrays, in one process,
calls interleaved: separates what the code does from where the arrays live. In the peers table Numba runs in
its own process on its own arrays, kiln and the reference in kiln-bench on theirs; on the memory-bound rows
(saxpy, dot, triad) kiln's time equals the reference's there, so this tells whether Numba's lead on them is
its code or its memory.
  .venv-peers/bin/python bench/peers/same_arrays.py [--n 20000000] [--reps 21] [--threads 2]
The reference is compiled here with g++ -O3 -march=native -fopenmp, as bench/CMakeLists.txt compiles it."""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def build_reference(tmp):
    lib = os.path.join(tmp, "libkilnref.so")
    sources = [os.path.join(HERE, "reference_capi.cpp"), os.path.join(BENCH, "reference.cpp"),
               os.path.join(BENCH, "reference_streaming.cpp")]
    subprocess.run(["g++", "-std=c++20", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-I", BENCH,
                    *sources, "-o", lib], check=True)
    return ctypes.CDLL(lib)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000_000)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", str(a.threads))
    import numba
    import numba_kernels as nk  # the peers table's Numba kernels
    numba.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        ref = build_reference(tmp)
        P = ctypes.POINTER(ctypes.c_double)
        ptr = lambda x: x.ctypes.data_as(P)
        ref.kiln_ref_dot.restype = ctypes.c_double
        rng = np.random.default_rng(1)
        x, y, c, out = (rng.uniform(-1, 1, a.n) for _ in range(4))
        n, th = ctypes.c_long(a.n), ctypes.c_int(a.threads)
        rows = {
            "triad": (lambda: nk.triad(x, y, c, out), lambda: ref.kiln_ref_triad(ptr(x), ptr(y), ptr(c), ptr(out), n, th)),
            "saxpy": (lambda: nk.saxpy(0.5, x, out), lambda: ref.kiln_ref_saxpy(ctypes.c_double(0.5), ptr(x), ptr(out), n, th)),
            "dot": (lambda: nk.dot(x, y), lambda: ref.kiln_ref_dot(ptr(x), ptr(y), n, th)),
        }
        print(f"numba {numba.__version__}, threads {a.threads}, n {a.n}, median of {a.reps} interleaved calls each")
        for name, (numba_call, ref_call) in rows.items():
            numba_call(), ref_call()  # compile, fault pages in
            times = {"numba": [], "ref": []}
            for r in range(a.reps):
                order = [("numba", numba_call), ("ref", ref_call)]
                for who, f in (order if r % 2 == 0 else order[::-1]):
                    t0 = time.perf_counter()
                    f()
                    times[who].append(time.perf_counter() - t0)
            nb, rf = statistics.median(times["numba"]), statistics.median(times["ref"])
            print(f"{name:6s} Numba {nb * 1e3:8.2f} ms   C++/OpenMP {rf * 1e3:8.2f} ms   C++/Numba {rf / nb:.3f}")


if __name__ == "__main__":
    main()
