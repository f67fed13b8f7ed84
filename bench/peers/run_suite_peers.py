#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln-suite side by side with Numba (issue 15): per kernel of bench/suite/, kiln's and the hand-written
C++/OpenMP reference's times (kiln-suite --csv: one process, interleaved, medians) and Numba's
(numba_suite.py: the same kernels, sizes and input distributions, medians, results checked against NumPy), at
the same thread count. Writes OUT/suite_peers.md (the markdown table, also printed) and OUT/suite_peers.csv,
and keeps each system's raw output (OUT/kiln_runR.csv, OUT/numba_runR.jsonl).

  bench/peers/run_suite_peers.py --build BUILD [--threads T] [--reps R] [--runs N] [--filter a,b] [--aa]
                                 [--budget-s S] [--python PY] [--numba-env NAME=VALUE ...] [--out DIR]

With --runs N both systems are measured N times, alternating, and each time is the median over the runs.
Numba's first call (type inference + compile + one run at the timed size) is that of the first run, whose
NUMBA_CACHE_DIR is empty; later runs load from that cache. --python is the Python with Numba (default
.venv-peers/bin/python from tools/peers_setup.sh if present, else this Python). --numba-env sets a variable in
Numba's process only (the table's header names it): by default Numba runs as a user gets it, whose GNU
OpenMP workers spin after each parallel loop while the BLAS under np.dot starts its own threads;
OMP_WAIT_POLICY=PASSIVE is the knob that removes that contention. --aa adds kiln-suite's A/A band (the
reference timed against itself in the same repetitions; the range over the runs) as a column, and the largest
CPU share other processes took during the row (kiln-suite's "others"): the noise a kiln/C++ ratio has to be read
against (issue 15's targets ask for the band with every table). --budget-s S (a device call has a time limit)
starts no further run once the time the last one took no longer fits in S seconds from the start; the table then
says how many runs it has.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from run_cpu import cpu_model  # the same machine line as kiln-bench's table (this directory is on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "peers")


def run(cmd, env=None, what=""):
    sys.stderr.write(f"run_suite_peers: {what or ' '.join(cmd)}\n")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if r.returncode not in (0, 1):  # 1: some row mismatched, which the table shows
        sys.exit(f"run_suite_peers: {' '.join(cmd)} exited {r.returncode}")
    return r.stdout


def kiln_run(a, path):
    cmd = [os.path.join(a.build, "bench", "kiln-suite"), "--threads", str(a.threads), "--reps", str(a.reps),
           "--csv", path]
    if a.filter:
        cmd += ["--filter", a.filter]
    if getattr(a, "aa", False):  # the reference against itself too (run_jit_peers.py --aa)
        cmd += ["--aa"]
    run(cmd, what="kiln-suite " + " ".join(cmd[1:]))
    with open(path) as f:
        return {r["kernel"]: r for r in csv.DictReader(f)}


def numba_run(a, py, cache, path):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    env.update(kv.split("=", 1) for kv in a.numba_env)
    cmd = [py, os.path.join(HERE, "numba_suite.py"), "--threads", str(a.threads), "--reps", str(a.reps)]
    if a.filter:
        cmd += ["--filter", a.filter]
    out = run(cmd, env, what="numba_suite.py " + " ".join(cmd[2:]))
    with open(path, "w") as f:
        f.write(out)
    rows = {r["kernel"]: r for r in map(json.loads, (l for l in out.splitlines() if l.startswith("{")))}
    if not rows:  # e.g. no Numba in that Python: its traceback is above
        sys.exit(f"run_suite_peers: numba_suite.py under {py} gave no rows (--python: a Python with Numba)")
    return rows


def med(values):
    values = [float(v) for v in values if v not in (None, "")]
    return statistics.median(values) if values else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def machine_line(py):
    model = cpu_model()
    versions = subprocess.run([py, "-c", "import numba, numpy; print(numba.__version__, numpy.__version__)"],
                              stdout=subprocess.PIPE, text=True).stdout.split()
    numba, numpy = versions if len(versions) == 2 else ("?", "?")
    return f"{model}, {os.cpu_count()} logical CPUs; Numba {numba}, NumPy {numpy}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the build directory holding bench/kiln-suite")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--filter", default="", help="comma-separated substrings of kernel names (both systems)")
    ap.add_argument("--aa", action="store_true", help="kiln-suite --aa: the A/A band of each row as a column")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no run that would not end within this many seconds of the start (0: no limit)")
    ap.add_argument("--python", default="", help="the Python with Numba")
    ap.add_argument("--numba-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for Numba's process only (repeatable)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build-suite-peers"))
    a = ap.parse_args()
    for kv in a.numba_env:
        if "=" not in kv:
            sys.exit(f"run_suite_peers: --numba-env {kv}: expected NAME=VALUE")
    venv = os.path.join(ROOT, ".venv-peers", "bin", "python")
    py = a.python or (venv if os.path.exists(venv) else sys.executable)
    if not os.access(os.path.join(a.build, "bench", "kiln-suite"), os.X_OK):
        sys.exit(f"run_suite_peers: no {a.build}/bench/kiln-suite (cmake --build {a.build} --target kiln-suite)")
    os.makedirs(a.out, exist_ok=True)

    kiln_runs, numba_runs = [], []
    started, last_s = time.monotonic(), 0.0
    with tempfile.TemporaryDirectory(prefix="numba-suite-cache-") as cache:
        for r in range(1, a.runs + 1):  # alternate the systems so that a noisy minute hurts both alike
            if a.budget_s and r > 1 and time.monotonic() - started + 1.05 * last_s > a.budget_s:
                sys.stderr.write(f"run_suite_peers: run {r - 1} took {last_s:.0f} s; run {r} would end past "
                                 f"--budget-s {a.budget_s:.0f}: stopping at {r - 1} run(s)\n")
                break
            run_start = time.monotonic()
            kiln_runs.append(kiln_run(a, os.path.join(a.out, f"kiln_run{r}.csv")))
            numba_runs.append(numba_run(a, py, cache, os.path.join(a.out, f"numba_run{r}.jsonl")))
            # The first run holds Numba's compiles (an empty cache); later ones load it, so they take less.
            last_s = time.monotonic() - run_start

    rows = []
    for name in kiln_runs[0]:
        ks = [k[name] for k in kiln_runs if name in k]
        ns = [n[name] for n in numba_runs if name in n]
        kiln_ms, ref_ms = med(k["kiln_ms"] for k in ks), med(k["ref_ms"] for k in ks)
        numba_ms = med(n.get("numba_ms") for n in ns)
        # A row's check: every run's kiln-vs-reference and Numba-vs-NumPy verdicts, the first failure shown.
        bad = [f"kiln: {k['status']}" for k in ks if k["status"] != "ok"]
        bad += [f"numba: {n['status']}" for n in ns if n["status"] != "ok"]
        if not ns:
            bad.append("numba: no row (see numba_run*.jsonl)")
        aa = [float(k["aa_ratio"]) for k in ks if k.get("aa_ratio")]
        others = [float(k["others_cpu"]) for k in ks if k.get("others_cpu")]
        rows.append({
            "kernel": name,
            "origin": ks[0]["origin"],
            "shape": ns[0]["shape"] if ns else "",
            "kiln_ms": kiln_ms,
            "ref_ms": ref_ms,
            "numba_ms": numba_ms,
            "kiln_vs_ref": kiln_ms / ref_ms if kiln_ms and ref_ms else None,
            "kiln_vs_numba": kiln_ms / numba_ms if kiln_ms and numba_ms else None,
            "numba_first_call_ms": ns[0].get("first_call_ms") if ns else None,
            "aa_min": min(aa) if aa else None,
            "aa_max": max(aa) if aa else None,
            "others_max": max(others) if others else None,
            "threads": a.threads,
            "runs": len(kiln_runs),
            "reps": a.reps,
            "check": bad[0] if bad else "ok",
        })

    with open(os.path.join(a.out, "suite_peers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})

    layer = next((n[k].get("threading_layer") for n in numba_runs for k in n if n[k].get("threading_layer")), "?")
    lines = [machine_line(py), "",
             f"threads {a.threads}, medians of {len(kiln_runs)} run(s)"
             f"{f' (of {a.runs} asked; --budget-s {a.budget_s:.0f})' if len(kiln_runs) < a.runs else ''}"
             f" x {a.reps} reps; Numba threading layer {layer}"
             f"{', Numba env ' + ' '.join(a.numba_env) if a.numba_env else ''}; Numba first call: compile + one "
             f"run at the timed size, empty cache", "",
             "| kernel | kiln ms | C++/OpenMP ms | Numba ms | kiln/C++ | "
             + ("A/A range | others max | " if a.aa else "") + "kiln/Numba | Numba first call ms | check |",
             "|---|---:|---:|---:|---:|" + ("---:|---:|" if a.aa else "") + "---:|---:|---|"]
    for r in rows:
        band = ""
        if a.aa:
            band = (f"{r['aa_min']:.2f}–{r['aa_max']:.2f} | " if r["aa_min"] is not None else "- | ")
            band += f"{100 * r['others_max']:.0f} % | " if r["others_max"] is not None else "- | "
        lines.append(f"| {r['kernel']} | {fmt(r['kiln_ms'], '.2f')} | {fmt(r['ref_ms'], '.2f')} | "
                     f"{fmt(r['numba_ms'], '.2f')} | {fmt(r['kiln_vs_ref'], '.3f')} | {band}"
                     f"{fmt(r['kiln_vs_numba'], '.3f')} | {fmt(r['numba_first_call_ms'], '.0f')} | "
                     f"{r['check'].replace('|', '/')} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "suite_peers.md"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
