// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the sort tests (sort_test, cuda_sort_test): NumPy's order written out independently of
// ir/sort_keys.hpp, keys of every kind per type, and the check of sort and argsort against std::stable_sort.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::sorttest {

/// NumPy's order, written independently of ir/sort_keys.hpp: NaN after everything, -0.0 == +0.0.
template <class T>
bool ref_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (std::isnan(b) && !std::isnan(a));
  else return a < b;
}

/// The stable order of each row of `x` (rows of n).
template <class T>
std::vector<std::int64_t> ref_argsort(const T* x, std::int64_t rows, std::int64_t n) {
  std::vector<std::int64_t> out(static_cast<size_t>(rows * n));
  for (std::int64_t r = 0; r < rows; ++r) {
    auto b = out.begin() + r * n;
    std::iota(b, b + n, std::int64_t{0});
    const T* row = x + r * n;
    std::stable_sort(b, b + n, [row](std::int64_t a, std::int64_t c) { return ref_less(row[a], row[c]); });
  }
  return out;
}

/// Values of every kind a key type has: specials (NaNs of several payloads and both signs, zeros of both
/// signs, infinities, extremes, subnormals) and, with `distinct` small, many duplicates.
template <class T>
std::vector<T> keys(std::int64_t n, std::uint64_t seed, int distinct) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto&& x : v) {
    const std::uint64_t r = g();
    if constexpr (std::is_same_v<T, bool>) {
      x = r & 1;
    } else if constexpr (std::is_integral_v<T>) {
      const T special[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), static_cast<T>(-1), T(1)};
      if (r % 16 == 0) x = special[(r >> 8) % 5];
      else x = static_cast<T>(static_cast<std::int64_t>((r >> 8) % static_cast<std::uint64_t>(distinct)) - distinct / 2);
    } else {
      T nan_payload, neg_nan = -std::numeric_limits<T>::quiet_NaN();
      using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
      U bits;
      const T q = std::numeric_limits<T>::quiet_NaN();
      std::memcpy(&bits, &q, sizeof bits);
      bits |= 5;
      std::memcpy(&nan_payload, &bits, sizeof bits);
      const T special[] = {std::numeric_limits<T>::quiet_NaN(), neg_nan, nan_payload, T(-0.0), T(0.0),
                           std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                           std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(),
                           std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min()};
      if (r % 8 == 0) x = special[(r >> 8) % 11];
      else x = static_cast<T>(static_cast<double>(static_cast<std::int64_t>((r >> 8) % static_cast<std::uint64_t>(distinct)) -
                                                  distinct / 2) * 0.25);
    }
  }
  return v;
}

template <class T>
NDArray<T> array_of(const std::vector<T>& v, const std::vector<std::int64_t>& shape) {
  NDArray<T> a(shape);
  std::copy(v.begin(), v.end(), a.data());
  return a;
}

/// Checks sort and argsort of `in` (sorted along its last axis) against the reference, bit for bit.
/// The stable order of each row of `in` along its last axis.
template <class T>
std::vector<std::int64_t> ref_argsort(const NDArray<T>& in) {
  const std::int64_t n = in.shape(in.rank() - 1), rows = n ? in.size() / n : 0;
  return ref_argsort(in.data(), rows, n);
}

/// Checks sort and argsort of `in` against `want` (ref_argsort(in)), bit for bit.
template <class T>
void expect_sorted(const NDArray<T>& in, const NDArray<T>& sorted, const NDArray<std::int64_t>& pos,
                   const std::string& what, const std::vector<std::int64_t>& want) {
  ASSERT_EQ(sorted.shape(), in.shape()) << what;
  ASSERT_EQ(pos.shape(), in.shape()) << what;
  const std::int64_t n = in.shape(in.rank() - 1), rows = n ? in.size() / n : 0;
  int reported = 0;
  for (std::int64_t k = 0; k < rows * n && reported < 5; ++k) {
    const std::int64_t r = k / std::max<std::int64_t>(n, 1);
    const T expect = in.data()[r * n + want[static_cast<size_t>(k)]];
    const bool ok_pos = pos.data()[k] == want[static_cast<size_t>(k)];
    const bool ok_val = std::memcmp(&sorted.data()[k], &expect, sizeof(T)) == 0;
    if (!ok_pos || !ok_val) {
      ++reported;
      ADD_FAILURE() << what << ": element " << k << " (row " << r << "): position " << pos.data()[k] << " want "
                    << want[static_cast<size_t>(k)] << ", value " << +sorted.data()[k] << " want " << +expect;
    }
  }
}

template <class T>
void expect_sorted(const NDArray<T>& in, const NDArray<T>& sorted, const NDArray<std::int64_t>& pos,
                   const std::string& what) {
  expect_sorted(in, sorted, pos, what, ref_argsort(in));
}

}  // namespace kiln::sorttest
