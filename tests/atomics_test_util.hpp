// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the atomics tests share (atomics_test.cpp, cuda_atomics_test.cpp): random bins, bitwise comparison, the
// min/max kernel and its values.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ir/atomics.hpp"
#include "kiln/kiln.hpp"

namespace kiln::atomics_test {

/// n bins in [0, bins) from `seed`.
inline std::vector<std::int64_t> random_bins(std::int64_t n, std::int64_t bins, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (auto& b : v) b = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bins));
  return v;
}

/// Bitwise equality (ir::sem::same_bits), so that NaN equals NaN and -0 differs from +0.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!ir::sem::same_bits(a[i], b[i])) return false;
  return true;
}

/// The min/max kernel both tests run: each bin's minimum and maximum of x, by atomics.
template <class T>
const auto bin_extremes = [](Array<std::int64_t> bin, Array<T> x, Array<T> lo, Array<T> hi) {
  prange(bin.shape(0), [&](Int i) {
    atomic_min(lo[bin[i]], x[i]);
    atomic_max(hi[bin[i]], x[i]);
  });
};

/// Values for the min/max tests, one per bin of `bin`: a quarter NaN, +-inf or +-0, the rest integers in
/// [-100, 100); bins 9 and 10 get only zeros of both signs, so that the sign rule decides them.
template <class T>
std::vector<T> values_with_specials(const std::vector<std::int64_t>& bin, unsigned seed) {
  std::mt19937_64 rng(seed);
  const T special[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(), T(0), T(-0.0)};
  std::vector<T> x(bin.size());
  for (auto& v : x) v = rng() % 4 == 0 ? special[rng() % 5] : static_cast<T>(static_cast<int>(rng() % 200) - 100);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (bin[i] >= 9) x[i] = i % 2 ? T(0) : T(-0.0);
  return x;
}

}  // namespace kiln::atomics_test
