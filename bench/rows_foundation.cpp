// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows saxpy, dot and pi: the foundation kernels, f64.
#include <cmath>
#include <memory>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference.hpp"

namespace {

auto make_saxpy() {
  return kiln::jit("saxpy", [](kiln::Double a, kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, bench::kernel_options());
}

auto make_dot() {
  return kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  }, bench::kernel_options());
}

auto make_pi() {
  return kiln::jit("pi", [](kiln::Int n) {
    kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  }, bench::kernel_options());
}

std::string relative_check(double got, double want, double tol) {
  const double err = std::fabs(got - want) / std::fmax(1e-300, std::fabs(want));
  return err <= tol ? "" : "relative error " + std::to_string(err);
}

}  // namespace

KILN_BENCH(saxpy_case) {
  struct State {
    bench::Vector x, y0, y, yr;
    decltype(make_saxpy()) k = make_saxpy();
    std::vector<double> empty;
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "saxpy";
  c.bytes = 3.0 * 8 * static_cast<double>(n);
  c.setup = [s, n] {
    s->x = bench::random_vector(n, 1);
    s->y0 = bench::random_vector(n, 2);
    s->y = s->yr = s->y0;
  };
  // Both update `y` in place in the timed runs (see Case::verify); the check starts both from y0 again.
  c.kiln = [s] { s->k(0.5, s->x, s->y); };
  c.ref = [s, n] { ref::saxpy(0.5, s->x.data(), s->y.data(), n, kiln::num_threads()); };
  c.verify = [s, n] {
    s->y = s->yr = s->y0;
    s->k(0.5, s->x, s->y);
    ref::saxpy(0.5, s->x.data(), s->yr.data(), n, kiln::num_threads());
  };
  c.check = [s] {
    // One call each from the same start: elementwise equal up to fma contraction.
    for (std::size_t i = 0; i < s->y.size(); ++i)
      if (std::fabs(s->y[i] - s->yr[i]) > 1e-12 * std::fmax(1.0, std::fabs(s->yr[i]))) return std::string("saxpy differs at ") + std::to_string(i);
    return std::string();
  };
  c.teardown = [s] { s->x = s->y0 = s->y = s->yr = {}; };
  c.cold_compile = [] {
    auto k = make_saxpy();
    std::vector<double> x(1, 1.0), y(1, 1.0);
    k(2.0, x, y);
  };
  c.empty_call = [s] { s->k(0.5, s->empty, s->empty); };
  return c;
}

KILN_BENCH(dot_case) {
  struct State {
    bench::Vector x, y;
    double got = 0, want = 0;
    decltype(make_dot()) k = make_dot();
    std::vector<double> empty;
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "dot";
  c.bytes = 2.0 * 8 * static_cast<double>(n);
  c.setup = [s, n] {
    s->x = bench::random_vector(n, 3);
    s->y = bench::random_vector(n, 4);
  };
  c.kiln = [s] { s->got = s->k(s->x, s->y); };
  c.ref = [s, n] { s->want = ref::dot(s->x.data(), s->y.data(), n, kiln::num_threads()); };
  c.check = [s] { return relative_check(s->got, s->want, 1e-9); };
  c.teardown = [s] { s->x = s->y = {}; };
  c.cold_compile = [] {
    auto k = make_dot();
    std::vector<double> x(1, 1.0);
    (void)k(x, x);
  };
  c.empty_call = [s] { (void)s->k(s->empty, s->empty); };
  return c;
}

KILN_BENCH(pi_case) {
  struct State {
    double got = 0, want = 0;
    decltype(make_pi()) k = make_pi();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "pi";
  c.bytes = 0;  // compute-bound: no array traffic
  c.setup = [] {};
  c.kiln = [s, n] { s->got = s->k(n); };
  c.ref = [s, n] { s->want = ref::pi(n, kiln::num_threads()); };
  c.check = [s] { return relative_check(s->got, s->want, 1e-12); };
  c.cold_compile = [] {
    auto k = make_pi();
    (void)k(1);
  };
  c.empty_call = [s] { (void)s->k(0); };
  return c;
}
