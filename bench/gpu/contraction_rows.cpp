// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shapes where a thread per element might beat a contraction's tiles variant (launch_model.hpp): the product as
// users write it with prange, so that every shape reaches the contraction (kiln::dot sums chunks below 2^18 elements).
#include "bench/gpu/contraction_rows.hpp"

#include "bench/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/kiln.hpp"

namespace benchgpu {

void contraction_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps) {
  auto k = kiln::jit("matmul", [](kiln::Array<double, 2> C, kiln::Array<double, 2> A, kiln::Array<double, 2> B) {
    kiln::prange(kiln::shape(C.shape(0), C.shape(1)), [&](kiln::Int i, kiln::Int j) {
      kiln::Double s = 0.0;
      kiln::range(A.shape(1), [&](kiln::Int q) { s += A(i, q) * B(q, j); });
      C(i, j) = s;
    });
  }, kiln::Options().on(kiln::Target::cuda));
  struct Shape {
    const char* what;
    long long m, n, k;
  };
  const Shape shapes[] = {{"skinny (16 columns)", 65536, 16, 1024},   {"skinny (8 columns)", 65536, 8, 1024},
                          {"short (8 steps)", 2048, 2048, 8},         {"short (16 steps)", 2048, 2048, 16},
                          {"few tiles (64 of 132 SMs)", 512, 512, 4096}, {"tiles (72)", 576, 512, 4096},
                          {"small (16 tiles)", 256, 256, 4096},      {"large", 4096, 4096, 512}};
  std::printf("\ncontraction form (prange matrix product, f64, median of %d; KILN_CUDA_CONTRACTION=%s):\n", reps,
              std::getenv("KILN_CUDA_CONTRACTION") ? std::getenv("KILN_CUDA_CONTRACTION") : "model");
  std::printf("  %-28s %18s %10s  %s\n", "shape", "m x n x k", "kiln ms", "form (last launch)");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const Shape& s : shapes) {
    auto fill = [&](long long r, long long c) {
      std::vector<double> h(static_cast<std::size_t>(r * c));
      for (double& x : h) x = u(rng);
      kiln::DeviceArray<double> d({r, c});
      d.copy_from(std::span<const double>(h));
      return d;
    };
    kiln::DeviceArray<double> A = fill(s.m, s.k), B = fill(s.k, s.n), C({s.m, s.n});
    auto run = [&] { k(C, A, B); };
    run();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(time_ms(run));
    const std::string d = k.diagnostics();
    const auto at = d.rfind("last launch:");
    std::string form = at == std::string::npos ? "?" : d.substr(at, d.find('\n', at) - at);
    if (const auto c = form.find(": ", 13); c != std::string::npos) form = form.substr(c + 2);
    std::printf("  %-28s %6lld x %5lld x %4lld %10.3f  %s\n", s.what, s.m, s.n, s.k, bench::median(t), form.c_str());
  }
}

namespace {

template <class T>
void product_row(const std::function<double(const std::function<void()>&)>& time_ms, int reps, long long m, long long n, long long k,
                 bool fast_math) {
  kiln::Options o = kiln::Options().on(kiln::Target::cuda);
  o.fast_math = fast_math;
  auto f = kiln::jit("product", [](kiln::Array<T, 2> C, kiln::Array<T, 2> A, kiln::Array<T, 2> B) {
    kiln::prange(kiln::shape(C.shape(0), C.shape(1)), [&](kiln::Int i, kiln::Int j) {
      kiln::Scalar<T> s = T(0);
      kiln::range(A.shape(1), [&](kiln::Int q) { s += A(i, q) * B(q, j); });
      C(i, j) = s;
    });
  }, o);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](long long r, long long c) {
    std::vector<T> h(static_cast<std::size_t>(r * c));
    for (T& x : h) x = static_cast<T>(u(rng));
    kiln::DeviceArray<T> d({r, c});
    d.copy_from(std::span<const T>(h));
    return d;
  };
  kiln::DeviceArray<T> A = fill(m, k), B = fill(k, n), C({m, n});
  auto run = [&] { f(C, A, B); };
  run();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(time_ms(run));
  const double ms = bench::median(t);
  std::printf("  %5lld x %4lld x %4lld  %-4s %-9s %9.3f %9.0f\n", m, n, k, sizeof(T) == 8 ? "f64" : "f32", fast_math ? "fast_math" : "exact", ms,
              2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (ms * 1e6));
}

}  // namespace

void product_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps) {
  std::printf("\nproducts (prange matrix product through the tiles variant, median of %d):\n", reps);
  std::printf("  %-21s %-4s %-9s %9s %9s\n", "m x n x k", "type", "rounding", "kiln ms", "GFLOP/s");
  for (const auto& [m, n, k] : {std::tuple<long long, long long, long long>{2000, 2100, 2200}, {65536, 128, 128}})
    for (const bool fast : {false, true}) {
      product_row<double>(time_ms, reps, m, n, k, fast);
      product_row<float>(time_ms, reps, m, n, k, fast);
    }
}

}  // namespace benchgpu
