#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU table of the JIT peers (issue 20): kiln-bench-gpu's kiln and hand-written CUDA times with the
peers' (peer_harness.py --target cuda --dtype f32 on the same rows and sizes), as ratios to the hand CUDA,
and each peer's first-call and fresh-process latencies. Written by bench/peers/run_gpu.sh; the files of
separate device calls (one peer's wheels a call) can be merged here afterwards.

  gpu_jit_table.py gpu_kiln.txt PEER.jsonl [PEER.jsonl ...] [--fresh PEER_fresh.jsonl ...] [--plot OUT.png]

A PEER_fresh.jsonl (peer_harness.py --first-only with the cache the first file's run wrote) adds the
fresh-process latency.
"""
import argparse
import json

from gpu_table import key, kiln_rows
from run_jit_peers import markdown, peer_cell, plot

# kiln-bench-gpu's row names (gpu_table.key) -> the workload names of peer_workloads.py.
KILN_GPU_NAMES = {"fused a*b+c": "triad", "dot": "dot", "softmax": "softmax", "smooth1d": "smooth1d",
                  "jacobi2d": "jacobi2d", "black_scholes": "black_scholes"}


def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kiln")
    ap.add_argument("peers", nargs="+")
    ap.add_argument("--fresh", nargs="*", default=[])
    ap.add_argument("--plot", default="")
    a = ap.parse_args()
    kiln, _, device = kiln_rows(a.kiln)
    headers, runs, fresh = {}, {}, {}
    for path in a.peers:
        for r in rows(path):
            if "version" in r:
                headers[r["peer"]] = r
            elif "kernel" in r:
                runs[(r["variant"], r["kernel"])] = r
    for path in a.fresh:
        fresh.update({(r["variant"], r["kernel"]): r.get("first_call_ms") for r in rows(path) if "kernel" in r})
    systems = ["kiln"] + [v for h in headers.values() for v in h.get("variants", [h["peer"]])]
    table = []
    for kname, k in kiln.items():
        name = KILN_GPU_NAMES.get(key(kname))
        if name is None:
            continue
        entry = {"workload": name, "set": "kiln-bench-gpu", "ref_ms": k["hand_ms"],
                 "systems": {"kiln": {"ms": k["kiln_ms"], "status": "ok"}}}
        for variant in systems[1:]:
            r = runs.get((variant, name))
            entry["systems"][variant] = peer_cell([r] if r else [], fresh.get((variant, name)))
        table.append(entry)
    print(markdown(table, systems, headers, f"{device}; f32, kiln-bench-gpu's sizes; peers at --reps of their run",
                   "CUDA"), end="")
    if a.plot:
        plot(table, systems, f"kiln and JIT peers, GPU ({device}), f32", "hand CUDA", a.plot)


if __name__ == "__main__":
    main()
