#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The CPU side-by-side table (issue 8): kiln, the hand-written C++/OpenMP reference and Numba on the same
workloads, sizes and machine, in one run. Writes docs/perf/cpu.csv, docs/perf/cpu.png and prints a markdown
table (docs/performance.md quotes it).

  bench/peers/run_cpu.py [--build build] [--n 20000000] [--reps 7] [--filter a,b] [--threads T] [--runs 3]
                         [--python PY] [--out DIR] [--name cpu]

kiln and its reference come from `kiln-bench --json` (same process, interleaved, medians); each row's first
call is measured by `kiln-bench --first-call` in fresh processes, once with an empty kernel cache (compile)
and once with the cache that run wrote (load). Numba's figures come from numba_bench.py in .venv-peers
(tools/peers_setup.sh makes it) or --python (the GPU machine's own Numba: bench/peers/run_cpu_prebuilt.sh). With --runs R every system is measured R times, alternating, and the
median is reported: the machine is shared and noisy.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "peers")


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(f"run_cpu: {' '.join(cmd)} exited {r.returncode}\n{r.stderr[-4000:]}\n")
    return r.stdout


def kiln_rows(bench, a, extra=()):
    cmd = [bench, "--json", "--n", str(a.n), "--reps", str(a.reps), *extra]
    if a.filter:
        cmd += ["--filter", a.filter]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    return {r["name"]: r for r in json_lines(run(cmd))}


def kiln_first_calls(bench, a):
    """name -> (first call with an empty cache, first call in a fresh process with the warm cache), seconds."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="kiln-cache-") as cache:
        env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_CACHE="on")
        cmd = [bench, "--first-call"] + (["--filter", a.filter] if a.filter else [])
        cold = {r["name"]: r["first_call_s"] for r in json_lines(run(cmd, env))}
        warm = {r["name"]: r["first_call_s"] for r in json_lines(run(cmd, env))}
    for name in cold:
        out[name] = (cold[name], warm.get(name))
    return out


def numba_rows(a, latency):
    py = a.python or os.path.join(ROOT, ".venv-peers", "bin", "python")
    if not os.path.exists(py):
        sys.stderr.write(f"run_cpu: no {py} (run tools/peers_setup.sh): Numba column left empty\n")
        return {}
    cmd = [py, os.path.join(HERE, "numba_bench.py"), "--n", str(a.n), "--reps", str(a.reps)]
    if a.filter:
        cmd += ["--filter", a.filter]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    if not latency:
        cmd += ["--no-latency"]
    return {r["name"]: r for r in json_lines(run(cmd))}


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or "?"."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        return "?"


def machine_line(a):
    """The CPU and the Numba the table was measured with."""
    model = cpu_model()
    py = a.python or os.path.join(ROOT, ".venv-peers", "bin", "python")
    numba = run([py, "-c", "import numba; print(numba.__version__)"]).strip() if os.path.exists(py) else "absent"
    return f"{model}, {os.cpu_count()} logical CPUs; Numba {numba or '?'}"


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def scaled(v, factor):
    return None if v is None else v * factor


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=20_000_000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--filter", default="")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "perf"))
    ap.add_argument("--name", default="cpu", help="file names in --out: NAME.csv, NAME.png")
    ap.add_argument("--python", default="", help="the Python with Numba (default .venv-peers/bin/python)")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "kiln-bench")

    kiln_runs, numba_runs = [], []
    for k in range(a.runs):  # alternate the systems so that a noisy minute hurts both alike
        kiln_runs.append(kiln_rows(bench, a))
        numba_runs.append(numba_rows(a, latency=k == 0))  # Numba's compile latencies: once (seconds each)
    first = kiln_first_calls(bench, a)

    names = list(kiln_runs[0].keys())
    # The reference line: the hand-written parallel copy's bandwidth (kiln-bench's copy row), in this run. It
    # counts two streams, but a store to a line not in cache also reads it (write-allocate), so rows that
    # update in place (saxpy) can go past it: it is a yardstick, not a bound.
    ceiling = med([r["copy"]["GBps"] * r["copy"]["kiln_s"] / r["copy"]["ref_s"] for r in kiln_runs if "copy" in r])
    rows = []
    for name in names:
        ks = [r[name] for r in kiln_runs if name in r]
        ns = [r[name] for r in numba_runs if name in r]
        kiln_s, ref_s = med([k["kiln_s"] for k in ks]), med([k["ref_s"] for k in ks])
        numba_s = med([n["numba_s"] for n in ns])
        gbps = med([k["GBps"] for k in ks])
        bytes_per_run = gbps * kiln_s * 1e9 if gbps and kiln_s else 0.0
        rows.append({
            "workload": name,
            "kiln_ms": kiln_s * 1e3,
            "ref_ms": ref_s * 1e3,
            "numba_ms": None if numba_s is None else numba_s * 1e3,
            "kiln_vs_ref": kiln_s / ref_s,
            "kiln_vs_numba": None if numba_s is None else kiln_s / numba_s,
            "kiln_GBps": gbps,
            "ref_GBps": bytes_per_run / ref_s / 1e9 if bytes_per_run else 0.0,
            "numba_GBps": bytes_per_run / numba_s / 1e9 if bytes_per_run and numba_s else None,
            "kiln_compile_ms": med([k["compile_ms"] for k in ks]),
            "kiln_first_call_ms": None if name not in first else first[name][0] * 1e3,
            "kiln_fresh_ms": None if name not in first or first[name][1] is None else first[name][1] * 1e3,
            "numba_first_call_ms": scaled(med([n.get("first_call_s") for n in ns]), 1e3),
            "numba_fresh_ms": scaled(med([n.get("fresh_s") for n in ns]), 1e3),
        })

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})

    threads = kiln_runs[0][names[0]].get("threads") if names else "?"
    print(f"{machine_line(a)}\n")
    print(f"threads {threads}, n {a.n}, medians of {a.runs} runs x {a.reps} reps; copy ceiling "
          f"{fmt(ceiling, '.2f')} GB/s (two streams counted)\n")
    print("| workload | kiln ms | C++/OpenMP ms | Numba ms | kiln/C++ | kiln/Numba | kiln GB/s | kiln compile ms "
          "| Numba first call ms | kiln fresh-process ms | Numba fresh-process ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['workload']} | {r['kiln_ms']:.2f} | {r['ref_ms']:.2f} | {fmt(r['numba_ms'], '.2f')} | "
              f"{r['kiln_vs_ref']:.3f} | {fmt(r['kiln_vs_numba'], '.3f')} | {r['kiln_GBps']:.2f} | "
              f"{fmt(r['kiln_compile_ms'], '.1f')} | {fmt(r['numba_first_call_ms'], '.0f')} | "
              f"{fmt(r['kiln_fresh_ms'], '.2f')} | {fmt(r['numba_fresh_ms'], '.0f')} |")
    plot(rows, ceiling, os.path.join(a.out, a.name + ".png"), threads)


def plot(rows, ceiling, path, threads):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("run_cpu: matplotlib missing (tools/peers_setup.sh installs it): no plot\n")
        return
    shown = [r for r in rows if r["kiln_GBps"]]
    if not shown:
        return
    x = range(len(shown))
    width = 0.27
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(shown)), 4))
    ax.bar([i - width for i in x], [r["kiln_GBps"] for r in shown], width, label="kiln")
    ax.bar(list(x), [r["ref_GBps"] for r in shown], width, label="C++/OpenMP")
    ax.bar([i + width for i in x], [r["numba_GBps"] or 0 for r in shown], width, label="Numba parallel")
    if ceiling:
        ax.axhline(ceiling, color="k", linestyle="--", linewidth=1, label=f"parallel copy {ceiling:.1f} GB/s")
    ax.set_xticks(list(x), [r["workload"] for r in shown], rotation=30, ha="right")
    ax.set_ylabel("GB/s (minimum traffic / time)")
    ax.set_title(f"CPU, {threads} threads, f64")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
