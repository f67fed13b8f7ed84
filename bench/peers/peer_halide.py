# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The workloads of peer_workloads.py in Halide (JIT, Python bindings): each an algorithm of Funcs over
hl.Buffers that wrap the NumPy arrays (zero-copy; Halide's x is NumPy's last axis), realized into the output
arrays, under two schedules:
- "halide": a hand schedule as Halide's tutorials write one: the outermost loop parallel, the innermost
  vectorized (8 f64 lanes: AVX-512); producers compute_root or compute_at the consumer's row; reductions to a
  scalar by rfactor into parallel chunks of vector partial sums (tutorial lesson 18); products in i-k-j order
  (the reduction outside the vectorized output row). On CUDA: gpu_tile (32x8 or 256) for pointwise stages.
- "halide-auto": the Adams2019 autoscheduler (the plugin in the wheel, its built-in weights,
  parallelism = threads) given the output sizes as estimates.
Time loops (the PolyBench stencils) are Python loops of realize() calls on one compiled pipeline, its input an
ImageParam bound per call. Halide's JIT keeps no compiled code on disk: a fresh process compiles again.
HL_NUM_THREADS sets the thread pool. Imported by peer_harness.py.
"""
import os

import numpy as np

from peer_harness import Kernel, settings

S = settings()
os.environ["HL_NUM_THREADS"] = str(S.threads)
import halide as hl  # noqa: E402

CUDA_CAPABILITIES = {int(name[len("CUDACapability"):]): getattr(hl.TargetFeature, name)
                     for name in dir(hl.TargetFeature) if name.startswith("CUDACapability")}


def device_capability():
    """The compute capability of CUDA device 0 (90 for sm_90), from the driver."""
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76
    if (cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(dev), 0) or
            cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) or
            cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)):
        raise RuntimeError("peer_halide: the CUDA driver reports no device 0")
    return 10 * major.value + minor.value


def with_cuda(target):
    """`target` with CUDA and the device's compute capability (the highest Halide names at or below it), unless
    HL_JIT_TARGET named one. Without a capability Halide emits PTX for sm_20, and the driver holds a launch of
    such code to compute capability 2.x's grid limit of 65535 blocks in x: the 1-d gpu_tile of 2^27 elements
    (524288 blocks of 256) failed in cuLaunchKernel with CUDA_ERROR_INVALID_VALUE (halide_cuda_grid.py shows it)."""
    target = target.with_feature(hl.TargetFeature.CUDA)
    if not any(target.has_feature(f) for f in CUDA_CAPABILITIES.values()):
        cap = device_capability()
        target = target.with_feature(CUDA_CAPABILITIES[max(c for c in CUDA_CAPABILITIES if c <= cap)])
    return target


TARGET = hl.get_jit_target_from_environment()
if S.target == "cuda":
    TARGET = with_cuda(TARGET)
GPU = S.target == "cuda"
T = hl.Float(32) if S.dtype == "f32" else hl.Float(64)
VEC = 16 if S.dtype == "f32" else 8
AUTOSCHEDULER = "Adams2019"
DISK_CACHE = False  # Halide's JIT compiles in memory only
_plugin = os.path.join(os.path.dirname(hl.__file__), "lib64", "libautoschedule_adams2019.so")
hl.load_plugin(_plugin)
# Adams2019 schedules CPUs; on CUDA only the hand schedule runs (the GPU autoscheduler, Anderson2021, needs
# weights trained for the device, which the wheel does not carry).
VARIANTS = ["halide"] if S.target == "cuda" else ["halide", "halide-auto"]
x, y, z, u, v = (hl.Var(n) for n in "xyzuv")


def version():
    from importlib.metadata import version as dist_version
    return dist_version("halide")


def describe():
    return (f"Halide {version()} JIT, target {TARGET}, HL_NUM_THREADS={S.threads}; halide: hand schedule "
            f"(parallel outer loop, vectorize inner by {VEC}, rfactor for reductions); halide-auto: "
            f"{AUTOSCHEDULER} autoscheduler (parallelism {S.threads}); no JIT disk cache")


def c(value):
    """A constant of the run's float type (a bare Python float would become f32 in Halide)."""
    return hl.cast(T, hl.f64(value))


def buf(a):
    return hl.Buffer(a)


def interior(b, width=1):
    """The buffer cropped by `width` cells on every side: realizing into it writes no border."""
    for d in range(b.dimensions()):
        b = b.cropped(d, b.dim(d).min() + width, b.dim(d).extent() - 2 * width)
    return b


class Stage:
    """One compiled pipeline: `outputs` (Funcs) realized into buffers per call; `hand()` applies the hand
    schedule; `params` ((ImageParam, a buffer of its size) pairs) get estimates for the autoscheduler."""

    def __init__(self, outputs, hand, params=()):
        self.outputs, self.hand, self.params = list(outputs), hand, list(params)
        self.pipeline = None

    def compile(self, variant, targets):
        p = hl.Pipeline(self.outputs)
        if variant == "halide-auto":
            for f, t in zip(self.outputs, targets):
                f.set_estimates([(t.dim(d).min(), t.dim(d).extent()) for d in range(t.dimensions())])
            for param, b in self.params:
                param.set_estimates([(0, b.dim(d).extent()) for d in range(b.dimensions())])
            p.apply_autoscheduler(TARGET, hl.AutoschedulerParams(AUTOSCHEDULER, {"parallelism": str(S.threads)}))
        else:
            self.hand()
        p.compile_jit(TARGET)
        self.pipeline = p

    def __call__(self, variant, targets, bind=()):
        for param, b in bind:
            param.set(b)
        if self.pipeline is None:
            self.compile(variant, targets)
        self.pipeline.realize(targets if len(targets) > 1 else targets[0])
        if GPU:  # the results stay on the device (fetch() copies them back): wait for the kernels only
            for t in targets:
                t.device_sync()
                DEVICE_OUTPUTS.append(t)


DEVICE_OUTPUTS = []  # on CUDA, the buffers realized on the device (this process runs one workload)


def htype(a):
    return hl.Int(64) if a.dtype.kind == "i" else T


class State:
    """Arrays a workload updates in place. Halide assumes that outputs alias no input (its schedules may
    recompute overlapping tiles: the autoscheduler's ShiftInwards splits did, updating twice), so they are
    read as ImageParams and written into a twin, the two swapping roles each call (as a Halide user
    ping-pongs time steps). `define(*params)` -> (output Funcs in the arrays' order, hand schedule)."""

    def __init__(self, arrays, define):
        self.pairs = [(a, a.copy()) for a in arrays]
        self.bufs = [(buf(a), buf(b)) for a, b in self.pairs]
        self.params = [hl.ImageParam(htype(a), a.ndim, f"state{i}") for i, a in enumerate(arrays)]
        outputs, hand = define(*self.params)
        self.stage = Stage(outputs, hand, [(p, b[0]) for p, b in zip(self.params, self.bufs)])
        self.cur = 0

    def step(self, variant):
        i = self.cur
        self.stage(variant, [b[1 - i] for b in self.bufs], [(p, b[i]) for p, b in zip(self.params, self.bufs)])
        self.cur = 1 - i

    def arrays(self):
        return tuple(p[self.cur] for p in self.pairs)


def stateful(arrays, define):
    st = State(arrays, define)
    return Work(st.step, st.arrays)


def pointwise(f, dims):
    """The hand schedule of a pointwise stage over `dims` (Halide order: x first)."""
    if GPU:
        if len(dims) == 1:
            f.gpu_tile(dims[0], u, v, 256)
        else:
            xo, yo, xi, yi = hl.Var(), hl.Var(), hl.Var(), hl.Var()
            f.gpu_tile(dims[0], dims[1], xo, yo, xi, yi, 32, 8)
            if len(dims) == 3:
                f.gpu_blocks(dims[2])
        return f
    if len(dims) == 1:
        xo, xi = hl.Var(), hl.Var()
        f.split(dims[0], xo, xi, 1 << 14, hl.TailStrategy.GuardWithIf).parallel(xo).vectorize(xi, VEC, hl.TailStrategy.GuardWithIf)
    else:
        f.vectorize(dims[0], VEC, hl.TailStrategy.GuardWithIf).parallel(dims[-1])
    return f


def parallel_reduce(f, r, chunk=1 << 15):
    """Schedules the update of a scalar reduction `f[()] op= g(r)` as parallel chunks of VEC-lane partials."""
    rxo, rxi, rxio, rxii = hl.RVar("rxo"), hl.RVar("rxi"), hl.RVar("rxio"), hl.RVar("rxii")
    f.update().split(r, rxo, rxi, chunk)
    intm = f.update().rfactor(rxo, u)
    intm.compute_root().update().parallel(u)
    intm.update().split(rxi, rxio, rxii, VEC)
    lanes = intm.update().rfactor(rxii, v)
    lanes.compute_at(intm, u).vectorize(v).update().vectorize(v)
    f.compute_root()


def scalar_sum(expr_of, n, name):
    """f[()] = sum over [0, n) of expr_of(r) (f's update to be scheduled by parallel_reduce)."""
    r = hl.RDom([(0, n)], name + "_r")
    f = hl.Func(name)
    f[()] = c(0.0)
    f[()] += expr_of(r.x)
    return f, r.x


def scalar():
    return hl.Buffer(T, [])


class Work:
    """One workload: `stages` compile on the first call; `run(variant)` makes one call; `fetch()` the
    outputs for the case."""

    def __init__(self, run, fetch):
        self.run, self.fetch = run, fetch


KERNELS = {}
NA = {
    ("nbody", "halide-auto"): "crashes: the Adams2019 schedule vectorizes the pair loop's tuple update, whose JIT code took "
             "SIGSEGV (Halide 21.0.0; the hand schedule runs it unvectorized)",
}
if S.dtype == "f64":
    NA["black_scholes"] = "Halide's erf is defined for Float(32) only (Halide::erf): no f64 erf to write it with"
if GPU:  # the hand GPU schedules written: pointwise stages and stencils (gpu_tile)
    NA.update({name: "no CUDA schedule written (reductions, scatters and products have CPU schedules only)"
               for name in ("dot", "pi", "softmax", "normalize", "histogram", "logistic_regression", "gemm", "2mm",
                            "atax", "bicg", "mvt", "gemver", "gesummv", "syrk", "covariance", "correlation",
                            "doitgen", "nbody", "row-stats", "norm-clip-sum", "hist2d")})


def kernel(name):
    def register(make):
        def builder(case, work, variant):
            w = make(*work)

            def fetch():
                for b in DEVICE_OUTPUTS:
                    b.copy_to_host()
                return w.fetch()

            return Kernel(lambda: w.run(variant), fetch)
        KERNELS[name] = builder
        return make
    return register


def one_stage(outputs, targets, hand, fetch, params=()):
    st = Stage(outputs, hand, params)
    return Work(lambda variant: st(variant, targets), fetch)


# --- kiln-bench rows -----------------------------------------------------------------------------------------

@kernel("saxpy")
def saxpy(a, xs, ys):
    X = buf(xs)

    def define(Y):
        f = hl.Func("saxpy")
        f[x] = c(a) * X[x] + Y[x]
        return [f], lambda: pointwise(f, [x])

    return stateful([ys], define)


@kernel("triad")
def triad(a, b, cc, out):
    A, B, C, O = buf(a), buf(b), buf(cc), buf(out)
    f = hl.Func("triad")
    f[x] = A[x] * B[x] + C[x]
    return one_stage([f], [O], lambda: pointwise(f, [x]), lambda: (out,))


def scalar_work(f, r):
    out = scalar()
    return one_stage([f], [out], lambda: parallel_reduce(f, r), lambda: (np.array([out[()]]),))


@kernel("dot")
def dot(xs, ys):
    X, Y = buf(xs), buf(ys)
    f, r = scalar_sum(lambda i: X[i] * Y[i], xs.shape[0], "dot")
    return scalar_work(f, r)


@kernel("pi")
def pi(n):
    step = 1.0 / n

    def term(i):
        t = (hl.cast(T, i) + c(0.5)) * c(step)
        return c(4.0) / (c(1.0) + t * t)

    s, r = scalar_sum(term, n, "pi_sum")
    f = hl.Func("pi")
    f[()] = s[()] * c(step)
    out = scalar()
    return one_stage([f], [out], lambda: parallel_reduce(s, r), lambda: (np.array([out[()]]),))


@kernel("softmax")
def softmax(a):
    A = buf(a)
    n = a.shape[0]
    out = np.empty_like(a)
    r = hl.RDom([(0, n)], "rm")
    m = hl.Func("max")
    m[()] = T.min()
    m[()] = hl.max(m[()], A[r.x])
    s, rs = scalar_sum(lambda i: hl.exp(A[i] - m[()]), n, "sum")
    f = hl.Func("softmax")
    f[x] = hl.exp(A[x] - m[()]) / s[()]

    def hand():
        parallel_reduce(m, r.x)
        parallel_reduce(s, rs)
        pointwise(f, [x])

    return one_stage([f], [buf(out)], hand, lambda: (out,))


@kernel("black_scholes")
def black_scholes(S_, K, T_, r, v):
    # Float(32) only (NA above for f64): Halide's erf.
    SB, KB, TB = buf(S_), buf(K), buf(T_)
    out = np.empty_like(S_)
    sq = hl.sqrt(TB[x])
    d1 = (hl.log(SB[x] / KB[x]) + (c(r) + c(0.5) * c(v) * c(v)) * TB[x]) / (c(v) * sq)
    d2 = d1 - c(v) * sq
    cnd = lambda d: c(0.5) * (c(1.0) + hl.erf(d * c(0.7071067811865476)))  # noqa: E731
    f = hl.Func("black_scholes")
    f[x] = SB[x] * cnd(d1) - KB[x] * hl.exp(-c(r) * TB[x]) * cnd(d2)
    return one_stage([f], [buf(out)], lambda: pointwise(f, [x]), lambda: (out,))


def row_moments(X, cols, name):
    """mean[y] and the population variance var[y] of the rows of X (Halide's y: NumPy's rows)."""
    r = hl.RDom([(0, cols)], name + "_r")
    mean, var = hl.Func(name + "_mean"), hl.Func(name + "_var")
    mean[y] = hl.sum(X[r.x, y]) / c(cols)
    var[y] = hl.sum((X[r.x, y] - mean[y]) ** 2) / c(cols)
    return mean, var


@kernel("normalize")
def normalize(a):
    X = buf(a)
    out = np.empty_like(a)
    mean, var = row_moments(X, a.shape[1], "row")
    f = hl.Func("normalize")
    f[x, y] = (X[x, y] - mean[y]) / hl.sqrt(var[y])

    def hand():
        pointwise(f, [x, y])
        mean.compute_at(f, y)
        var.compute_at(f, y)

    return one_stage([f], [buf(out)], hand, lambda: (out,))


def histogram_stage(hist_buf, index_of, n, dims):
    """hist += counts of index_of(r) over [0, n): per-chunk private bins combined after (tutorial lesson 18)."""
    r = hl.RDom([(0, n)], "hr")
    h = hl.Func("hist")
    h[dims] = hist_buf[dims]
    h[index_of(r.x)] += hl.cast(hist_buf.type(), 1)

    def hand():
        rxo, rxi = hl.RVar("rxo"), hl.RVar("rxi")
        h.update().split(r.x, rxo, rxi, 1 << 16)
        intm = h.update().rfactor(rxo, u)
        intm.compute_root().update().parallel(u)

    return h, hand


@kernel("histogram")
def histogram(xs, hist):
    X, H = buf(xs), buf(hist)
    bins = hist.shape[0]
    h, hand = histogram_stage(H, lambda i: hl.clamp(hl.cast(hl.Int(32), X[i] * c(bins)), 0, bins - 1),
                              xs.shape[0], [x])
    return one_stage([h], [H], hand, lambda: (hist,))


def nearest(a):
    return hl.BoundaryConditions.repeat_edge(buf(a))


@kernel("smooth1d")
def smooth1d(a, out):
    A = nearest(a)
    f = hl.Func("smooth1d")
    f[x] = c(0.25) * A[x - 1] + c(0.5) * A[x] + c(0.25) * A[x + 1]
    return one_stage([f], [buf(out)], lambda: pointwise(f, [x]), lambda: (out,))


@kernel("jacobi2d")
def jacobi2d(a, out):
    A = buf(a)
    f = hl.Func("jacobi2d")
    f[x, y] = c(0.25) * (A[x + 1, y] + A[x - 1, y] + A[x, y - 1] + A[x, y + 1])
    return one_stage([f], [interior(buf(out))], lambda: pointwise(f, [x, y]), lambda: (out,))


@kernel("heat3d")
def heat3d(a, out):
    A = nearest(a)
    f = hl.Func("heat3d")
    ctr = A[x, y, z]
    f[x, y, z] = ctr + c(0.125) * (A[x - 1, y, z] + A[x + 1, y, z] + A[x, y - 1, z] + A[x, y + 1, z] +
                                   A[x, y, z - 1] + A[x, y, z + 1] - c(6.0) * ctr)
    return one_stage([f], [buf(out)], lambda: pointwise(f, [x, y, z]), lambda: (out,))


@kernel("conv2d")
def conv2d(a, w, out):
    A, W = nearest(a), buf(w)
    r = hl.RDom([(0, 5), (0, 5)], "rw")
    f = hl.Func("conv2d")
    f[x, y] = c(0.0)
    f[x, y] += W[r.x, r.y] * A[x + r.x - 2, y + r.y - 2]

    def hand():
        pointwise(f, [x, y])
        if not GPU:
            f.update().unroll(r.x).unroll(r.y).vectorize(x, VEC, hl.TailStrategy.GuardWithIf).parallel(y)
        else:
            f.update().gpu_tile(x, y, hl.Var(), hl.Var(), hl.Var(), hl.Var(), 32, 8)

    return one_stage([f], [buf(out)], hand, lambda: (out,))


# --- the public kernel suite: time-stepped stencils ----------------------------------------------------------

def ping_pong(bufs, sweep_of, steps):
    """A time loop: each step realizes sweep(A) into B's interior, then sweep(B) into A's (one pipeline)."""
    dims = bufs[0].dimensions()
    p = hl.ImageParam(T, dims, "src")
    f = hl.Func("sweep")
    f[[x, y, z][:dims]] = sweep_of(p)
    st = Stage([f], lambda: pointwise(f, [x, y, z][:dims]), [(p, bufs[0])])
    a, b = (interior(bb) for bb in bufs)

    def run(variant):
        for _ in range(steps):
            st(variant, [b], [(p, bufs[0])])
            st(variant, [a], [(p, bufs[1])])

    return run


@kernel("jacobi-1d")
def jacobi_1d(A, B, tsteps):
    run = ping_pong([buf(A), buf(B)], lambda p: c(0.33333) * (p[x - 1] + p[x] + p[x + 1]), tsteps)
    return Work(run, lambda: (A, B))


@kernel("jacobi-2d")
def jacobi_2d(A, B, tsteps):
    run = ping_pong([buf(A), buf(B)], lambda p: c(0.2) * (p[x, y] + p[x - 1, y] + p[x + 1, y] + p[x, y + 1] +
                                                          p[x, y - 1]), tsteps)
    return Work(run, lambda: (A, B))


@kernel("heat-3d")
def heat_3d(A, B, tsteps):
    def sweep(p):
        ctr = p[x, y, z]
        return (c(0.125) * (p[x, y, z + 1] - c(2.0) * ctr + p[x, y, z - 1]) +
                c(0.125) * (p[x, y + 1, z] - c(2.0) * ctr + p[x, y - 1, z]) +
                c(0.125) * (p[x + 1, y, z] - c(2.0) * ctr + p[x - 1, y, z]) + ctr)

    return Work(ping_pong([buf(A), buf(B)], sweep, tsteps), lambda: (A, B))


@kernel("fdtd-2d")
def fdtd_2d(ex, ey, hz, fict, tmax):
    # NumPy [i, j] is Halide (x = j, y = i). One pipeline per time step with three outputs, the new fields.
    F = buf(fict)
    nx, ny = ex.shape
    t = hl.Param(hl.Int(32), "t", 0)
    t.set_estimate(0)

    def define(EX, EY, HZ):
        ey_n, ex_n, hz_n = hl.Func("ey"), hl.Func("ex"), hl.Func("hz")
        ey_n[x, y] = hl.select(y == 0, F[t], EY[x, y] - c(0.5) * (HZ[x, y] - HZ[x, hl.max(y - 1, 0)]))
        ex_n[x, y] = hl.select(x == 0, EX[x, y], EX[x, y] - c(0.5) * (HZ[x, y] - HZ[hl.max(x - 1, 0), y]))
        inner = (x < ny - 1) & (y < nx - 1)
        hz_n[x, y] = hl.select(inner, HZ[x, y] - c(0.7) * (ex_n[hl.min(x + 1, ny - 1), y] - ex_n[x, y] +
                                                            ey_n[x, hl.min(y + 1, nx - 1)] - ey_n[x, y]), HZ[x, y])

        def hand():
            for f in (ey_n, ex_n, hz_n):
                pointwise(f, [x, y])

        return [ex_n, ey_n, hz_n], hand

    st = State([ex, ey, hz], define)

    def run(variant):
        for step in range(tmax):
            t.set(step)
            st.step(variant)

    return Work(run, st.arrays)


@kernel("stencil27-clamp")
def stencil27(out, a):
    A = nearest(a)
    f = hl.Func("stencil27")
    f[x, y, z] = sum(A[x + i, y + j, z + k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)) * c(1 / 27)
    return one_stage([f], [buf(out)], lambda: pointwise(f, [x, y, z]), lambda: (out,))


# --- products ------------------------------------------------------------------------------------------------

def product(A, B, inner, name, scale=1.0):
    """P(x, y) = scale * sum_k A(k, y) * B(x, k): NumPy's scale * (A @ B)."""
    r = hl.RDom([(0, inner)], name + "_k")
    p = hl.Func(name)
    p[x, y] = c(0.0)
    p[x, y] += A[r.x, y] * B[x, r.x]
    s = hl.Func(name + "_scaled")
    s[x, y] = c(scale) * p[x, y]
    return s, p, r.x


def schedule_product(s, p, k):
    """The hand schedule: rows of the result in parallel, each row accumulated in i-k-j order, vectorized."""
    pointwise(s, [x, y])
    if GPU:
        p.compute_root().gpu_tile(x, y, hl.Var(), hl.Var(), hl.Var(), hl.Var(), 32, 8)
        p.update().gpu_tile(x, y, hl.Var(), hl.Var(), hl.Var(), hl.Var(), 32, 8)
        return
    p.compute_at(s, y).vectorize(x, VEC, hl.TailStrategy.GuardWithIf)
    p.update().reorder(x, k, y).vectorize(x, VEC, hl.TailStrategy.GuardWithIf)


@kernel("gemm")
def gemm(C, A, B, alpha, beta):
    def define(CB):
        ab, p, k = product(buf(A), buf(B), A.shape[1], "ab", alpha)
        f = hl.Func("gemm")
        f[x, y] = ab[x, y] + c(beta) * CB[x, y]

        def hand():
            schedule_product(ab, p, k)
            ab.compute_at(f, y)
            pointwise(f, [x, y])

        return [f], hand

    return stateful([C], define)


@kernel("2mm")
def two_mm(D, A, B, C, alpha, beta):
    return stateful([D], lambda DB: two_mm_define(DB, A, B, C, alpha, beta))


def two_mm_define(DB, A, B, C, alpha, beta):
    tmp, p1, k1 = product(buf(A), buf(B), A.shape[1], "tmp", alpha)
    dc, p2, k2 = product(tmp, buf(C), B.shape[1], "dc")
    f = hl.Func("two_mm")
    f[x, y] = dc[x, y] + c(beta) * DB[x, y]

    def hand():
        schedule_product(tmp, p1, k1)
        tmp.compute_root()
        schedule_product(dc, p2, k2)
        dc.compute_at(f, y)
        pointwise(f, [x, y])

    return [f], hand


def matvec(A, vec, cols, name):
    """(A @ vec)[y] = sum_k A(k, y) * vec(k): rows in parallel."""
    r = hl.RDom([(0, cols)], name + "_k")
    f = hl.Func(name)
    f[y] = hl.sum(A[r.x, y] * vec[r.x])
    return f


def vecmat(vec, A, rows, name):
    """(vec @ A)[x] = sum_k vec(k) * A(x, k): row k of A streamed, the columns' sums in vector lanes."""
    r = hl.RDom([(0, rows)], name + "_k")
    f = hl.Func(name)
    f[x] = c(0.0)
    f[x] += vec[r.x] * A[x, r.x]
    return f, r.x


def schedule_matvec(f):
    if GPU:
        f.compute_root().gpu_tile(y, u, 128)
    else:
        f.compute_root().parallel(y, 16)


def schedule_vecmat(f, k):
    if GPU:
        f.compute_root().gpu_tile(x, u, 128)
        f.update().gpu_tile(x, u, 128)
        return
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.compute_root().split(x, xo, xi, 512, hl.TailStrategy.GuardWithIf).parallel(xo).vectorize(xi, VEC, hl.TailStrategy.GuardWithIf)
    f.update().split(x, xo, xi, 512, hl.TailStrategy.GuardWithIf).reorder(xi, k, xo).parallel(xo).vectorize(xi, VEC, hl.TailStrategy.GuardWithIf)


@kernel("atax")
def atax(A, xs):
    AB = buf(A)
    tmp = matvec(AB, buf(xs), A.shape[1], "ax")
    f, k = vecmat(tmp, AB, A.shape[0], "atax")
    out = np.empty(A.shape[1], A.dtype)

    def hand():
        schedule_matvec(tmp)
        schedule_vecmat(f, k)

    return one_stage([f], [buf(out)], hand, lambda: (out,))


@kernel("bicg")
def bicg(A, r, p):
    AB = buf(A)
    s, k = vecmat(buf(r), AB, A.shape[0], "s")
    q = matvec(AB, buf(p), A.shape[1], "q")
    so, qo = np.empty(A.shape[1], A.dtype), np.empty(A.shape[0], A.dtype)

    def hand():
        schedule_vecmat(s, k)
        schedule_matvec(q)

    return one_stage([s, q], [buf(so), buf(qo)], hand, lambda: (so, qo))


@kernel("mvt")
def mvt(x1, x2, A, y1, y2):
    return stateful([x1, x2], lambda X1, X2: mvt_define(X1, X2, A, y1, y2))


def mvt_define(X1, X2, A, y1, y2):
    AB = buf(A)
    ay = matvec(AB, buf(y1), A.shape[1], "ay")
    ya, k = vecmat(buf(y2), AB, A.shape[0], "ya")
    f1, f2 = hl.Func("x1"), hl.Func("x2")
    f1[y] = X1[y] + ay[y]
    f2[x] = X2[x] + ya[x]

    def hand():
        schedule_matvec(ay)
        schedule_vecmat(ya, k)
        pointwise(f1, [y])
        pointwise(f2, [x])

    return [f1, f2], hand


@kernel("gesummv")
def gesummv(A, B, xs, alpha, beta):
    X = buf(xs)
    ax, bx = matvec(buf(A), X, A.shape[1], "ax"), matvec(buf(B), X, B.shape[1], "bx")
    f = hl.Func("gesummv")
    f[y] = c(alpha) * ax[y] + c(beta) * bx[y]
    out = np.empty(A.shape[0], A.dtype)

    def hand():
        pointwise(f, [y])
        schedule_matvec(ax)
        schedule_matvec(bx)

    return one_stage([f], [buf(out)], hand, lambda: (out,))


@kernel("gemver")
def gemver(A, xs, w, u1, v1, u2, v2, ys, zs, alpha, beta):
    return stateful([A, xs, w], lambda AB, XB, WB: gemver_define(AB, XB, WB, u1, v1, u2, v2, ys, zs, alpha, beta))


def gemver_define(AB, XB, WB, u1, v1, u2, v2, ys, zs, alpha, beta):
    n = u1.shape[0]
    U1, V1, U2, V2, Y, Z = (buf(q) for q in (u1, v1, u2, v2, ys, zs))
    a2 = hl.Func("A")
    a2[x, y] = AB[x, y] + U1[y] * V1[x] + U2[y] * V2[x]
    ya, k = vecmat(Y, a2, n, "yA")
    x2 = hl.Func("x")
    x2[x] = XB[x] + c(beta) * ya[x] + Z[x]
    ax = matvec(a2, x2, n, "Ax")
    w2 = hl.Func("w")
    w2[y] = WB[y] + c(alpha) * ax[y]

    def hand():
        pointwise(a2, [x, y])
        schedule_vecmat(ya, k)
        pointwise(x2, [x])
        schedule_matvec(ax)
        pointwise(w2, [y])

    return [a2, x2, w2], hand


@kernel("doitgen")
def doitgen(A, C4):
    def define(AB):
        s_, p, k = product(AB, buf(C4), A.shape[1], "ac")
        return [s_], lambda: schedule_product(s_, p, k)

    return stateful([A], define)


@kernel("nbody")
def nbody(ax, ay, az, xs, ys, zs, m, eps2):
    X, Y, Z, M = buf(xs), buf(ys), buf(zs), buf(m)
    r = hl.RDom([(0, xs.shape[0])], "j")
    j = r.x
    dx, dy, dz = X[j] - X[x], Y[j] - Y[x], Z[j] - Z[x]
    r2 = dx * dx + dy * dy + dz * dz + c(eps2)
    f = M[j] / (r2 * hl.sqrt(r2))
    acc = hl.Func("acc")
    acc[x] = (c(0.0), c(0.0), c(0.0))
    acc[x] = (acc[x][0] + f * dx, acc[x][1] + f * dy, acc[x][2] + f * dz)

    def hand():
        if GPU:
            acc.gpu_tile(x, u, 128)
            acc.update().gpu_tile(x, u, 128)
            return
        # Not vectorized over i: with the j loop inside vector lanes of i (this schedule, and Adams2019's),
        # the JIT code of Halide 21.0.0 crashed (SIGSEGV) in our runs; the parallel scalar form runs.
        acc.parallel(x, 16)
        acc.update().parallel(x, 16)

    return one_stage([acc], [buf(ax), buf(ay), buf(az)], hand, lambda: (ax, ay, az))


@kernel("row-stats")
def row_stats(xs):
    X = buf(xs)
    rows, cols = xs.shape
    mean, var = row_moments(X, cols, "row")
    sd, zf = hl.Func("sd"), hl.Func("z")
    sd[y] = hl.sqrt(var[y])
    zf[x, y] = (X[x, y] - mean[y]) / sd[y]
    r = hl.RDom([(0, rows)], "rr")
    csum, cvar, csd = hl.Func("csum"), hl.Func("cvar"), hl.Func("col_sd")
    csum[x] = c(0.0)
    csum[x] += X[x, r.x]
    cvar[x] = c(0.0)
    cvar[x] += (X[x, r.x] - csum[x] / c(rows)) ** 2
    csd[x] = hl.sqrt(cvar[x] / c(rows))
    outs = [np.empty(rows, xs.dtype) for _ in range(3)] + [np.empty(cols, xs.dtype), np.empty_like(xs)]
    mo, vo, so = hl.Func("mean_out"), hl.Func("var_out"), hl.Func("sd_out")
    mo[y], vo[y], so[y] = mean[y], var[y], sd[y]

    def hand():
        for g in (mean, var):
            g.compute_root().parallel(y, 16)
        for g in (mo, vo, so):
            pointwise(g, [y])
        pointwise(zf, [x, y])
        schedule_vecmat(csum, r.x)
        schedule_vecmat(cvar, r.x)
        pointwise(csd, [x])

    return one_stage([mo, vo, so, csd, zf], [buf(o) for o in outs], hand, lambda: tuple(outs))


@kernel("norm-clip-sum")
def norm_clip_sum(xs, clip):
    X = buf(xs)
    n = xs.shape[0]
    s1, r1 = scalar_sum(lambda i: X[i], n, "s1")
    s2, r2 = scalar_sum(lambda i: (X[i] - s1[()] / c(n)) ** 2, n, "s2")
    s3, r3 = scalar_sum(lambda i: hl.clamp((X[i] - s1[()] / c(n)) / hl.sqrt(s2[()] / c(n)), c(-clip), c(clip)),
                        n, "s3")
    out = scalar()

    def hand():
        for f, r in ((s1, r1), (s2, r2), (s3, r3)):
            parallel_reduce(f, r)

    return one_stage([s3], [out], hand, lambda: (np.array([out[()]]),))


@kernel("hist2d")
def hist2d(hist, xs, ys):
    H, X, Y = buf(hist), buf(xs), buf(ys)
    bins = hist.shape[0]
    idx = lambda b, i: hl.clamp(hl.cast(hl.Int(32), b[i] * c(bins)), 0, bins - 1)  # noqa: E731
    # NumPy hist[bx, by]: Halide (x = by, y = bx).
    h, hand = histogram_stage(H, lambda i: [idx(Y, i), idx(X, i)], xs.shape[0], [x, y])
    return one_stage([h], [H], hand, lambda: (hist,))


@kernel("syrk")
def syrk(C, A, alpha, beta):
    n, m = A.shape
    AB = buf(A)

    def define(CB):
        # C[i, j] for j <= i only: an update over an RDom restricted by where(), row y in parallel.
        rk = hl.RDom([(0, m)], "k")
        rj = hl.RDom([(0, n)], "j")
        rj.where(rj.x <= y)
        dots = hl.Func("dots")  # row y of A against row x, computed per point of the triangle
        dots[x, y] = c(0.0)
        dots[x, y] += AB[rk.x, y] * AB[rk.x, x]
        f = hl.Func("syrk")
        f[x, y] = CB[x, y]
        f[rj.x, y] = c(beta) * CB[rj.x, y] + c(alpha) * dots[rj.x, y]

        def hand():
            if GPU:
                return
            f.compute_root().parallel(y, 8, hl.TailStrategy.GuardWithIf)
            f.update().parallel(y, 8, hl.TailStrategy.GuardWithIf)
            dots.compute_at(f, rj.x)

        return [f], hand

    return stateful([C], define)


def centred(data, n, m, scaled):
    """Funcs: d(x = column, y = row) = data minus its column means, columns divided by sqrt(n) * sd
    (sd <= 0.1 -> 1) when scaled; and the column statistics to schedule."""
    D0 = buf(data)
    r = hl.RDom([(0, n)], "rows")
    csum = hl.Func("csum")
    csum[x] = c(0.0)
    csum[x] += D0[x, r.x]
    d = hl.Func("d")
    stats = [(csum, r.x)]
    if scaled:
        r2 = hl.RDom([(0, n)], "rows2")
        cvar = hl.Func("cvar")
        cvar[x] = c(0.0)
        cvar[x] += (D0[x, r2.x] - csum[x] / c(n)) ** 2
        sd = hl.sqrt(cvar[x] / c(n))
        d[x, y] = (D0[x, y] - csum[x] / c(n)) / (c(np.sqrt(n)) * hl.select(sd <= c(0.1), c(1.0), sd))
        stats.append((cvar, r2.x))
    else:
        d[x, y] = D0[x, y] - csum[x] / c(n)
    return d, stats


def gram(data, scaled, scale):
    n, m = data.shape
    d, stats = centred(data, n, m, scaled)
    dT = hl.Func("dT")
    dT[x, y] = d[y, x]
    g, p, k = product(dT, d, n, "gram", scale)
    out = np.empty((m, m), data.dtype)

    def hand():
        for f, r in stats:
            schedule_vecmat(f, r)
        pointwise(d.compute_root(), [x, y])
        schedule_product(g, p, k)

    return one_stage([g], [buf(out)], hand, lambda: (out,))


@kernel("covariance")
def covariance(data):
    return gram(data, False, 1.0 / (data.shape[0] - 1))


@kernel("correlation")
def correlation(data):
    return gram(data, True, 1.0)


@kernel("logistic_regression")
def logistic_regression(X, Y, w, iterations):
    n, k = X.shape
    XB, YB = buf(X), buf(Y)

    def define(W):
        z = sum(XB[j, x] * W[j] for j in range(k))
        cf = hl.Func("c")
        cf[x] = ((c(1.0) / (c(1.0) + hl.exp(-YB[x] * z))) - c(1.0)) * YB[x]
        r = hl.RDom([(0, n)], "rows")
        grad = hl.Func("grad")
        grad[x] = c(0.0)
        grad[x] += cf[r.x] * XB[x, r.x]
        w_new = hl.Func("w")
        w_new[x] = W[x] - grad[x]

        def hand():
            pointwise(cf.compute_root(), [x])
            ro, ri = hl.RVar("ro"), hl.RVar("ri")
            grad.compute_root().update().split(r.x, ro, ri, 1 << 14)
            intm = grad.update().rfactor(ro, u)
            intm.compute_root().update().reorder(x, ri, u).parallel(u)

        return [w_new], hand

    st = State([w], define)

    def run(variant):
        for _ in range(iterations):
            st.step(variant)

    return Work(run, st.arrays)
