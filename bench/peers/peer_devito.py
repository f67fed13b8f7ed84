# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The stencil workloads of peer_workloads.py in Devito, as its documentation writes them: Functions on a
Grid, TimeFunctions (time_order=1: two buffers the time loop alternates) for the time-stepped PolyBench
stencils, Eq(..., subdomain=...) for the points each update writes, and one Operator per workload, applied
once per call over all its time steps. DEVITO_LANGUAGE=openmp with OMP_NUM_THREADS threads, opt 'advanced'
(the default), Devito's default compiler flags (-O3 -march=native -ffast-math). Devito writes the
generated C and its shared object to its JIT directory, $TMPDIR/devito-jitcache-uid<uid> (TMPDIR is
PEER_CACHE when given): a fresh process builds the Operator again (symbolic lowering and code generation)
but loads the compiled object. The clamped-border (Border::nearest) rows compute the interior only: Devito
has no clamped reads, and boundary conditions are the user's own equations; their check skips the border.
Imported by peer_harness.py.
"""
import os
import tempfile

import numpy as np

from peer_harness import Kernel, settings

S = settings()
os.environ.update(DEVITO_LANGUAGE="openmp", OMP_NUM_THREADS=str(S.threads), DEVITO_LOGGING="WARNING")
if S.cache:
    os.environ["TMPDIR"] = S.cache
    tempfile.tempdir = S.cache
from devito import (Constant, Eq, Function, Grid, Operator, SubDomain, TimeFunction,  # noqa: E402
                    configuration)

DT = np.float32 if S.dtype == "f32" else np.float64
VARIANTS = ["devito"]
NOT_A_STENCIL = ("Devito is a DSL for finite-difference stencils on structured grids: no reductions, "
                 "products or scatters")
KERNELS = {}
NA = {name: NOT_A_STENCIL for name in (
    "saxpy", "triad", "dot", "pi", "softmax", "black_scholes", "normalize", "histogram", "logistic_regression",
    "gemm", "2mm", "atax", "bicg", "mvt", "gemver", "gesummv", "syrk", "covariance", "correlation", "doitgen",
    "nbody", "row-stats", "norm-clip-sum", "hist2d")}


def version():
    from importlib.metadata import version as dist_version
    return dist_version("devito")


def describe():
    return (f"Devito {version()}: language {configuration['language']}, OMP_NUM_THREADS={S.threads}, opt "
            f"{configuration['opt']}, platform {configuration['platform']}, compiler "
            f"{type(configuration['compiler']).__name__} ({' '.join(configuration['compiler'].cflags[:2])} "
            f"-ffast-math ...)")


class Region(SubDomain):
    """The points of a grid within `margins` (per dimension: (cells off the low side, cells off the high
    side), or ("left", k): the first k) of the edges."""

    def __init__(self, name, margins, grid):
        self.name, self.margins = name, margins
        super().__init__(grid=grid)

    def define(self, dimensions):
        out = {}
        for d, m in zip(dimensions, self.margins):
            out[d] = d if m is None else (m if m[0] == "left" else ("middle", m[0], m[1]))
        return out


def region(grid, name, *margins):
    return Region(name, margins, grid)


def kernel(name, interior=0):
    """Registers `make(*work)` -> (build: () -> Operator, apply(op), outputs()) -> NumPy tuple); the Operator
    is built in the first call (Devito's lowering and compilation are the first call's cost)."""
    def register(make):
        def builder(case, work, variant):
            build, apply, outputs = make(*work)
            ops = []

            def step():
                if not ops:
                    ops.append(build())
                apply(ops[0])

            return Kernel(step, outputs, interior)
        KERNELS[name] = builder
        return make
    return register


def grid_of(shape):
    return Grid(shape=shape, dtype=DT)


def function(grid, name, data, space_order=1):
    f = Function(name=name, grid=grid, space_order=space_order)
    f.data[:] = data
    return f


def one_sweep(a, out, expr_of, interior, space_order=1):
    """out = expr_of(a's Function, its dimensions) on the points `interior` cells off every edge."""
    grid = grid_of(a.shape)
    fa = function(grid, "a", a, space_order)
    fo = function(grid, "out", out, space_order)
    sub = region(grid, "inner", *([(interior, interior)] * len(a.shape)))
    build = lambda: Operator([Eq(fo, expr_of(fa, grid.dimensions), subdomain=sub)])  # noqa: E731
    return build, lambda op: op.apply(), lambda: (np.array(fo.data),)


@kernel("smooth1d", interior=1)
def smooth1d(a, out):
    return one_sweep(a, out, lambda u, d: 0.25 * u.subs(d[0], d[0] - 1) + 0.5 * u + 0.25 * u.subs(d[0], d[0] + 1), 1)


def shifted(u, d, offsets):
    return u.subs({dim: dim + o for dim, o in zip(d, offsets) if o}, simultaneous=True)


@kernel("jacobi2d")
def jacobi2d(a, out):
    # Border::skip: the output's border keeps what it held, as Devito's subdomain leaves it.
    return one_sweep(a, out, lambda u, d: 0.25 * (shifted(u, d, (0, 1)) + shifted(u, d, (0, -1)) +
                                                  shifted(u, d, (-1, 0)) + shifted(u, d, (1, 0))), 1)


@kernel("heat3d", interior=1)
def heat3d(a, out):
    def expr(u, d):
        nb = [shifted(u, d, o) for o in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))]
        return u + 0.125 * (sum(nb) - 6.0 * u)

    return one_sweep(a, out, expr, 1)


@kernel("conv2d", interior=2)
def conv2d(a, w, out):
    # The 5 x 5 weights are run-time values: Devito Constants (scalars bound when the Operator is applied).
    ws = [[Constant(name=f"w{i}{j}", value=float(w[i, j]), dtype=DT) for j in range(5)] for i in range(5)]
    return one_sweep(a, out, lambda u, d: sum(ws[i][j] * shifted(u, d, (i - 2, j - 2)) for i in range(5)
                                              for j in range(5)), 2, space_order=2)


def time_stepped(A, B, expr_of, tsteps):
    """PolyBench's B = f(A); A = f(B) time loop as one TimeFunction whose two buffers are A and B: 2 tsteps
    Devito time steps (an even count: A ends in buffer 0, B in 1), each writing the interior of the other."""
    grid = grid_of(A.shape)
    u = TimeFunction(name="u", grid=grid, time_order=1, space_order=1)
    u.data[0] = A
    u.data[1] = B
    build = lambda: Operator([Eq(u.forward, expr_of(u, grid.dimensions), subdomain=grid.interior)])  # noqa: E731
    return build, lambda op: op.apply(time_M=2 * tsteps - 1), lambda: (np.array(u.data[0]), np.array(u.data[1]))


@kernel("jacobi-1d")
def jacobi_1d(A, B, tsteps):
    return time_stepped(A, B, lambda u, d: 0.33333 * (shifted(u, d, (-1,)) + u + shifted(u, d, (1,))), tsteps)


@kernel("jacobi-2d")
def jacobi_2d(A, B, tsteps):
    return time_stepped(A, B, lambda u, d: 0.2 * (u + shifted(u, d, (0, -1)) + shifted(u, d, (0, 1)) +
                                                  shifted(u, d, (1, 0)) + shifted(u, d, (-1, 0))), tsteps)


@kernel("heat-3d")
def heat_3d(A, B, tsteps):
    def expr(u, d):
        return sum(0.125 * (shifted(u, d, o) - 2.0 * u + shifted(u, d, tuple(-v for v in o)))
                   for o in ((1, 0, 0), (0, 1, 0), (0, 0, 1))) + u

    return time_stepped(A, B, expr, tsteps)


@kernel("fdtd-2d")
def fdtd_2d(ex, ey, hz, fict, tmax):
    # Two buffers per field, both starting from the field: points no equation writes (ex's column 0, hz's
    # last row and column) then hold the same value in both.
    grid = grid_of(ex.shape)
    x, y = grid.dimensions
    fields = {}
    for name, data in (("ex", ex), ("ey", ey), ("hz", hz)):
        f = TimeFunction(name=name, grid=grid, time_order=1, space_order=1)
        f.data[0] = data
        f.data[1] = data
        fields[name] = f
    EX, EY, HZ = fields["ex"], fields["ey"], fields["hz"]
    f_t = Function(name="fict", shape=(tmax,), dimensions=(grid.time_dim,), dtype=DT)
    f_t.data[:] = fict
    row0 = region(grid, "row0", ("left", 1), None)
    below = region(grid, "below", (1, 0), None)
    right = region(grid, "right", None, (1, 0))
    inner = region(grid, "inner", (0, 1), (0, 1))
    if tmax % 2:
        raise ValueError("fdtd-2d: an odd tmax leaves the fields in the second buffer (the driver reads the first)")

    def build():
        return Operator([
            Eq(EY.forward, f_t[grid.time_dim], subdomain=row0),
            Eq(EY.forward, EY - 0.5 * (HZ - HZ.subs(x, x - 1)), subdomain=below),
            Eq(EX.forward, EX - 0.5 * (HZ - HZ.subs(y, y - 1)), subdomain=right),
            Eq(HZ.forward, HZ - 0.7 * (EX.forward.subs(y, y + 1) - EX.forward + EY.forward.subs(x, x + 1) -
                                       EY.forward), subdomain=inner),
        ])

    return build, lambda op: op.apply(time_M=tmax - 1), lambda: tuple(np.array(f.data[0]) for f in (EX, EY, HZ))


@kernel("stencil27-clamp", interior=1)
def stencil27(out, a):
    offsets = [(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)]
    return one_sweep(a, out, lambda u, d: sum(shifted(u, d, o) for o in offsets) * (1.0 / 27.0), 1)
