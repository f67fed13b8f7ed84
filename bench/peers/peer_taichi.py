# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The workloads of peer_workloads.py in Taichi, as its documentation recommends: @ti.kernel functions over
ti.types.ndarray() arguments (NumPy arrays passed zero-copy on the CPU, ti.ndarray device arrays on CUDA),
the outermost loop of a kernel parallel, `s += ...` on a kernel-scope scalar for reductions (Taichi turns it
into thread-local partial sums), ti.atomic_add for scatters, time loops in Python around kernel calls (only
a kernel's outermost loops run in parallel). ti.init(arch=ti.cpu, cpu_max_num_threads=T, default_fp=ti.f64)
or ti.cuda, with Taichi's default fast_math=True (PEER_TAICHI_FAST_MATH=0 turns it off, to see what it buys);
the offline cache (compiled kernels on disk) in PEER_CACHE. Imported by peer_harness.py.
"""
import os

import numpy as np

from peer_harness import Kernel, settings

S = settings()
import taichi as ti  # noqa: E402  (after the settings: ti.init below)

FP = ti.f32 if S.dtype == "f32" else ti.f64
_cache = {"offline_cache": True, "offline_cache_file_path": S.cache} if S.cache else {"offline_cache": False}
ti.init(arch=ti.cuda if S.target == "cuda" else ti.cpu, cpu_max_num_threads=S.threads, default_fp=FP,
        log_level=ti.WARN, fast_math=os.environ.get("PEER_TAICHI_FAST_MATH", "1") == "1", **_cache)
VARIANTS = ["taichi"]
ARR = ti.types.ndarray()


def version():
    return ".".join(map(str, ti.__version__))


def describe():
    arch = "ti.cuda" if S.target == "cuda" else f"ti.cpu, cpu_max_num_threads={S.threads}"
    return f"Taichi {version()}: {arch}, default_fp {FP}, offline cache {'on' if S.cache else 'off'}"


def dev(a):
    """An argument as the kernels take it: NumPy itself on the CPU (zero-copy), a device ndarray on CUDA."""
    if S.target == "cpu" or not isinstance(a, np.ndarray):
        return a
    d = ti.ndarray(dtype=ti.i64 if a.dtype.kind == "i" else FP, shape=a.shape)
    d.from_numpy(a)
    return d


def host(a):
    return a.to_numpy() if hasattr(a, "to_numpy") else a


def build(run, extra=lambda w: (), result=lambda out, ret: ret):
    """A builder: `run(*device args, *device extras)` makes one call (Python around kernels); `extra(work)`:
    NumPy arrays to allocate for outputs the case returns; `result(host extras, run's return)`: what the
    case's outputs() reads as the return value."""
    def builder(case, work, variant):
        args = [dev(a) for a in work]
        outs = [dev(e) for e in extra(work)]
        last = {}

        def step():
            last["ret"] = run(*args, *outs)
            ti.sync()

        def fetch():
            host_args = tuple(host(a) for a in args)
            return tuple(case.outputs(host_args, result(tuple(host(o) for o in outs), last.get("ret"))))

        return Kernel(step, fetch)
    return builder


def like(*idx):
    """extra(): empty arrays shaped like the work arguments at `idx` (or given shapes)."""
    return lambda w: tuple(np.empty_like(w[i]) if isinstance(i, int) else np.empty(i(w), w[0].dtype) for i in idx)


one = lambda out, ret: out[0]  # noqa: E731  (the case reads one returned array)
KERNELS = {}
NA = {
    "black_scholes": "Taichi has no erf (ti.math lacks it): an approximation written by hand would not compute "
                     "the same function",
}


def kernel(name, **kw):
    def register(run):
        KERNELS[name] = build(run, **kw)
        return run
    return register


# --- kiln-bench rows -----------------------------------------------------------------------------------------

@ti.kernel
def k_saxpy(a: float, x: ARR, y: ARR):
    for i in x:
        y[i] = a * x[i] + y[i]


kernel("saxpy")(k_saxpy)


@ti.kernel
def k_triad(a: ARR, b: ARR, c: ARR, out: ARR):
    for i in a:
        out[i] = a[i] * b[i] + c[i]


kernel("triad")(k_triad)


@ti.kernel
def k_dot(x: ARR, y: ARR) -> float:
    s = 0.0
    for i in x:
        s += x[i] * y[i]
    return s


kernel("dot")(k_dot)


@ti.kernel
def k_pi(n: ti.i64) -> float:
    step = 1.0 / n
    s = 0.0
    for i in range(n):
        x = (i + 0.5) * step
        s += 4.0 / (1.0 + x * x)
    return s * step


kernel("pi")(k_pi)


@ti.kernel
def k_softmax(a: ARR, out: ARR):
    m = -ti.math.inf
    for i in a:
        ti.atomic_max(m, a[i])
    s = 0.0
    for i in a:
        s += ti.exp(a[i] - m)
    inv = 1.0 / s
    for i in a:
        out[i] = ti.exp(a[i] - m) * inv


kernel("softmax", extra=like(0), result=one)(k_softmax)


@ti.kernel
def k_normalize(x: ARR, out: ARR):
    for i in range(x.shape[0]):
        cols = x.shape[1]
        m = 0.0
        for j in range(cols):
            m += x[i, j]
        m /= cols
        v = 0.0
        for j in range(cols):
            v += (x[i, j] - m) ** 2
        sd = ti.sqrt(v / cols)
        for j in range(cols):
            out[i, j] = (x[i, j] - m) / sd


kernel("normalize", extra=like(0), result=one)(k_normalize)


@ti.kernel
def k_histogram(x: ARR, hist: ARR):
    bins = hist.shape[0]
    for i in x:
        ti.atomic_add(hist[ti.cast(x[i] * bins, ti.i32)], 1)


kernel("histogram")(k_histogram)


@ti.kernel
def k_logreg_step(X: ARR, Y: ARR, w: ARR, g: ARR):
    # grad = ((sigmoid(Y * Xw) - 1) * Y) @ X: the 10 partial sums as kernel-scope scalars (unrolled), which
    # Taichi reduces per thread; an ndarray `g[j] += ...` would be an atomic per element.
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in ti.static(range(10)):
            z += X[i, j] * w[j]
        c = ((1.0 / (1.0 + ti.exp(-Y[i] * z))) - 1.0) * Y[i]
        s0 += c * X[i, 0]
        s1 += c * X[i, 1]
        s2 += c * X[i, 2]
        s3 += c * X[i, 3]
        s4 += c * X[i, 4]
        s5 += c * X[i, 5]
        s6 += c * X[i, 6]
        s7 += c * X[i, 7]
        s8 += c * X[i, 8]
        s9 += c * X[i, 9]
    g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9] = s0, s1, s2, s3, s4, s5, s6, s7, s8, s9


@ti.kernel
def k_axpy_sub(w: ARR, g: ARR):
    for j in w:
        w[j] -= g[j]


@kernel("logistic_regression", extra=lambda w: (np.zeros(10, w[0].dtype),))
def logistic_regression(X, Y, w, iterations, g):
    for _ in range(iterations):
        k_logreg_step(X, Y, w, g)
        k_axpy_sub(w, g)


@ti.func
def clamp(i, n):
    return ti.min(ti.max(i, 0), n - 1)


@ti.kernel
def k_smooth1d(a: ARR, out: ARR):
    n = a.shape[0]
    for i in a:
        out[i] = 0.25 * a[clamp(i - 1, n)] + 0.5 * a[i] + 0.25 * a[clamp(i + 1, n)]


kernel("smooth1d")(k_smooth1d)


@ti.kernel
def k_jacobi2d(a: ARR, out: ARR):
    for i, j in ti.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1)):
        out[i, j] = 0.25 * (a[i, j + 1] + a[i, j - 1] + a[i - 1, j] + a[i + 1, j])


kernel("jacobi2d")(k_jacobi2d)


@ti.kernel
def k_heat3d(u: ARR, out: ARR):
    n0, n1, n2 = u.shape[0], u.shape[1], u.shape[2]
    for i, j, k in u:
        c = u[i, j, k]
        out[i, j, k] = c + 0.125 * (u[clamp(i - 1, n0), j, k] + u[clamp(i + 1, n0), j, k] +
                                    u[i, clamp(j - 1, n1), k] + u[i, clamp(j + 1, n1), k] +
                                    u[i, j, clamp(k - 1, n2)] + u[i, j, clamp(k + 1, n2)] - 6.0 * c)


kernel("heat3d")(k_heat3d)


@ti.kernel
def k_conv2d(a: ARR, w: ARR, out: ARR):
    n0, n1 = a.shape[0], a.shape[1]
    for i, j in a:
        s = 0.0
        for di, dj in ti.static(ti.ndrange(5, 5)):
            s += w[di, dj] * a[clamp(i + di - 2, n0), clamp(j + dj - 2, n1)]
        out[i, j] = s


kernel("conv2d")(k_conv2d)


# --- the public kernel suite ---------------------------------------------------------------------------------

@ti.kernel
def k_jacobi1d_sweep(a: ARR, b: ARR):
    for i in range(1, a.shape[0] - 1):
        b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1])


@kernel("jacobi-1d")
def jacobi_1d(A, B, tsteps):
    for _ in range(tsteps):
        k_jacobi1d_sweep(A, B)
        k_jacobi1d_sweep(B, A)


@ti.kernel
def k_jacobi2d_sweep(a: ARR, b: ARR):
    for i, j in ti.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1)):
        b[i, j] = 0.2 * (a[i, j] + a[i, j - 1] + a[i, j + 1] + a[i + 1, j] + a[i - 1, j])


@kernel("jacobi-2d")
def jacobi_2d(A, B, tsteps):
    for _ in range(tsteps):
        k_jacobi2d_sweep(A, B)
        k_jacobi2d_sweep(B, A)


@ti.kernel
def k_heat3d_sweep(a: ARR, b: ARR):
    for i, j, k in ti.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1), (1, a.shape[2] - 1)):
        c = a[i, j, k]
        b[i, j, k] = (0.125 * (a[i + 1, j, k] - 2.0 * c + a[i - 1, j, k]) +
                      0.125 * (a[i, j + 1, k] - 2.0 * c + a[i, j - 1, k]) +
                      0.125 * (a[i, j, k + 1] - 2.0 * c + a[i, j, k - 1]) + c)


@kernel("heat-3d")
def heat_3d(A, B, tsteps):
    for _ in range(tsteps):
        k_heat3d_sweep(A, B)
        k_heat3d_sweep(B, A)


@ti.kernel
def k_fdtd_step(ex: ARR, ey: ARR, hz: ARR, fict: ARR, t: ti.i32):
    # Each top-level loop is one parallel loop, run in order: the four updates of one time step.
    nx, ny = ex.shape[0], ex.shape[1]
    for j in range(ny):
        ey[0, j] = fict[t]
    for i, j in ti.ndrange((1, nx), ny):
        ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
    for i, j in ti.ndrange(nx, (1, ny)):
        ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
    for i, j in ti.ndrange(nx - 1, ny - 1):
        hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])


@kernel("fdtd-2d")
def fdtd_2d(ex, ey, hz, fict, tmax):
    for t in range(tmax):
        k_fdtd_step(ex, ey, hz, fict, t)


# Products: a parallel loop over output rows, the i-k-j order (unit-stride inner loop over a row of the right
# factor), as Taichi's documentation has no matrix product for ndarrays (ti.Matrix is for small fixed sizes).
@ti.func
def gemm_rows(C: ti.template(), A: ti.template(), B: ti.template(), alpha: float, beta: float):
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[i, j] *= beta
        for k in range(A.shape[1]):
            a = alpha * A[i, k]
            for j in range(C.shape[1]):
                C[i, j] += a * B[k, j]


@ti.kernel
def k_gemm(C: ARR, A: ARR, B: ARR, alpha: float, beta: float):
    gemm_rows(C, A, B, alpha, beta)


kernel("gemm")(k_gemm)


@ti.kernel
def k_2mm(D: ARR, A: ARR, B: ARR, C: ARR, alpha: float, beta: float, tmp: ARR):
    gemm_rows(tmp, A, B, alpha, 0.0)
    gemm_rows(D, tmp, C, 1.0, beta)


kernel("2mm", extra=lambda w: (np.zeros((w[1].shape[0], w[2].shape[1]), w[0].dtype),))(k_2mm)


@ti.func
def matvec(y: ti.template(), A: ti.template(), x: ti.template()):
    """y = A @ x: a parallel loop over rows."""
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s += A[i, j] * x[j]
        y[i] = s


@ti.func
def vecmat(y: ti.template(), x: ti.template(), A: ti.template()):
    """y = x @ A: a parallel loop over columns (neighbouring columns share cache lines within a thread's block)."""
    for j in range(A.shape[1]):
        s = 0.0
        for i in range(A.shape[0]):
            s += x[i] * A[i, j]
        y[j] = s


@ti.kernel
def k_atax(A: ARR, x: ARR, tmp: ARR, y: ARR):
    matvec(tmp, A, x)
    vecmat(y, tmp, A)


kernel("atax", extra=lambda w: (np.empty(w[0].shape[0]), np.empty(w[0].shape[1])),
       result=lambda out, ret: out[1])(k_atax)


@ti.kernel
def k_bicg(A: ARR, r: ARR, p: ARR, s: ARR, q: ARR):
    vecmat(s, r, A)
    matvec(q, A, p)


kernel("bicg", extra=lambda w: (np.empty(w[0].shape[1]), np.empty(w[0].shape[0])),
       result=lambda out, ret: out)(k_bicg)


@ti.kernel
def k_mvt(x1: ARR, x2: ARR, A: ARR, y1: ARR, y2: ARR):
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s += A[i, j] * y1[j]
        x1[i] += s
    for j in range(A.shape[1]):
        s = 0.0
        for i in range(A.shape[0]):
            s += y2[i] * A[i, j]
        x2[j] += s


kernel("mvt")(k_mvt)


@ti.kernel
def k_gemver(A: ARR, x: ARR, w: ARR, u1: ARR, v1: ARR, u2: ARR, v2: ARR, y: ARR, z: ARR, alpha: float, beta: float):
    n = A.shape[0]
    for i, j in A:
        A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    for j in range(n):
        s = 0.0
        for i in range(n):
            s += y[i] * A[i, j]
        x[j] += beta * s + z[j]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += A[i, j] * x[j]
        w[i] += alpha * s


kernel("gemver")(k_gemver)


@ti.kernel
def k_gesummv(A: ARR, B: ARR, x: ARR, alpha: float, beta: float, y: ARR):
    for i in range(A.shape[0]):
        sa = 0.0
        sb = 0.0
        for j in range(A.shape[1]):
            sa += A[i, j] * x[j]
            sb += B[i, j] * x[j]
        y[i] = alpha * sa + beta * sb


kernel("gesummv", extra=lambda w: (np.empty(w[0].shape[0]),), result=one)(k_gesummv)


@ti.kernel
def k_syrk(C: ARR, A: ARR, alpha: float, beta: float):
    for i in range(C.shape[0]):
        for j in range(i + 1):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k] * A[j, k]
            C[i, j] = beta * C[i, j] + alpha * s


kernel("syrk")(k_syrk)


@ti.func
def centred(data: ti.template(), d: ti.template(), scaled: ti.template()):
    """d = data minus its column means, each column divided by sqrt(n) * sd (sd <= 0.1 -> 1) when scaled."""
    n, m = data.shape[0], data.shape[1]
    for j in range(m):
        mu = 0.0
        for i in range(n):
            mu += data[i, j]
        mu /= n
        v = 0.0
        for i in range(n):
            v += (data[i, j] - mu) ** 2
        sd = ti.sqrt(v / n)
        div = 1.0
        if ti.static(scaled):
            div = ti.sqrt(float(n)) * (1.0 if sd <= 0.1 else sd)
        for i in range(n):
            d[i, j] = (data[i, j] - mu) / div


@ti.func
def gram(out: ti.template(), d: ti.template(), scale: float):
    """out = d.T @ d * scale: rows of the result in parallel, i-k-j order."""
    n, m = d.shape[0], d.shape[1]
    for i in range(m):
        for j in range(m):
            out[i, j] = 0.0
        for k in range(n):
            a = d[k, i] * scale
            for j in range(m):
                out[i, j] += a * d[k, j]


@ti.kernel
def k_covariance(data: ARR, d: ARR, cov: ARR):
    centred(data, d, False)
    gram(cov, d, 1.0 / (data.shape[0] - 1))


@ti.kernel
def k_correlation(data: ARR, d: ARR, corr: ARR):
    centred(data, d, True)
    gram(corr, d, 1.0)


square = lambda w: (np.empty_like(w[0]), np.empty((w[0].shape[1], w[0].shape[1]), w[0].dtype))  # noqa: E731
kernel("covariance", extra=square, result=lambda out, ret: out[1])(k_covariance)
kernel("correlation", extra=square, result=lambda out, ret: out[1])(k_correlation)


@ti.kernel
def k_doitgen(A: ARR, C4: ARR, tmp: ARR):
    for r in range(A.shape[0]):
        for p in range(A.shape[1]):
            s = 0.0
            for q in range(A.shape[1]):
                s += A[r, q] * C4[q, p]
            tmp[r, p] = s
    for r, p in A:
        A[r, p] = tmp[r, p]


kernel("doitgen", extra=like(0))(k_doitgen)


@ti.kernel
def k_nbody(ax: ARR, ay: ARR, az: ARR, x: ARR, y: ARR, z: ARR, m: ARR, eps2: float):
    n = x.shape[0]
    for i in range(n):
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for j in range(n):
            dx, dy, dz = x[j] - x[i], y[j] - y[i], z[j] - z[i]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            f = m[j] / (r2 * ti.sqrt(r2))
            sx += f * dx
            sy += f * dy
            sz += f * dz
        ax[i], ay[i], az[i] = sx, sy, sz


kernel("nbody")(k_nbody)


@ti.kernel
def k_row_stats(x: ARR, mean: ARR, var: ARR, sd: ARR, col_sd: ARR, z: ARR):
    rows, cols = x.shape[0], x.shape[1]
    for i in range(rows):
        m = 0.0
        for j in range(cols):
            m += x[i, j]
        m /= cols
        v = 0.0
        for j in range(cols):
            v += (x[i, j] - m) ** 2
        v /= cols
        mean[i], var[i], sd[i] = m, v, ti.sqrt(v)
        for j in range(cols):
            z[i, j] = (x[i, j] - m) / ti.sqrt(v)
    for j in range(cols):
        m = 0.0
        for i in range(rows):
            m += x[i, j]
        m /= rows
        v = 0.0
        for i in range(rows):
            v += (x[i, j] - m) ** 2
        col_sd[j] = ti.sqrt(v / rows)


kernel("row-stats", extra=lambda w: tuple(np.empty(w[0].shape[0]) for _ in range(3)) + (np.empty(w[0].shape[1]),
                                                                                       np.empty_like(w[0])),
       result=lambda out, ret: out)(k_row_stats)


@ti.kernel
def k_norm_clip_sum(x: ARR, c: float) -> float:
    n = x.shape[0]
    m = 0.0
    for i in x:
        m += x[i]
    m /= n
    v = 0.0
    for i in x:
        v += (x[i] - m) ** 2
    inv = 1.0 / ti.sqrt(v / n)
    s = 0.0
    for i in x:
        s += ti.min(ti.max((x[i] - m) * inv, -c), c)
    return s


kernel("norm-clip-sum")(k_norm_clip_sum)


@ti.kernel
def k_stencil27(out: ARR, a: ARR):
    n = a.shape[0]
    for i, j, k in a:
        s = 0.0
        for di, dj, dk in ti.static(ti.ndrange((-1, 2), (-1, 2), (-1, 2))):
            s += a[clamp(i + di, n), clamp(j + dj, n), clamp(k + dk, n)]
        out[i, j, k] = s * (1.0 / 27.0)


kernel("stencil27-clamp")(k_stencil27)


@ti.kernel
def k_hist2d(hist: ARR, x: ARR, y: ARR):
    bins = hist.shape[0]
    for i in x:
        ti.atomic_add(hist[ti.cast(x[i] * bins, ti.i32), ti.cast(y[i] * bins, ti.i32)], 1)


kernel("hist2d")(k_hist2d)
