#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The suite's kiln/C++ ratios as a bar chart, one bar per kernel and thread count.

  plot_suite.py OUT.png LABEL=DIR [LABEL=DIR ...]

Each DIR holds the run*.csv files of one bench/suite/run_suite.sh invocation (kiln-suite --csv); a kernel's bar is
the median over the runs of its kiln/C++ ratio, and the whisker spans the runs' A/A ratios around 1 (the noise
band of that machine: a bar inside it is a tie). Lower is faster for kiln; the dashed line is the 1.10 target.
"""
import csv
import glob
import os
import statistics
import sys


def read_runs(directory):
    ratios, aa, order = {}, {}, []
    for path in sorted(glob.glob(os.path.join(directory, "run*.csv"))):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                k = row["kernel"]
                if k not in ratios:
                    order.append(k)
                ratios.setdefault(k, []).append(float(row["ratio"]))
                if row.get("aa_ratio"):
                    aa.setdefault(k, []).append(float(row["aa_ratio"]))
    if not order:
        sys.exit(f"plot_suite: no run*.csv in {directory}")
    return order, ratios, aa


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = sys.argv[1]
    series = [(label, read_runs(d)) for label, d in (a.split("=", 1) for a in sys.argv[2:])]
    kernels = series[0][1][0]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(kernels)), 4.2))
    for s, (label, (_, ratios, aa)) in enumerate(series):
        xs = [k + (s - (len(series) - 1) / 2) * width for k in range(len(kernels))]
        med = [statistics.median(ratios.get(k, [float("nan")])) for k in kernels]
        ax.bar(xs, med, width, label=label)
        for x, k in zip(xs, kernels):
            if aa.get(k):
                ax.plot([x, x], [min(aa[k]), max(aa[k])], color="black", linewidth=0.8)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.axhline(1.10, color="red", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("kiln time / hand C++/OpenMP time")
    ax.set_title("Public kernel suite: kiln against hand-written C++/OpenMP (lower is faster; black: A/A band)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
