#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln next to the JIT-compiled kernel languages (issue 20): per workload of kiln-bench and of the public
kernel suite, kiln's and the hand-written C++/OpenMP reference's times (kiln-bench --json, kiln-suite --csv:
one process, interleaved) and each peer's (Numba: numba_bench.py / numba_suite.py; Halide, Dr.Jit, Taichi,
Devito: peer_harness.py), all at one thread count, as ratios to the hand reference. Writes OUT/NAME.csv (one
row per workload and system), OUT/NAME.md (the tables, also printed) and OUT/NAME.png, and keeps each
system's raw output in OUT/raw/.

  bench/peers/run_jit_peers.py --build BUILD [--suite-build B] [--threads T] [--reps R] [--runs N] [--sets bench,suite]
      [--peers numba,halide,drjit,taichi,devito] [--n N] [--filter a,b] [--python PY] [--out DIR] [--name N]
      [--aa] [--budget-s S] [--row-timeout-s S]

With --runs N every system is measured N times, alternating, and each time is the median over the runs (--stat
min: the fastest run's, for a machine that other processes load at times). The
latency columns: each peer's first call in a process whose kernel cache is empty (run 1) and in a fresh
process with the cache that run wrote (peer_harness.py --first-only), each minus one steady call, so that
what remains is compile (or cache load) and set-up, not the work; Numba's as numba_bench.py / numba_suite.py
measure them; kiln's from kiln-bench --first-call (the bench rows; kiln-suite has no first-call mode). A peer
whose JIT keeps nothing on disk (Halide) gets no fresh-process pass: its fresh process would compile again, which
its first call already shows.

--aa adds the A/A band of the suite rows: kiln-suite --aa times the hand reference against itself in the same
repetitions, and the table shows the min-max of that ratio over the runs, the noise a ratio must clear.
--budget-s (a device call has a time limit) starts no further run once the time the last run took no longer fits in
what is left, and no fresh-process pass of a peer that its run 1 says would not fit: the tables then cover what
was measured and say so. The fresh-process passes come after the runs (the cache run 1 wrote is the same then).
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

from peer_workloads import workloads
from run_cpu import cpu_model, kiln_first_calls, kiln_rows
from run_suite_peers import kiln_run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "peers")
JIT_PEERS = ["halide", "drjit", "taichi", "devito"]
LABELS = {"kiln": "kiln", "numba": "Numba", "halide": "Halide (hand)", "halide-auto": "Halide (Adams2019)",
          "drjit": "Dr.Jit", "taichi": "Taichi", "devito": "Devito"}


def log(msg):
    sys.stderr.write(f"run_jit_peers: {msg}\n")


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def capture(cmd, env=None, path=None):
    """The command's standard output, kept in `path`; with --from-raw, what `path` kept from an earlier run."""
    if FROM_RAW:
        with open(path) as f:
            return f.read()
    log(" ".join(os.path.basename(c) if i < 2 else c for i, c in enumerate(cmd)))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if path:
        with open(path, "w") as f:
            f.write(r.stdout)
    return r.stdout


FROM_RAW = False


def kept(path, produce):
    """produce()'s JSON-able result, kept in `path`; with --from-raw read back from there (nothing: {})."""
    if FROM_RAW and not os.path.exists(path):
        return {}
    if not FROM_RAW:
        with open(path, "w") as f:
            json.dump(produce(), f)
    with open(path) as f:
        return json.load(f)


def peer_run(a, py, peer, cache, path, first_only=False):
    """peer_harness.py's rows for `peer`: a peer's name, or name:variant for one of its variants (halide:halide)."""
    name, _, variant = peer.partition(":")
    cmd = [py, os.path.join(HERE, "peer_harness.py"), "--peer", name, "--threads", str(a.threads), "--reps",
           str(a.reps), "--sets", a.sets, "--n", str(a.n), "--cache", cache] + (["--variant", variant] if variant else [])
    if a.row_timeout_s:
        cmd += ["--row-timeout-s", str(a.row_timeout_s)]
    if a.filter:
        cmd += ["--filter", a.filter]
    if first_only:
        cmd += ["--first-only"]
    return json_lines(capture(cmd, path=path))


def numba_runs(a, py, cache, raw, r):
    """workload -> {"ms", "first_ms", "fresh_ms", "status"} from numba_bench.py (bench) and numba_suite.py."""
    out = {}
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    if "bench" in a.sets:
        cmd = [py, os.path.join(HERE, "numba_bench.py"), "--n", str(a.n), "--reps", str(a.reps), "--threads",
               str(a.threads)] + ([] if r == 1 else ["--no-latency"]) + (["--filter", a.filter] if a.filter else [])
        for row in json_lines(capture(cmd, env, os.path.join(raw, f"numba_bench_run{r}.jsonl"))):
            out[row["name"]] = {"ms": row["numba_s"] * 1e3, "status": "ok",
                                "first_ms": ms(row.get("first_call_s")), "fresh_ms": ms(row.get("fresh_s"))}
    if "suite" in a.sets:
        cmd = [py, os.path.join(HERE, "numba_suite.py"), "--threads", str(a.threads), "--reps", str(a.reps)]
        cmd += ["--filter", a.filter] if a.filter else []
        for row in json_lines(capture(cmd, env, os.path.join(raw, f"numba_suite_run{r}.jsonl"))):
            first = row.get("first_call_ms")
            steady = row.get("numba_ms")
            out[row["kernel"]] = {"ms": steady, "status": row["status"],
                                  "first_ms": first - steady if first and steady else None, "fresh_ms": None}
    return out


def ms(seconds):
    return None if seconds is None else seconds * 1e3


STAT = "median"


def across_runs(values):
    """One figure from the runs' figures: their median, or with --stat min the least disturbed run's (on a
    shared machine other processes only ever add time)."""
    values = [float(v) for v in values if v not in (None, "")]
    if not values:
        return None
    return min(values) if STAT == "min" else statistics.median(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the build directory holding bench/kiln-bench and kiln-suite")
    ap.add_argument("--suite-build", default="", help="where bench/kiln-suite is, if not in --build (the GPU "
                    "machine: bench/suite/run_prebuilt.sh and bench/peers/run_cpu_prebuilt.sh build them apart)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--sets", default="bench,suite")
    ap.add_argument("--peers", default="numba," + ",".join(JIT_PEERS), help="the systems besides kiln; a JIT peer "
                    "as NAME or NAME:VARIANT for one of its columns (halide:halide, Halide's hand schedule only)")
    ap.add_argument("--n", type=int, default=20_000_000, help="kiln-bench's --n")
    ap.add_argument("--filter", default="", help="comma-separated workload names (every system)")
    ap.add_argument("--python", default="", help="the Python with the peers (default .venv-peers/bin/python)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build-jit-peers"))
    ap.add_argument("--name", default="jit_peers")
    ap.add_argument("--stat", default="median", choices=["median", "min"], help="how the runs combine")
    ap.add_argument("--aa", action="store_true", help="the suite rows' A/A band (kiln-suite --aa)")
    ap.add_argument("--row-timeout-s", type=float, default=0, help="a peer's process for one workload that runs "
                    "longer is stopped and its row is an error (0: no limit)")
    ap.add_argument("--budget-s", type=float, default=0, help="start no run that would not end within this many "
                    "seconds of the start, judged by the last run's time (0: no limit)")
    ap.add_argument("--from-raw", action="store_true", help="measure nothing: the tables from OUT/raw/ of an "
                    "earlier run (its first --runs runs)")
    a = ap.parse_args()
    global FROM_RAW, STAT
    FROM_RAW, STAT = a.from_raw, a.stat
    peers = [p for p in a.peers.split(",") if p]
    for p in peers:
        if p.partition(":")[0] not in ["numba"] + JIT_PEERS:
            sys.exit(f"run_jit_peers: --peers {p}: one of numba, {', '.join(JIT_PEERS)} (a JIT peer as NAME:VARIANT)")
    venv = os.path.join(ROOT, ".venv-peers", "bin", "python")
    py = a.python or (venv if os.path.exists(venv) else sys.executable)
    raw = os.path.join(a.out, "raw")
    os.makedirs(raw, exist_ok=True)
    bench = os.path.join(a.build, "bench", "kiln-bench")
    # kiln-bench's rows that the peers have (its sorts, scans, atomics, random numbers and element types have none):
    # only these run, in the table and in the first-call pass.
    bench_args = argparse.Namespace(**{**vars(a), "filter": a.filter or ",".join(workloads(["bench"], 1000, True))})
    # run_cpu's and run_suite_peers' helpers read these names from their own argument objects.
    a.numba_env = []

    kiln, numba, jit, fresh, headers = [], [], {p: [] for p in peers if p != "numba"}, {}, {}
    # Each peer's kernel cache: empty for run 1, then what run 1 wrote; removed at the end.
    cache_root = tempfile.TemporaryDirectory(prefix="jit-peers-caches-")
    caches = {p: os.path.join(cache_root.name, p.replace(":", "-")) for p in peers}
    for d in caches.values():
        os.makedirs(d)
    started, runs_made, peer_s = time.monotonic(), 0, {}

    def fits(seconds):
        """Whether `seconds` more still end within --budget-s (always, without one, or when reading raw files)."""
        return FROM_RAW or not a.budget_s or seconds * 1.05 <= a.budget_s - (time.monotonic() - started)
    for r in range(1, a.runs + 1):  # alternate the systems so that a noisy minute hurts all alike
        kiln_raw = os.path.join(raw, f"kiln_bench_run{r}.json" if "bench" in a.sets else f"kiln_suite_run{r}.csv")
        if FROM_RAW and r > 1 and not os.path.exists(kiln_raw):  # the measuring run stopped earlier (--budget-s)
            break
        run_start = time.monotonic()
        rows = {}
        if "bench" in a.sets:
            for name, k in kept(os.path.join(raw, f"kiln_bench_run{r}.json"), lambda: kiln_rows(bench, bench_args)).items():
                if name != "copy":  # the bandwidth yardstick: no peer code to compare
                    rows[name] = {"set": "kiln-bench", "kiln_ms": k["kiln_s"] * 1e3, "ref_ms": k["ref_s"] * 1e3,
                                  "status": "ok"}
        if "suite" in a.sets:
            suite_args = argparse.Namespace(**{**vars(a), "build": a.suite_build or a.build})
            path = os.path.join(raw, f"kiln_suite_run{r}.csv")
            if FROM_RAW:
                with open(path) as f:
                    suite = {k["kernel"]: k for k in csv.DictReader(f)}
            else:
                suite = kiln_run(suite_args, path)
            for name, k in suite.items():
                rows[name] = {"set": "suite", "kiln_ms": float(k["kiln_ms"]), "ref_ms": float(k["ref_ms"]),
                              "status": k["status"]}
                if k.get("aa_ratio"):
                    rows[name]["aa"] = float(k["aa_ratio"])
        kiln.append(rows)
        if "numba" in peers:
            numba.append(numba_runs(a, py, caches["numba"], raw, r))
        for p in jit:
            t0 = time.monotonic()
            out = peer_run(a, py, p, caches[p], os.path.join(raw, f"{p.replace(':', '-')}_run{r}.jsonl"))
            peer_s.setdefault(p, time.monotonic() - t0)
            headers[p] = next((x for x in out if "version" in x), {})
            jit[p].append({(x["variant"], x["kernel"]): x for x in out if "kernel" in x})
        runs_made = r
        if r < a.runs and not fits(time.monotonic() - run_start):
            log(f"run {r} took {time.monotonic() - run_start:.0f} s, which the {a.budget_s:.0f} s of --budget-s "
                f"no longer hold: no run {r + 1}")
            break
    no_fresh = []
    for p in jit:  # a fresh process with the cache that run 1 wrote
        if not headers[p].get("disk_cache", True):
            continue
        path = os.path.join(raw, f"{p.replace(':', '-')}_fresh.jsonl")
        if not fits(peer_s.get(p, 0)) or (FROM_RAW and not os.path.exists(path)):  # its run 1 took longer than what is left
            no_fresh.append(p)
            log(f"{p}: no fresh-process pass (its run 1 took {peer_s.get(p, 0):.0f} s; --budget-s)")
            continue
        out = peer_run(a, py, p, caches[p], path, first_only=True)
        fresh.update({(x["variant"], x["kernel"]): x.get("first_call_ms") for x in out if "kernel" in x})

    systems = ["kiln"] + (["numba"] if "numba" in peers else [])
    for p in jit:
        systems += headers[p].get("variants", [p])
    names = list(kiln[0])
    first_kiln = kept(os.path.join(raw, "kiln_first.json"),
                      lambda: kiln_first_calls(bench, bench_args) if "bench" in a.sets else {})
    cache_root.cleanup()
    table = []
    for name in names:
        ks = [k[name] for k in kiln if name in k]
        ref = across_runs(k["ref_ms"] for k in ks)
        aa = [k["aa"] for k in ks if "aa" in k]
        entry = {"workload": name, "set": ks[0]["set"], "ref_ms": ref, "systems": {},
                 "aa": (min(aa), max(aa)) if aa else None}
        kfirst = first_kiln.get(name, (None, None))
        entry["systems"]["kiln"] = {"ms": across_runs(k["kiln_ms"] for k in ks), "status": ks[0]["status"],
                                    "first_ms": ms(kfirst[0]), "fresh_ms": ms(kfirst[1])}
        if numba:
            ns = [n[name] for n in numba if name in n]
            entry["systems"]["numba"] = ({"ms": across_runs(n["ms"] for n in ns), "status": ns[0]["status"],
                                          "first_ms": ns[0]["first_ms"], "fresh_ms": ns[0]["fresh_ms"]}
                                         if ns else {"status": "n/a: no Numba version"})
        for p in jit:
            for variant in headers[p].get("variants", [p]):
                entry["systems"][variant] = peer_cell([run[(variant, name)] for run in jit[p] if (variant, name) in run],
                                                      fresh.get((variant, name)))
        table.append(entry)

    write_csv(table, systems, a, os.path.join(a.out, a.name + ".csv"))
    text = markdown(table, systems, headers, f"{cpu_model()}, {os.cpu_count()} logical CPUs; threads {a.threads}; "
                    f"{'medians' if a.stat == 'median' else 'minima'} over {runs_made} run(s)"
                    f"{f' (of {a.runs} asked; --budget-s {a.budget_s:.0f})' if runs_made < a.runs else ''} of medians "
                    f"of {a.reps} reps; sizes of kiln-bench (--n {a.n}) and kiln-suite"
                    + (f"; no fresh-process pass for {', '.join(no_fresh)} (--budget-s)" if no_fresh else ""),
                    "C++/OpenMP")
    with open(os.path.join(a.out, a.name + ".md"), "w") as f:
        f.write(text)
    print(text, end="")
    plot(table, systems, f"kiln and JIT peers, CPU, {a.threads} threads, f64", "hand C++/OpenMP",
         os.path.join(a.out, a.name + ".png"))


def peer_cell(xs, fresh_first_ms):
    """A peer's entry for one workload from its peer_harness.py rows (one per run) and the first call of its
    fresh process: the median time, the first failure's status, the latencies minus one steady call."""
    if not xs:
        return {"status": "error: no row"}
    steady = across_runs(x.get("ms") for x in xs)
    bad = [x["status"] for x in xs if x["status"] != "ok" and not x["status"].startswith("ok ")]
    first = xs[0].get("first_call_ms")
    return {"ms": steady, "status": bad[0] if bad else xs[0]["status"],
            "first_ms": first - steady if first is not None and steady else None,
            "fresh_ms": fresh_first_ms - steady if fresh_first_ms is not None and steady else None}


def write_csv(table, systems, a, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "set", "system", "ms", "ref_ms", "ratio_to_ref", "first_call_overhead_ms",
                    "fresh_process_overhead_ms", "status", "threads", "runs", "reps", "aa_min", "aa_max"])
        for e in table:
            for s in systems:
                v = e["systems"].get(s, {})
                ratio = v["ms"] / e["ref_ms"] if v.get("ms") and e["ref_ms"] else None
                w.writerow([e["workload"], e["set"], s, cell(v.get("ms")), cell(e["ref_ms"]), cell(ratio),
                            cell(v.get("first_ms")), cell(v.get("fresh_ms")), v.get("status", ""), a.threads,
                            a.runs, a.reps, *(cell(x) for x in (e.get("aa") or (None, None)))])


def cell(v, spec=".4g"):
    return "" if v is None else format(v, spec)


def short(status):
    if status.startswith("n/a"):
        return "n/a"
    if status.startswith("error"):
        return "error"
    if status.startswith("mismatch"):
        return "wrong"
    return ""


def markdown(table, systems, headers, first_line, ref_label):
    notes, note_ids = [], {}

    def note(system, status):
        key = (system, status)
        if key not in note_ids:
            note_ids[key] = len(notes) + 1
            notes.append(f"{len(notes) + 1}. {LABELS.get(system, system)}: {status}")
        return f"[{note_ids[key]}]"

    lines = [first_line, ""]
    for p, h in headers.items():
        lines.append(f"- {h.get('settings', p)}")
    with_aa = any(e.get("aa") for e in table)
    lines += ["", f"Steady state: ms (ratio to the hand-written {ref_label}; below 1 is faster than it)"
              + ("; A/A: the reference timed against itself in the same runs, min–max over the runs (kiln-suite's "
                 "rows)" if with_aa else ""), "",
              f"| workload | {ref_label} ms | " + ("A/A | " if with_aa else "")
              + " | ".join(LABELS.get(s, s) for s in systems) + " |",
              "|---|---:|" + ("---:|" if with_aa else "") + "---:|" * len(systems)]
    for e in table:
        cells = []
        for s in systems:
            v = e["systems"].get(s, {})
            status = v.get("status", "")
            tag = note(s, status) if short(status) else ""
            if v.get("ms") and not status.startswith(("error", "mismatch")):
                cells.append(f"{v['ms']:.2f} ({v['ms'] / e['ref_ms']:.2f}){tag}")
            else:
                cells.append(f"{short(status) or '-'}{tag}")
        band = (f"{e['aa'][0]:.2f}–{e['aa'][1]:.2f} | " if e.get("aa") else "- | ") if with_aa else ""
        lines.append(f"| {e['workload']} | {cell(e['ref_ms'], '.2f')} | {band}" + " | ".join(cells) + " |")
    lines += ["", "Latency: first call − one steady call, ms: empty cache / fresh process with the cache "
              "(Halide's JIT keeps no disk cache: run_jit_peers.py makes no fresh-process pass for it, and where a "
              "figure is shown, that process compiled again)", "",
              "| workload | " + " | ".join(LABELS.get(s, s) for s in systems) + " |",
              "|---|" + "---:|" * len(systems)]
    for e in table:
        cells = []
        for s in systems:
            v = e["systems"].get(s, {})
            if v.get("first_ms") is None and v.get("fresh_ms") is None:
                cells.append("-")
            else:
                cells.append(f"{cell(v.get('first_ms'), '.0f') or '-'} / {cell(v.get('fresh_ms'), '.0f') or '-'}")
        lines.append(f"| {e['workload']} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Notes:", ""] + notes
    return "\n".join(lines) + "\n"


def plot(table, systems, title, ref_label, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (tools/peers_setup.sh installs it): no plot")
        return
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(max(9, 0.62 * len(table)), 4.6))
    for s_i, s in enumerate(systems):
        xs, ys = [], []
        for k, e in enumerate(table):
            v = e["systems"].get(s, {})
            if v.get("ms") and e["ref_ms"] and not v.get("status", "").startswith(("error", "mismatch")):
                xs.append(k + (s_i - (len(systems) - 1) / 2) * width)
                ys.append(v["ms"] / e["ref_ms"])
        ax.bar(xs, ys, width, label=LABELS.get(s, s))
    ax.set_yscale("log")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_xticks(range(len(table)))
    ax.set_xticklabels([e["workload"] for e in table], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(f"time / {ref_label} time (log)")
    ax.set_title(f"{title} (lower is faster; no bar: n/a or failed)")
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
