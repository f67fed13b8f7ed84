// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The public kernel suite (bench/suite/kernels.hpp: the lambdas kiln-suite and kiln-bench-gpu's suite rows jit)
// on the CUDA target: every kernel traced and lowered for CUDA and compiled by NVRTC for sm_90 warning-free (no
// GPU needed), and the suite's hand-written CUDA likewise; on a GPU every kernel against the interpreter at small
// sizes, 0, 1 and primes where the kernel allows them (skipped without a GPU). Where the build has the CPU
// backend the same differential runs there too, so the comparisons themselves are exercised everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include "bench/gpu/suite_reference.hpp"
#include "bench/suite/kernels.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "kiln/config.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace sk = suite::kiln_kernels;

// ---- NVRTC: every suite kernel, no GPU needed ----

struct Lowering {
  std::string name;
  std::function<ir::Function()> lower;
};

template <class F>
Lowering lowering(std::string name, const F& fn, std::vector<std::string> params) {
  return {name, [name, fn, params] { return cudatest::rows::lower_for_cuda(name, fn, params); }};
}

const std::vector<Lowering>& lowerings() {
  static const std::vector<Lowering> all = {
      lowering("jacobi_1d", sk::jacobi_1d, {"A", "B", "tsteps"}),
      lowering("jacobi_2d", sk::jacobi_2d, {"A", "B", "tsteps"}),
      lowering("heat_3d", sk::heat_3d, {"A", "B", "tsteps"}),
      lowering("fdtd_2d", sk::fdtd_2d, {"ex", "ey", "hz", "fict", "tmax"}),
      lowering("gemm", sk::gemm, {"C", "A", "B", "alpha", "beta"}),
      lowering("two_mm", sk::two_mm, {"D", "A", "B", "C", "alpha", "beta"}),
      lowering("atax", sk::atax, {"A", "x"}),
      lowering("bicg", sk::bicg, {"A", "r", "p"}),
      lowering("mvt", sk::mvt, {"x1", "x2", "A", "y1", "y2"}),
      lowering("gemver", sk::gemver, {"A", "x", "w", "u1", "v1", "u2", "v2", "y", "z", "alpha", "beta"}),
      lowering("gesummv", sk::gesummv, {"A", "B", "x", "alpha", "beta"}),
      lowering("syrk", sk::syrk, {"C", "A", "alpha", "beta"}),
      lowering("covariance", sk::covariance, {"data"}),
      lowering("correlation", sk::correlation, {"data"}),
      lowering("doitgen", sk::doitgen, {"A", "C4"}),
      lowering("nbody", sk::nbody, {"ax", "ay", "az", "x", "y", "z", "m", "eps2"}),
      lowering("row_stats", sk::row_stats, {"x"}),
      lowering("normalize_clip_sum", sk::normalize_clip_sum, {"x", "c"}),
      lowering("stencil27", sk::stencil27, {"out", "in"}),
      lowering("hist2d", sk::hist2d, {"hist", "x", "y"}),
  };
  return all;
}

std::vector<std::string> lowering_names() {
  std::vector<std::string> names;
  for (const Lowering& l : lowerings()) names.push_back(l.name);
  return names;
}

class SuiteNvrtc : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  }
};

TEST_P(SuiteNvrtc, CompilesForSm90WithoutWarnings) {
  for (const Lowering& l : lowerings())
    if (l.name == GetParam()) {
      const ir::Function f = l.lower();
      const cu::Binary bin = cudatest::compile_for_sm90(f);
      EXPECT_FALSE(bin.ptx.empty());
    }
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteNvrtc, ::testing::ValuesIn(lowering_names()));

TEST(SuiteHandCuda, CompilesForSm90WithoutWarnings) {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  const cu::Binary bin = cu::compile_source(benchgpu::suite_reference_source(), "suite_reference", "sm_90", {});
  EXPECT_EQ(bin.log, "");
  for (const std::string& k : benchgpu::suite_reference_kernels())
    EXPECT_NE(bin.ptx.find(".entry " + k), std::string::npos) << "no entry " << k;
}

// ---- against the interpreter, at small sizes ----

/// What a run leaves: every output (arrays written in place, arrays and scalars returned) flattened, or the
/// error it threw.
using Outputs = std::vector<std::vector<double>>;
struct Outcome {
  Outputs outputs;
  std::string error;
};

std::vector<double> flat(const NDArray<double>& a) { return std::vector<double>(a.data(), a.data() + a.size()); }
std::vector<double> flat(const NDArray<std::int64_t>& a) { return std::vector<double>(a.data(), a.data() + a.size()); }

NDArray<double> input(std::vector<std::int64_t> shape, unsigned seed, double lo = -1, double hi = 1) {
  NDArray<double> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (std::int64_t k = 0; k < a.size(); ++k) a.data()[k] = d(rng);
  return a;
}

/// A kernel of the suite with its small cases: `run(kernel, size case)` makes fresh inputs (the same for every
/// target), calls the kernel and returns its outputs.
struct Differential {
  std::string name;
  int cases;
  /// Relative to the largest magnitude of each output: the interpreter sums in order, the targets in trees.
  double tol;
  std::function<Outcome(Target, int)> run;
};

template <class F, class Call>
Differential differential(std::string name, const F& fn, int cases, double tol, Call call) {
  return {name, cases, tol, [name, fn, call](Target t, int c) {
            Outcome o;
            try {
              auto k = kiln::jit(name, fn, Options().on(t));
              o.outputs = call(k, c);
            } catch (const Error& e) {
              o.error = std::string(typeid(e).name()) + ": " + e.what();
            }
            return o;
          }};
}

const std::vector<Differential>& differentials() {
  static const std::vector<Differential> all = {
      differential("jacobi_1d", sk::jacobi_1d, 4, 1e-15,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{0, 1, 2, 101}[c];
                     auto A = input({n}, 1), B = input({n}, 2);
                     k(A, B, std::int64_t{c == 3 ? 3 : 1});
                     return Outputs{flat(A), flat(B)};
                   }),
      differential("jacobi_2d", sk::jacobi_2d, 3, 1e-15,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{1, 3, 37}[c];
                     auto A = input({n, n}, 3), B = input({n, n}, 4);
                     k(A, B, std::int64_t{2});
                     return Outputs{flat(A), flat(B)};
                   }),
      differential("heat_3d", sk::heat_3d, 3, 1e-14,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{1, 3, 13}[c];
                     auto A = input({n, n, n}, 5), B = input({n, n, n}, 6);
                     k(A, B, std::int64_t{2});
                     return Outputs{flat(A), flat(B)};
                   }),
      // The last case spans several warps' strips and blocks.
      differential("fdtd_2d", sk::fdtd_2d, 4, 1e-14,
                   [](auto& k, int c) {
                     const std::int64_t nx = std::vector<std::int64_t>{1, 2, 23, 131}[c], ny = std::vector<std::int64_t>{1, 3, 29, 257}[c];
                     auto ex = input({nx, ny}, 7), ey = input({nx, ny}, 8), hz = input({nx, ny}, 9), fict = input({3}, 10);
                     k(ex, ey, hz, fict, std::int64_t{3});
                     return Outputs{flat(ex), flat(ey), flat(hz)};
                   }),
      differential("gemm", sk::gemm, 3, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t ni = std::vector<std::int64_t>{0, 1, 17}[c], nj = std::vector<std::int64_t>{1, 1, 19}[c],
                                        nk = std::vector<std::int64_t>{1, 0, 23}[c];
                     auto C = input({ni, nj}, 11), A = input({ni, nk}, 12), B = input({nk, nj}, 13);
                     k(C, A, B, 1.5, 1.2);
                     return Outputs{flat(C)};
                   }),
      differential("two_mm", sk::two_mm, 2, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t s = c == 0 ? 1 : 13;
                     auto D = input({s, s + 6}, 14), A = input({s, s + 4}, 15), B = input({s + 4, s + 2}, 16),
                          C = input({s + 2, s + 6}, 17);
                     k(D, A, B, C, 1.5, 1.2);
                     return Outputs{flat(D)};
                   }),
      differential("atax", sk::atax, 3, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t m = std::vector<std::int64_t>{1, 0, 37}[c], n = std::vector<std::int64_t>{1, 5, 41}[c];
                     auto A = input({m, n}, 18), x = input({n}, 19);
                     return Outputs{flat(k(A, x))};
                   }),
      differential("bicg", sk::bicg, 2, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = c == 0 ? 1 : 37, m = c == 0 ? 1 : 41;
                     auto A = input({n, m}, 20), r = input({n}, 21), p = input({m}, 22);
                     auto [s, q] = k(A, r, p);
                     return Outputs{flat(s), flat(q)};
                   }),
      differential("mvt", sk::mvt, 3, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{0, 1, 43}[c];
                     auto x1 = input({n}, 23), x2 = input({n}, 24), A = input({n, n}, 25), y1 = input({n}, 26), y2 = input({n}, 27);
                     k(x1, x2, A, y1, y2);
                     return Outputs{flat(x1), flat(x2)};
                   }),
      differential("gemver", sk::gemver, 2, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = c == 0 ? 1 : 47;
                     auto A = input({n, n}, 28), x = input({n}, 29), w = input({n}, 30), u1 = input({n}, 31), v1 = input({n}, 32),
                          u2 = input({n}, 33), v2 = input({n}, 34), y = input({n}, 35), z = input({n}, 36);
                     k(A, x, w, u1, v1, u2, v2, y, z, 1.5, 1.2);
                     return Outputs{flat(A), flat(x), flat(w)};
                   }),
      differential("gesummv", sk::gesummv, 2, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = c == 0 ? 1 : 39;
                     auto A = input({n, n}, 37), B = input({n, n}, 38), x = input({n}, 39);
                     return Outputs{flat(k(A, B, x, 1.5, 1.2))};
                   }),
      differential("syrk", sk::syrk, 3, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{0, 1, 29}[c], m = std::vector<std::int64_t>{1, 7, 31}[c];
                     auto C = input({n, n}, 40), A = input({n, m}, 41);
                     k(C, A, 1.5, 1.2);
                     return Outputs{flat(C)};
                   }),
      differential("covariance", sk::covariance, 2, 1e-12,
                   [](auto& k, int c) {
                     auto data = input({c == 0 ? 2 : 33, c == 0 ? 1 : 27}, 42);
                     return Outputs{flat(k(data))};
                   }),
      differential("correlation", sk::correlation, 2, 1e-12,
                   [](auto& k, int c) {
                     auto data = input({c == 0 ? 2 : 33, c == 0 ? 1 : 27}, 43);
                     for (std::int64_t i = 0; i < data.shape()[0]; ++i)
                       for (std::int64_t j = 0; j < data.shape()[1]; j += 7) data(i, j) = 0.5 + 0.01 * data(i, j);
                     return Outputs{flat(k(data))};
                   }),
      differential("doitgen", sk::doitgen, 2, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t rows = c == 0 ? 1 : 35, np = c == 0 ? 1 : 11;
                     auto A = input({rows, np}, 44), C4 = input({np, np}, 45, -0.15, 0.15);
                     k(A, C4);
                     return Outputs{flat(A)};
                   }),
      differential("nbody", sk::nbody, 3, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{0, 1, 53}[c];
                     auto x = input({n}, 50), y = input({n}, 51), z = input({n}, 52), m = input({n}, 53, 0.5, 1.5);
                     NDArray<double> ax({n}), ay({n}), az({n});
                     k(ax, ay, az, x, y, z, m, 1e-3);
                     return Outputs{flat(ax), flat(ay), flat(az)};
                   }),
      // var, std and the z-scores' std share their sums (reuse_reductions); the last case has a NaN, an infinity
      // and a -0.0 in rows of their own, and rows long enough for a block per row.
      differential("row_stats", sk::row_stats, 4, 1e-13,
                   [](auto& k, int c) {
                     const std::int64_t rows = std::vector<std::int64_t>{1, 23, 67, 13}[c], cols = std::vector<std::int64_t>{1, 37, 1031, 41}[c];
                     auto x = input({rows, cols}, 54, 0.0, 4.0);
                     if (c == 3) {
                       x.data()[2 * cols + 5] = std::numeric_limits<double>::quiet_NaN();
                       x.data()[7 * cols] = std::numeric_limits<double>::infinity();
                       x.data()[9 * cols + 9] = -0.0;
                     }
                     auto [mean, var, sd, col_sd, z] = k(x);
                     return Outputs{flat(mean), flat(var), flat(sd), flat(col_sd), flat(z)};
                   }),
      // A sum of n terms of at most c in magnitude that cancel: an absolute error of about n ulp of c.
      differential("normalize_clip_sum", sk::normalize_clip_sum, 2, 2e-12,
                   [](auto& k, int c) {
                     auto x = input({c == 0 ? 2 : 1009}, 55, -3.0, 5.0);
                     return Outputs{std::vector<double>{k(x, 1.5)}};
                   }),
      differential("stencil27", sk::stencil27, 3, 1e-14,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{1, 2, 11}[c];
                     auto in = input({n, n, n}, 56);
                     NDArray<double> out({n, n, n});
                     k(out, in);
                     return Outputs{flat(out)};
                   }),
      differential("hist2d", sk::hist2d, 3, 0.0,
                   [](auto& k, int c) {
                     const std::int64_t n = std::vector<std::int64_t>{0, 1, 4099}[c];
                     auto x = input({n}, 57, 0.0, 1.0), y = input({n}, 58, 0.0, 1.0);
                     NDArray<std::int64_t> hist({8, 8});
                     std::fill(hist.data(), hist.data() + hist.size(), 0);
                     k(hist, x, y);
                     return Outputs{flat(hist)};
                   }),
  };
  return all;
}

std::vector<std::tuple<Target, std::string>> differential_params() {
  std::vector<std::tuple<Target, std::string>> p;
  for (Target t : {Target::cuda, Target::cpu}) {
    if (t == Target::cpu && !KILN_HAVE_LLVM) continue;  // a GPU machine's build may have no cpu target
    for (const Differential& d : differentials()) p.emplace_back(t, d.name);
  }
  return p;
}

class SuiteDifferential : public ::testing::TestWithParam<std::tuple<Target, std::string>> {
 protected:
  void SetUp() override {
    if (std::get<0>(GetParam()) == Target::cuda && !kiln::cuda::available())
      GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  }
};

TEST_P(SuiteDifferential, MatchesTheInterpreter) {
  const auto [target, name] = GetParam();
  for (const Differential& d : differentials()) {
    if (d.name != name) continue;
    for (int c = 0; c < d.cases; ++c) {
      SCOPED_TRACE(name + " case " + std::to_string(c));
      const Outcome want = d.run(Target::interpreter, c), got = d.run(target, c);
      ASSERT_EQ(got.error, want.error);
      ASSERT_EQ(got.outputs.size(), want.outputs.size());
      for (std::size_t o = 0; o < want.outputs.size(); ++o) {
        const std::vector<double>&w = want.outputs[o], &g = got.outputs[o];
        ASSERT_EQ(g.size(), w.size()) << "output " << o;
        double scale = 0;
        for (double v : w)
          if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
        for (std::size_t i = 0; i < w.size(); ++i) {
          if (std::isnan(w[i])) {
            EXPECT_TRUE(std::isnan(g[i])) << "output " << o << "[" << i << "]: " << g[i] << ", interpreter NaN";
          } else if (std::isinf(w[i])) {
            EXPECT_EQ(g[i], w[i]) << "output " << o << "[" << i << "]";
          } else {
            EXPECT_LE(std::fabs(g[i] - w[i]), d.tol * std::max(scale, 1.0))
                << "output " << o << "[" << i << "]: " << g[i] << ", interpreter " << w[i];
          }
        }
      }
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<Target, std::string>>& info) {
  return std::string(name_of(std::get<0>(info.param))) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Suite, SuiteDifferential, ::testing::ValuesIn(differential_params()), param_name);

}  // namespace
}  // namespace kiln
