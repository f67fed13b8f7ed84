#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Why Halide's 1-d CUDA schedules failed (issue 20): a 1-d `gpu_tile(x, bx, tx, 256)` launches n/256 blocks in
grid x. With the plain `cuda` target Halide emits PTX for sm_20 (`.target sm_20`), and the driver holds a launch of
that code to compute capability 2.x's limit of 65535 blocks in x, though the device allows 2^31 - 1; with the
device's `cuda_capability_*` feature (peer_halide.with_cuda) the PTX targets that capability and the launch is
legal. For each target this prints the PTX target and the grid Halide's lowered code asks for at each size, and,
on a machine with a GPU, whether the launch succeeds (n = 65535·256 is the last size sm_20 code can launch).

  halide_cuda_grid.py [--lower-only]
"""
import argparse
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_halide  # noqa: E402  (sets HL_NUM_THREADS, loads Halide)

hl = peer_halide.hl
SIZES = [65535 * 256, 65536 * 256, 1 << 27]


def pipeline(per_thread=1):
    """f[x] = 2x, 256 threads a block; per_thread > 1: each thread loops over that many elements 256 apart (n / (256
    per_thread) blocks: the control, a grid within sm_20's limit)."""
    x, bx, tx, xi, s = hl.Var("x"), hl.Var("bx"), hl.Var("tx"), hl.Var("xi"), hl.Var("s")
    f = hl.Func("twice")
    f[x] = hl.cast(hl.Float(32), x) * hl.f32(2)
    if per_thread == 1:
        f.gpu_tile(x, bx, tx, 256)
    else:
        f.split(x, bx, xi, 256 * per_thread).split(xi, s, tx, 256).reorder(tx, s, bx).gpu_blocks(bx).gpu_threads(tx)
    return f


def lowered(target):
    """The PTX target and the grid x expression of the kernel launch in Halide's lowered code."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "twice.stmt")
        pipeline().compile_to_lowered_stmt(path, [], hl.StmtOutputFormat.Text, target)
        text = open(path, encoding="latin-1").read()
    ptx = re.search(r"^\.target (\S+)", text, re.M)
    launch = re.search(r'halide_cuda_run\([^,]+, "[^"]+", ([^,]+), ([^,]+), ([^,]+), ([^,]+),', text)
    return (ptx.group(1) if ptx else "?"), (launch.groups() if launch else "?")


def launch(target, n, per_thread=1):
    f = pipeline(per_thread)
    f.compile_jit(target)
    out = hl.Buffer(hl.Float(32), [n])
    try:
        f.realize(out)
        out.copy_to_host()
        got = np.asarray(out)
        ok = got[n - 1] == 2.0 * (n - 1) and got[0] == 0.0
        return "ok" if ok else "wrong values"
    except Exception as e:  # the launch error is the result being shown
        return f"error: {str(e).strip()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lower-only", action="store_true", help="no GPU: only the lowered PTX target and grid")
    a = ap.parse_args()
    host = hl.get_jit_target_from_environment()
    plain = host.with_feature(hl.TargetFeature.CUDA)
    if a.lower_only:  # no device to ask: the capability of an H100/H200 (sm_90), Halide's highest below it
        fixed = plain.with_feature(peer_halide.CUDA_CAPABILITIES[max(c for c in peer_halide.CUDA_CAPABILITIES if c <= 90)])
    else:
        fixed = peer_halide.with_cuda(host)
    for name, target in (("cuda (Halide's default capability)", plain), ("cuda + device capability", fixed)):
        ptx, grid = lowered(target)
        print(f"{name}: {target}")
        print(f"  PTX .target {ptx}; launch grid (x, y, z), block x: {grid}")
        if not a.lower_only:
            for n in SIZES:
                print(f"  n = {n} ({(n + 255) // 256} blocks of 256): {launch(target, n)}", flush=True)
            n = SIZES[-1]
            print(f"  n = {n}, 16 elements a thread ({n // 4096} blocks of 256): {launch(target, n, 16)}", flush=True)


if __name__ == "__main__":
    main()
