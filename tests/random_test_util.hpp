// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by random_test and random_cuda_test: a kernel drawing every kind of kiln::random number at
// counters first + i, and the comparison of its outputs with the definition (ir/random.hpp) bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/random.hpp"
#include "kiln/kiln.hpp"

namespace kiln::random_test {

constexpr std::int64_t kKey = 0x0123456789ABCDEFLL;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

inline const auto draws = [](Array<float, 1> u, Array<double, 1> v, Array<float, 1> z, Array<double, 1> w,
                             Array<std::int64_t, 1> b, Int key, Int first) {
  prange(u.shape(0), [&](Int i) {
    u[i] = random::uniform<float>(key, first + i);
    v[i] = random::uniform<double>(key, first + i);
    z[i] = random::normal<float>(key, first + i);
    w[i] = random::normal<double>(key, first + i);
    b[i] = random::bits(key, first + i);
  });
};

/// Runs `kernel` (a jit of `draws`) on n elements from counter `first` and counts the elements where any of
/// its five outputs differs from the definition's bits.
template <class K>
std::size_t draws_mismatches(K& kernel, std::int64_t n, std::int64_t first) {
  namespace rnd = ir::random;
  const std::size_t m = static_cast<std::size_t>(n);
  std::vector<float> u(m), z(m);
  std::vector<double> v(m), w(m);
  std::vector<std::int64_t> b(m);
  kernel(u, v, z, w, b, kKey, first);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const std::int64_t c = first + static_cast<std::int64_t>(i);
    bad += !same_bits(u[i], rnd::uniform_f32(kKey, c)) || !same_bits(v[i], rnd::uniform_f64(kKey, c)) ||
           !same_bits(z[i], rnd::normal_f32(kKey, c)) || !same_bits(w[i], rnd::normal_f64(kKey, c)) ||
           b[i] != rnd::bits(kKey, c);
  }
  return bad;
}

/// The packed stream (kiln::random::packed) from counter `first` on: its five kinds as element draws in a prange
/// (u, v, z, w, b), and the four fills (fu, fv, fz, fw; fz with mean 2 and stddev 0.5, as float).
inline const auto packed_draws = [](Array<float, 1> u, Array<double, 1> v, Array<float, 1> z, Array<double, 1> w,
                                    Array<std::int64_t, 1> b, Array<float, 1> fu, Array<double, 1> fv,
                                    Array<float, 1> fz, Array<double, 1> fw, Int key, Int first) {
  prange(u.shape(0), [&](Int i) {
    u[i] = random::packed::uniform<float>(key, first + i);
    v[i] = random::packed::uniform<double>(key, first + i);
    z[i] = random::packed::normal<float>(key, first + i);
    w[i] = random::packed::normal<double>(key, first + i);
    b[i] = random::packed::bits(key, first + i);
  });
  random::packed::fill_uniform(fu, key, first);
  random::packed::fill_uniform(fv, key, first);
  random::packed::fill_normal(fz, key, 2.0, 0.5, first);
  random::packed::fill_normal(fw, key, first);
};

/// Runs `kernel` (a jit of `packed_draws`) on n elements from `first` and counts the elements where any of its
/// nine outputs differs from the definition's bits (ir::random::packed_element).
template <class K>
std::size_t packed_mismatches(K& kernel, std::int64_t n, std::int64_t first) {
  namespace rnd = ir::random;
  const std::size_t m = static_cast<std::size_t>(n);
  std::vector<float> u(m), z(m), fu(m), fz(m);
  std::vector<double> v(m), w(m), fv(m), fw(m);
  std::vector<std::int64_t> b(m);
  kernel(u, v, z, w, b, fu, fv, fz, fw, kKey, first);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const std::int64_t g = first + static_cast<std::int64_t>(i);
    auto at = [&](Intrinsic fn) { return rnd::packed_element(fn, kKey, g); };
    const auto uf = static_cast<float>(at(Intrinsic::RandomPackedUniformF32).as_float);
    const double ud = at(Intrinsic::RandomPackedUniformF64).as_float;
    const auto zf = static_cast<float>(at(Intrinsic::RandomPackedNormalF32).as_float);
    const double zd = at(Intrinsic::RandomPackedNormalF64).as_float;
    bad += !same_bits(u[i], uf) || !same_bits(v[i], ud) || !same_bits(z[i], zf) || !same_bits(w[i], zd) ||
           b[i] != at(Intrinsic::RandomPackedBits).as_int || !same_bits(fu[i], uf) || !same_bits(fv[i], ud) ||
           !same_bits(fz[i], 2.0f + 0.5f * zf) || !same_bits(fw[i], zd);
  }
  return bad;
}

}  // namespace kiln::random_test
