#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Merges kiln-bench-gpu's table (kiln and hand CUDA, same process) with cupy_bench.py's JSON lines into the
markdown table of docs/performance.md: times in ms, kiln's share of the copy ceiling, kiln over hand CUDA,
and CuPy over kiln (how many times faster kiln is than CuPy's unfused and fused code).
  gpu_table.py gpu_kiln.txt gpu_cupy.jsonl [plot.png]
With a third argument it also draws GB/s per workload and system against the copy ceiling of the same run
(matplotlib; the bytes of a row are kiln's GB/s times its time, so every system is credited the same
minimum traffic)."""
import json
import re
import sys


def key(name):
    """The workload a row measures: kiln-bench-gpu appends sizes ("jacobi2d 16384^2", "pi (2e8 terms)")."""
    name = re.sub(r"\s+\d+\^\d+$", "", name.split(" (")[0].strip())
    return name


def kiln_rows(path):
    rows, ceiling, device = {}, None, ""
    pattern = re.compile(r"^(.{22}) +([0-9.]+) +([0-9.]+) +([0-9.]+) +(\S+) +(\S+) +(\S+) +([0-9.]+)")
    for line in open(path):
        if line.startswith("device:"):
            device = line.split(";")[0][len("device: "):].strip()
        m = re.search(r"copy ceiling ([0-9.]+) GB/s", line)
        if m and line.startswith("copy ceiling"):
            ceiling = float(m.group(1))
        m = pattern.match(line)
        if m and m.group(1).strip() not in ("row",):
            rows[key(m.group(1))] = {"kiln_ms": float(m.group(2)), "hand_ms": float(m.group(3)),
                                     "pct": m.group(7), "ratio": float(m.group(8))}
    return rows, ceiling, device


def cupy_rows(path):
    rows = {}
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault(key(r["name"]), {})[r["variant"]] = r
    return rows


def main():
    kiln, ceiling, device = kiln_rows(sys.argv[1])
    cupy = cupy_rows(sys.argv[2])
    dev = cupy.get("device", {})
    cupy_version = next(iter(dev.values()))["cupy"] if dev else "?"
    copy = cupy.get("copy", {}).get("cupy", {}).get("GBps")
    print(f"{device}; kiln copy ceiling {ceiling} GB/s; CuPy {cupy_version} copy {copy and round(copy)} GB/s\n")
    print("| workload | kiln ms | hand CUDA ms | kiln/hand | kiln % of ceiling | CuPy unfused ms | CuPy fused ms "
          "| CuPy unfused / kiln | CuPy fused / kiln |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, k in kiln.items():
        c = cupy.get(name, {})
        unfused = c.get("unfused") or c.get("cupy.dot")
        fused = c.get("fused") or c.get("ElementwiseKernel") or c.get("ReductionKernel")
        cell = lambda r: "-" if not r else f"{r['ms']:.3f}"
        speed = lambda r: "-" if not r else f"{r['ms'] / k['kiln_ms']:.2f}x"
        print(f"| {name} | {k['kiln_ms']:.3f} | {k['hand_ms']:.3f} | {k['ratio']:.3f} | {k['pct']} | {cell(unfused)} "
              f"| {cell(fused)} | {speed(unfused)} | {speed(fused)} |")
    if len(sys.argv) > 3 and ceiling:
        plot(kiln, cupy, ceiling, device, sys.argv[3])


def plot(kiln, cupy, ceiling, device, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("gpu_table: matplotlib missing: no plot\n")
        return
    names, series = [], {"kiln": [], "hand CUDA": [], "CuPy unfused": [], "CuPy fused": []}
    for name, k in kiln.items():
        if not k["pct"].endswith("%"):
            continue  # pi: no memory traffic to speak of
        gbytes = float(k["pct"].rstrip("%")) / 100 * ceiling * k["kiln_ms"] / 1e3  # GB moved by one run
        c = cupy.get(name, {})
        unfused = c.get("unfused") or c.get("cupy.dot")
        fused = c.get("fused") or c.get("ElementwiseKernel") or c.get("ReductionKernel")
        names.append(name)
        series["kiln"].append(gbytes / (k["kiln_ms"] / 1e3))
        series["hand CUDA"].append(gbytes / (k["hand_ms"] / 1e3))
        series["CuPy unfused"].append(gbytes / (unfused["ms"] / 1e3) if unfused else 0)
        series["CuPy fused"].append(gbytes / (fused["ms"] / 1e3) if fused else 0)
    width = 0.2
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(names)), 4))
    for s, (label, values) in enumerate(series.items()):
        ax.bar([i + (s - 1.5) * width for i in range(len(names))], values, width, label=label)
    ax.axhline(ceiling, color="k", linestyle="--", linewidth=1, label=f"device copy {ceiling:.0f} GB/s")
    ax.set_xticks(list(range(len(names))), names, rotation=20, ha="right")
    ax.set_ylabel("GB/s (minimum traffic / time)")
    ax.set_title(f"GPU, f32: {device}")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
