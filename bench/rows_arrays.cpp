// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows softmax, logistic_regression, black_scholes and normalize: the array-DSL examples (f64), each kernel
// written exactly as in examples/, against a hand-written C++/OpenMP reference (bench/reference.cpp).
//
// Kernels that return an array allocate it on every call (their result is a fresh NDArray, and the
// previous one is freed when it is replaced). The references do the same, with the allocator kiln's arrays
// use (kiln::detail::allocate_array_memory: 64-byte aligned, transparent huge pages from 4 MiB up), so both
// pay the same for the pages of a new result and neither gets a warm output buffer the other lacks.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference.hpp"

namespace {

auto make_softmax() {
  return kiln::jit("softmax", [](kiln::Array<double, 1> a) {
    auto e = kiln::exp(a - kiln::max(a));
    return e / kiln::sum(e);
  }, bench::kernel_options());
}

auto make_logistic_regression() {
  return kiln::jit("logistic_regression", [](kiln::Array<double, 2> X, kiln::Array<double, 1> Y,
                                             kiln::Array<double, 1> w, kiln::Int iterations) {
    kiln::range(iterations, [&](kiln::Int) {
      w -= kiln::dot(((1.0 / (1.0 + kiln::exp(-Y * kiln::dot(X, w)))) - 1.0) * Y, X);
    });
  }, bench::kernel_options());
}

auto make_black_scholes() {
  return kiln::jit("black_scholes", [](kiln::Array<double, 1> S, kiln::Array<double, 1> K, kiln::Array<double, 1> T,
                                       kiln::Double r, kiln::Double v) {
    auto sqrtT = kiln::sqrt(T);
    auto d1 = (kiln::log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT);
    auto d2 = d1 - v * sqrtT;
    auto cnd1 = 0.5 * (1.0 + kiln::erf(d1 * 0.7071067811865476));
    auto cnd2 = 0.5 * (1.0 + kiln::erf(d2 * 0.7071067811865476));
    return S * cnd1 - K * kiln::exp(-r * T) * cnd2;
  }, bench::kernel_options());
}

auto make_normalize() {
  return kiln::jit("normalize", [](kiln::Array<double, 2> x) {
    return (x - kiln::mean(x, 1, kiln::keepdims)) / kiln::std(x, 1, kiln::keepdims);
  }, bench::kernel_options());
}

/// A result buffer for the references, allocated per call as kernel results are.
struct Buffer {
  std::unique_ptr<double, decltype(&std::free)> p{nullptr, &std::free};
  void fresh(std::size_t n) {
    p.reset(static_cast<double*>(kiln::detail::allocate_array_memory(n * sizeof(double))));
    if (!p) throw std::bad_alloc();
  }
  double* get() const { return p.get(); }
};

/// "" if every |got - want| <= abs_tol + rel_tol * |want|, else where and by how much it is not.
std::string compare(const double* got, const double* want, std::size_t n, double rel_tol, double abs_tol) {
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= abs_tol + rel_tol * std::fabs(want[i])))
    {
      char text[96];
      std::snprintf(text, sizeof text, "element %zu: %.17g vs %.17g", i, got[i], want[i]);
      return text;
    }
  }
  return "";
}

/// A field of /proc/self/status in kB (VmRSS, VmHWM), or -1.
long status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  const std::size_t len = std::strlen(field);
  for (std::string line; std::getline(f, line);)
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':') return std::atol(line.c_str() + len + 1);
  return -1;
}

/// Resets the process's peak resident size to its current size (Linux: "5" into clear_refs).
bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// Logistic regression: 2 * 10^5 samples (at the default size) of 10 features, 10 iterations in one call.
// (Namespace scope: kernel calls take their arguments by reference.)
constexpr std::int64_t kFeatures = 10, kIterations = 10;
// Black-Scholes: the risk-free rate and the volatility.
constexpr double r = 0.02, v = 0.30;

}  // namespace

KILN_BENCH(softmax_case) {
  struct State {
    bench::Vector a;
    kiln::NDArray<double> got;
    Buffer want;
    decltype(make_softmax()) k = make_softmax();
    std::vector<double> empty;
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "softmax";
  c.bytes = 2.0 * 8 * static_cast<double>(n);  // a read, the result written
  c.setup = [s, n] {
    s->a = bench::random_vector(static_cast<std::size_t>(n), 3, -20.0, 20.0);
  };
  c.kiln = [s] { s->got = s->k(s->a); };
  c.ref = [s, n] {
    s->want.fresh(static_cast<std::size_t>(n));
    ref::softmax(s->a.data(), s->want.get(), static_cast<long>(n), kiln::num_threads());
  };
  c.check = [s, n] {
    // exp may come from libmvec (a few ulp), and the two sums of 2 * 10^7 terms add in different orders:
    // the reference's per-thread running sums alone are off by up to about n * 2^-53 (2e-9) relative.
    return compare(s->got.data(), s->want.get(), static_cast<std::size_t>(n), 1e-9, 0);
  };
  c.extra = [s, n] {
    // The memory one call takes beyond its input, two ways: what kernels allocated through the runtime
    // (the result included), and the growth of the resident set (pages touched; allocator and stacks too).
    s->got = kiln::NDArray<double>();
    const kiln::AllocationStats before = kiln::allocation_stats();
    kiln::reset_allocation_peak();
    const bool rss_ok = reset_peak_rss();
    const long rss0 = status_kb("VmRSS");
    s->got = s->k(s->a);
    const long hwm = status_kb("VmHWM");
    const kiln::AllocationStats after = kiln::allocation_stats();
    const std::int64_t extra = after.peak_bytes - before.in_use_bytes;
    std::string out = "\"peak_extra_bytes\":" + std::to_string(extra) +
                      ",\"result_bytes\":" + std::to_string(static_cast<long long>(n) * 8) +
                      ",\"allocations\":" + std::to_string(after.allocations - before.allocations);
    if (rss_ok && rss0 >= 0 && hwm >= 0) out += ",\"peak_rss_growth_bytes\":" + std::to_string((hwm - rss0) * 1024L);
    return out;
  };
  c.teardown = [s] {
    s->a = {};
    s->got = {};
    s->want.p.reset();
  };
  c.cold_compile = [] {
    auto k = make_softmax();
    std::vector<double> a(1, 1.0);
    (void)k(a);
  };
  c.empty_call = [s] {
    // max of an empty array is an error (ValueError), so the smallest call has one element.
    static const std::vector<double> one(1, 0.5);
    (void)s->k(one);
  };
  return c;
}

KILN_BENCH(logistic_regression_case) {
  struct State {
    kiln::NDArray<double> X;
    std::vector<double> Y, w0, w, w_ref;
    decltype(make_logistic_regression()) k = make_logistic_regression();
  };
  auto s = std::make_shared<State>();
  const std::int64_t n = std::max<long long>(1, bench::problem_size() / 100);
  bench::Case c;
  c.name = "logistic_regression";
  // Every iteration must read X and Y (w is read and written once per iteration, negligible).
  c.bytes = static_cast<double>(kIterations) * 8.0 * static_cast<double>(n * kFeatures + n);
  c.setup = [s, n] {
    s->X = kiln::NDArray<double>({n, kFeatures});
    s->Y.resize(static_cast<std::size_t>(n));
    s->w0.resize(kFeatures);
    std::mt19937_64 rng(17);
    std::normal_distribution<double> feature(0.0, 1.0);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (std::int64_t k = 0; k < n * kFeatures; ++k) s->X[k] = feature(rng) * 1e-3;
    for (auto& y : s->Y) y = uniform(rng) > 0 ? 1.0 : -1.0;
    for (auto& v : s->w0) v = uniform(rng);
  };
  // Each run trains from the same start, so the last results compare.
  c.kiln = [s] {
    s->w = s->w0;
    s->k(s->X, s->Y, s->w, kIterations);
  };
  c.ref = [s, n] {
    s->w_ref = s->w0;
    ref::logistic_regression(s->X.data(), s->Y.data(), s->w_ref.data(), static_cast<long>(n), kFeatures, kIterations,
                             kiln::num_threads());
  };
  c.check = [s] { return compare(s->w.data(), s->w_ref.data(), s->w.size(), 1e-9, 1e-12); };
  c.teardown = [s] { s->X = {}; };
  c.cold_compile = [] {
    auto k = make_logistic_regression();
    kiln::NDArray<double> X({1, 1});
    std::vector<double> Y(1, 1.0), w(1, 0.0);
    k(X, Y, w, 1);
  };
  c.empty_call = [s] {
    static kiln::NDArray<double> X({0, kFeatures});
    static std::vector<double> Y, w(kFeatures, 0.0);
    s->k(X, Y, w, 1);
  };
  return c;
}

KILN_BENCH(black_scholes_case) {
  struct State {
    std::vector<double> S, K, T;
    kiln::NDArray<double> got;
    Buffer want;
    decltype(make_black_scholes()) k = make_black_scholes();
    std::vector<double> empty;
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size() / 2;  // 10^7 options at the default size
  bench::Case c;
  c.name = "black_scholes";
  c.bytes = 4.0 * 8 * static_cast<double>(n);  // S, K, T read, the prices written
  c.setup = [s, n] {
    s->S.resize(static_cast<std::size_t>(n));
    s->K.resize(static_cast<std::size_t>(n));
    s->T.resize(static_cast<std::size_t>(n));
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> price(5.0, 30.0), strike(1.0, 100.0), years(0.25, 10.0);
    for (std::size_t i = 0; i < s->S.size(); ++i) {
      s->S[i] = price(rng);
      s->K[i] = strike(rng);
      s->T[i] = years(rng);
    }
  };
  c.kiln = [s] { s->got = s->k(s->S, s->K, s->T, r, v); };
  c.ref = [s, n] {
    s->want.fresh(static_cast<std::size_t>(n));
    ref::black_scholes(s->S.data(), s->K.data(), s->T.data(), r, v, s->want.get(), static_cast<long>(n),
                       kiln::num_threads());
  };
  c.check = [s, n] {
    // Prices up to 30 from a difference of two terms: a few ulp of log/exp/erf, magnified by cancellation.
    return compare(s->got.data(), s->want.get(), static_cast<std::size_t>(n), 1e-12, 1e-10);
  };
  c.teardown = [s] {
    s->S = s->K = s->T = {};
    s->got = {};
    s->want.p.reset();
  };
  c.cold_compile = [] {
    auto k = make_black_scholes();
    std::vector<double> one(1, 1.0);
    (void)k(one, one, one, r, v);
  };
  c.empty_call = [s] { (void)s->k(s->empty, s->empty, s->empty, r, v); };
  return c;
}

KILN_BENCH(normalize_case) {
  constexpr std::int64_t kRows = 4000, kCols = 5000;
  struct State {
    kiln::NDArray<double> x, got;
    Buffer want;
    decltype(make_normalize()) k = make_normalize();
  };
  auto s = std::make_shared<State>();
  bench::Case c;
  c.name = "normalize";
  c.bytes = 2.0 * 8 * static_cast<double>(kRows * kCols);  // x read, the result written
  c.setup = [s] {
    s->x = kiln::NDArray<double>({kRows, kCols});
    std::mt19937_64 rng(5);
    std::normal_distribution<double> d(3.0, 2.0);
    for (std::int64_t k = 0; k < kRows * kCols; ++k) s->x[k] = d(rng) + static_cast<double>(k / kCols % 7);
  };
  c.kiln = [s] { s->got = s->k(s->x); };
  c.ref = [s] {
    s->want.fresh(static_cast<std::size_t>(kRows * kCols));
    ref::normalize(s->x.data(), s->want.get(), kRows, kCols, kiln::num_threads());
  };
  c.check = [s] {
    // Values of about unit size; the row sums are accumulated in different orders.
    return compare(s->got.data(), s->want.get(), static_cast<std::size_t>(kRows * kCols), 1e-12, 1e-12);
  };
  c.teardown = [s] {
    s->x = {};
    s->got = {};
    s->want.p.reset();
  };
  c.cold_compile = [] {
    auto k = make_normalize();
    kiln::NDArray<double> x({1, 2});
    x[0] = 1.0;
    (void)k(x);
  };
  c.empty_call = [s] {
    static kiln::NDArray<double> x({0, kCols});
    (void)s->k(x);
  };
  return c;
}
