// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting traced arrays: kiln::sort(a) and kiln::argsort(a), NumPy's np.sort(a) and np.argsort(a, kind="stable")
// along the last axis (each row of a 2-d to 4-d array sorted on its own; a 1-d array is one row).
//
// The order is defined once (ir/sort_keys.hpp) and is the same on every target: ascending; stable (equal keys
// keep their input order, so argsort of equal keys gives increasing positions); floats as NumPy orders them:
// NaN after +inf (every NaN equal to the others, kept in input order), -0.0 equal to +0.0 (kept in input
// order), -inf first; false before true. sort keeps the element type (the values themselves: a NaN's payload
// and a zero's sign come through); argsort gives int64 positions along the row.
//
// The result is a new array usable in further array expressions, as any array operation's. Sorting is host
// code: inside a prange body it is a TraceError (sort the rows of a 2-d array instead). Host arrays are sorted
// by a kernel that returns kiln::sort(x) (docs/sort.md).
#pragma once

#include "kiln/array.hpp"

namespace kiln {
namespace detail {

/// The rows of `a` sorted (or, with `arg`, the i64 positions that sort them) as a new array of a's shape.
ArrayHandle sort_rows(const ArrayHandle& a, bool arg, Where w);

template <class X>
using sort_elem_t = typename array_traits<std::remove_cvref_t<X>>::elem;
template <class X>
constexpr int sort_rank_v = array_traits<std::remove_cvref_t<X>>::rank;

}  // namespace detail

/// np.sort(a) (stable): each row along the last axis in ascending order, as a new array of a's type and shape.
template <detail::IsArray X>
Array<detail::sort_elem_t<X>, detail::sort_rank_v<X>> sort(const X& a,
                                                           std::source_location l = std::source_location::current()) {
  return Array<detail::sort_elem_t<X>, detail::sort_rank_v<X>>(
      detail::sort_rows(a.traced_handle(), false, detail::Where::here(l)));
}

/// np.argsort(a, kind="stable"): for each row along the last axis, the int64 positions of its elements in
/// sorted order (equal keys in increasing position).
template <detail::IsArray X>
Array<std::int64_t, detail::sort_rank_v<X>> argsort(const X& a,
                                                    std::source_location l = std::source_location::current()) {
  return Array<std::int64_t, detail::sort_rank_v<X>>(detail::sort_rows(a.traced_handle(), true, detail::Where::here(l)));
}

}  // namespace kiln
