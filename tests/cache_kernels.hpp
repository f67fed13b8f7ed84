// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels shared by the cache tests and tests/cache_helper.cpp. Both programs trace these same lambdas, so
// a kernel compiled by one finds the other's entry: the key is the traced IR, not the lambda's type.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace cache_kernels {

inline auto make_pi(kiln::Options o = {}) {
  return kiln::jit("pi", [](kiln::Int n) {
    kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  }, o);
}

inline auto make_saxpy(kiln::Options o = {}) {
  return kiln::jit("saxpy", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, o);
}

inline auto make_dot(kiln::Options o = {}) {
  return kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  }, o);
}

/// Vector math: LLVM vectorizes the loop's exp into a call of glibc's libmvec (_ZGV...) where it is available.
inline auto make_vexp(kiln::Options o = {}) {
  return kiln::jit("vexp", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = kiln::exp(x[i]); });
  }, o);
}

/// A family of kernels of one shape whose keys differ: the sum of x[i] * (1.25 + k).
inline auto make_scaled(int k, kiln::Options o = {}) {
  const double factor = 1.25 + k;  // no constant LLVM folds away (x * 1.0) or rewrites (x * 2.0)
  return kiln::jit("scaled", [factor](kiln::Array<double> x) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * factor; });
    return s;
  }, o);
}

/// Runs kernel `name` ("pi", "saxpy", "dot", "vexp" or "scaled:<k>") on a small input and compares it with plain C++;
/// returns "" or what differs.
inline std::string run_and_check(const std::string& name) {
  if (name.rfind("scaled:", 0) == 0) {
    const int k = std::stoi(name.substr(7));
    std::vector<double> x(101);
    double want = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<double>(i);
      want += x[i] * (1.25 + k);
    }
    const double got = make_scaled(k)(x);
    return got == want ? "" : name + ": " + std::to_string(got) + " vs " + std::to_string(want);
  }
  if (name == "pi") {
    const std::int64_t n = 10007;
    const double got = make_pi()(n);
    double want = 0;
    const double step = 1.0 / static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = (static_cast<double>(i) + 0.5) * step;
      want += 4.0 / (1.0 + x * x);
    }
    want *= step;
    return std::fabs(got - want) <= 1e-12 ? "" : "pi: " + std::to_string(got) + " vs " + std::to_string(want);
  }
  if (name == "saxpy") {
    std::vector<float> x(1001), y(1001);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 1.0f / static_cast<float>(i + 1);
    }
    std::vector<float> want = y;
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = std::fma(3.0f, x[i], want[i]);
    make_saxpy()(3.0f, x, y);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::fabs(y[i] - want[i]) > 1e-5f * std::fabs(want[i])) return "saxpy differs at " + std::to_string(i);
    return "";
  }
  if (name == "dot") {
    std::vector<double> x(2003), y(2003);
    double want = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = 0.5 + static_cast<double>(i % 7);
      y[i] = 1.0 / static_cast<double>(i + 1);
      want += x[i] * y[i];
    }
    const double got = make_dot()(x, y);
    return std::fabs(got - want) <= 1e-12 * std::fabs(want) ? "" : "dot: " + std::to_string(got) + " vs " + std::to_string(want);
  }
  if (name == "vexp") {
    std::vector<double> x(1003), y(1003);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = -20.0 + 0.04 * static_cast<double>(i);
    make_vexp()(x, y);
    for (std::size_t i = 0; i < x.size(); ++i)  // libmvec's exp is within 4 ulp
      if (std::fabs(y[i] - std::exp(x[i])) > 1e-15 * std::exp(x[i])) return "vexp differs at " + std::to_string(i);
    return "";
  }
  return "unknown kernel " + name;
}

}  // namespace cache_kernels
