// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Comparing a result with its reference: exact, or within a tolerance in ulps or absolute terms.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "kiln/half.hpp"

namespace kiln::test_support {

/// How far a float may be from the reference: `ulps` units in the last place, or `abs` absolute (for
/// reassociated sums, whose error scales with the sum of the magnitudes, not with the result).
struct Tolerance {
  double ulps = 0;
  double abs = 0;
};

/// The number of floats from a to b.
template <class T>
double ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  // Map the floats onto integers in the same order, so that adjacent floats are adjacent integers (±0 both
  // map to 0, infinity is next to max). 128-bit arithmetic keeps the difference exact.
  auto ordered = [](T x) {
    const Bits bits = std::bit_cast<Bits>(x);
    return bits < 0 ? static_cast<__int128>(std::numeric_limits<Bits>::min()) - bits : static_cast<__int128>(bits);
  };
  const __int128 d = ordered(a) - ordered(b);
  return static_cast<double>(d < 0 ? -d : d);
}

/// Whether `got` may stand for `ref`: NaN for NaN (any payload), the same bits, or within `tol`; other types exactly.
template <class T>
bool close(T ref, T got, const Tolerance& tol) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    // Every target converts to them alike (round to nearest-even through f32): the same bits, NaN for NaN.
    (void)tol;
    const float r = static_cast<float>(ref), g = static_cast<float>(got);
    return (std::isnan(r) && std::isnan(g)) || ref.bits == got.bits;
  } else if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got);
    if (std::bit_cast<Bits>(ref) == std::bit_cast<Bits>(got)) return true;
    if (std::isinf(ref) || std::isinf(got)) return false;
    if (tol.abs > 0 && std::fabs(static_cast<double>(ref) - static_cast<double>(got)) <= tol.abs) return true;
    if (ref == 0 || got == 0) return tol.ulps > 0 && ref == got;  // ±0 mismatch needs the sign right
    return ulp_distance(ref, got) <= tol.ulps;
  } else {
    (void)tol;
    return ref == got;
  }
}

/// A value as failure messages print it (floats with every digit).
template <class T>
std::string show(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (bits 0x%04x)", static_cast<double>(static_cast<float>(v)), v.bits);
    return buf;
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
    return buf;
  } else return std::to_string(v);
}

}  // namespace kiln::test_support
