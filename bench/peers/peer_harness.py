#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs one JIT peer's kernels (peer_halide.py, peer_drjit.py, peer_taichi.py, peer_devito.py) on the
workloads of peer_workloads.py and prints one JSON object a line:
{"peer", "variant", "kernel", "origin", "shape", "ms" (median of --reps calls after two warm-up calls),
"first_call_ms" (the first call in this process: the peer's compile, or its cache load, plus one run at the timed
size), "status" ("ok", "mismatch: ...", "error: ..." or "n/a: why the peer cannot express it sensibly"),
"threads", "target", "dtype", "reps"}; the first line is {"peer", "version", "settings"}.

  peer_harness.py --peer NAME [--target cpu|cuda] [--threads T] [--reps R] [--sets bench,suite] [--n N]
                  [--side S] [--filter a,b] [--smoke] [--dtype f64|f32] [--cache DIR] [--first-only]

--cache is the directory the peer keeps its compiled kernels in (its own mechanism: Taichi's offline cache,
Dr.Jit's kernel cache, Devito's JIT directory; Halide's JIT has none); run_jit_peers.py passes an empty one
first, then the same one to a second process with --first-only, whose first calls are the fresh-process figure.

A peer module is imported after this script has put the run's settings into the environment (PEER_TARGET,
PEER_THREADS, PEER_CACHE: `settings()`), so that it can configure its system before importing it. It defines
VARIANTS (the table columns it makes: Halide's hand schedule and autoscheduler), `version()`, `describe()` (its
settings for the table header), KERNELS (name -> builder(case, work, variant) -> Kernel) and NA (name, or (name, variant) -> why);
DISK_CACHE = False where its JIT keeps nothing on disk (run_jit_peers.py then makes no fresh-process pass).
A builder only moves data; compilation happens in the first `step()`, so that the first call counts it.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class Settings:
    def __init__(self):
        self.target = os.environ.get("PEER_TARGET", "cpu")
        self.threads = int(os.environ.get("PEER_THREADS", "0")) or os.cpu_count()
        self.cache = os.environ.get("PEER_CACHE", "")
        self.dtype = os.environ.get("PEER_DTYPE", "f64")


def settings():
    return Settings()


class Kernel:
    """One workload in a peer: `step()` runs one call to completion (synchronized with the device), `fetch()`
    returns the outputs as NumPy arrays in the order of the case's `outputs`; `interior` > 0 compares only
    the outputs' interior (cells that far from every edge): a peer that writes no border of a clamped stencil."""

    def __init__(self, step, fetch, interior=0):
        self.step, self.fetch, self.interior = step, fetch, interior


def in_place(case, work, call):
    """A Kernel for a peer that computes on the NumPy arrays themselves (zero-copy): `call(*work)` returns
    what the case's `outputs` reads from its return value."""
    last = {}

    def step():
        last["ret"] = call(*work)

    return Kernel(step, lambda: tuple(case.outputs(work, last.get("ret"))))


def interior(arrays, width):
    import numpy as np
    return tuple(np.asarray(a)[tuple(slice(width, -width) for _ in np.shape(a))] for a in arrays)


def run_case(case, builder, variant, reps, first_only):
    from numba_suite import compare, copied
    work = copied(case.args)
    k = builder(case, work, variant)
    t0 = time.perf_counter()
    k.step()
    first = time.perf_counter() - t0
    row = {"first_call_ms": first * 1e3}
    if first_only:
        return row
    got, want = k.fetch(), case.reference(case.args)
    if k.interior:
        got, want = interior(got, k.interior), interior(want, k.interior)
    status = compare(got, want, case.tols, who=variant)
    k.step()  # a second warm-up call, as kiln-suite and numba_suite make
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        k.step()
        times.append(time.perf_counter() - t0)
    row.update(ms=statistics.median(times) * 1e3, status="ok" if not status else "mismatch: " + status)
    if k.interior:
        row["status"] += f" (interior, {k.interior} cell border not written)"
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", required=True, choices=["halide", "drjit", "taichi", "devito"])
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sets", default="bench,suite")
    ap.add_argument("--n", type=int, default=20_000_000, help="kiln-bench's --n (the bench rows' sizes)")
    ap.add_argument("--side", type=int, default=0, help="the 2-D stencils' side (default: from --n as kiln-bench)")
    ap.add_argument("--filter", default="", help="comma-separated kernel names (exact) or substrings")
    ap.add_argument("--smoke", action="store_true", help="kiln-suite's tiny sizes")
    ap.add_argument("--dtype", default="f64", choices=["f64", "f32"])
    ap.add_argument("--cache", default="", help="the peer's kernel cache directory")
    ap.add_argument("--first-only", action="store_true", help="only each kernel's first call (fresh process)")
    ap.add_argument("--row-timeout-s", type=float, default=0, help="stop a workload's process after this many "
                    "seconds: its row is an error (0: no limit)")
    ap.add_argument("--only", default="", help="(internal) the one workload this process runs")
    ap.add_argument("--variant", default="", help="only this variant (Halide: halide, the hand schedule, or "
                    "halide-auto); internally, the one variant a process runs")
    ap.add_argument("--header-only", action="store_true", help="(internal) print the peer's header line only")
    a = ap.parse_args()
    if not a.only and not a.header_only:
        return isolate(a)
    os.environ.update(PEER_TARGET=a.target, PEER_THREADS=str(a.threads or os.cpu_count()), PEER_CACHE=a.cache,
                      PEER_DTYPE=a.dtype)
    if a.threads:
        # The BLAS under NumPy's references and any OpenMP runtime a peer loads: the run's thread count.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(a.threads)
    import numpy as np
    import peer_workloads
    peer = importlib.import_module(f"peer_{a.peer}")
    # The rows that need no process of their own: (name, variant) -> why the peer has no kernel for it.
    na = {f"{k[0]}|{k[1]}" if isinstance(k, tuple) else k: why for k, why in peer.NA.items()}
    print(json.dumps({"peer": a.peer, "version": peer.version(), "settings": peer.describe(),
                      "variants": peer.VARIANTS, "kernels": sorted(peer.KERNELS), "na": na,
                      "disk_cache": getattr(peer, "DISK_CACHE", True)}), flush=True)
    if a.header_only:
        return 0

    dtype = np.float32 if a.dtype == "f32" else np.float64
    makers = peer_workloads.workloads(a.sets.split(","), a.n, a.smoke, dtype, a.side or None)
    status = 0
    for name, make in makers.items():
        if name != a.only:
            continue
        case = None
        for variant in [a.variant] if a.variant else peer.VARIANTS:
            row = {"peer": a.peer, "variant": variant, "kernel": name, "target": a.target, "dtype": a.dtype,
                   "threads": int(os.environ["PEER_THREADS"]), "reps": a.reps}
            why = peer.NA.get((name, variant)) or peer.NA.get(name)
            if why or name not in peer.KERNELS:
                row["status"] = "n/a: " + (why or "not written")
            else:
                case = case or make()
                row.update(origin=case.origin, shape=case.shape)
                try:
                    row.update(run_case(case, peer.KERNELS[name], variant, a.reps, a.first_only))
                except Exception as e:  # a kernel the peer cannot compile or run is a row, not the end
                    row["status"] = f"error: {type(e).__name__}: {str(e)[:300]}"
                    status = 1
            if row.get("status", "ok").startswith("mismatch"):
                status = 1
            print(json.dumps(row), flush=True)
        del case
    return status


def isolate(a):
    """Runs each workload and variant in its own process (this script with --only and --variant): every first
    call then includes the peer's one-time set-up (a JIT runtime, a thread pool), a peer whose JIT code
    crashes costs that row, not the table, and no workload's compiled code or arrays outlive it. Prints the
    peer's header line and every row; a process that died without reporting gets an "error" row."""
    import subprocess
    import numpy as np
    import peer_workloads
    names = list(peer_workloads.workloads(a.sets.split(","), a.n, a.smoke, np.float64, a.side or None))
    wanted = [w for w in a.filter.split(",") if w]
    names = [n for n in names if not wanted or any(w == n or w in n for w in wanted)]
    me = [sys.executable, os.path.abspath(__file__), *sys.argv[1:]]
    r = subprocess.run(me + ["--header-only"], stdout=subprocess.PIPE, text=True)
    header = next((json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")), None)
    if header is None:
        sys.stderr.write(f"peer_harness: {a.peer} did not start (exit status {r.returncode})\n")
        return 1
    if a.variant:
        if a.variant not in header["variants"]:
            sys.stderr.write(f"peer_harness: {a.peer} has no variant {a.variant} ({', '.join(header['variants'])})\n")
            return 2
        header["variants"] = [a.variant]
    print(json.dumps(header), flush=True)
    status = 0
    for name in names:
        for variant in header["variants"]:
            why = header["na"].get(f"{name}|{variant}") or header["na"].get(name)
            if why or name not in header["kernels"]:
                print(json.dumps({"peer": a.peer, "variant": variant, "kernel": name, "target": a.target,
                                  "status": "n/a: " + (why or "not written")}), flush=True)
                continue
            try:
                r = subprocess.run(me + ["--only", name, "--variant", variant], stdout=subprocess.PIPE, text=True,
                                   timeout=a.row_timeout_s or None)
            except subprocess.TimeoutExpired:
                print(json.dumps({"peer": a.peer, "variant": variant, "kernel": name, "target": a.target,
                                  "status": f"error: stopped after --row-timeout-s {a.row_timeout_s:.0f} s"}), flush=True)
                status = 1
                continue
            rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{") and '"kernel"' in l]
            for row in rows:
                print(json.dumps(row), flush=True)
            if not rows:
                why = f"signal {-r.returncode}" if r.returncode < 0 else f"exit status {r.returncode}"
                print(json.dumps({"peer": a.peer, "variant": variant, "kernel": name, "target": a.target,
                                  "status": f"error: the process died ({why}) before reporting"}), flush=True)
            status = status or int(r.returncode != 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
