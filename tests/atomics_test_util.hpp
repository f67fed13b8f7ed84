// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the atomics tests share (atomics_test.cpp, cuda_atomics_test.cpp): random bins and bitwise comparison.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/atomics.hpp"

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

}  // namespace kiln::atomics_test
