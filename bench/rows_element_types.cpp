// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows u8_add, u8_sum, f16_axpy and c64_mul_add: the newer element types against hand-written OpenMP loops
// (bytes with SIMD, binary16 with F16C's conversion instructions, std::complex<float>). Equal results are
// required: kiln's f16 rounding is F16C's (round to nearest even), and its complex product is std::complex's
// for finite operands, so the outputs compare bit for bit.
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_element_types.hpp"

namespace {

template <class T>
using Buffer = std::vector<T, bench::OffsetAllocator<T>>;

Buffer<std::uint8_t> random_bytes(std::size_t n, unsigned seed) {
  Buffer<std::uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& x : v) x = static_cast<std::uint8_t>(rng());
  return v;
}

Buffer<kiln::half> random_halves(std::size_t n, unsigned seed) {
  Buffer<kiln::half> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4, 4);
  for (auto& x : v) x = kiln::half(d(rng));
  return v;
}

Buffer<std::complex<float>> random_complex(std::size_t n, unsigned seed) {
  Buffer<std::complex<float>> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

auto make_u8_add() {
  return kiln::jit("u8_add", [](kiln::Array<std::uint8_t> a, kiln::Array<std::uint8_t> b, kiln::Array<std::uint8_t> out) {
    out(kiln::all) = a + b;
  }, bench::kernel_options());
}
auto make_u8_sum() {
  return kiln::jit("u8_sum", [](kiln::Array<std::uint8_t> a) { return kiln::sum(a); }, bench::kernel_options());
}
auto make_f16_axpy() {
  return kiln::jit("f16_axpy", [](kiln::Float alpha, kiln::Array<kiln::half> x, kiln::Array<kiln::half> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = kiln::cast<kiln::half>(alpha * x[i] + y[i]); });
  }, bench::kernel_options());
}

auto make_c64_mul_add() {
  return kiln::jit("c64_mul_add", [](kiln::Array<std::complex<float>> a, kiln::Array<std::complex<float>> b,
                                     kiln::Array<std::complex<float>> y) {
    kiln::prange(a.shape(0), [&](kiln::Int i) { y[i] = a[i] * b[i] + y[i]; });
  }, bench::kernel_options());
}

template <class T>
std::string first_byte_difference(const Buffer<T>& got, const Buffer<T>& want) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return "differs at " + std::to_string(i);
  return "";
}

}  // namespace

KILN_BENCH(u8_add_case) {
  struct State {
    Buffer<std::uint8_t> a, b, out, out_ref;
    std::vector<std::uint8_t> empty;
    decltype(make_u8_add()) k = make_u8_add();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "u8_add";
  c.bytes = 3.0 * static_cast<double>(n);
  c.setup = [s, n] {
    s->a = random_bytes(static_cast<std::size_t>(n), 1);
    s->b = random_bytes(static_cast<std::size_t>(n), 2);
    s->out.assign(static_cast<std::size_t>(n), 0);
    s->out_ref.assign(static_cast<std::size_t>(n), 0);
  };
  c.kiln = [s] { s->k(s->a, s->b, s->out); };
  c.ref = [s, n] { ref::u8_add(s->a.data(), s->b.data(), s->out_ref.data(), n, kiln::num_threads()); };
  c.check = [s] { return first_byte_difference(s->out, s->out_ref); };
  c.teardown = [s] { s->a = s->b = s->out = s->out_ref = {}; };
  c.cold_compile = [] {
    std::vector<std::uint8_t> a(1, 1), b(1, 2), o(1);
    make_u8_add()(a, b, o);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty, s->empty); };
  return c;
}

KILN_BENCH(u8_sum_case) {
  struct State {
    Buffer<std::uint8_t> a;
    std::vector<std::uint8_t> empty;
    std::uint64_t got = 0, want = 0;
    decltype(make_u8_sum()) k = make_u8_sum();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "u8_sum";
  c.bytes = static_cast<double>(n);
  c.setup = [s, n] { s->a = random_bytes(static_cast<std::size_t>(n), 3); };
  c.kiln = [s] { s->got = s->k(s->a); };
  c.ref = [s, n] { s->want = ref::u8_sum(s->a.data(), n, kiln::num_threads()); };
  c.check = [s] { return s->got == s->want ? "" : std::to_string(s->got) + " vs " + std::to_string(s->want); };
  c.teardown = [s] { s->a = {}; };
  c.cold_compile = [] {
    std::vector<std::uint8_t> a(1, 1);
    make_u8_sum()(a);
  };
  c.empty_call = [s] { s->k(s->empty); };
  return c;
}

KILN_BENCH(f16_axpy_case) {
  struct State {
    Buffer<kiln::half> x, y, y0, y_ref;
    std::vector<kiln::half> empty;
    decltype(make_f16_axpy()) k = make_f16_axpy();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "f16_axpy";
  c.bytes = 3.0 * 2 * static_cast<double>(n);
  c.setup = [s, n] {
    s->x = random_halves(static_cast<std::size_t>(n), 4);
    s->y0 = random_halves(static_cast<std::size_t>(n), 5);
    s->y = s->y0;
    s->y_ref = s->y0;
  };
  // y is updated in place by both (alpha 1/2^k keeps values in range over many repetitions).
  c.kiln = [s] { s->k(0.25f, s->x, s->y); };
  c.ref = [s, n] {
    ref::f16_axpy(0.25f, reinterpret_cast<const std::uint16_t*>(s->x.data()),
                  reinterpret_cast<std::uint16_t*>(s->y_ref.data()), n, kiln::num_threads());
  };
  c.verify = [s, n] {
    s->y = s->y0;
    s->y_ref = s->y0;
    s->k(0.25f, s->x, s->y);
    ref::f16_axpy(0.25f, reinterpret_cast<const std::uint16_t*>(s->x.data()),
                  reinterpret_cast<std::uint16_t*>(s->y_ref.data()), n, kiln::num_threads());
  };
  c.check = [s] { return first_byte_difference(s->y, s->y_ref); };
  c.teardown = [s] { s->x = s->y = s->y0 = s->y_ref = {}; };
  c.cold_compile = [] {
    std::vector<kiln::half> x(1, kiln::half(1.0f)), y(1, kiln::half(2.0f));
    make_f16_axpy()(0.5f, x, y);
  };
  c.empty_call = [s] { s->k(0.5f, s->empty, s->empty); };
  return c;
}

KILN_BENCH(c64_mul_add_case) {
  struct State {
    Buffer<std::complex<float>> a, b, y, y0, y_ref;
    std::vector<std::complex<float>> empty;
    decltype(make_c64_mul_add()) k = make_c64_mul_add();
  };
  auto s = std::make_shared<State>();
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = "c64_mul_add";
  c.bytes = 4.0 * 8 * static_cast<double>(n);  // read a, b, y; write y
  c.setup = [s, n] {
    s->a = random_complex(static_cast<std::size_t>(n), 6);
    s->b = random_complex(static_cast<std::size_t>(n), 7);
    s->y0 = random_complex(static_cast<std::size_t>(n), 8);
    s->y = s->y0;
    s->y_ref = s->y0;
  };
  // y is updated in place by both; |a b| <= 2 keeps every repetition finite.
  c.kiln = [s] { s->k(s->a, s->b, s->y); };
  c.ref = [s, n] { ref::c64_mul_add(s->a.data(), s->b.data(), s->y_ref.data(), n, kiln::num_threads()); };
  c.verify = [s, n] {
    s->y = s->y0;
    s->y_ref = s->y0;
    s->k(s->a, s->b, s->y);
    ref::c64_mul_add(s->a.data(), s->b.data(), s->y_ref.data(), n, kiln::num_threads());
  };
  c.check = [s] { return first_byte_difference(s->y, s->y_ref); };
  c.teardown = [s] { s->a = s->b = s->y = s->y0 = s->y_ref = {}; };
  c.cold_compile = [] {
    std::vector<std::complex<float>> a(1, {1, 1}), b(1, {2, 0}), y(1);
    make_c64_mul_add()(a, b, y);
  };
  c.empty_call = [s] { s->k(s->empty, s->empty, s->empty); };
  return c;
}
