// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prefix scans of traced arrays: cumsum, cumprod, cummin, cummax and the general kiln::scan, inclusive (NumPy's
// np.cumsum) or exclusive (the element itself left out: the first is the operator's identity).
//
// Without an axis the array is scanned in row-major order into a 1-d array of its size (NumPy's flattening);
// with one, along that axis into an array of its shape (negative axes count from the last; an axis outside
// the array is a TraceError).
//
// Result element types: cumsum and cumprod follow kiln::sum and kiln::prod (bool and int32 accumulate in
// int64, as np.cumsum does); cummin and cummax keep the element type (np.minimum.accumulate). kiln::scan keeps
// the element type for every operator, as NumPy's ufunc.accumulate (np.add.accumulate of an int32 array is
// int32); a bool array's Add or Mul scan is a TraceError there (cast it, or use cumsum). Integers wrap.
//
// The order of the operations is defined (ir/semantics.hpp, kScanBlock): the scanned axis is cut into blocks
// of kScanBlock elements; each block is scanned from its first element in order, and block b > 0 combines
// each of its running values with its carry: the totals of blocks 0..b-1 folded in order in groups of
// kScanBlock, each group after the first combined with the carry the group before it ended with. So a float
// result is bitwise the same for any number of threads and on every target (interpreter, CPU, CUDA), and it
// may differ in the last bits from a strictly sequential loop's (NumPy's) beyond the first block.
#pragma once

#include "kiln/reduce.hpp"

namespace kiln {

/// Whether a scan's element i combines elements 0..i (inclusive, np.cumsum) or 0..i-1 (exclusive: element 0
/// is the operator's identity: 0, 1, +inf / the largest integer for Min, -inf / the lowest for Max).
enum class ScanKind : std::uint8_t { inclusive, exclusive };
inline constexpr ScanKind inclusive = ScanKind::inclusive;
inline constexpr ScanKind exclusive = ScanKind::exclusive;

namespace detail {

/// `axis` value for the flattened (row-major) scan of the whole array.
inline constexpr int kFlatScan = -1000;

/// The scan of `a` with `op` (Add, Mul, Min or Max) along `axis` (or kFlatScan), as a new array of element
/// type `result`. `fn` names the operation in messages ("cumsum").
ArrayHandle scan(ReduceOp op, const ArrayHandle& a, DType result, int axis, ScanKind kind, const char* fn, Where w);

template <ReduceOp Op, class T>
using scanned_t = std::conditional_t<Op == ReduceOp::Add || Op == ReduceOp::Mul, sum_t<T>, T>;

template <ReduceOp Op, class X>
Array<scanned_t<Op, elem_t<X>>, 1> scan_flat(const X& a, ScanKind k, const char* fn, std::source_location l) {
  using R = scanned_t<Op, elem_t<X>>;
  return Array<R, 1>(scan(Op, a.traced_handle(), dtype_of<R>(), kFlatScan, k, fn, Where::here(l)));
}

template <ReduceOp Op, class X>
Array<scanned_t<Op, elem_t<X>>, array_rank_v<X>> scan_along(const X& a, int axis, ScanKind k, const char* fn,
                                                             std::source_location l) {
  using R = scanned_t<Op, elem_t<X>>;
  return Array<R, array_rank_v<X>>(scan(Op, a.traced_handle(), dtype_of<R>(), axis, k, fn, Where::here(l)));
}

}  // namespace detail

#define KILN_SCAN(name, op)                                                                                     \
  template <detail::IsArray X>                                                                                  \
  auto name(const X& a, ScanKind k = inclusive, std::source_location l = std::source_location::current()) {     \
    return detail::scan_flat<ReduceOp::op>(a, k, #name, l);                                                     \
  }                                                                                                             \
  template <detail::IsArray X, detail::Axis A>                                                                  \
  auto name(const X& a, A axis, ScanKind k = inclusive,                                                         \
            std::source_location l = std::source_location::current()) {                                         \
    return detail::scan_along<ReduceOp::op>(a, static_cast<int>(axis), k, #name, l);                            \
  }
// np.cumsum / np.cumprod (kiln::cumsum(x, kiln::exclusive) starts from 0), np.minimum.accumulate and
// np.maximum.accumulate (NaN propagates from where it appears on; -0 orders before +0, as kiln::min/max).
KILN_SCAN(cumsum, Add)
KILN_SCAN(cumprod, Mul)
KILN_SCAN(cummin, Min)
KILN_SCAN(cummax, Max)
#undef KILN_SCAN

/// The scan of `a` with `op` (ReduceOp::Add, Mul, Min or Max; another is a TraceError) in `a`'s element type,
/// flattened in row-major order: `kiln::scan(x, kiln::ReduceOp::Max, kiln::exclusive)`.
template <detail::IsArray X>
Array<detail::elem_t<X>, 1> scan(const X& a, ReduceOp op, ScanKind k = inclusive,
                                 std::source_location l = std::source_location::current()) {
  using T = detail::elem_t<X>;
  return Array<T, 1>(detail::scan(op, a.traced_handle(), dtype_of<T>(), detail::kFlatScan, k, "scan",
                                  detail::Where::here(l)));
}

/// The scan of `a` with `op` along `axis`, in `a`'s element type: `kiln::scan(x, kiln::ReduceOp::Add, 1,
/// kiln::exclusive)`.
template <detail::IsArray X, detail::Axis A>
Array<detail::elem_t<X>, detail::array_rank_v<X>> scan(const X& a, ReduceOp op, A axis, ScanKind k = inclusive,
                                                       std::source_location l = std::source_location::current()) {
  using T = detail::elem_t<X>;
  return Array<T, detail::array_rank_v<X>>(
      detail::scan(op, a.traced_handle(), dtype_of<T>(), static_cast<int>(axis), k, "scan", detail::Where::here(l)));
}

}  // namespace kiln
