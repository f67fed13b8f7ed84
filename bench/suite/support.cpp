// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suite's inputs and result checks (suite.hpp), shared by kiln-suite (the CPU) and kiln-bench-gpu's suite
// rows (the same tolerances on the GPU).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "suite.hpp"

namespace suite {

std::string dims(std::initializer_list<std::pair<const char*, long long>> items) {
  std::string s;
  for (const auto& [k, v] : items) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

kiln::NDArray<double> random_array(std::vector<std::int64_t> shape, unsigned seed, double lo, double hi) {
  kiln::NDArray<double> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (std::int64_t k = 0; k < a.size(); ++k) a.data()[k] = d(rng);
  return a;
}

kiln::NDArray<double> copy(const kiln::NDArray<double>& a) { return a.clone(); }

Buffer copy_to_buffer(const kiln::NDArray<double>& a) {
  Buffer b(static_cast<std::size_t>(a.size()));
  std::copy(a.data(), a.data() + a.size(), b.get());
  return b;
}

void copy_into(const kiln::NDArray<double>& from, kiln::NDArray<double>& to) {
  std::copy(from.data(), from.data() + from.size(), to.data());
}

void copy_into(const kiln::NDArray<double>& from, Buffer& to) {
  std::copy(from.data(), from.data() + from.size(), to.get());
}

std::string compare(const char* what, const double* got, const double* want, std::size_t n, double tol, double scale) {
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= tol * std::fmax(scale, std::fabs(want[i])))) {
      char text[160];
      std::snprintf(text, sizeof text, "%s[%zu]: kiln %.17g, reference %.17g (tolerance %.1e relative)", what, i,
                    got[i], want[i], tol);
      return text;
    }
  }
  return "";
}

Twin::Twin(kiln::NDArray<double> a) : init(std::move(a)), k(init.clone()), r(copy_to_buffer(init)) {}

void Twin::reset() {
  copy_into(init, k);
  copy_into(init, r);
}

std::string compare(const char* what, const Twin& t, double tol, double scale) {
  return compare(what, t.k.data(), t.r.get(), t.size(), tol, scale);
}

double max_abs(const double* v, std::size_t n) {
  double m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(v[i]));
  return m;
}

std::string compare_counts(const char* what, const std::int64_t* got, const std::int64_t* want, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return std::string(what) + "[" + std::to_string(i) + "]: kiln " + std::to_string(got[i]) + ", reference " +
             std::to_string(want[i]);
  return "";
}

}  // namespace suite
