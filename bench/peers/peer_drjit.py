# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The workloads of peer_workloads.py in Dr.Jit, as its documentation writes array programs: flat JIT arrays
(drjit.llvm on the CPU, drjit.cuda on the GPU) resident in Dr.Jit's memory, element-wise expressions traced
and fused into one kernel per dr.eval(), neighbours and rows read with dr.gather, scatters with
dr.scatter_reduce, reductions with dr.sum / dr.block_reduce, and loops inside a kernel (a product's inner
dimension, n-body's pairs) as symbolic loops of @dr.syntax `while`. Time steps are Python loops, one
dr.eval() per sweep. Dr.Jit keeps compiled kernels in memory and on disk ($HOME/.drjit: HOME is PEER_CACHE
when given); dr.set_thread_count(T). Every call re-traces its Python (the kernel is then found by hash).
Imported by peer_harness.py.
"""
import math
import os

import numpy as np

from peer_harness import Kernel, settings

S = settings()
if S.cache:
    os.environ["HOME"] = S.cache  # Dr.Jit's kernel cache: $HOME/.drjit
import drjit as dr  # noqa: E402

if S.target == "cuda":
    from drjit.cuda import Float32, Float64, Int32, Int64, UInt32  # noqa: E402
else:
    from drjit.llvm import Float32, Float64, Int32, Int64, UInt32  # noqa: E402
    dr.set_thread_count(S.threads)
F = Float32 if S.dtype == "f32" else Float64
VARIANTS = ["drjit"]


def version():
    return dr.__version__


def describe():
    backend = "drjit.cuda" if S.target == "cuda" else f"drjit.llvm, {S.threads} threads"
    return f"Dr.Jit {version()}: {backend}, {F.__name__}, default JIT flags, kernel cache $HOME/.drjit"


def put(a):
    """A NumPy array (or scalar) as a flat Dr.Jit array in Dr.Jit's memory."""
    if not isinstance(a, np.ndarray):
        return a
    return (Int64 if a.dtype.kind == "i" else F)(np.ascontiguousarray(a).ravel())


def get(v, shape):
    return np.asarray(v.numpy()).reshape(shape)


def idx(n):
    return dr.arange(Int32, n)


def clamp(i, n):
    return dr.clip(i, 0, n - 1)


def at(arr, i):
    return dr.gather(type(arr), arr, UInt32(i))


KERNELS = {}
NA = {}


def kernel(name):
    """Registers `make(*work)` -> (state dict of Dr.Jit arrays, update(state), outputs(state) -> NumPy tuple)."""
    def register(make):
        def builder(case, work, variant):
            state, update, outputs = make(*work)

            def step():
                update(state)
                dr.eval(*[v for v in state.values() if dr.is_array_v(v)])
                dr.sync_thread()

            return Kernel(step, lambda: outputs(state))
        KERNELS[name] = builder
        return make
    return register


def returned(state_key, shape):
    return lambda st: (get(st[state_key], shape),)


# --- kiln-bench rows -----------------------------------------------------------------------------------------

@kernel("saxpy")
def saxpy(a, x, y):
    st = {"x": put(x), "y": put(y)}
    return st, lambda s: s.update(y=a * s["x"] + s["y"]), lambda s: (get(s["y"], y.shape),)


@kernel("triad")
def triad(a, b, c, out):
    st = {"a": put(a), "b": put(b), "c": put(c), "out": None}
    return st, lambda s: s.update(out=s["a"] * s["b"] + s["c"]), returned("out", out.shape)


@kernel("dot")
def dot(x, y):
    st = {"x": put(x), "y": put(y), "r": None}
    return st, lambda s: s.update(r=dr.sum(s["x"] * s["y"])), returned("r", (1,))


@kernel("pi")
def pi(n):
    step = 1.0 / n

    def update(s):
        t = (F(dr.arange(UInt32, n)) + 0.5) * step
        s["r"] = dr.sum(4.0 / (1.0 + t * t)) * step

    return {"r": None}, update, returned("r", (1,))


@kernel("softmax")
def softmax(a):
    def update(s):
        e = dr.exp(s["a"] - dr.max(s["a"]))
        s["p"] = e / dr.sum(e)

    return {"a": put(a), "p": None}, update, returned("p", a.shape)


@kernel("black_scholes")
def black_scholes(S_, K, T, r, v):
    def update(s):
        S, K_, T_ = s["S"], s["K"], s["T"]
        sq = dr.sqrt(T_)
        d1 = (dr.log(S / K_) + (r + 0.5 * v * v) * T_) / (v * sq)
        d2 = d1 - v * sq
        s["call"] = (S * (0.5 * (1.0 + dr.erf(d1 * 0.7071067811865476))) -
                     K_ * dr.exp(-r * T_) * (0.5 * (1.0 + dr.erf(d2 * 0.7071067811865476))))

    return {"S": put(S_), "K": put(K), "T": put(T), "call": None}, update, returned("call", S_.shape)


def row_stats_of(x, rows, cols):
    """Per-row mean and population variance of a flat rows x cols array (dr.block_reduce over each row)."""
    mean = dr.block_reduce(dr.ReduceOp.Add, x, cols) / cols
    row = idx(rows * cols) // cols
    d = x - at(mean, row)
    var = dr.block_reduce(dr.ReduceOp.Add, d * d, cols) / cols
    return mean, var, row


@kernel("normalize")
def normalize(x):
    rows, cols = x.shape

    def update(s):
        mean, var, row = row_stats_of(s["x"], rows, cols)
        dr.eval(mean, var)
        s["z"] = (s["x"] - at(mean, row)) / dr.sqrt(at(var, row))

    return {"x": put(x), "z": None}, update, returned("z", x.shape)


@kernel("histogram")
def histogram(x, hist):
    bins = hist.shape[0]

    def update(s):
        dr.scatter_reduce(dr.ReduceOp.Add, s["hist"], Int64(1), UInt32(Int32(s["x"] * bins)))

    return {"x": put(x), "hist": put(hist)}, update, lambda s: (get(s["hist"], hist.shape),)


@kernel("logistic_regression")
def logistic_regression(X, Y, w, iterations):
    n, k = X.shape
    cols = [put(np.ascontiguousarray(X[:, j])) for j in range(k)]  # columns: contiguous gathers-free reads

    def update(s):
        for _ in range(iterations):
            w_ = [at(s["w"], j) for j in range(k)]  # broadcast w[j] to every lane
            z = sum(cols[j] * w_[j] for j in range(k))
            c = ((1.0 / (1.0 + dr.exp(-s["Y"] * z))) - 1.0) * s["Y"]
            grad = F([0.0] * k)
            for j in range(k):
                dr.scatter(grad, dr.sum(c * cols[j]), UInt32(j))
            s["w"] = s["w"] - grad
            dr.eval(s["w"])

    return {"Y": put(Y), "w": put(w)}, update, lambda s: (get(s["w"], w.shape),)


@kernel("smooth1d")
def smooth1d(a, out):
    n = a.shape[0]

    def update(s):
        i = idx(n)
        A = s["a"]
        s["out"] = 0.25 * at(A, clamp(i - 1, n)) + 0.5 * A + 0.25 * at(A, clamp(i + 1, n))

    return {"a": put(a), "out": None}, update, returned("out", a.shape)


def grid2(n0, n1):
    k = idx(n0 * n1)
    return k // n1, k % n1


@kernel("jacobi2d")
def jacobi2d(a, out):
    n0, n1 = a.shape

    def update(s):
        i, j = grid2(n0, n1)
        A = s["a"]
        inside = (i > 0) & (i < n0 - 1) & (j > 0) & (j < n1 - 1)
        k = i * n1 + j
        new = 0.25 * (at(A, dr.select(inside, k + 1, k)) + at(A, dr.select(inside, k - 1, k)) +
                      at(A, dr.select(inside, k - n1, k)) + at(A, dr.select(inside, k + n1, k)))
        s["out"] = dr.select(inside, new, s["out"])

    return {"a": put(a), "out": put(out)}, update, returned("out", a.shape)


@kernel("heat3d")
def heat3d(a, out):
    n0, n1, n2 = a.shape

    def update(s):
        k = idx(n0 * n1 * n2)
        i, j, l = k // (n1 * n2), (k // n2) % n1, k % n2
        U = s["a"]
        g = lambda ii, jj, ll: at(U, (ii * n1 + jj) * n2 + ll)  # noqa: E731
        s["out"] = U + 0.125 * (g(clamp(i - 1, n0), j, l) + g(clamp(i + 1, n0), j, l) + g(i, clamp(j - 1, n1), l) +
                                g(i, clamp(j + 1, n1), l) + g(i, j, clamp(l - 1, n2)) + g(i, j, clamp(l + 1, n2)) -
                                6.0 * U)

    return {"a": put(a), "out": None}, update, returned("out", a.shape)


@kernel("conv2d")
def conv2d(a, w, out):
    n0, n1 = a.shape

    def update(s):
        i, j = grid2(n0, n1)
        A, W = s["a"], s["w"]
        acc = F(0.0)
        for di in range(5):
            for dj in range(5):
                acc += at(W, Int32(di * 5 + dj)) * at(A, clamp(i + di - 2, n0) * n1 + clamp(j + dj - 2, n1))
        s["out"] = acc

    return {"a": put(a), "w": put(w), "out": None}, update, returned("out", a.shape)


# --- the public kernel suite ---------------------------------------------------------------------------------

def sweeps(arrays, sweep, steps):
    """A PolyBench time loop: each step B = sweep(A) then A = sweep(B), one kernel per sweep."""
    shape = arrays[0].shape

    def update(s):
        for _ in range(steps):
            s["B"] = sweep(s["A"], s["B"])
            dr.eval(s["B"])
            s["A"] = sweep(s["B"], s["A"])
            dr.eval(s["A"])

    return ({"A": put(arrays[0]), "B": put(arrays[1])}, update,
            lambda s: (get(s["A"], shape), get(s["B"], shape)))


def interior_select(shape):
    """Flat index k and whether it lies off every edge, for an array of `shape`."""
    k = idx(int(np.prod(shape)))
    inside, rest = dr.full(dr.mask_t(Int32), True, dr.width(k)), k
    for d in reversed(shape):
        c = rest % d
        inside &= (c > 0) & (c < d - 1)
        rest = rest // d
    return k, inside


@kernel("jacobi-1d")
def jacobi_1d(A, B, tsteps):
    n = A.shape[0]

    def sweep(a, b):
        k, inside = interior_select((n,))
        nb = lambda o: at(a, dr.select(inside, k + o, k))  # noqa: E731
        return dr.select(inside, 0.33333 * (nb(-1) + a + nb(1)), b)

    return sweeps((A, B), sweep, tsteps)


@kernel("jacobi-2d")
def jacobi_2d(A, B, tsteps):
    n0, n1 = A.shape

    def sweep(a, b):
        k, inside = interior_select((n0, n1))
        nb = lambda o: at(a, dr.select(inside, k + o, k))  # noqa: E731
        return dr.select(inside, 0.2 * (a + nb(-1) + nb(1) + nb(n1) + nb(-n1)), b)

    return sweeps((A, B), sweep, tsteps)


@kernel("heat-3d")
def heat_3d(A, B, tsteps):
    n0, n1, n2 = A.shape

    def sweep(a, b):
        k, inside = interior_select((n0, n1, n2))
        nb = lambda o: at(a, dr.select(inside, k + o, k))  # noqa: E731
        p, r = n1 * n2, n2
        return dr.select(inside, 0.125 * (nb(p) - 2.0 * a + nb(-p)) + 0.125 * (nb(r) - 2.0 * a + nb(-r)) +
                         0.125 * (nb(1) - 2.0 * a + nb(-1)) + a, b)

    return sweeps((A, B), sweep, tsteps)


@kernel("fdtd-2d")
def fdtd_2d(ex, ey, hz, fict, tmax):
    nx, ny = ex.shape

    def update(s):
        k = idx(nx * ny)
        i, j = k // ny, k % ny
        for t in range(tmax):
            EX, EY, HZ = s["ex"], s["ey"], s["hz"]
            EY = dr.select(i == 0, at(s["fict"], Int32(t)),
                           EY - 0.5 * (HZ - at(HZ, dr.select(i > 0, k - ny, k))))
            EX = dr.select(j == 0, EX, EX - 0.5 * (HZ - at(HZ, dr.select(j > 0, k - 1, k))))
            dr.eval(EX, EY)
            inner = (i < nx - 1) & (j < ny - 1)
            HZ = dr.select(inner, HZ - 0.7 * (at(EX, dr.select(inner, k + 1, k)) - EX +
                                              at(EY, dr.select(inner, k + ny, k)) - EY), HZ)
            dr.eval(HZ)
            s.update(ex=EX, ey=EY, hz=HZ)

    st = {"ex": put(ex), "ey": put(ey), "hz": put(hz), "fict": put(fict)}
    return st, update, lambda s: tuple(get(s[q], ex.shape) for q in ("ex", "ey", "hz"))


@dr.syntax
def dot_loop(a, a_base, a_stride, b, b_base, b_stride, count):
    """Per lane: sum_k a[a_base + k * a_stride] * b[b_base + k * b_stride], a symbolic loop in the kernel."""
    s = F(0.0)
    k = Int32(0)
    while k < count:
        s += at(a, a_base + k * a_stride) * at(b, b_base + k * b_stride)
        k += 1
    return s


def matmul(A, B, ni, nk, nj):
    """(A @ B) flat, A ni x nk and B nk x nj flat: one lane per result element."""
    i, j = grid2(ni, nj)
    return dot_loop(A, i * nk, 1, B, j, nj, nk)


@kernel("gemm")
def gemm(C, A, B, alpha, beta):
    ni, nk = A.shape
    nj = B.shape[1]
    st = {"C": put(C), "A": put(A), "B": put(B)}
    return (st, lambda s: s.update(C=alpha * matmul(s["A"], s["B"], ni, nk, nj) + beta * s["C"]),
            lambda s: (get(s["C"], C.shape),))


@kernel("2mm")
def two_mm(D, A, B, C, alpha, beta):
    ni, nk = A.shape
    nj, nl = C.shape

    def update(s):
        tmp = alpha * matmul(s["A"], s["B"], ni, nk, nj)
        dr.eval(tmp)
        s["D"] = matmul(tmp, s["C"], ni, nj, nl) + beta * s["D"]

    return {"D": put(D), "A": put(A), "B": put(B), "C": put(C)}, update, lambda s: (get(s["D"], D.shape),)


def matvec(A, x, rows, cols):
    """A @ x: a lane per row, the loop over the row's columns."""
    return dot_loop(A, idx(rows) * cols, 1, x, Int32(0), 1, cols)


def vecmat(x, A, rows, cols):
    """x @ A: a lane per column, the loop down the column (neighbouring lanes read neighbouring addresses)."""
    return dot_loop(x, Int32(0), 1, A, idx(cols), cols, rows)


@kernel("atax")
def atax(A, x):
    m, n = A.shape

    def update(s):
        tmp = matvec(s["A"], s["x"], m, n)
        dr.eval(tmp)
        s["y"] = vecmat(tmp, s["A"], m, n)

    return {"A": put(A), "x": put(x), "y": None}, update, returned("y", (n,))


@kernel("bicg")
def bicg(A, r, p):
    n, m = A.shape

    def update(s):
        s["s"] = vecmat(s["r"], s["A"], n, m)
        s["q"] = matvec(s["A"], s["p"], n, m)

    st = {"A": put(A), "r": put(r), "p": put(p), "s": None, "q": None}
    return st, update, lambda s: (get(s["s"], (m,)), get(s["q"], (n,)))


@kernel("mvt")
def mvt(x1, x2, A, y1, y2):
    n = A.shape[0]

    def update(s):
        s["x1"] = s["x1"] + matvec(s["A"], s["y1"], n, n)
        s["x2"] = s["x2"] + vecmat(s["y2"], s["A"], n, n)

    st = {"x1": put(x1), "x2": put(x2), "A": put(A), "y1": put(y1), "y2": put(y2)}
    return st, update, lambda s: (get(s["x1"], (n,)), get(s["x2"], (n,)))


@kernel("gemver")
def gemver(A, x, w, u1, v1, u2, v2, y, z, alpha, beta):
    n = A.shape[0]

    def update(s):
        i, j = grid2(n, n)
        s["A"] = s["A"] + at(s["u1"], i) * at(s["v1"], j) + at(s["u2"], i) * at(s["v2"], j)
        dr.eval(s["A"])
        s["x"] = s["x"] + beta * vecmat(s["y"], s["A"], n, n) + s["z"]
        dr.eval(s["x"])
        s["w"] = s["w"] + alpha * matvec(s["A"], s["x"], n, n)

    st = {k: put(v) for k, v in dict(A=A, x=x, w=w, u1=u1, v1=v1, u2=u2, v2=v2, y=y, z=z).items()}
    return st, update, lambda s: (get(s["A"], A.shape), get(s["x"], (n,)), get(s["w"], (n,)))


@kernel("gesummv")
def gesummv(A, B, x, alpha, beta):
    n = A.shape[0]

    def update(s):
        s["y"] = alpha * matvec(s["A"], s["x"], n, n) + beta * matvec(s["B"], s["x"], n, n)

    return {"A": put(A), "B": put(B), "x": put(x), "y": None}, update, returned("y", (n,))


@kernel("syrk")
def syrk(C, A, alpha, beta):
    n, m = A.shape
    li, lj = np.tril_indices(n)  # one lane per lower-triangle element (index arrays made once)
    lanes = {"i": Int32(li.astype(np.int32)), "j": Int32(lj.astype(np.int32))}

    def update(s):
        i, j = lanes["i"], lanes["j"]
        k = i * n + j
        new = beta * at(s["C"], k) + alpha * dot_loop(s["A"], i * m, 1, s["A"], j * m, 1, m)
        dr.scatter(s["C"], new, UInt32(k))

    return {"C": put(C), "A": put(A)}, update, lambda s: (get(s["C"], C.shape),)


def centred(data, n, m, scaled):
    """data minus its column means, columns divided by sqrt(n) * sd (sd <= 0.1 -> 1) when scaled."""
    ones = dr.full(F, 1.0, n)
    mean = vecmat(ones, data, n, m) / n
    dr.eval(mean)
    col = idx(n * m) % m
    d = data - at(mean, col)
    dr.eval(d)
    if scaled:
        sd = dr.sqrt(dot_loop(d, idx(m), m, d, idx(m), m, n) / n)
        d = d / at(math.sqrt(n) * dr.select(sd <= 0.1, 1.0, sd), col)
        dr.eval(d)
    return d


def gram(d, n, m, scale):
    """d.T @ d * scale: a lane per (i, j), the loop down columns i and j."""
    i, j = grid2(m, m)
    return dot_loop(d, i, m, d, j, m, n) * scale


@kernel("covariance")
def covariance(data):
    n, m = data.shape
    return ({"data": put(data), "cov": None},
            lambda s: s.update(cov=gram(centred(s["data"], n, m, False), n, m, 1.0 / (n - 1))),
            returned("cov", (m, m)))


@kernel("correlation")
def correlation(data):
    n, m = data.shape
    return ({"data": put(data), "corr": None},
            lambda s: s.update(corr=gram(centred(s["data"], n, m, True), n, m, 1.0)), returned("corr", (m, m)))


@kernel("doitgen")
def doitgen(A, C4):
    rows, p = A.shape
    return ({"A": put(A), "C4": put(C4)}, lambda s: s.update(A=matmul(s["A"], s["C4"], rows, p, p)),
            lambda s: (get(s["A"], A.shape),))


@dr.syntax
def nbody_lanes(x, y, z, m, eps2, n):
    i = idx(n)
    xi, yi, zi = at(x, i), at(y, i), at(z, i)
    sx, sy, sz = F(0.0), F(0.0), F(0.0)
    j = Int32(0)
    while j < n:
        dx, dy, dz = at(x, j) - xi, at(y, j) - yi, at(z, j) - zi
        r2 = dx * dx + dy * dy + dz * dz + eps2
        f = at(m, j) / (r2 * dr.sqrt(r2))
        sx += f * dx
        sy += f * dy
        sz += f * dz
        j += 1
    return sx, sy, sz


@kernel("nbody")
def nbody(ax, ay, az, x, y, z, m, eps2):
    n = x.shape[0]

    def update(s):
        s["ax"], s["ay"], s["az"] = nbody_lanes(s["x"], s["y"], s["z"], s["m"], eps2, n)

    st = {"x": put(x), "y": put(y), "z": put(z), "m": put(m), "ax": None, "ay": None, "az": None}
    return st, update, lambda s: tuple(get(s[q], (n,)) for q in ("ax", "ay", "az"))


@kernel("row-stats")
def row_stats(x):
    rows, cols = x.shape

    def update(s):
        mean, var, row = row_stats_of(s["x"], rows, cols)
        dr.eval(mean, var)
        sd = dr.sqrt(var)
        s.update(mean=mean, var=var, sd=sd, z=(s["x"] - at(mean, row)) / at(sd, row))
        ones = dr.full(F, 1.0, rows)
        cmean = vecmat(ones, s["x"], rows, cols) / rows
        dr.eval(cmean)
        d = s["x"] - at(cmean, idx(rows * cols) % cols)
        s["col_sd"] = dr.sqrt(dot_loop(d, idx(cols), cols, d, idx(cols), cols, rows) / rows)

    st = {"x": put(x), "mean": None, "var": None, "sd": None, "col_sd": None, "z": None}
    return st, update, lambda s: (get(s["mean"], (rows,)), get(s["var"], (rows,)), get(s["sd"], (rows,)),
                                  get(s["col_sd"], (cols,)), get(s["z"], x.shape))


@kernel("norm-clip-sum")
def norm_clip_sum(x, c):
    n = x.shape[0]

    def update(s):
        X = s["x"]
        mean = dr.sum(X) / n
        d = X - mean
        sd = dr.sqrt(dr.sum(d * d) / n)
        s["r"] = dr.sum(dr.clip(d / sd, -c, c))

    return {"x": put(x), "r": None}, update, returned("r", (1,))


@kernel("stencil27-clamp")
def stencil27(out, a):
    n = a.shape[0]

    def update(s):
        k = idx(n * n * n)
        i, j, l = k // (n * n), (k // n) % n, k % n
        acc = F(0.0)
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                for dk in (-1, 0, 1):
                    acc += at(s["a"], (clamp(i + di, n) * n + clamp(j + dj, n)) * n + clamp(l + dk, n))
        s["out"] = acc * (1.0 / 27.0)

    return {"a": put(a), "out": None}, update, returned("out", a.shape)


@kernel("hist2d")
def hist2d(hist, x, y):
    bins = hist.shape[0]

    def update(s):
        flat = Int32(s["x"] * bins) * bins + Int32(s["y"] * bins)
        dr.scatter_reduce(dr.ReduceOp.Add, s["hist"], Int64(1), UInt32(flat))

    return {"hist": put(hist), "x": put(x), "y": put(y)}, update, lambda s: (get(s["hist"], hist.shape),)
