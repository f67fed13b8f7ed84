// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sort rows (issue 19): kiln::sort of 10^7 f64 and i32 keys and kiln::argsort of 10^7 f64 keys (half of --n)
// against a hand-written parallel merge sort (reference_sort.hpp) of the same work: a copy of the input
// sorted (kiln's result is a new array). Each row also reports std::stable_sort on one thread for scale
// (`stable_sort_1t_ms`). A stable sort's result is unique, so results are compared exactly.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_sort.hpp"

namespace {

long long sort_size() { return std::max(1LL, bench::problem_size() / 2); }

template <class T>
std::vector<T> keys(long long n, unsigned seed) {
  const bench::Vector v = bench::random_vector(static_cast<std::size_t>(n), seed);
  std::vector<T> out(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = std::is_floating_point_v<T> ? static_cast<T>(v[i]) : static_cast<T>(v[i] * 2147483647.0);
  return out;
}

/// std::stable_sort of a copy of `x` on one thread, median of 3, in ms.
template <class T>
double serial_ms(const std::vector<T>& x) {
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    std::vector<T> c = x;
    const double t0 = bench::now_s();
    ref::stable_sort_serial(c.data(), static_cast<long>(c.size()));
    t.push_back(1e3 * (bench::now_s() - t0));
  }
  return bench::median(t);
}

template <class T>
auto make_sort(const char* name) {
  return kiln::jit(name, [](kiln::Array<T, 1> x) { return kiln::sort(x); }, bench::kernel_options());
}

template <class T>
bench::Case sort_case(const char* name, unsigned seed) {
  auto k = std::make_shared<decltype(make_sort<T>(name))>(make_sort<T>(name));
  struct State {
    std::vector<T> x, out_ref, empty;
    kiln::NDArray<T> out;
  };
  auto s = std::make_shared<State>();
  const long long n = sort_size();
  bench::Case c;
  c.name = name;
  c.bytes = 2.0 * sizeof(T) * static_cast<double>(n);  // read the keys, write the sorted copy
  c.setup = [s, n, seed] { s->x = keys<T>(n, seed); };
  c.kiln = [s, k] { s->out = (*k)(s->x); };
  c.ref = [s] {
    s->out_ref = s->x;
    ref::sort(s->out_ref.data(), static_cast<long>(s->out_ref.size()), kiln::num_threads());
  };
  c.check = [s] {
    if (std::memcmp(s->out.data(), s->out_ref.data(), s->out_ref.size() * sizeof(T)) != 0) return std::string("sorted keys differ");
    return std::string();
  };
  c.teardown = [s] { s->x = {}, s->out_ref = {}, s->out = {}; };
  c.cold_compile = [] {
    auto k2 = make_sort<T>("sort_cold");
    std::vector<T> x(3);
    k2(x);
  };
  c.empty_call = [s, k] { (*k)(s->empty); };
  c.extra = [s] { return "\"stable_sort_1t_ms\":" + std::to_string(serial_ms(s->x)); };
  return c;
}

}  // namespace

KILN_BENCH(sort_f64_case) { return sort_case<double>("sort_f64", 41); }
KILN_BENCH(sort_i32_case) { return sort_case<std::int32_t>("sort_i32", 42); }

KILN_BENCH(argsort_f64_case) {
  auto make = [] { return kiln::jit("argsort_f64", [](kiln::Array<double, 1> x) { return kiln::argsort(x); }, bench::kernel_options()); };
  auto k = std::make_shared<decltype(make())>(make());
  struct State {
    std::vector<double> x, empty;
    std::vector<std::int64_t> out_ref;
    kiln::NDArray<std::int64_t> out;
  };
  auto s = std::make_shared<State>();
  const long long n = sort_size();
  bench::Case c;
  c.name = "argsort_f64";
  c.bytes = 16.0 * static_cast<double>(n);  // read the keys, write the positions
  c.setup = [s, n] {
    s->x = keys<double>(n, 43);
    s->out_ref.assign(static_cast<std::size_t>(n), 0);
  };
  c.kiln = [s, k] { s->out = (*k)(s->x); };
  c.ref = [s] { ref::argsort(s->x.data(), s->out_ref.data(), static_cast<long>(s->x.size()), kiln::num_threads()); };
  c.check = [s] {
    if (std::memcmp(s->out.data(), s->out_ref.data(), s->out_ref.size() * 8) != 0) return std::string("positions differ");
    return std::string();
  };
  c.teardown = [s] { s->x = {}, s->out_ref = {}, s->out = {}; };
  c.cold_compile = [make] {
    auto k2 = make();
    std::vector<double> x(3);
    k2(x);
  };
  c.empty_call = [s, k] { (*k)(s->empty); };
  return c;
}
