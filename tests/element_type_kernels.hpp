// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels over the newer element types, shared by the CPU test (element_types_test: against the interpreter
// and ir/semantics.hpp), the CUDA codegen test (NVRTC, warning-free) and the GPU test (against the interpreter).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::elemtest {

/// Every operator on an integer type T, element by element, into 16 rows of `out`; comparisons into 6 rows.
template <class T>
inline const auto int_ops = [](Array<T> a, Array<T> b, Array<T, 2> out, Array<bool, 2> cmp) {
  prange(a.shape(0), [&](Int i) {
    Scalar<T> x = a[i], y = b[i];
    out(0, i) = x + y;
    out(1, i) = x - y;
    out(2, i) = x * y;
    out(3, i) = x / y;
    out(4, i) = x % y;
    out(5, i) = x << y;
    out(6, i) = x >> y;
    out(7, i) = x & y;
    out(8, i) = x | y;
    out(9, i) = x ^ y;
    out(10, i) = kiln::min(x, y);
    out(11, i) = kiln::max(x, y);
    out(12, i) = -x;
    out(13, i) = ~x;
    out(14, i) = kiln::abs(x);
    out(15, i) = cast<T>(cast<double>(x) * 1.5 - 3.0);  // saturating float -> T
    cmp(0, i) = x < y;
    cmp(1, i) = x <= y;
    cmp(2, i) = x > y;
    cmp(3, i) = x >= y;
    cmp(4, i) = x == y;
    cmp(5, i) = x != y;
  });
};

/// Comparisons across signedness: u64 with i64 (by the sign first), u32 with i32 (in i64), literals outside
/// the type.
inline const auto mixed_compare = [](Array<std::uint64_t> u, Array<std::int64_t> s, Array<std::uint32_t> w,
                                     Array<std::int32_t> t, Array<bool, 2> out) {
  prange(u.shape(0), [&](Int i) {
    out(0, i) = u[i] < s[i];
    out(1, i) = s[i] <= u[i];
    out(2, i) = u[i] == s[i];
    out(3, i) = w[i] > t[i];
    out(4, i) = w[i] == -1;  // -1 is outside u32: never equal
    out(5, i) = u[i] >= -5;  // always
  });
};

/// f16/bf16: arithmetic in f32 rounded once, conversions, mixing with f32, to an integer.
template <class H>
inline const auto half_ops = [](Array<H> a, Array<H> b, Array<H, 2> out, Array<float> wide, Array<std::uint8_t> bytes) {
  prange(a.shape(0), [&](Int i) {
    Scalar<H> x = a[i], y = b[i];
    Float half_step = 0.5f;
    out(0, i) = x + y;
    out(1, i) = x * y;
    out(2, i) = x / y;
    out(3, i) = kiln::sqrt(x);
    out(4, i) = kiln::min(x, y);
    out(5, i) = -x;
    out(6, i) = cast<H>(cast<double>(x) * 3.0);  // double -> f16 through f32
    out(7, i) = select(x < y, x, y);
    wide[i] = x + half_step;  // f16 + f32 is f32 (with a literal, x + 0.5f would stay f16)
    bytes[i] = cast<std::uint8_t>(x);
  });
};

/// A histogram of bytes into counters of type C (array reductions: atomics or private copies).
template <class C>
inline const auto byte_histogram = [](Array<std::uint8_t> x, Array<C> hist) {
  prange(x.shape(0), [&](Int i) { hist[cast<std::int64_t>(x[i])] += 1; });
};

/// Whole and axis reductions of small integers (64-bit sums) and of f16 (in f32).
inline const auto small_reductions = [](Array<std::uint8_t, 2> a, Array<std::int16_t, 2> b, Array<half, 2> h) {
  return std::tuple{kiln::sum(a), kiln::max(b), kiln::sum(h), kiln::sum(a, 1), kiln::min(b, 0), kiln::mean(h, 1)};
};

/// Operands for half_ops: values in [-300, 300] with NaN, ±inf, ±0, f16's largest value, one below its
/// subnormals and one past its range spread among them.
template <class H>
std::pair<std::vector<H>, std::vector<H>> half_inputs(std::int64_t n, unsigned seed) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f, 65504.0f, 1e-7f, 70000.0f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-300, 300);
  std::vector<H> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = H(i % 5 == 0 ? specials[i / 5 % 8] : d(rng));
    b[i] = H(i % 7 == 0 ? specials[i / 7 % 8] : d(rng));
  }
  return {a, b};
}

}  // namespace kiln::elemtest
