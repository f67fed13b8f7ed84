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
//
// kiln::random::packed is a second stream of each key that uses every word of a Philox block (4 floats or 2
// doubles or 2 normals per block, as cuRAND's generators do): the fast way to fill an array.
//
//   kiln::random::packed::fill_uniform(x, key);                 // x[f] = packed::uniform<T>(key, f)
#pragma once

#include <array>

#include "kiln/control.hpp"
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

/// The packed stream of a key (docs/random.md, "The packed stream"): element g of the kind's sequence is value
/// g mod W of block g / W, W = 4 values per Philox block for `uniform<float>`, W = 2 for the other kinds (64-bit
/// pairs; a normal pair is Box-Muller's cosine and sine output). Its blocks are not the per-value draws' blocks
/// of the same key (counter word 2 is 1), so the two streams of one key do not overlap. Every element is a pure
/// function of (key, g), the same on every target; a block draw or a fill computes each block once.
namespace packed {

/// Values per block: 4 for `uniform<float>`, 2 for `uniform<double>`; normals and bits come in pairs.
template <detail::RandomFloat T>
inline constexpr int uniform_width = std::is_same_v<T, float> ? 4 : 2;
inline constexpr int pair_width = 2;

namespace detail {

using random::detail::IndexLike;
using random::detail::RandomFloat;

template <class T>
constexpr Intrinsic uniform_fn() {
  return std::is_same_v<T, float> ? Intrinsic::RandomPackedUniformF32 : Intrinsic::RandomPackedUniformF64;
}
template <class T>
constexpr Intrinsic normal_fn() {
  return std::is_same_v<T, float> ? Intrinsic::RandomPackedNormalF32 : Intrinsic::RandomPackedNormalF64;
}

/// Value `word` of block `block`: the intrinsic's three arguments.
inline kiln::detail::Node draw(Intrinsic fn, const Int& key, const Int& block, const Int& word) {
  return kiln::detail::call(fn, key, block, word);
}

/// Element g of a W-wide kind: value g mod W of block g / W (g read as unsigned: a logical shift).
template <int W>
kiln::detail::Node element(Intrinsic fn, const Int& key, const Int& g) {
  constexpr int shift = W == 4 ? 2 : 1;
  constexpr std::int64_t mask = static_cast<std::int64_t>(~std::uint64_t{0} >> shift);
  return draw(fn, key, (g >> shift) & mask, g & (W - 1));
}

/// The W values of block j, each assigned to a variable here: the block's calls stand next to each other, before
/// any branch that uses them, so that the backends compute the block (and a normal pair's logarithm) once.
template <class V, int W>
std::array<V, W> block(Intrinsic fn, const Int& key, const Int& j) {
  std::array<V, W> v;
  for (int k = 0; k < W; ++k) v[static_cast<std::size_t>(k)] = V(draw(fn, key, j, Int(static_cast<std::int64_t>(k))));
  return v;
}

/// `x[f]` = element first + f of a W-wide kind, for f in [0, x.shape(0)): the blocks holding those elements, each
/// computed once. The blocks that lie inside x (all of them when first and the length are multiples of W) are one
/// prange with unconditional stores, which the CPU's loop vectorizer widens; the at most two partial blocks at
/// the ends are a second prange storing only their values inside x. `value` maps a drawn value to the stored one.
template <int W, class T, class Value>
void fill(Array<T, 1>& x, Intrinsic fn, const Int& key, const Int& first, Value value, std::source_location l) {
  constexpr int shift = W == 4 ? 2 : 1;
  constexpr std::int64_t mask = static_cast<std::int64_t>(~std::uint64_t{0} >> shift);
  const Int n = x.shape(0);
  const Int lead = first & (W - 1);                // element 0's place in its block
  const Int b0 = (first >> shift) & mask;          // element 0's block
  const Int blocks = (lead + n + (W - 1)) >> shift;  // blocks holding elements of x
  const Int inner = (lead + (W - 1)) >> shift;       // the first block inside x: 0, or 1 after a partial one
  const Int full_end = (lead + n) >> shift;
  const Int end = kiln::select(full_end < inner, inner, full_end);  // past the last block inside x
  prange(inner, end, [&](Int j) {
    const std::array<Scalar<T>, W> v = block<Scalar<T>, W>(fn, key, (b0 + j) & mask);
    const Int f0 = (j << shift) - lead;
    for (int k = 0; k < W; ++k) x[f0 + k] = value(v[static_cast<std::size_t>(k)]);
  }, l);
  // The partial blocks: the first and the last block when they are not inside x (one block when both are one).
  const Bool edges = (inner > 0 || end < blocks) && blocks > 0;
  if_(edges, [&] {
    prange(2, [&](Int e) {
      const Int j = kiln::select(e == 0, Int(0), blocks - 1);
      if_((j < inner || j >= end) && (e == 0 || j > 0), [&] {  // not an inner block, and not block 0 twice
        const std::array<Scalar<T>, W> v = block<Scalar<T>, W>(fn, key, (b0 + j) & mask);
        const Int f0 = (j << shift) - lead;
        for (int k = 0; k < W; ++k) {
          const Int f = f0 + k;
          if_(f >= 0 && f < n, [&] { x[f] = value(v[static_cast<std::size_t>(k)]); }, l);
        }
      }, l);
    }, l);
  }, l);
}

}  // namespace detail

/// 64 random bits: element g of the packed bits stream (pair g mod 2 of block g / 2, words 2p+1:2p).
template <detail::IndexLike K, detail::IndexLike G>
Int bits(const K& key, const G& g) {
  return Int(detail::element<pair_width>(Intrinsic::RandomPackedBits, kiln::detail::to_scalar<std::int64_t>(key),
                                         kiln::detail::to_scalar<std::int64_t>(g)));
}

/// Element g of the packed uniform stream: in [0, 1), mapped from its word (float) or pair (double) exactly as
/// `random::uniform<T>` maps words 0 and 1:0.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike G>
Scalar<T> uniform(const K& key, const G& g) {
  return Scalar<T>(detail::element<uniform_width<T>>(detail::uniform_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                                                      kiln::detail::to_scalar<std::int64_t>(g)));
}

/// Element g of the packed normal stream: Box-Muller of block g / 2 as `random::normal<T>`, its cosine output for
/// even g and its sine output for odd g.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike G>
Scalar<T> normal(const K& key, const G& g) {
  return Scalar<T>(detail::element<pair_width>(detail::normal_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                                               kiln::detail::to_scalar<std::int64_t>(g)));
}

/// The `uniform_width<T>` values of block j: elements W j ... W j + W - 1 of the packed uniform stream (for
/// j < 2^64 / W), from one Philox block.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike J>
std::array<Scalar<T>, uniform_width<T>> uniform_block(const K& key, const J& j) {
  return detail::block<Scalar<T>, uniform_width<T>>(detail::uniform_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                                                    kiln::detail::to_scalar<std::int64_t>(j));
}

/// The two normal values of block j (elements 2j and 2j + 1): one Philox block, one logarithm and square root.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike J>
std::array<Scalar<T>, pair_width> normal_block(const K& key, const J& j) {
  return detail::block<Scalar<T>, pair_width>(detail::normal_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                                              kiln::detail::to_scalar<std::int64_t>(j));
}

/// `x[f] = uniform<T>(key, first + f)` for every f of the 1-d array x, one Philox block per `uniform_width<T>`
/// elements.
template <detail::RandomFloat T, detail::IndexLike K, detail::IndexLike F = std::int64_t>
void fill_uniform(Array<T, 1> x, const K& key, const F& first = 0,
                  std::source_location l = std::source_location::current()) {
  detail::fill<uniform_width<T>>(x, detail::uniform_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                                 kiln::detail::to_scalar<std::int64_t>(first), [](const Scalar<T>& v) { return v; }, l);
}

/// `x[f] = normal<T>(key, first + f)` for every f of the 1-d array x, one Philox block per two elements.
template <detail::RandomFloat T, detail::IndexLike K, detail::IndexLike F = std::int64_t>
void fill_normal(Array<T, 1> x, const K& key, const F& first = 0,
                 std::source_location l = std::source_location::current()) {
  detail::fill<pair_width>(x, detail::normal_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                           kiln::detail::to_scalar<std::int64_t>(first), [](const Scalar<T>& v) { return v; }, l);
}

/// `x[f] = mean + stddev * normal<T>(key, first + f)` in T (NumPy's normal(loc, scale, size)).
template <detail::RandomFloat T, detail::IndexLike K, kiln::detail::Operand M, kiln::detail::Operand S,
          detail::IndexLike F = std::int64_t>
void fill_normal(Array<T, 1> x, const K& key, const M& mean, const S& stddev, const F& first = 0,
                 std::source_location l = std::source_location::current()) {
  const Scalar<T> m = kiln::detail::to_scalar<T>(mean), s = kiln::detail::to_scalar<T>(stddev);
  detail::fill<pair_width>(x, detail::normal_fn<T>(), kiln::detail::to_scalar<std::int64_t>(key),
                           kiln::detail::to_scalar<std::int64_t>(first), [&](const Scalar<T>& v) { return m + s * v; }, l);
}

/// A new 1-d array of n packed uniform values: element f is `uniform<T>(key, first + f)`.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike F = std::int64_t>
Array<T, 1> uniform(const Extents<1>& shape, const K& key, const F& first = 0,
                    std::source_location l = std::source_location::current()) {
  Array<T, 1> x = kiln::empty<T>(shape, l);
  fill_uniform(x, key, first, l);
  return x;
}

/// A new 1-d array of n packed normal values: element f is `normal<T>(key, first + f)`.
template <detail::RandomFloat T = double, detail::IndexLike K, detail::IndexLike F = std::int64_t>
Array<T, 1> normal(const Extents<1>& shape, const K& key, const F& first = 0,
                   std::source_location l = std::source_location::current()) {
  Array<T, 1> x = kiln::empty<T>(shape, l);
  fill_normal(x, key, first, l);
  return x;
}

}  // namespace packed

}  // namespace kiln::random
