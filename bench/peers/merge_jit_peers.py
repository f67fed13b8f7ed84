#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One table from several run_jit_peers.py tables measured in separate device calls (the 16-core table: a call
carries libkiln and one or two peers), each with its own kiln and C++/OpenMP columns. A peer's time is compared
with the reference and kiln **of its own call**: its cell is "ms (time / that call's C++/OpenMP)", and kiln's
column lists kiln's ratio in each call, so that a peer ahead of kiln shows as a ratio below kiln's of the same call.

  merge_jit_peers.py CALL.csv... [--out NAME.md] [--plot NAME.png]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_jit_peers import LABELS, cell, plot, short  # noqa: E402


def load(path):
    """workload -> system -> the CSV row, in the file's workload order."""
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            out.setdefault(row["workload"], {})[row["system"]] = row
    return out


def num(v):
    return float(v) if v not in (None, "") else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csvs", nargs="+")
    ap.add_argument("--out", default="")
    ap.add_argument("--plot", default="")
    a = ap.parse_args()
    calls = [load(p) for p in a.csvs]
    # Rows no peer has (kiln-bench's sorts, scans, atomics... in tables made before run_jit_peers ran only the
    # peers' rows) are left out.
    names = [n for n in calls[0] if any(r["system"] != "kiln" and r["status"] != "error: no row"
                                        for c in calls for r in c.get(n, {}).values())]
    peers = []  # (call index, system) of every non-kiln column, in the calls' order
    for i, c in enumerate(calls):
        for system in next(iter(c.values())):
            if system != "kiln" and all(system != s for _, s in peers):
                peers.append((i, system))
    lines = ["Steady state: ms (time / the hand-written C++/OpenMP of the same call; below 1 is faster than it). "
             "kiln: its ratio in each call (" + ", ".join(os.path.basename(p) for p in a.csvs) + "); A/A: the "
             "reference against itself, min–max over all calls' runs (kiln-suite's rows).", "",
             "| workload | C++/OpenMP ms (call 1) | A/A | kiln | " + " | ".join(LABELS.get(s, s) for _, s in peers) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(peers)]
    notes, table = [], []
    for name in names:
        rows = [c.get(name, {}) for c in calls]
        refs = [num(r["kiln"]["ref_ms"]) for r in rows if "kiln" in r]
        aa = [num(r["kiln"][k]) for r in rows if "kiln" in r for k in ("aa_min", "aa_max") if num(r["kiln"].get(k))]
        kiln = [num(r["kiln"]["ratio_to_ref"]) for r in rows if "kiln" in r]
        cells, entry = [], {"workload": name, "ref_ms": 1.0, "systems": {}}
        entry["systems"]["kiln"] = {"ms": sorted(kiln)[len(kiln) // 2] if kiln else None, "status": "ok"}
        for i, system in peers:
            v = rows[i].get(system)
            status = v["status"] if v else "n/a"
            if v and num(v["ms"]) and not short(status) in ("error", "wrong"):
                cells.append(f"{num(v['ms']):.2f} ({num(v['ratio_to_ref']):.2f})")
                entry["systems"][system] = {"ms": num(v["ratio_to_ref"]), "status": status}
            else:
                tag = short(status) or "-"
                if tag in ("error", "wrong"):
                    notes.append(f"{len(notes) + 1}. {name}, {LABELS.get(system, system)}: {status}")
                    tag += f"[{len(notes)}]"
                cells.append(tag)
                entry["systems"][system] = {"status": status}
        table.append(entry)
        lines.append(f"| {name} | {cell(refs[0] if refs else None, '.2f')} | "
                     + (f"{min(aa):.2f}–{max(aa):.2f}" if aa else "-") + " | "
                     + " / ".join(f"{k:.2f}" for k in kiln) + " | " + " | ".join(cells) + " |")
    lines += ["", "Latency: first call − one steady call, ms: empty cache / fresh process with the cache", "",
              "| workload | kiln | " + " | ".join(LABELS.get(s, s) for _, s in peers) + " |",
              "|---|---:|" + "---:|" * len(peers)]
    for name in names:
        rows = [c.get(name, {}) for c in calls]
        out = []
        for i, system in [(0, "kiln")] + peers:
            v = rows[i].get(system, {})
            first, fresh = num(v.get("first_call_overhead_ms")), num(v.get("fresh_process_overhead_ms"))
            out.append("-" if first is None and fresh is None else
                       f"{cell(first, '.0f') or '-'} / {cell(fresh, '.0f') or '-'}")
        lines.append(f"| {name} | " + " | ".join(out) + " |")
    if notes:
        lines += ["", "Notes:", ""] + notes
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text, end="")
    if a.plot:
        plot(table, ["kiln"] + [s for _, s in peers], "kiln and JIT peers, CPU, 16 threads, f64 (kiln: median of "
             "its calls)", "hand C++/OpenMP of the same call", a.plot)


if __name__ == "__main__":
    main()
