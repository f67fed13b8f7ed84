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

}  // namespace kiln::random_test
