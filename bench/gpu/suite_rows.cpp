// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's suite rows: the 20 kernels of the public suite (bench/suite/kernels.hpp, the very lambdas
// the CPU suite jits) on the CUDA target, f64 as on the CPU, at sizes that load an H100, against hand-written
// CUDA of the same arithmetic (suite_reference.cpp). kiln is called with kernel.async(stream) on device arrays
// (no host transfer, results left on the device), the hand kernels queue on the same stream, and both are
// timed with CUDA events, interleaved (the order rotates), medians. After the timed runs every kernel that
// updates its inputs in place is restored, each side runs once more and the results are compared with the
// CPU suite's tolerances. CuPy's times (bench/gpu/cupy_suite.py, same sizes) are read from a file.
#include "bench/gpu/suite_rows.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "bench/gpu/suite_reference.hpp"
#include "bench/suite/kernels.hpp"
#include "bench/suite/suite.hpp"
#include "kiln/cache.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"

namespace benchgpu {
namespace {

using D = kiln::DeviceArray<double>;
namespace sk = suite::kiln_kernels;
using suite::dims;
using suite::median;

/// What every row shares: the stream both sides queue on and the hand-written kernels.
struct Ctx {
  kiln::cuda::Stream& stream;
  const SuiteReference& ref;
  CUstream cu() const { return static_cast<CUstream>(stream.handle()); }
};

/// One kernel of the suite on the GPU at one size.
struct GpuCase {
  std::string shape;
  /// Bytes one call must move at the least (0: a compute-bound row, no bandwidth column); the note says how
  /// they are counted where the algorithm reads an array more than once.
  double bytes = 0;
  std::function<void()> kiln, hand;
  /// Restores the inputs of both sides (kernels that update arrays in place); may be empty.
  std::function<void()> reset;
  /// Compares the last kiln result with the last hand result: "" or where they differ.
  std::function<std::string()> check;
  /// A fresh kernel object's first call with the disk cache off: trace, passes, emission, NVRTC, load (ms).
  std::function<double()> cold;
};

struct SuiteKernel {
  const char* name;
  GpuCase (*make)(const Ctx&, bool small);
};

/// Device memory of `shape` filled with values uniform in [lo, hi) from an integer hash of the index and the
/// seed (on the device: the suite's matrices are gigabytes); `terms` uniforms averaged (2: a triangular
/// distribution, points clustered around the centre as real data is).
D random_device(std::vector<std::int64_t> shape, long long seed, double lo = -1, double hi = 1, long long terms = 1) {
  static auto fill = kiln::jit(
      "suite_fill",
      [](kiln::Array<double> x, kiln::Double lo, kiln::Double hi, kiln::Int seed, kiln::Int terms) {
        kiln::prange(x.shape(0), [&](kiln::Int i) {
          kiln::Double u = 0.0;
          kiln::range(terms, [&](kiln::Int t) {
            kiln::Int h = (i * terms + t + seed) * 0x1E3779B97F4A7C15LL;
            h = h ^ (h >> 29);
            h = h * 0x3F58476D1CE4E5B9LL;
            h = h ^ (h >> 32);
            u += kiln::to_double(h & 0xFFFFFFFFFFFFFLL) * (1.0 / 4503599627370496.0);
          });
          x[i] = lo + (hi - lo) * (u / kiln::to_double(terms));
        });
      },
      kiln::Options().on(kiln::Target::cuda));
  D a(shape);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  D flat = D::share(std::shared_ptr<double>(std::shared_ptr<void>(), a.data()), {n}, a.device());
  fill(flat, lo, hi, seed, terms);
  return a;
}

/// A device array that a kernel updates in place, twice: kiln's copy and the hand kernel's, restored from
/// `init` by reset() so that a check compares one call of each on equal inputs.
struct Twin {
  D init, k, h;
  explicit Twin(D a) : init(std::move(a)), k(init.clone()), h(init.clone()) {}
  void reset(const kiln::cuda::Stream& s) {
    k.copy_from(init, &s);
    h.copy_from(init, &s);
  }
};

double* ptr(const D& a) { return a.data(); }

/// suite::compare of two device arrays (copied to the host).
std::string compare(const char* what, const D& got, const D& want, double tol, double scale = 1.0) {
  const std::vector<double> g = got.to_vector(), w = want.to_vector();
  return suite::compare(what, g.data(), w.data(), g.size(), tol, scale);
}
/// The same, scaled by the reference's largest magnitude (results that are sums of terms of either sign).
std::string compare_scaled(const char* what, const D& got, const D& want, double tol) {
  const std::vector<double> g = got.to_vector(), w = want.to_vector();
  return suite::compare(what, g.data(), w.data(), g.size(), tol, suite::max_abs(w.data(), w.size()));
}

/// The cold compile of `lambda` as `name`: a fresh kernel object with the disk cache off, its first call made by
/// `call` (the row's own arguments), the trace, pass, code generation and load times of its compile record.
template <class F, class Call>
std::function<double()> cold(const char* name, const F& lambda, const Ctx& ctx, Call call) {
  return [name, lambda, &ctx, call] {
    // The cache settings come back however the call ends.
    struct CacheOff {
      kiln::CacheSettings before = kiln::cache_settings();
      CacheOff() { kiln::set_cache_settings({kiln::CacheMode::off, before.directory, before.max_bytes}); }
      ~CacheOff() { kiln::set_cache_settings(before); }
    };
    {
      const CacheOff off;
      auto k = kiln::jit(name, lambda, kiln::Options().on(kiln::Target::cuda));
      call(k);
      ctx.stream.synchronize();
    }
    const auto history = kiln::compile_history();
    for (auto r = history.rbegin(); r != history.rend(); ++r)
      if (r->kernel == name && r->target == "cuda")
        return (r->trace_us + r->passes_us + r->load_us) / 1e3 + r->codegen_ms;
    return -1.0;
  };
}

kiln::Options on_gpu() { return kiln::Options().on(kiln::Target::cuda); }

// ---- PolyBench/C 4.2 ----

/// The Jacobi and heat stencils: `tsteps` times A -> B then B -> A on a cube of side n and rank `rank`, kiln's
/// `name` against the hand kernels `hand` (n, tsteps), each sweep reading one array and writing the other.
template <class F, class Hand>
GpuCase time_stepped(const Ctx& ctx, const char* name, const F& lambda, int rank, long long n, long long tsteps, unsigned seed,
                     double tol, Hand hand) {
  struct S {
    Twin A, B;
    kiln::Kernel<F> k;
  };
  const std::vector<std::int64_t> shape(static_cast<std::size_t>(rank), n);
  auto s = std::make_shared<S>(S{Twin(random_device(shape, seed)), Twin(random_device(shape, seed + 1)),
                                 kiln::jit(name, lambda, on_gpu())});
  auto run = [s, &ctx, tsteps](auto& k) { k.async(ctx.stream)(s->A.k, s->B.k, tsteps); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"tsteps", tsteps}});
  c.bytes = 2.0 * static_cast<double>(tsteps) * 2.0 * std::pow(static_cast<double>(n), rank) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, tsteps, hand] { (ctx.ref.*hand)(ptr(s->A.h), ptr(s->B.h), n, tsteps); };
  c.reset = [s, &ctx] { s->A.reset(ctx.stream), s->B.reset(ctx.stream); };
  c.check = [s, tol] {
    auto e = compare("A", s->A.k, s->A.h, tol);
    return e.empty() ? compare("B", s->B.k, s->B.h, tol) : e;
  };
  c.cold = cold(name, lambda, ctx, run);
  return c;
}

GpuCase jacobi_1d(const Ctx& ctx, bool small) {
  return time_stepped(ctx, "jacobi_1d", sk::jacobi_1d, 1, small ? 100'003 : 1LL << 25, small ? 3 : 10, 1, 1e-13,
                      &SuiteReference::jacobi_1d);
}

GpuCase jacobi_2d(const Ctx& ctx, bool small) {
  return time_stepped(ctx, "jacobi_2d", sk::jacobi_2d, 2, small ? 331 : 8192, small ? 3 : 5, 3, 1e-13, &SuiteReference::jacobi_2d);
}

GpuCase heat_3d(const Ctx& ctx, bool small) {
  return time_stepped(ctx, "heat_3d", sk::heat_3d, 3, small ? 47 : 384, small ? 3 : 5, 5, 1e-12, &SuiteReference::heat_3d);
}

GpuCase fdtd_2d(const Ctx& ctx, bool small) {
  const long long nx = small ? 231 : 6000, ny = small ? 293 : 6400, tmax = small ? 4 : 5;
  struct S {
    Twin ex, ey, hz;
    D fict;
    decltype(kiln::jit("fdtd_2d", sk::fdtd_2d)) k = kiln::jit("fdtd_2d", sk::fdtd_2d, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({nx, ny}, 7)), Twin(random_device({nx, ny}, 8)),
                                 Twin(random_device({nx, ny}, 9)), random_device({tmax}, 10)});
  auto run = [s, &ctx, tmax](auto& k) { k.async(ctx.stream)(s->ex.k, s->ey.k, s->hz.k, s->fict, tmax); };
  GpuCase c;
  c.shape = dims({{"nx", nx}, {"ny", ny}, {"tmax", tmax}});
  // Per step: ey and ex read hz and update themselves (5 arrays), hz reads ex and ey and updates itself (4).
  c.bytes = 9.0 * tmax * static_cast<double>(nx * ny) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, nx, ny, tmax] { ctx.ref.fdtd_2d(ptr(s->ex.h), ptr(s->ey.h), ptr(s->hz.h), ptr(s->fict), nx, ny, tmax); };
  c.reset = [s, &ctx] { s->ex.reset(ctx.stream), s->ey.reset(ctx.stream), s->hz.reset(ctx.stream); };
  c.check = [s] {
    for (auto [name, t] : {std::pair{"ex", &s->ex}, std::pair{"ey", &s->ey}, std::pair{"hz", &s->hz}}) {
      auto e = compare(name, t->k, t->h, 1e-12, 4.0);
      if (!e.empty()) return e;
    }
    return std::string();
  };
  c.cold = cold("fdtd_2d", sk::fdtd_2d, ctx, run);
  return c;
}

GpuCase gemm(const Ctx& ctx, bool small) {
  const long long ni = small ? 67 : 2000, nj = small ? 71 : 2100, nk = small ? 73 : 2200;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct S {
    Twin C;
    D A, B;
    decltype(kiln::jit("gemm", sk::gemm)) k = kiln::jit("gemm", sk::gemm, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({ni, nj}, 11)), random_device({ni, nk}, 12), random_device({nk, nj}, 13)});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->C.k, s->A, s->B, alpha, beta); };
  GpuCase c;
  c.shape = dims({{"ni", ni}, {"nj", nj}, {"nk", nk}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, ni, nj, nk] { ctx.ref.gemm(ptr(s->C.h), ptr(s->A), ptr(s->B), alpha, beta, ni, nj, nk); };
  c.reset = [s, &ctx] { s->C.reset(ctx.stream); };
  c.check = [s, nk] { return compare("C", s->C.k, s->C.h, 1e-14 * static_cast<double>(nk)); };
  c.cold = cold("gemm", sk::gemm, ctx, run);
  return c;
}

GpuCase two_mm(const Ctx& ctx, bool small) {
  const long long ni = small ? 53 : 1600, nj = small ? 59 : 1700, nk = small ? 61 : 1800, nl = small ? 67 : 1900;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct S {
    Twin D_;
    D A, B, C, tmp;
    decltype(kiln::jit("2mm", sk::two_mm)) k = kiln::jit("2mm", sk::two_mm, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({ni, nl}, 14)), random_device({ni, nk}, 15), random_device({nk, nj}, 16),
                                 random_device({nj, nl}, 17), D({ni, nj})});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->D_.k, s->A, s->B, s->C, alpha, beta); };
  GpuCase c;
  c.shape = dims({{"ni", ni}, {"nj", nj}, {"nk", nk}, {"nl", nl}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, ni, nj, nk, nl] {
    ctx.ref.two_mm(ptr(s->D_.h), ptr(s->A), ptr(s->B), ptr(s->C), ptr(s->tmp), alpha, beta, ni, nj, nk, nl);
  };
  c.reset = [s, &ctx] { s->D_.reset(ctx.stream); };
  c.check = [s, nj, nk] { return compare("D", s->D_.k, s->D_.h, 1e-15 * static_cast<double>(nj * nk)); };
  c.cold = cold("2mm", sk::two_mm, ctx, run);
  return c;
}

GpuCase atax(const Ctx& ctx, bool small) {
  const long long m = small ? 301 : 15000, n = small ? 283 : 14000;
  struct S {
    D A, x, y, y_ref, tmp;
    decltype(kiln::jit("atax", sk::atax)) k = kiln::jit("atax", sk::atax, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({m, n}, 18), random_device({n}, 19), {}, D({n}), D({m})});
  auto run = [s, &ctx](auto& k) { s->y = k.async(ctx.stream)(s->A, s->x); };
  GpuCase c;
  c.shape = dims({{"m", m}, {"n", n}});
  // A^T (A x): the second product needs all of A x, so A is read twice.
  c.bytes = 2.0 * static_cast<double>(m * n) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, m, n] { ctx.ref.atax(ptr(s->y_ref), ptr(s->A), ptr(s->x), ptr(s->tmp), m, n); };
  c.check = [s, m, n] { return compare_scaled("y", s->y, s->y_ref, 1e-15 * static_cast<double>(m + n)); };
  c.cold = cold("atax", sk::atax, ctx, run);
  return c;
}

GpuCase bicg(const Ctx& ctx, bool small) {
  const long long n = small ? 301 : 15000, m = small ? 283 : 14000;
  struct S {
    D A, r, p, s, q, s_ref, q_ref;
    decltype(kiln::jit("bicg", sk::bicg)) k = kiln::jit("bicg", sk::bicg, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n, m}, 20), random_device({n}, 21), random_device({m}, 22), {}, {}, D({m}), D({n})});
  auto run = [s, &ctx](auto& k) { std::tie(s->s, s->q) = k.async(ctx.stream)(s->A, s->r, s->p); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"m", m}});
  // Two products of A (r^T A and A p): one pass over A is the least traffic for both (kiln's two-way tiles read it
  // once, passes/two_way_products.hpp; the hand kernels and cuBLAS read it twice).
  c.bytes = static_cast<double>(n * m) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, m] { ctx.ref.bicg(ptr(s->s_ref), ptr(s->q_ref), ptr(s->A), ptr(s->r), ptr(s->p), n, m); };
  c.check = [s, n, m] {
    auto e = compare("s", s->s, s->s_ref, 1e-15 * static_cast<double>(n));
    return e.empty() ? compare("q", s->q, s->q_ref, 1e-15 * static_cast<double>(m)) : e;
  };
  c.cold = cold("bicg", sk::bicg, ctx, run);
  return c;
}

GpuCase mvt(const Ctx& ctx, bool small) {
  const long long n = small ? 307 : 15000;
  struct S {
    Twin x1, x2;
    D A, y1, y2;
    decltype(kiln::jit("mvt", sk::mvt)) k = kiln::jit("mvt", sk::mvt, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({n}, 23)), Twin(random_device({n}, 24)), random_device({n, n}, 25),
                                 random_device({n}, 26), random_device({n}, 27)});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->x1.k, s->x2.k, s->A, s->y1, s->y2); };
  GpuCase c;
  c.shape = dims({{"n", n}});
  c.bytes = static_cast<double>(n * n) * sizeof(double);  // A y1 and y2^T A: one pass over A for both (as bicg)
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] { ctx.ref.mvt(ptr(s->x1.h), ptr(s->x2.h), ptr(s->A), ptr(s->y1), ptr(s->y2), n); };
  c.reset = [s, &ctx] { s->x1.reset(ctx.stream), s->x2.reset(ctx.stream); };
  c.check = [s, n] {
    auto e = compare("x1", s->x1.k, s->x1.h, 1e-15 * static_cast<double>(n));
    return e.empty() ? compare("x2", s->x2.k, s->x2.h, 1e-15 * static_cast<double>(n)) : e;
  };
  c.cold = cold("mvt", sk::mvt, ctx, run);
  return c;
}

GpuCase gemver(const Ctx& ctx, bool small) {
  const long long n = small ? 311 : 15000;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct S {
    Twin A, x, w;
    D u1, v1, u2, v2, y, z;
    decltype(kiln::jit("gemver", sk::gemver)) k = kiln::jit("gemver", sk::gemver, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({n, n}, 28)), Twin(random_device({n}, 29)), Twin(random_device({n}, 30)),
                                 random_device({n}, 31), random_device({n}, 32), random_device({n}, 33), random_device({n}, 34),
                                 random_device({n}, 35), random_device({n}, 36)});
  auto run = [s, &ctx](auto& k) {
    k.async(ctx.stream)(s->A.k, s->x.k, s->w.k, s->u1, s->v1, s->u2, s->v2, s->y, s->z, alpha, beta);
  };
  GpuCase c;
  c.shape = dims({{"n", n}});
  // The update reads and writes A, then A^T y and A x each read it.
  c.bytes = 4.0 * static_cast<double>(n * n) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] {
    ctx.ref.gemver(ptr(s->A.h), ptr(s->x.h), ptr(s->w.h), ptr(s->u1), ptr(s->v1), ptr(s->u2), ptr(s->v2), ptr(s->y), ptr(s->z),
                   alpha, beta, n);
  };
  c.reset = [s, &ctx] { s->A.reset(ctx.stream), s->x.reset(ctx.stream), s->w.reset(ctx.stream); };
  c.check = [s, n] {
    auto e = compare("A", s->A.k, s->A.h, 1e-15);
    if (e.empty()) e = compare("x", s->x.k, s->x.h, 1e-15 * static_cast<double>(n));
    // w sums n products with x, whose elements are themselves sums of n terms.
    if (e.empty()) e = compare_scaled("w", s->w.k, s->w.h, 1e-15 * static_cast<double>(n));
    return e;
  };
  c.cold = cold("gemver", sk::gemver, ctx, run);
  return c;
}

GpuCase gesummv(const Ctx& ctx, bool small) {
  const long long n = small ? 313 : 11000;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct S {
    D A, B, x, y, y_ref;
    decltype(kiln::jit("gesummv", sk::gesummv)) k = kiln::jit("gesummv", sk::gesummv, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n, n}, 37), random_device({n, n}, 38), random_device({n}, 39), {}, D({n})});
  auto run = [s, &ctx](auto& k) { s->y = k.async(ctx.stream)(s->A, s->B, s->x, alpha, beta); };
  GpuCase c;
  c.shape = dims({{"n", n}});
  c.bytes = 2.0 * static_cast<double>(n * n) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] { ctx.ref.gesummv(ptr(s->y_ref), ptr(s->A), ptr(s->B), ptr(s->x), alpha, beta, n); };
  c.check = [s, n] { return compare("y", s->y, s->y_ref, 1e-15 * static_cast<double>(n)); };
  c.cold = cold("gesummv", sk::gesummv, ctx, run);
  return c;
}

GpuCase syrk(const Ctx& ctx, bool small) {
  const long long n = small ? 97 : 2000, m = small ? 89 : 1800;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct S {
    Twin C;
    D A;
    decltype(kiln::jit("syrk", sk::syrk)) k = kiln::jit("syrk", sk::syrk, on_gpu());
  };
  auto s = std::make_shared<S>(S{Twin(random_device({n, n}, 40)), random_device({n, m}, 41)});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->C.k, s->A, alpha, beta); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, m] { ctx.ref.syrk(ptr(s->C.h), ptr(s->A), alpha, beta, n, m); };
  c.reset = [s, &ctx] { s->C.reset(ctx.stream); };
  c.check = [s, m] { return compare("C", s->C.k, s->C.h, 1e-15 * static_cast<double>(m)); };
  c.cold = cold("syrk", sk::syrk, ctx, run);
  return c;
}

GpuCase covariance(const Ctx& ctx, bool small) {
  const long long n = small ? 103 : 2000, m = small ? 87 : 1200;
  struct S {
    D data, cov, cov_ref, d, mean;
    decltype(kiln::jit("covariance", sk::covariance)) k = kiln::jit("covariance", sk::covariance, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n, m}, 42), {}, D({m, m}), D({n, m}), D({m})});
  auto run = [s, &ctx](auto& k) { s->cov = k.async(ctx.stream)(s->data); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, m] { ctx.ref.covariance(ptr(s->cov_ref), ptr(s->data), ptr(s->d), ptr(s->mean), n, m); };
  c.check = [s] { return compare("cov", s->cov, s->cov_ref, 1e-12); };
  c.cold = cold("covariance", sk::covariance, ctx, run);
  return c;
}

GpuCase correlation(const Ctx& ctx, bool small) {
  const long long n = small ? 103 : 2000, m = small ? 87 : 1200;
  struct S {
    D data, corr, corr_ref, d, mean, sd;
    decltype(kiln::jit("correlation", sk::correlation)) k = kiln::jit("correlation", sk::correlation, on_gpu());
  };
  // Some columns nearly constant, so that the std <= 0.1 rule of the correlation matters (as the CPU suite).
  kiln::NDArray<double> host = random_device({n, m}, 43).to_host();
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < m; j += 7) host(i, j) = 0.5 + 0.01 * host(i, j);
  auto s = std::make_shared<S>(S{kiln::to_device(host), {}, D({m, m}), D({n, m}), D({m}), D({m})});
  auto run = [s, &ctx](auto& k) { s->corr = k.async(ctx.stream)(s->data); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, m] { ctx.ref.correlation(ptr(s->corr_ref), ptr(s->data), ptr(s->d), ptr(s->mean), ptr(s->sd), n, m); };
  c.check = [s] { return compare("corr", s->corr, s->corr_ref, 1e-12); };
  c.cold = cold("correlation", sk::correlation, ctx, run);
  return c;
}

GpuCase doitgen(const Ctx& ctx, bool small) {
  const long long nr = small ? 13 : 256, nq = small ? 11 : 256, np = small ? 37 : 128;
  struct S {
    Twin A;
    D C4;
    decltype(kiln::jit("doitgen", sk::doitgen)) k = kiln::jit("doitgen", sk::doitgen, on_gpu());
  };
  // C4 small enough that A shrinks slowly over the repeated calls (no overflow, no subnormals).
  auto s = std::make_shared<S>(S{Twin(random_device({nr * nq, np}, 44)), random_device({np, np}, 45, -0.15, 0.15)});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->A.k, s->C4); };
  GpuCase c;
  c.shape = dims({{"nr", nr}, {"nq", nq}, {"np", np}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, nr, nq, np] { ctx.ref.doitgen(ptr(s->A.h), ptr(s->C4), nr * nq, np); };
  c.reset = [s, &ctx] { s->A.reset(ctx.stream); };
  c.check = [s, np] { return compare("A", s->A.k, s->A.h, 1e-15 * static_cast<double>(np)); };
  c.cold = cold("doitgen", sk::doitgen, ctx, run);
  return c;
}

// ---- kernels users commonly write ----

GpuCase nbody(const Ctx& ctx, bool small) {
  const long long n = small ? 1031 : 32768;
  static constexpr double eps2 = 1e-3;
  struct S {
    D x, y, z, m, ax, ay, az, rx, ry, rz;
    decltype(kiln::jit("nbody", sk::nbody)) k = kiln::jit("nbody", sk::nbody, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n}, 50), random_device({n}, 51), random_device({n}, 52), random_device({n}, 53, 0.5, 1.5),
                                 D({n}), D({n}), D({n}), D({n}), D({n}), D({n})});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->ax, s->ay, s->az, s->x, s->y, s->z, s->m, eps2); };
  GpuCase c;
  c.shape = dims({{"n", n}});
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] { ctx.ref.nbody(ptr(s->rx), ptr(s->ry), ptr(s->rz), ptr(s->x), ptr(s->y), ptr(s->z), ptr(s->m), eps2, n); };
  c.check = [s] {
    for (auto [name, got, want] : {std::tuple{"ax", &s->ax, &s->rx}, std::tuple{"ay", &s->ay, &s->ry}, std::tuple{"az", &s->az, &s->rz}}) {
      auto e = compare_scaled(name, *got, *want, 1e-11);
      if (!e.empty()) return e;
    }
    return std::string();
  };
  c.cold = cold("nbody", sk::nbody, ctx, run);
  return c;
}

GpuCase row_stats(const Ctx& ctx, bool small) {
  const long long rows = small ? 203 : 8000, cols = small ? 317 : 8000;
  struct S {
    D x, mean, var, sd, col_sd, z, r_mean, r_var, r_sd, r_col_sd, r_z, col_mean;
    decltype(kiln::jit("row_stats", sk::row_stats)) k = kiln::jit("row_stats", sk::row_stats, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({rows, cols}, 54, 0.0, 4.0), {}, {}, {}, {}, {}, D({rows}), D({rows}), D({rows}),
                                 D({cols}), D({rows, cols}), D({cols})});
  auto run = [s, &ctx](auto& k) { std::tie(s->mean, s->var, s->sd, s->col_sd, s->z) = k.async(ctx.stream)(s->x); };
  GpuCase c;
  c.shape = dims({{"rows", rows}, {"cols", cols}});
  c.bytes = 2.0 * static_cast<double>(rows * cols) * sizeof(double);  // read x, write the z-scores
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, rows, cols] {
    ctx.ref.row_stats(ptr(s->r_mean), ptr(s->r_var), ptr(s->r_sd), ptr(s->r_col_sd), ptr(s->col_mean), ptr(s->r_z), ptr(s->x), rows, cols);
  };
  c.check = [s] {
    std::string e = compare("mean", s->mean, s->r_mean, 1e-13);
    if (e.empty()) e = compare("var", s->var, s->r_var, 1e-13);
    if (e.empty()) e = compare("std", s->sd, s->r_sd, 1e-13);
    if (e.empty()) e = compare("col_std", s->col_sd, s->r_col_sd, 1e-13);
    if (e.empty()) e = compare("z", s->z, s->r_z, 1e-13);
    return e;
  };
  c.cold = cold("row_stats", sk::row_stats, ctx, run);
  return c;
}

GpuCase normalize_clip_sum(const Ctx& ctx, bool small) {
  const long long n = small ? 100'019 : 1LL << 27;
  static constexpr double clip = 1.5;
  struct S {
    D x;
    double got = 0, want = 0;
    decltype(kiln::jit("normalize_clip_sum", sk::normalize_clip_sum)) k =
        kiln::jit("normalize_clip_sum", sk::normalize_clip_sum, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n}, 55, -3.0, 5.0)});
  auto run = [s, &ctx](auto& k) { s->got = k.async(ctx.stream)(s->x, clip).get(); };
  GpuCase c;
  c.shape = dims({{"n", n}});
  c.bytes = 3.0 * static_cast<double>(n) * sizeof(double);  // the mean, the std about it, the clipped sum: 3 reads
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] { s->want = ctx.ref.normalize_clip_sum(ptr(s->x), n, clip); };
  c.check = [s, n] { return suite::compare("sum", &s->got, &s->want, 1, 1e-13, clip * static_cast<double>(n)); };
  c.cold = cold("normalize_clip_sum", sk::normalize_clip_sum, ctx, run);
  return c;
}

GpuCase stencil27(const Ctx& ctx, bool small) {
  const long long n = small ? 41 : 512;
  struct S {
    D in, out, out_ref;
    decltype(kiln::jit("stencil27", sk::stencil27)) k = kiln::jit("stencil27", sk::stencil27, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n, n, n}, 56), D({n, n, n}), D({n, n, n})});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->out, s->in); };
  GpuCase c;
  c.shape = dims({{"n", n}});
  c.bytes = 2.0 * static_cast<double>(n * n * n) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n] { ctx.ref.stencil27(ptr(s->out_ref), ptr(s->in), n); };
  c.check = [s] { return compare("out", s->out, s->out_ref, 1e-14); };
  c.cold = cold("stencil27", sk::stencil27, ctx, run);
  return c;
}

GpuCase hist2d(const Ctx& ctx, bool small) {
  const long long n = small ? 100'003 : 1LL << 26, bins = small ? 8 : 64;
  struct S {
    D x, y;
    kiln::DeviceArray<std::int64_t> hist, hist_ref;
    decltype(kiln::jit("hist2d", sk::hist2d)) k = kiln::jit("hist2d", sk::hist2d, on_gpu());
  };
  auto s = std::make_shared<S>(S{random_device({n}, 57, 0.0, 1.0, 2), random_device({n}, 58, 0.0, 1.0, 2),
                                 kiln::DeviceArray<std::int64_t>({bins, bins}), kiln::DeviceArray<std::int64_t>({bins, bins})});
  auto run = [s, &ctx](auto& k) { k.async(ctx.stream)(s->hist, s->x, s->y); };
  GpuCase c;
  c.shape = dims({{"n", n}, {"bins", bins}});
  c.bytes = 2.0 * static_cast<double>(n) * sizeof(double);
  c.kiln = [s, run] { run(s->k); };
  c.hand = [s, &ctx, n, bins] { ctx.ref.hist2d(s->hist_ref.data(), ptr(s->x), ptr(s->y), n, bins); };
  c.reset = [s, &ctx, bins] {
    const std::vector<std::int64_t> zero(static_cast<std::size_t>(bins * bins), 0);
    s->hist.copy_from(zero, &ctx.stream);
    s->hist_ref.copy_from(zero, &ctx.stream);
    ctx.stream.synchronize();  // `zero` is host memory of this frame
  };
  c.check = [s] {
    const auto got = s->hist.to_vector(), want = s->hist_ref.to_vector();
    return suite::compare_counts("hist", got.data(), want.data(), want.size());
  };
  c.cold = cold("hist2d", sk::hist2d, ctx, run);
  return c;
}

const std::vector<SuiteKernel>& all_kernels() {
  static const std::vector<SuiteKernel> all = {
      {"jacobi-1d", jacobi_1d}, {"jacobi-2d", jacobi_2d}, {"heat-3d", heat_3d},
      {"fdtd-2d", fdtd_2d},     {"gemm", gemm},           {"2mm", two_mm},
      {"atax", atax},           {"bicg", bicg},           {"mvt", mvt},
      {"gemver", gemver},       {"gesummv", gesummv},     {"syrk", syrk},
      {"covariance", covariance}, {"correlation", correlation}, {"doitgen", doitgen},
      {"nbody", nbody},         {"row-stats", row_stats}, {"norm-clip-sum", normalize_clip_sum},
      {"stencil27-clamp", stencil27}, {"hist2d", hist2d}};
  return all;
}

/// CuPy's medians by row name, from bench/gpu/cupy_suite.py's output ("<row> <ms>" lines; others ignored).
std::map<std::string, double> read_cupy(const std::string& file) {
  std::map<std::string, double> ms;
  if (file.empty()) return ms;
  std::ifstream in(file);
  if (!in) std::fprintf(stderr, "kiln-bench-gpu: cannot read the CuPy times %s\n", file.c_str());
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    double v = 0;
    if (words >> name >> v) ms[name] = v;
  }
  return ms;
}

struct Result {
  std::string name, shape, check;
  double bytes = 0, kiln_ms = 0, hand_ms = 0, cold_ms = -1;
  int reps = 0;
};

}  // namespace

int suite_rows(const SuiteOptions& opt) {
  // A filter that names none of the suite's kernels (`--filter sort`) costs no reference module, no header.
  if (opt.selected && std::none_of(all_kernels().begin(), all_kernels().end(), [&](const SuiteKernel& k) { return opt.selected(k.name); }))
    return 0;
  kiln::cuda::Stream stream;
  const SuiteReference ref(kiln::gpu::device(kiln::cuda::current_device()), static_cast<CUstream>(stream.handle()));
  const Ctx ctx{stream, ref};
  const std::map<std::string, double> cupy = read_cupy(opt.cupy_file);
  kiln::cuda::Event start, stop;
  auto time_ms = [&](const std::function<void()>& work) {
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    return static_cast<double>(kiln::cuda::Event::elapsed_ms(start, stop));
  };

  std::printf("\nsuite (bench/suite/kernels.hpp on CUDA, f64, device arrays, kernel.async; hand: suite_reference.cpp, "
              "NVRTC --fmad=false; reference module %.0f ms)\n",
              ref.compile_ms());
  std::vector<Result> results;
  int mismatches = 0;
  for (const SuiteKernel& sk : all_kernels()) {
    if (opt.selected && !opt.selected(sk.name)) continue;
    Result r;
    r.name = sk.name;
    try {
      GpuCase c = sk.make(ctx, opt.small);
      r.shape = c.shape;
      r.bytes = c.bytes;
      // Two warm-up calls of each (the first compiles or loads kiln's kernel), then repetitions in rotating
      // order until `reps` of each or about 2 s per side (the slow rows), at least 3.
      for (int w = 0; w < 2; ++w) c.kiln(), c.hand();
      stream.synchronize();
      std::vector<double> tk, th;
      double spent = 0;
      for (int rep = 0; rep < opt.reps && (rep < 3 || spent < 4000); ++rep) {
        const double a = rep % 2 ? time_ms(c.hand) : time_ms(c.kiln);
        const double b = rep % 2 ? time_ms(c.kiln) : time_ms(c.hand);
        (rep % 2 ? th : tk).push_back(a);
        (rep % 2 ? tk : th).push_back(b);
        spent += a + b;
      }
      r.kiln_ms = median(tk);
      r.hand_ms = median(th);
      r.reps = static_cast<int>(tk.size());
      if (c.reset) c.reset();
      c.kiln();
      c.hand();
      stream.synchronize();
      r.check = c.check();
      if (!opt.profile && c.cold) r.cold_ms = c.cold();
    } catch (const std::exception& e) {
      r.check = std::string("FAILED: ") + e.what();
      // One line: the first line of the message (kiln's errors may carry a source listing).
      r.check = r.check.substr(0, r.check.find('\n'));
    }
    if (!r.check.empty()) ++mismatches;
    // Each row as it completes (a run cut short by a timeout still shows the rows it finished).
    std::printf("  %-16s kiln %9.3f ms  hand %9.3f ms  (%d reps)  cold %7.1f ms  %s\n", r.name.c_str(), r.kiln_ms, r.hand_ms, r.reps,
                r.cold_ms, r.check.empty() ? "ok" : r.check.c_str());
    results.push_back(r);
    std::fflush(stdout);
  }

  std::printf("\n%-16s %-28s %9s %9s %9s %9s %9s %9s %7s %8s  %s\n", "row", "shape", "kiln ms", "hand ms", "hand/kiln", "cupy ms",
              "cupy/kiln", "kiln GB/s", "%ceil", "cold ms", "check");
  for (const Result& r : results) {
    const auto cp = cupy.find(r.name);
    char cupy_ms[16] = "        -", cupy_ratio[16] = "        -", bw[16] = "        -", pct[16] = "      -";
    if (cp != cupy.end()) {
      std::snprintf(cupy_ms, sizeof cupy_ms, "%9.3f", cp->second);
      if (r.kiln_ms > 0) std::snprintf(cupy_ratio, sizeof cupy_ratio, "%9.2f", cp->second / r.kiln_ms);
    }
    if (r.bytes > 0 && r.kiln_ms > 0) {
      const double gbps = r.bytes / (r.kiln_ms * 1e6);
      std::snprintf(bw, sizeof bw, "%9.0f", gbps);
      if (opt.ceiling_gbps > 0) std::snprintf(pct, sizeof pct, "%6.1f%%", 100 * gbps / opt.ceiling_gbps);
    }
    std::printf("%-16s %-28s %9.3f %9.3f %9.3f %s %s %s %s %8.1f  %s\n", r.name.c_str(), r.shape.c_str(), r.kiln_ms, r.hand_ms,
                r.kiln_ms > 0 ? r.hand_ms / r.kiln_ms : 0.0, cupy_ms, cupy_ratio, bw, pct, r.cold_ms,
                r.check.empty() ? "ok" : ("MISMATCH " + r.check).c_str());
  }
  std::printf("hand/kiln > 1: kiln faster; cupy/kiln > 1: kiln faster than CuPy; %%ceil: kiln's GB/s over the copy ceiling "
              "(%.0f GB/s) for memory-bound rows; cold: a fresh kernel's first call, kiln's disk cache off (NVRTC's cache: see the first lines)\n",
              opt.ceiling_gbps);
  return mismatches;
}

}  // namespace benchgpu
