// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rows random_uniform_f32 and random_normal_f64: a prange filling a large array with kiln::random numbers,
// against a hand-written OpenMP Philox-4x32-10 of the same numbers (reference_random.cpp); the check is bit
// for bit. Uniform is Philox plus one store (integer work: 10 rounds of two 32 x 32 -> 64-bit products);
// normal adds a division, a square root and three polynomials of 9 to 11 terms per element. Rows packed_uniform_f32
// and packed_normal_f64: kiln::random::packed's fills (one block per 4 floats, per normal pair) against the same
// loops over blocks.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

#include "harness.hpp"
#include "reference_random.hpp"

namespace {

constexpr std::int64_t kKey = 0x5EED0F0123456789LL;

auto make_uniform() {
  return kiln::jit("random_uniform_f32", [](kiln::Array<float, 1> x, kiln::Int key) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = kiln::random::uniform<float>(key, i); });
  }, bench::kernel_options());
}

auto make_normal() {
  return kiln::jit("random_normal_f64", [](kiln::Array<double, 1> x, kiln::Int key) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = kiln::random::normal<double>(key, i); });
  }, bench::kernel_options());
}

auto make_packed_uniform() {
  return kiln::jit("packed_uniform_f32", [](kiln::Array<float, 1> x, kiln::Int key) {
    kiln::random::packed::fill_uniform(x, key);
  }, bench::kernel_options());
}

auto make_packed_normal() {
  return kiln::jit("packed_normal_f64", [](kiln::Array<double, 1> x, kiln::Int key) {
    kiln::random::packed::fill_normal(x, key);
  }, bench::kernel_options());
}

template <class T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return "differs at " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
  return "";
}

/// One row: `fill` runs the kernel into x, `reference` the hand-written loop into its argument.
template <class T, class Make, class Ref>
bench::Case row(const char* name, Make make, Ref reference) {
  struct State {
    std::vector<T> x, x_ref, empty;
    decltype(make()) k;
    explicit State(Make m) : k(m()) {}
  };
  auto s = std::make_shared<State>(make);
  const long long n = bench::problem_size();
  bench::Case c;
  c.name = name;
  c.bytes = static_cast<double>(sizeof(T)) * static_cast<double>(n);
  c.setup = [s, n] {
    s->x.assign(static_cast<std::size_t>(n), T(0));
    s->x_ref.assign(static_cast<std::size_t>(n), T(0));
  };
  c.kiln = [s] { s->k(s->x, kKey); };
  c.ref = [s, n, reference] { reference(s->x.data(), n, kKey, kiln::num_threads()); };
  c.verify = [s, n, reference] {
    s->k(s->x, kKey);
    reference(s->x_ref.data(), n, kKey, kiln::num_threads());
  };
  c.check = [s] { return first_difference(s->x, s->x_ref); };
  c.teardown = [s] { s->x = s->x_ref = {}; };
  c.cold_compile = [make] {
    auto k = make();
    std::vector<T> one(1);
    k(one, kKey);
  };
  c.empty_call = [s] { s->k(s->empty, kKey); };
  return c;
}

}  // namespace

KILN_BENCH(random_uniform_case) { return row<float>("random_uniform_f32", make_uniform, ref::random_uniform_f32); }

KILN_BENCH(random_normal_case) { return row<double>("random_normal_f64", make_normal, ref::random_normal_f64); }

KILN_BENCH(packed_uniform_case) {
  return row<float>("packed_uniform_f32", make_packed_uniform, ref::random_packed_uniform_f32);
}

KILN_BENCH(packed_normal_case) { return row<double>("packed_normal_f64", make_packed_normal, ref::random_packed_normal_f64); }
