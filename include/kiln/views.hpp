// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Slices of traced arrays: `a[kiln::slice(1, -1)]`, `a(kiln::range(1, n - 1), kiln::all)`.
//
// A slice follows Python: a negative bound counts from the end (also when it is only known at run time),
// bounds are clamped to the array, an omitted bound (kiln::none) means the start or the end for the step's
// direction, and the step may be negative. A view shares the array's elements; it costs no copy.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "kiln/traced.hpp"

namespace kiln {

/// An omitted slice bound: `slice(1, none)` is Python's `1:`, `slice(none, none, -1)` is `::-1`.
struct None {};
inline constexpr None none{};

/// A whole dimension, Python's `:`: `a(i, kiln::all)` is row i.
struct All {};
inline constexpr All all{};

/// A new dimension of extent 1, NumPy's `None` (np.newaxis) in an index: `u(kiln::all, kiln::newaxis)` is the
/// 1-d u as an (n, 1) column and `u(kiln::newaxis)` as a (1, n) row, which broadcast like any extent 1:
/// `u(kiln::all, kiln::newaxis) * v` is the (m, n) outer product. The view reads u's elements (no copy).
struct NewAxis {};
inline constexpr NewAxis newaxis{};

namespace detail {

template <class I>
concept IndexLike = std::is_integral_v<operand_t<I>> && !std::is_same_v<operand_t<I>, bool> && Operand<I>;
template <class B>
concept SliceBound = IndexLike<B> || std::same_as<std::remove_cvref_t<B>, None>;

}  // namespace detail

/// `lo:hi:step` in Python's notation. Holds its bounds as traced values read where the slice is made. Like
/// Python's slice objects, a slice is immutable (no assignment): so bounds written as C++ integers are
/// constants wherever the slice is used, also inside loops traced once, and the views' extents come out in
/// closed forms that the passes compare (`a(in, in)` and `a(lo, in)` with `in = slice(1, -1)` made before
/// a time loop have equal extents).
class SliceSpec {
 public:
  /// `:` (the whole dimension).
  SliceSpec() = default;
  SliceSpec(All) {}

  template <detail::SliceBound L, detail::SliceBound H, detail::SliceBound S>
  SliceSpec(const L& lo, const H& hi, const S& step)
      : lo_(bound(lo)), hi_(bound(hi)), step_(bound(step)), lo_k_(constant(lo)), hi_k_(constant(hi)),
        step_k_(constant(step)), has_lo_(given<L>()), has_hi_(given<H>()), has_step_(given<S>()) {}
  SliceSpec(const SliceSpec&) = default;
  SliceSpec& operator=(const SliceSpec&) = delete;

  const Int* lo() const { return has_lo_ ? &lo_ : nullptr; }
  const Int* hi() const { return has_hi_ ? &hi_ : nullptr; }
  const Int* step() const { return has_step_ ? &step_ : nullptr; }
  /// The bounds written as C++ integers (nullopt: a traced value, or not given).
  std::optional<std::int64_t> lo_constant() const { return has_lo_ ? lo_k_ : std::nullopt; }
  std::optional<std::int64_t> hi_constant() const { return has_hi_ ? hi_k_ : std::nullopt; }
  std::optional<std::int64_t> step_constant() const { return has_step_ ? step_k_ : std::nullopt; }

 private:
  template <class B>
  static Int bound(const B& b) {
    if constexpr (std::is_same_v<B, None>) return Int(0);
    else return detail::to_scalar<std::int64_t>(b);
  }
  template <class B>
  static constexpr bool given() {
    return !std::is_same_v<std::remove_cvref_t<B>, None>;
  }
  template <class B>
  static std::optional<std::int64_t> constant(const B& b) {
    if constexpr (std::is_integral_v<std::remove_cvref_t<B>> && !std::is_same_v<std::remove_cvref_t<B>, bool>)
      return static_cast<std::int64_t>(b);
    else return std::nullopt;
  }

  Int lo_, hi_, step_;
  std::optional<std::int64_t> lo_k_, hi_k_, step_k_;
  bool has_lo_ = false, has_hi_ = false, has_step_ = false;
};

/// `:`
inline SliceSpec slice() { return SliceSpec(); }
/// `lo:hi` (either may be kiln::none).
template <detail::SliceBound L, detail::SliceBound H>
SliceSpec slice(const L& lo, const H& hi) {
  return SliceSpec(lo, hi, none);
}
/// `lo:hi:step`; a zero step is an error (TraceError when constant, ValueError at run time otherwise).
template <detail::SliceBound L, detail::SliceBound H, detail::SliceBound S>
SliceSpec slice(const L& lo, const H& hi, const S& step) {
  return SliceSpec(lo, hi, step);
}

/// Without a loop body, `range` names a slice: `range(hi)` is `0:hi`, `range(lo, hi)` is `lo:hi`,
/// `range(lo, hi, step)` is `lo:hi:step` (`range(lo, hi, body)` remains the sequential loop of control.hpp).
template <detail::IndexLike H>
SliceSpec range(const H& hi) {
  return SliceSpec(0, hi, none);
}
template <detail::SliceBound L, detail::SliceBound H>
  requires(detail::IndexLike<L> || detail::IndexLike<H>)
SliceSpec range(const L& lo, const H& hi) {
  return SliceSpec(lo, hi, none);
}
template <detail::SliceBound L, detail::SliceBound H, detail::IndexLike S>
SliceSpec range(const L& lo, const H& hi, const S& step) {
  return SliceSpec(lo, hi, step);
}

namespace detail {

template <class I>
constexpr bool is_slice_v =
    std::is_same_v<std::remove_cvref_t<I>, SliceSpec> || std::is_same_v<std::remove_cvref_t<I>, All>;
template <class I>
constexpr bool is_newaxis_v = std::is_same_v<std::remove_cvref_t<I>, NewAxis>;
template <class I>
constexpr bool is_view_index_v = is_slice_v<I> || IndexLike<I> || is_newaxis_v<I>;

/// One position of a view expression: an integer index (the dimension is dropped), a slice, a new axis of
/// extent 1 (which takes no dimension of the array), or none of these (the whole dimension).
struct ViewIndex {
  const Int* index = nullptr;
  const SliceSpec* slice = nullptr;
  bool new_axis = false;
};

}  // namespace detail
}  // namespace kiln
