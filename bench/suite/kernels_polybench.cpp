// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suite's PolyBench/C 4.2 cases on the CPU: each kernel of kernels.hpp jitted for the host at its size, its
// inputs, its hand-written C++/OpenMP reference (reference_polybench.cpp) and the check of the two results.
#include <cmath>
#include <memory>
#include <string>
#include <tuple>

#include <kiln/kiln.hpp>

#include "kernels.hpp"
#include "reference.hpp"
#include "suite.hpp"

namespace {

using suite::dims;

auto make_jacobi_1d() { return kiln::jit("jacobi_1d", suite::kiln_kernels::jacobi_1d); }

auto make_jacobi_2d() { return kiln::jit("jacobi_2d", suite::kiln_kernels::jacobi_2d); }

auto make_heat_3d() { return kiln::jit("heat_3d", suite::kiln_kernels::heat_3d); }

auto make_fdtd_2d() { return kiln::jit("fdtd_2d", suite::kiln_kernels::fdtd_2d); }

auto make_gemm() { return kiln::jit("gemm", suite::kiln_kernels::gemm); }

auto make_2mm() { return kiln::jit("2mm", suite::kiln_kernels::two_mm); }

auto make_atax() { return kiln::jit("atax", suite::kiln_kernels::atax); }

auto make_bicg() { return kiln::jit("bicg", suite::kiln_kernels::bicg); }

auto make_mvt() { return kiln::jit("mvt", suite::kiln_kernels::mvt); }

auto make_gemver() { return kiln::jit("gemver", suite::kiln_kernels::gemver); }

auto make_gesummv() { return kiln::jit("gesummv", suite::kiln_kernels::gesummv); }

auto make_syrk() { return kiln::jit("syrk", suite::kiln_kernels::syrk); }

auto make_covariance() { return kiln::jit("covariance", suite::kiln_kernels::covariance); }

auto make_correlation() { return kiln::jit("correlation", suite::kiln_kernels::correlation); }

auto make_doitgen() { return kiln::jit("doitgen", suite::kiln_kernels::doitgen); }

int threads() { return kiln::num_threads(); }

}  // namespace

KILN_SUITE(jacobi_1d_case, "jacobi-1d", "polybench") {
  const long n = smoke ? 101 : 2'000'000, tsteps = smoke ? 3 : 20;
  struct State {
    suite::Twin A, B;
    decltype(make_jacobi_1d()) k = make_jacobi_1d();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({n}, 1)), suite::Twin(suite::random_array({n}, 2))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"tsteps", tsteps}});
  c.kiln = [s, tsteps] { s->k(s->A.k, s->B.k, tsteps); };
  c.ref = [s, n, tsteps] { suite::ref::jacobi_1d(s->A.r.get(), s->B.r.get(), n, tsteps, threads()); };
  c.reset = [s] { s->A.reset(); s->B.reset(); };
  c.check = [s] {
    auto e = suite::compare("A", s->A, 1e-13);
    return e.empty() ? suite::compare("B", s->B, 1e-13) : e;
  };
  return c;
}

KILN_SUITE(jacobi_2d_case, "jacobi-2d", "polybench") {
  const long n = smoke ? 31 : 2000, tsteps = smoke ? 3 : 8;
  struct State {
    suite::Twin A, B;
    decltype(make_jacobi_2d()) k = make_jacobi_2d();
  };
  auto s = std::make_shared<State>(
      State{suite::Twin(suite::random_array({n, n}, 3)), suite::Twin(suite::random_array({n, n}, 4))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"tsteps", tsteps}});
  c.kiln = [s, tsteps] { s->k(s->A.k, s->B.k, tsteps); };
  c.ref = [s, n, tsteps] { suite::ref::jacobi_2d(s->A.r.get(), s->B.r.get(), n, tsteps, threads()); };
  c.reset = [s] { s->A.reset(); s->B.reset(); };
  c.check = [s] {
    auto e = suite::compare("A", s->A, 1e-13);
    return e.empty() ? suite::compare("B", s->B, 1e-13) : e;
  };
  return c;
}

KILN_SUITE(heat_3d_case, "heat-3d", "polybench") {
  const long n = smoke ? 13 : 120, tsteps = smoke ? 3 : 15;
  struct State {
    suite::Twin A, B;
    decltype(make_heat_3d()) k = make_heat_3d();
  };
  auto s = std::make_shared<State>(
      State{suite::Twin(suite::random_array({n, n, n}, 5)), suite::Twin(suite::random_array({n, n, n}, 6))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"tsteps", tsteps}});
  c.kiln = [s, tsteps] { s->k(s->A.k, s->B.k, tsteps); };
  c.ref = [s, n, tsteps] { suite::ref::heat_3d(s->A.r.get(), s->B.r.get(), n, tsteps, threads()); };
  c.reset = [s] { s->A.reset(); s->B.reset(); };
  c.check = [s] {
    auto e = suite::compare("A", s->A, 1e-12);
    return e.empty() ? suite::compare("B", s->B, 1e-12) : e;
  };
  return c;
}

KILN_SUITE(fdtd_2d_case, "fdtd-2d", "polybench") {
  const long nx = smoke ? 23 : 1500, ny = smoke ? 29 : 1600, tmax = smoke ? 4 : 10;
  struct State {
    suite::Twin ex, ey, hz;
    kiln::NDArray<double> fict;
    decltype(make_fdtd_2d()) k = make_fdtd_2d();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({nx, ny}, 7)),
                                         suite::Twin(suite::random_array({nx, ny}, 8)),
                                         suite::Twin(suite::random_array({nx, ny}, 9)), suite::random_array({tmax}, 10)});
  suite::Case c;
  c.shape = dims({{"nx", nx}, {"ny", ny}, {"tmax", tmax}});
  c.kiln = [s, tmax] { s->k(s->ex.k, s->ey.k, s->hz.k, s->fict, tmax); };
  c.ref = [s, nx, ny, tmax] {
    suite::ref::fdtd_2d(s->ex.r.get(), s->ey.r.get(), s->hz.r.get(), s->fict.data(), nx, ny, tmax, threads());
  };
  c.reset = [s] { s->ex.reset(); s->ey.reset(); s->hz.reset(); };
  c.check = [s] {
    for (auto [name, t] : {std::pair{"ex", &s->ex}, std::pair{"ey", &s->ey}, std::pair{"hz", &s->hz}}) {
      auto e = suite::compare(name, *t, 1e-12, 4.0);
      if (!e.empty()) return e;
    }
    return std::string();
  };
  return c;
}

KILN_SUITE(gemm_case, "gemm", "polybench") {
  const long ni = smoke ? 17 : 740, nj = smoke ? 19 : 760, nk = smoke ? 23 : 720;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct State {
    suite::Twin C;
    kiln::NDArray<double> A, B;
    decltype(make_gemm()) k = make_gemm();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({ni, nj}, 11)),
                                         suite::random_array({ni, nk}, 12), suite::random_array({nk, nj}, 13)});
  suite::Case c;
  c.shape = dims({{"ni", ni}, {"nj", nj}, {"nk", nk}});
  c.kiln = [s] { s->k(s->C.k, s->A, s->B, alpha, beta); };
  c.ref = [s, ni, nj, nk] { suite::ref::gemm(s->C.r.get(), s->A.data(), s->B.data(), alpha, beta, ni, nj, nk, threads()); };
  c.reset = [s] { s->C.reset(); };
  // Sums of nk products of values in [-1, 1), added in other orders: absolute errors of about nk ulp of 1.
  c.check = [s, nk] { return suite::compare("C", s->C, 1e-14 * static_cast<double>(nk), 1.0); };
  return c;
}

KILN_SUITE(two_mm_case, "2mm", "polybench") {
  const long ni = smoke ? 13 : 600, nj = smoke ? 15 : 620, nk = smoke ? 17 : 640, nl = smoke ? 19 : 660;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct State {
    suite::Twin D;
    kiln::NDArray<double> A, B, C;
    suite::Buffer tmp;
    decltype(make_2mm()) k = make_2mm();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({ni, nl}, 14)), suite::random_array({ni, nk}, 15),
                                         suite::random_array({nk, nj}, 16), suite::random_array({nj, nl}, 17),
                                         suite::Buffer(static_cast<std::size_t>(ni * nj))});
  suite::Case c;
  c.shape = dims({{"ni", ni}, {"nj", nj}, {"nk", nk}, {"nl", nl}});
  c.kiln = [s] { s->k(s->D.k, s->A, s->B, s->C, alpha, beta); };
  c.ref = [s, ni, nj, nk, nl] {
    suite::ref::two_mm(s->D.r.get(), s->A.data(), s->B.data(), s->C.data(), s->tmp.get(), alpha, beta, ni, nj, nk, nl,
                       threads());
  };
  c.reset = [s] { s->D.reset(); };
  // The products of the first product's sums: absolute errors of about nj * nk ulp of 1.
  c.check = [s, nj, nk] { return suite::compare("D", s->D, 1e-15 * static_cast<double>(nj * nk), 1.0); };
  return c;
}

KILN_SUITE(atax_case, "atax", "polybench") {
  const long m = smoke ? 37 : 6000, n = smoke ? 41 : 5800;
  struct State {
    kiln::NDArray<double> A, x, y;
    suite::Buffer y_ref, tmp;
    decltype(make_atax()) k = make_atax();
  };
  auto s = std::make_shared<State>(State{suite::random_array({m, n}, 18), suite::random_array({n}, 19), {},
                                         suite::Buffer(static_cast<std::size_t>(n)), suite::Buffer(static_cast<std::size_t>(m))});
  suite::Case c;
  c.shape = dims({{"m", m}, {"n", n}});
  c.kiln = [s] { s->y = s->k(s->A, s->x); };
  c.ref = [s, m, n] { suite::ref::atax(s->y_ref.get(), s->A.data(), s->x.data(), s->tmp.get(), m, n, threads()); };
  c.check = [s, m, n] {
    return suite::compare("y", s->y.data(), s->y_ref.get(), static_cast<std::size_t>(n), 1e-15 * static_cast<double>(m + n),
                          suite::max_abs(s->y_ref.get(), static_cast<std::size_t>(n)));
  };
  return c;
}

KILN_SUITE(bicg_case, "bicg", "polybench") {
  const long n = smoke ? 37 : 6000, m = smoke ? 41 : 5800;
  struct State {
    kiln::NDArray<double> A, r, p, s, q;
    suite::Buffer s_ref, q_ref;
    decltype(make_bicg()) k = make_bicg();
  };
  auto s = std::make_shared<State>(State{suite::random_array({n, m}, 20), suite::random_array({n}, 21),
                                         suite::random_array({m}, 22), {}, {}, suite::Buffer(static_cast<std::size_t>(m)),
                                         suite::Buffer(static_cast<std::size_t>(n))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s] { std::tie(s->s, s->q) = s->k(s->A, s->r, s->p); };
  c.ref = [s, n, m] { suite::ref::bicg(s->s_ref.get(), s->q_ref.get(), s->A.data(), s->r.data(), s->p.data(), n, m, threads()); };
  c.check = [s, n, m] {
    auto e = suite::compare("s", s->s.data(), s->s_ref.get(), static_cast<std::size_t>(m), 1e-15 * static_cast<double>(n), 1.0);
    return e.empty() ? suite::compare("q", s->q.data(), s->q_ref.get(), static_cast<std::size_t>(n),
                                      1e-15 * static_cast<double>(m), 1.0)
                     : e;
  };
  return c;
}

KILN_SUITE(mvt_case, "mvt", "polybench") {
  const long n = smoke ? 43 : 5000;
  struct State {
    suite::Twin x1, x2;
    kiln::NDArray<double> A, y1, y2;
    decltype(make_mvt()) k = make_mvt();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({n}, 23)), suite::Twin(suite::random_array({n}, 24)),
                                         suite::random_array({n, n}, 25), suite::random_array({n}, 26),
                                         suite::random_array({n}, 27)});
  suite::Case c;
  c.shape = dims({{"n", n}});
  c.kiln = [s] { s->k(s->x1.k, s->x2.k, s->A, s->y1, s->y2); };
  c.ref = [s, n] {
    suite::ref::mvt(s->x1.r.get(), s->x2.r.get(), s->A.data(), s->y1.data(), s->y2.data(), n, threads());
  };
  c.reset = [s] { s->x1.reset(); s->x2.reset(); };
  c.check = [s, n] {
    auto e = suite::compare("x1", s->x1, 1e-15 * static_cast<double>(n), 1.0);
    return e.empty() ? suite::compare("x2", s->x2, 1e-15 * static_cast<double>(n), 1.0) : e;
  };
  return c;
}

KILN_SUITE(gemver_case, "gemver", "polybench") {
  const long n = smoke ? 47 : 4000;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct State {
    suite::Twin A, x, w;
    kiln::NDArray<double> u1, v1, u2, v2, y, z;
    decltype(make_gemver()) k = make_gemver();
  };
  auto s = std::make_shared<State>(State{
      suite::Twin(suite::random_array({n, n}, 28)), suite::Twin(suite::random_array({n}, 29)),
      suite::Twin(suite::random_array({n}, 30)), suite::random_array({n}, 31), suite::random_array({n}, 32),
      suite::random_array({n}, 33), suite::random_array({n}, 34), suite::random_array({n}, 35), suite::random_array({n}, 36)});
  suite::Case c;
  c.shape = dims({{"n", n}});
  c.kiln = [s] { s->k(s->A.k, s->x.k, s->w.k, s->u1, s->v1, s->u2, s->v2, s->y, s->z, alpha, beta); };
  c.ref = [s, n] {
    suite::ref::gemver(s->A.r.get(), s->x.r.get(), s->w.r.get(), s->u1.data(), s->v1.data(), s->u2.data(), s->v2.data(),
                       s->y.data(), s->z.data(), alpha, beta, n, threads());
  };
  c.reset = [s] { s->A.reset(); s->x.reset(); s->w.reset(); };
  c.check = [s, n] {
    auto e = suite::compare("A", s->A, 1e-15);
    if (e.empty()) e = suite::compare("x", s->x, 1e-15 * static_cast<double>(n), 1.0);
    // w sums n products with x, whose elements are themselves sums of n terms.
    if (e.empty()) e = suite::compare("w", s->w, 1e-15 * static_cast<double>(n), suite::max_abs(s->w.r.get(), s->w.size()));
    return e;
  };
  return c;
}

KILN_SUITE(gesummv_case, "gesummv", "polybench") {
  const long n = smoke ? 39 : 5000;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct State {
    kiln::NDArray<double> A, B, x, y;
    suite::Buffer y_ref;
    decltype(make_gesummv()) k = make_gesummv();
  };
  auto s = std::make_shared<State>(State{suite::random_array({n, n}, 37), suite::random_array({n, n}, 38),
                                         suite::random_array({n}, 39), {}, suite::Buffer(static_cast<std::size_t>(n))});
  suite::Case c;
  c.shape = dims({{"n", n}});
  c.kiln = [s] { s->y = s->k(s->A, s->B, s->x, alpha, beta); };
  c.ref = [s, n] { suite::ref::gesummv(s->y_ref.get(), s->A.data(), s->B.data(), s->x.data(), alpha, beta, n, threads()); };
  c.check = [s, n] {
    return suite::compare("y", s->y.data(), s->y_ref.get(), static_cast<std::size_t>(n), 1e-15 * static_cast<double>(n), 1.0);
  };
  return c;
}

KILN_SUITE(syrk_case, "syrk", "polybench") {
  const long n = smoke ? 29 : 520, m = smoke ? 31 : 480;
  static constexpr double alpha = 1.5, beta = 1.2;
  struct State {
    suite::Twin C;
    kiln::NDArray<double> A;
    decltype(make_syrk()) k = make_syrk();
  };
  auto s = std::make_shared<State>(State{suite::Twin(suite::random_array({n, n}, 40)), suite::random_array({n, m}, 41)});
  suite::Case c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s] { s->k(s->C.k, s->A, alpha, beta); };
  c.ref = [s, n, m] { suite::ref::syrk(s->C.r.get(), s->A.data(), alpha, beta, n, m, threads()); };
  c.reset = [s] { s->C.reset(); };
  // The same products summed in the same order: only contraction into fused multiply-adds may differ.
  c.check = [s, m] { return suite::compare("C", s->C, 1e-15 * static_cast<double>(m), 1.0); };
  return c;
}

KILN_SUITE(covariance_case, "covariance", "polybench") {
  const long n = smoke ? 33 : 1000, m = smoke ? 27 : 600;
  struct State {
    kiln::NDArray<double> data, cov;
    suite::Buffer cov_ref, d;
    decltype(make_covariance()) k = make_covariance();
  };
  auto s = std::make_shared<State>(State{suite::random_array({n, m}, 42), {}, suite::Buffer(static_cast<std::size_t>(m * m)),
                                         suite::Buffer(static_cast<std::size_t>(n * m))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s] { s->cov = s->k(s->data); };
  c.ref = [s, n, m] { suite::ref::covariance(s->cov_ref.get(), s->data.data(), s->d.get(), n, m, threads()); };
  c.check = [s, m] {
    return suite::compare("cov", s->cov.data(), s->cov_ref.get(), static_cast<std::size_t>(m * m), 1e-12, 1.0);
  };
  return c;
}

KILN_SUITE(correlation_case, "correlation", "polybench") {
  const long n = smoke ? 33 : 1000, m = smoke ? 27 : 600;
  struct State {
    kiln::NDArray<double> data, corr;
    suite::Buffer corr_ref, d;
    decltype(make_correlation()) k = make_correlation();
  };
  auto data = suite::random_array({n, m}, 43);
  // Some columns nearly constant, so that the std <= 0.1 rule of the correlation matters.
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < m; j += 7) data(i, j) = 0.5 + 0.01 * data(i, j);
  auto s = std::make_shared<State>(State{data, {}, suite::Buffer(static_cast<std::size_t>(m * m)),
                                         suite::Buffer(static_cast<std::size_t>(n * m))});
  suite::Case c;
  c.shape = dims({{"n", n}, {"m", m}});
  c.kiln = [s] { s->corr = s->k(s->data); };
  c.ref = [s, n, m] { suite::ref::correlation(s->corr_ref.get(), s->data.data(), s->d.get(), n, m, threads()); };
  c.check = [s, m] {
    return suite::compare("corr", s->corr.data(), s->corr_ref.get(), static_cast<std::size_t>(m * m), 1e-12, 1.0);
  };
  return c;
}

KILN_SUITE(doitgen_case, "doitgen", "polybench") {
  const long nr = smoke ? 5 : 128, nq = smoke ? 7 : 128, np = smoke ? 11 : 128;
  struct State {
    suite::Twin A;
    kiln::NDArray<double> C4;
    decltype(make_doitgen()) k = make_doitgen();
  };
  // C4 small enough that A shrinks slowly over the repeated calls of the timing (no overflow, no subnormals).
  auto s = std::make_shared<State>(
      State{suite::Twin(suite::random_array({nr * nq, np}, 44)), suite::random_array({np, np}, 45, -0.15, 0.15)});
  suite::Case c;
  c.shape = dims({{"nr", nr}, {"nq", nq}, {"np", np}});
  c.kiln = [s] { s->k(s->A.k, s->C4); };
  c.ref = [s, nr, nq, np] { suite::ref::doitgen(s->A.r.get(), s->C4.data(), nr * nq, np, threads()); };
  c.reset = [s] { s->A.reset(); };
  c.check = [s, np] { return suite::compare("A", s->A, 1e-15 * static_cast<double>(np), 1.0); };
  return c;
}
