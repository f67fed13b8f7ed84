// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prefix-sum rows (issue 19): kiln::cumsum of a large f64 vector against the hand-written two-pass OpenMP scan,
// and cumsum along each axis of a 2-d array against hand loops that scan in one pass (each thread owning
// columns, or rows). kiln follows its defined order (blocks of ir::sem::kScanBlock, carries in groups), so its
// float results are the same bits for any thread count; the references' rounding depends on the thread count,
// so results are compared within rounding.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_scans.hpp"

namespace {

auto make_cumsum() {
  return kiln::jit("cumsum", [](kiln::Array<double, 1> x, kiln::Array<double, 1> out) {
    out(kiln::all) = kiln::cumsum(x);
  }, bench::kernel_options());
}

auto make_cumsum_axis(int axis) {
  return kiln::jit("cumsum_axis", [axis](kiln::Array<double, 2> x, kiln::Array<double, 2> out) {
    out(kiln::all, kiln::all) = kiln::cumsum(x, axis);
  }, bench::kernel_options());
}

/// Within the rounding of two summation orders of values in [-1, 1): relative to the running sum of
/// magnitudes, which bounds both orders' errors.
std::string compare(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-9 * (1.0 + static_cast<double>(i))))
      return what + " element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return {};
}

}  // namespace

KILN_BENCH(cumsum_case) {
  struct State {
    bench::Vector x, out, out_ref;
    decltype(make_cumsum()) k = make_cumsum();
    std::vector<double> empty;
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "cumsum";
  c.bytes = 16.0 * static_cast<double>(n);  // read x, write out (the minimum; a two-pass scan reads x twice)
  c.setup = [s, n] {
    s->x = bench::random_vector(static_cast<std::size_t>(n), 11);
    s->out.assign(static_cast<std::size_t>(n), 0.0);
    s->out_ref.assign(static_cast<std::size_t>(n), 0.0);
  };
  c.kiln = [s] { s->k(s->x, s->out); };
  c.ref = [s, n] { ref::cumsum(s->x.data(), s->out_ref.data(), static_cast<long>(n), kiln::num_threads()); };
  c.check = [s] {
    return compare(std::vector<double>(s->out.begin(), s->out.end()),
                   std::vector<double>(s->out_ref.begin(), s->out_ref.end()), "cumsum");
  };
  c.teardown = [s] { s->x = {}, s->out = {}, s->out_ref = {}; };
  c.cold_compile = [] {
    auto k = make_cumsum();
    std::vector<double> x(3, 1.0), o(3);
    k(x, o);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty); };
  return c;
}

namespace {

bench::Case axis_case(int axis) {
  struct State {
    kiln::NDArray<double> x, out, out_ref;
    std::function<void(kiln::NDArray<double>&, kiln::NDArray<double>&)> call;
    kiln::NDArray<double> empty = kiln::NDArray<double>({0, 0});
  };
  auto s = std::make_shared<State>();
  // A square matrix of about problem_size() elements (4472 x 4472 at the default size).
  const long long side = static_cast<long long>(std::sqrt(static_cast<double>(bench::problem_size())));
  auto k = std::make_shared<decltype(make_cumsum_axis(0))>(make_cumsum_axis(axis));
  s->call = [k](kiln::NDArray<double>& x, kiln::NDArray<double>& o) { (*k)(x, o); };
  bench::Case c;
  c.name = axis == 0 ? "cumsum_axis0" : "cumsum_axis1";
  c.bytes = 16.0 * static_cast<double>(side * side);
  c.setup = [s, side] {
    s->x = kiln::NDArray<double>({side, side});
    const bench::Vector v = bench::random_vector(static_cast<std::size_t>(side * side), 12);
    std::copy(v.begin(), v.end(), s->x.data());
    s->out = kiln::NDArray<double>({side, side});
    s->out_ref = kiln::NDArray<double>({side, side});
  };
  c.kiln = [s] { s->call(s->x, s->out); };
  c.ref = [s, side, axis] {
    const long n = static_cast<long>(side);
    if (axis == 0) ref::cumsum_rows_down(s->x.data(), s->out_ref.data(), n, n, kiln::num_threads());
    else ref::cumsum_along_rows(s->x.data(), s->out_ref.data(), n, n, kiln::num_threads());
  };
  c.check = [s, axis] {
    return compare(s->out.to_vector(), s->out_ref.to_vector(), axis == 0 ? "cumsum axis 0" : "cumsum axis 1");
  };
  c.teardown = [s] { s->x = {}, s->out = {}, s->out_ref = {}; };
  c.cold_compile = [axis] {
    auto k = make_cumsum_axis(axis);
    kiln::NDArray<double> x({2, 3}), o({2, 3});
    k(x, o);
  };
  c.empty_call = [s] { s->call(s->empty, s->empty); };
  return c;
}

}  // namespace

KILN_BENCH(cumsum_axis0_case) { return axis_case(0); }
KILN_BENCH(cumsum_axis1_case) { return axis_case(1); }
