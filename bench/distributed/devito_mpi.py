# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""kiln-dist-bench's two stencils in Devito's MPI mode, for the side-by-side table of docs/distributed.md.

    mpirun -np P python3 devito_mpi.py [--n2 8192] [--n3 320] [--w2 2048] [--w3 160] [--steps 10] [--reps 3]

The same updates on the same grids as kiln-dist-bench (f64): jacobi2d u' = 0.25 (u[x+1] + u[x-1] + u[y+1] +
u[y-1]) and heat3d u' = u + 0.125 (sum of the six neighbours - 6 u), strong (one global N2^2 / N3^3 grid) and
weak (W2^2 / W3^3 per rank, the global grid MPI_Dims_create's factors times that). Written as Devito's
documentation writes them: a TimeFunction (two buffers the time loop alternates) and one Operator applied over
all the steps; Devito splits the grid over the ranks and exchanges the halos itself (DEVITO_MPI: "basic", or
"full": computation and communication overlapped). Difference in the border: Devito's halo is zero at the
global edges (a Dirichlet border), kiln's are reflect (jacobi2d) and nearest (heat3d): the same work per point.
Time per step: the slowest rank's wall time of apply() over --steps steps, median of --reps, after one warm-up
apply (which compiles). Rank 0 prints one line per case.
"""
import argparse
import os
import time

import numpy as np
from mpi4py import MPI

os.environ.setdefault("DEVITO_LOGGING", "WARNING")
from devito import Eq, Grid, Operator, TimeFunction, configuration  # noqa: E402


def per_step_ms(op, u, steps, reps, comm):
    op.apply(time_m=0, time_M=steps - 1)  # warm-up: compiles
    times = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        op.apply(time_m=0, time_M=steps - 1)
        elapsed = time.perf_counter() - t0
        times.append(comm.allreduce(elapsed, op=MPI.MAX))
    return 1e3 * sorted(times)[len(times) // 2] / steps


def jacobi2d(shape, comm):
    grid = Grid(shape=shape, dtype=np.float64, comm=comm)
    u = TimeFunction(name="u", grid=grid, space_order=1)
    x, y = grid.dimensions
    t = grid.stepping_dim
    u.data[:] = 1.0
    eq = Eq(u[t + 1, x, y], 0.25 * (u[t, x + 1, y] + u[t, x - 1, y] + u[t, x, y + 1] + u[t, x, y - 1]))
    return Operator([eq], name="jacobi2d"), u


def heat3d(shape, comm):
    grid = Grid(shape=shape, dtype=np.float64, comm=comm)
    u = TimeFunction(name="u", grid=grid, space_order=1)
    x, y, z = grid.dimensions
    t = grid.stepping_dim
    u.data[:] = 1.0
    c = u[t, x, y, z]
    eq = Eq(u[t + 1, x, y, z], c + 0.125 * (u[t, x - 1, y, z] + u[t, x + 1, y, z] + u[t, x, y - 1, z] + u[t, x, y + 1, z] +
                                           u[t, x, y, z - 1] + u[t, x, y, z + 1] - 6.0 * c))
    return Operator([eq], name="heat3d"), u


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n2", type=int, default=8192)
    ap.add_argument("--n3", type=int, default=320)
    ap.add_argument("--w2", type=int, default=2048)
    ap.add_argument("--w3", type=int, default=160)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    p = comm.Get_size()
    d2, d3 = MPI.Compute_dims(p, 2), MPI.Compute_dims(p, 3)
    cases = [("strong jacobi2d", jacobi2d, (a.n2, a.n2)), ("strong heat3d", heat3d, (a.n3, a.n3, a.n3)),
             ("weak jacobi2d", jacobi2d, tuple(a.w2 * k for k in d2)), ("weak heat3d", heat3d, tuple(a.w3 * k for k in d3))]
    if comm.Get_rank() == 0:
        print(f"devito {__import__('devito').__version__}, {p} ranks x {os.environ.get('OMP_NUM_THREADS')} threads, "
              f"DEVITO_MPI={configuration['mpi']}, language {configuration['language']}", flush=True)
    for name, make, shape in cases:
        op, u = make(shape, comm)
        ms = per_step_ms(op, u, a.steps, a.reps, comm)
        if comm.Get_rank() == 0:
            print(f"{name:16s} {'x'.join(map(str, shape)):>16s}  {ms:9.3f} ms/step", flush=True)


if __name__ == "__main__":
    main()
