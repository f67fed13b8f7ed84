// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counter-based random numbers: Philox-4x32-10, a pure function of a key and a counter, so that any element
// of a parallel loop or array expression gets its own numbers whatever runs it (the interpreter, the CPU
// with any number of threads, or CUDA: the same bits everywhere). docs/random.md describes the streams,
// the exact mappings and the error of normal().
//
//   kiln::prange(n, [&](kiln::Int i) { x[i] = kiln::random::uniform<float>(key, i); });
//   auto noise = kiln::random::normal<double>(kiln::shape(n, m), key, 0.0, sigma);   // an array expression
//
// key and counter are traced Ints (kernel parameters, loop indices, or expressions of them), so a time loop
// advances its counter: `uniform<double>(key, step * n + i)`. Different keys give independent streams; each
// (key, counter) pair gives one value: draw a uniform and a normal for one element from two counters (2i and
// 2i + 1) or two keys, not from one.
#pragma once

#include "kiln/creation.hpp"
#include "kiln/math.hpp"

namespace kiln::random {
namespace detail {

using kiln::detail::IndexLike;

template <class T>
concept RandomFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
constexpr Intrinsic uniform_fn() {
  return std::is_same_v<T, float> ? Intrinsic::RandomUniformF32 : Intrinsic::RandomUniformF64;
}
template <class T>
constexpr Intrinsic normal_fn() {
  return std::is_same_v<T, float> ? Intrinsic::RandomNormalF32 : Intrinsic::RandomNormalF64;
}

template <class K, class C>
kiln::detail::Node draw(Intrinsic fn, const K& key, const C& counter) {
  return kiln::detail::call(fn, kiln::detail::to_scalar<std::int64_t>(key), kiln::detail::to_scalar<std::int64_t>(counter));
}

/// A new array of the given extents whose element at row-major flat index f is `fn(key, first + f)`, times
/// `scale` plus `shift` when given (in the element type).
kiln::detail::ArrayHandle fill(Intrinsic fn, const Int* const* extents, int n, const Int& key, const Int& first,
                               const kiln::detail::TracedValue* shift, const kiln::detail::TracedValue* scale,
                               kiln::detail::Where w);

template <int N>
kiln::detail::ArrayHandle fill(Intrinsic fn, const Extents<N>& e, const Int& key, const Int& first,
                               const kiln::detail::TracedValue* shift, const kiln::detail::TracedValue* scale,
                               kiln::detail::Where w) {
  const Int* p[N];
  for (int k = 0; k < N; ++k) p[k] = &e.hi[k];
  return fill(fn, p, N, key, first, shift, scale, w);
}

}  // namespace detail

/// 64 random bits of (key, counter): Philox words 1:0, as an Int (two's complement).
template <detail::IndexLike K, detail::IndexLike C>
Int bits(const K& key, const C& counter) {
  return Int(detail::draw(Intrinsic::RandomBits, key, counter));
}

/// A uniform number in [0, 1) of (key, counter): float: the high 24 bits of Philox word 0 times 2^-24;
/// double: the high 53 bits of words 1:0 times 2^-53. Every value is a multiple of 2^-24 (2^-53); 1 is never
/// drawn.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike C>
Scalar<T> uniform(const K& key, const C& counter) {
  return Scalar<T>(detail::draw(detail::uniform_fn<T>(), key, counter));
}

/// A standard normal number of (key, counter): Box-Muller on the block's two 53-bit halves, computed with
/// correctly rounded operations only (docs/random.md); float is the double value rounded once.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike C>
Scalar<T> normal(const K& key, const C& counter) {
  return Scalar<T>(detail::draw(detail::normal_fn<T>(), key, counter));
}

/// A new array of uniform numbers in [0, 1): the element at row-major flat index f is
/// `uniform<T>(key, first + f)`, the value a prange over the same indices draws.
template <detail::RandomFloat T = double, int N, detail::IndexLike K, detail::IndexLike F = std::int64_t>
Array<T, N> uniform(const Extents<N>& shape, const K& key, const F& first = 0,
                    std::source_location l = std::source_location::current()) {
  return Array<T, N>(detail::fill(detail::uniform_fn<T>(), shape, kiln::detail::to_scalar<std::int64_t>(key),
                                  kiln::detail::to_scalar<std::int64_t>(first), nullptr, nullptr,
                                  kiln::detail::Where::here(l)));
}

/// A new array of standard normal numbers: the element at row-major flat index f is
/// `normal<T>(key, first + f)`.
template <detail::RandomFloat T = double, int N, detail::IndexLike K, detail::IndexLike F = std::int64_t>
Array<T, N> normal(const Extents<N>& shape, const K& key, const F& first = 0,
                   std::source_location l = std::source_location::current()) {
  return Array<T, N>(detail::fill(detail::normal_fn<T>(), shape, kiln::detail::to_scalar<std::int64_t>(key),
                                  kiln::detail::to_scalar<std::int64_t>(first), nullptr, nullptr,
                                  kiln::detail::Where::here(l)));
}

/// A new array of normal numbers with the given mean and standard deviation: `mean + stddev * z` in T, z the
/// standard normal value of `normal<T>(shape, key, first)` (NumPy's normal(loc, scale, size)).
template <detail::RandomFloat T = double, int N, detail::IndexLike K, kiln::detail::Operand M,
          kiln::detail::Operand S, detail::IndexLike F = std::int64_t>
Array<T, N> normal(const Extents<N>& shape, const K& key, const M& mean, const S& stddev, const F& first = 0,
                   std::source_location l = std::source_location::current()) {
  const Scalar<T> m = kiln::detail::to_scalar<T>(mean), s = kiln::detail::to_scalar<T>(stddev);
  return Array<T, N>(detail::fill(detail::normal_fn<T>(), shape, kiln::detail::to_scalar<std::int64_t>(key),
                                  kiln::detail::to_scalar<std::int64_t>(first), &m, &s, kiln::detail::Where::here(l)));
}

}  // namespace kiln::random
