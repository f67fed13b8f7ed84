// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Atomic read-modify-write on array elements, for updates that kiln's reductions do not express: counters that
// hand out slots, "first writer wins" claims, minima with their own data, histograms whose bins also feed the
// iteration. Inside a kiln::prange (or anywhere in a kernel):
//
//   kiln::Int32 slot = kiln::atomic_add(count(0), 1);        // the old value: a slot of its own
//   kiln::atomic_max(best(bin), score);                      // the result may be ignored
//   kiln::Int64 was = kiln::atomic_compare_exchange(owner(k), -1, i);  // claims owner(k) if it held -1
//
// Each takes the element `a(i, j, ...)` itself and returns the value the element held just before, as a traced
// value. Element types int32, int64, float and double (not bool: use an int32 flag). Order: relaxed; each
// update is one indivisible step against every other atomic on the element, and its effects are visible
// after the prange. Float add/sub are not bitwise reproducible (the rounding follows the order of the updates);
// `h[k] += x` is kiln's reproducible array reduction. The rules in full: docs/atomics.md, ir/atomics.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "kiln/array.hpp"
#include "kiln/ops.hpp"
#include "kiln/traced.hpp"

namespace kiln {
namespace detail {

/// Records the atomic `op` on `a(indices...)` (frontend/atomics.cpp) and returns the old value's node.
Node atomic_update(const ArrayHandle& a, const Int* const* indices, int n, AtomicOp op, const TracedValue& value,
                   const TracedValue* expected);

template <Element T>
struct ElementAccess {
  static Scalar<T> atomic(const ElementRef<T>& e, AtomicOp op, const Scalar<T>& value, const Scalar<T>* expected) {
    e.release();  // the element is the target, not a value anybody reads
    std::array<const Int*, kMaxRank> p{};
    for (std::size_t k = 0; k < e.idx_.size(); ++k) p[k] = &e.idx_[k];
    return Scalar<T>(atomic_update(e.array_, p.data(), static_cast<int>(e.idx_.size()), op, value, expected));
  }
};

/// Operands convert to the element's type as in `a(i) = v`.
template <Element T, class V>
Scalar<T> atomic(AtomicOp op, const ElementRef<T>& e, V&& value) {
  const Scalar<T> v = to_scalar<T>(value);
  expire(std::forward<V>(value));
  return ElementAccess<T>::atomic(e, op, v, nullptr);
}

}  // namespace detail

// Each takes the element and a value and returns the element's old value.
#define KILN_ATOMIC_RMW(fn, op)                                             \
  template <Element T, class V>                                            \
    requires detail::Operand<V>                                            \
  Scalar<T> fn(const ElementRef<T>& element, V&& value) {                  \
    return detail::atomic(AtomicOp::op, element, std::forward<V>(value));  \
  }
// element += value. Integers wrap; floats round (in the order the updates happen).
KILN_ATOMIC_RMW(atomic_add, Add)
// element -= value.
KILN_ATOMIC_RMW(atomic_sub, Sub)
// element = kiln::min(element, value) (floats: NaN propagates, -0 < +0).
KILN_ATOMIC_RMW(atomic_min, Min)
// element = kiln::max(element, value) (floats: NaN propagates, -0 < +0).
KILN_ATOMIC_RMW(atomic_max, Max)
// element = value.
KILN_ATOMIC_RMW(atomic_exchange, Exchange)
#undef KILN_ATOMIC_RMW

/// If the element holds `expected` (the same bits: for floats NaN matches the same NaN, -0 does not match +0),
/// it becomes `desired`. Returns the old value either way: the exchange happened exactly when the old value
/// has the bits of `expected` (for integers, `old == expected`).
template <Element T, class E, class D>
  requires detail::Operand<E> && detail::Operand<D>
Scalar<T> atomic_compare_exchange(const ElementRef<T>& element, E&& expected, D&& desired) {
  const Scalar<T> e = detail::to_scalar<T>(expected);
  const Scalar<T> d = detail::to_scalar<T>(desired);
  detail::expire(std::forward<E>(expected));
  detail::expire(std::forward<D>(desired));
  return detail::ElementAccess<T>::atomic(element, AtomicOp::CompareExchange, d, &e);
}

}  // namespace kiln
