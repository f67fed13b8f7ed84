// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows copy and triad. `copy` measures the machine's memory-bandwidth ceiling in the same run as the other
// rows (its reference GB/s is the ceiling the peers' plot draws); `triad` is the fused array expression
// a * b + c written into an existing output, one pass over memory.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_streaming.hpp"

namespace {

auto make_copy() {
  return kiln::jit("copy", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = x[i]; });
  }, bench::kernel_options());
}

auto make_triad() {
  return kiln::jit("triad", [](kiln::Array<double, 1> a, kiln::Array<double, 1> b, kiln::Array<double, 1> c,
                               kiln::Array<double, 1> out) { out(kiln::all) = a * b + c; }, bench::kernel_options());
}

std::string first_difference(const bench::Vector& got, const bench::Vector& want, double tol) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * std::fmax(1.0, std::fabs(want[i]))))
      return "differs at " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
  return "";
}

}  // namespace

KILN_BENCH(copy_case) {
  struct State {
    bench::Vector x, y, yr;
    std::vector<double> empty;
    decltype(make_copy()) k = make_copy();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "copy";
  c.bytes = 2.0 * 8 * static_cast<double>(n);
  c.setup = [s, n] {
    s->x = bench::random_vector(static_cast<std::size_t>(n), 21);
    s->y.assign(static_cast<std::size_t>(n), 0.0);
    s->yr.assign(static_cast<std::size_t>(n), 0.0);
  };
  c.kiln = [s] { s->k(s->x, s->y); };
  c.ref = [s, n] { ref::copy(s->x.data(), s->y.data(), n, kiln::num_threads()); };
  c.verify = [s, n] {
    s->k(s->x, s->y);
    ref::copy(s->x.data(), s->yr.data(), n, kiln::num_threads());
  };
  c.check = [s] { return first_difference(s->y, s->yr, 0.0); };
  c.teardown = [s] { s->x = s->y = s->yr = {}; };
  c.cold_compile = [] {
    auto k = make_copy();
    std::vector<double> x(1, 1.0), y(1);
    k(x, y);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty); };
  return c;
}

KILN_BENCH(triad_case) {
  struct State {
    bench::Vector a, b, c, out, out_ref;
    std::vector<double> empty;
    decltype(make_triad()) k = make_triad();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "triad";
  c.bytes = 4.0 * 8 * static_cast<double>(n);
  c.setup = [s, n] {
    s->a = bench::random_vector(static_cast<std::size_t>(n), 22);
    s->b = bench::random_vector(static_cast<std::size_t>(n), 23);
    s->c = bench::random_vector(static_cast<std::size_t>(n), 24);
    s->out.assign(static_cast<std::size_t>(n), 0.0);
    s->out_ref.assign(static_cast<std::size_t>(n), 0.0);
  };
  c.kiln = [s] { s->k(s->a, s->b, s->c, s->out); };
  c.ref = [s, n] { ref::triad(s->a.data(), s->b.data(), s->c.data(), s->out.data(), n, kiln::num_threads()); };
  c.verify = [s, n] {
    s->k(s->a, s->b, s->c, s->out);
    ref::triad(s->a.data(), s->b.data(), s->c.data(), s->out_ref.data(), n, kiln::num_threads());
  };
  // Equal up to fma contraction (either side may contract a * b + c).
  c.check = [s] { return first_difference(s->out, s->out_ref, 1e-15); };
  c.teardown = [s] { s->a = s->b = s->c = s->out = s->out_ref = {}; };
  c.cold_compile = [] {
    auto k = make_triad();
    std::vector<double> one(1, 1.0), out(1);
    k(one, one, one, out);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty, s->empty, s->empty); };
  return c;
}
