// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suite's cases of kernels users commonly write, on the CPU: each kernel of kernels.hpp (an all-pairs
// n-body, statistics by rows and columns, a multi-stage normalization, a 27-point stencil with clamped indices, a
// 2-d histogram) jitted for the host at its size, its inputs, its hand-written C++/OpenMP reference
// (reference_user.cpp) and the check of the two results.
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <kiln/kiln.hpp>

#include "kernels.hpp"
#include "reference.hpp"
#include "suite.hpp"

namespace {

int threads() { return kiln::num_threads(); }

auto make_nbody() { return kiln::jit("nbody", suite::kiln_kernels::nbody); }

auto make_row_stats() { return kiln::jit("row_stats", suite::kiln_kernels::row_stats); }

auto make_normalize_clip_sum() { return kiln::jit("normalize_clip_sum", suite::kiln_kernels::normalize_clip_sum); }

auto make_stencil27() { return kiln::jit("stencil27", suite::kiln_kernels::stencil27); }

auto make_hist2d() { return kiln::jit("hist2d", suite::kiln_kernels::hist2d); }

}  // namespace

KILN_SUITE(nbody_case, "nbody", "user") {
  const long n = smoke ? 53 : 4000;
  static constexpr double eps2 = 1e-3;
  struct State {
    kiln::NDArray<double> x, y, z, m, ax, ay, az;
    suite::Buffer rx, ry, rz;
    decltype(make_nbody()) k = make_nbody();
  };
  const auto N = static_cast<std::size_t>(n);
  auto s = std::make_shared<State>(State{suite::random_array({n}, 50), suite::random_array({n}, 51),
                                         suite::random_array({n}, 52), suite::random_array({n}, 53, 0.5, 1.5),
                                         kiln::NDArray<double>({n}), kiln::NDArray<double>({n}), kiln::NDArray<double>({n}),
                                         suite::Buffer(N), suite::Buffer(N), suite::Buffer(N)});
  suite::Case c;
  c.shape = "n=" + std::to_string(n);
  c.kiln = [s] { s->k(s->ax, s->ay, s->az, s->x, s->y, s->z, s->m, eps2); };
  c.ref = [s, n] {
    suite::ref::nbody(s->rx.get(), s->ry.get(), s->rz.get(), s->x.data(), s->y.data(), s->z.data(), s->m.data(), eps2, n,
                      threads());
  };
  // The same terms summed in the same order; fused multiply-adds and the vector sqrt/divide may differ by an
  // ulp per term, relative to the largest acceleration.
  c.check = [s, N] {
    for (auto [name, got, want] : {std::tuple{"ax", &s->ax, &s->rx}, std::tuple{"ay", &s->ay, &s->ry},
                                    std::tuple{"az", &s->az, &s->rz}}) {
      auto e = suite::compare(name, got->data(), want->get(), N, 1e-11, suite::max_abs(want->get(), N));
      if (!e.empty()) return e;
    }
    return std::string();
  };
  return c;
}

KILN_SUITE(row_stats_case, "row-stats", "user") {
  const long rows = smoke ? 23 : 4000, cols = smoke ? 37 : 4000;
  struct State {
    kiln::NDArray<double> x, mean, var, sd, col_sd, z;
    suite::Buffer r_mean, r_var, r_sd, r_col_sd, r_z;
    decltype(make_row_stats()) k = make_row_stats();
  };
  auto x = suite::random_array({rows, cols}, 54, 0.0, 4.0);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) x(i, j) += static_cast<double>(i % 5);
  auto s = std::make_shared<State>();
  s->x = x;
  suite::Case c;
  c.shape = "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
  c.kiln = [s] { std::tie(s->mean, s->var, s->sd, s->col_sd, s->z) = s->k(s->x); };
  c.ref = [s, rows, cols] {
    // Fresh results per call, as the kernel's are.
    s->r_mean.fresh(static_cast<std::size_t>(rows));
    s->r_var.fresh(static_cast<std::size_t>(rows));
    s->r_sd.fresh(static_cast<std::size_t>(rows));
    s->r_col_sd.fresh(static_cast<std::size_t>(cols));
    s->r_z.fresh(static_cast<std::size_t>(rows * cols));
    suite::ref::row_stats(s->r_mean.get(), s->r_var.get(), s->r_sd.get(), s->r_col_sd.get(), s->r_z.get(), s->x.data(),
                          rows, cols, threads());
  };
  c.check = [s, rows, cols] {
    const auto R = static_cast<std::size_t>(rows), C = static_cast<std::size_t>(cols);
    std::string e = suite::compare("mean", s->mean.data(), s->r_mean.get(), R, 1e-13);
    if (e.empty()) e = suite::compare("var", s->var.data(), s->r_var.get(), R, 1e-13);
    if (e.empty()) e = suite::compare("std", s->sd.data(), s->r_sd.get(), R, 1e-13);
    if (e.empty()) e = suite::compare("col_std", s->col_sd.data(), s->r_col_sd.get(), C, 1e-13);
    if (e.empty()) e = suite::compare("z", s->z.data(), s->r_z.get(), R * C, 1e-13);
    return e;
  };
  return c;
}

KILN_SUITE(normalize_clip_sum_case, "norm-clip-sum", "user") {
  const long n = smoke ? 1001 : 20'000'000;
  static constexpr double clip = 1.5;
  struct State {
    kiln::NDArray<double> x;
    double got = 0, want = 0;
    decltype(make_normalize_clip_sum()) k = make_normalize_clip_sum();
  };
  auto s = std::make_shared<State>(State{suite::random_array({n}, 55, -3.0, 5.0)});
  suite::Case c;
  c.shape = "n=" + std::to_string(n);
  c.kiln = [s] { s->got = s->k(s->x, clip); };
  c.ref = [s, n] { s->want = suite::ref::normalize_clip_sum(s->x.data(), n, clip, threads()); };
  // n terms of at most `clip` in magnitude, summed in other orders (kiln's blocks, the OpenMP team's halves).
  c.check = [s, n] { return suite::compare("sum", &s->got, &s->want, 1, 1e-13, clip * static_cast<double>(n)); };
  return c;
}

KILN_SUITE(stencil27_case, "stencil27-clamp", "user") {
  const long n = smoke ? 11 : 160;
  struct State {
    kiln::NDArray<double> in, out;
    suite::Buffer out_ref;
    decltype(make_stencil27()) k = make_stencil27();
  };
  auto s = std::make_shared<State>(
      State{suite::random_array({n, n, n}, 56), kiln::NDArray<double>({n, n, n}), suite::Buffer(static_cast<std::size_t>(n * n * n))});
  suite::Case c;
  c.shape = "n=" + std::to_string(n);
  c.kiln = [s] { s->k(s->out, s->in); };
  c.ref = [s, n] { suite::ref::stencil27(s->out_ref.get(), s->in.data(), n, threads()); };
  c.check = [s, n] {
    return suite::compare("out", s->out.data(), s->out_ref.get(), static_cast<std::size_t>(n * n * n), 1e-14, 1.0);
  };
  return c;
}

KILN_SUITE(hist2d_case, "hist2d", "user") {
  const long n = smoke ? 4099 : 24'000'000, bins = smoke ? 8 : 64;
  struct State {
    kiln::NDArray<double> x, y;
    kiln::NDArray<std::int64_t> hist;
    std::vector<std::int64_t> hist_ref;
    decltype(make_hist2d()) k = make_hist2d();
  };
  // Points clustered around the centre (a sum of uniforms), so that bins are hit unevenly, as real data does.
  auto x = suite::random_array({n}, 57, 0.0, 0.5), y = suite::random_array({n}, 58, 0.0, 0.5);
  auto x2 = suite::random_array({n}, 59, 0.0, 0.5), y2 = suite::random_array({n}, 60, 0.0, 0.5);
  for (long i = 0; i < n; ++i) {
    x[i] += x2[i];
    y[i] += y2[i];
  }
  auto s = std::make_shared<State>(
      State{x, y, kiln::NDArray<std::int64_t>({bins, bins}), std::vector<std::int64_t>(static_cast<std::size_t>(bins * bins))});
  suite::Case c;
  c.shape = "n=" + std::to_string(n) + " bins=" + std::to_string(bins) + "^2";
  c.kiln = [s] { s->k(s->hist, s->x, s->y); };
  c.ref = [s, n, bins] { suite::ref::hist2d(s->hist_ref.data(), s->x.data(), s->y.data(), n, bins, threads()); };
  c.reset = [s] {
    std::fill(s->hist.data(), s->hist.data() + s->hist.size(), 0);
    std::fill(s->hist_ref.begin(), s->hist_ref.end(), 0);
  };
  c.check = [s] { return suite::compare_counts("hist", s->hist.data(), s->hist_ref.data(), s->hist_ref.size()); };
  return c;
}
