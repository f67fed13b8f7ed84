// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Arrays made inside a kernel: zeros, ones, full, *_like, arange, linspace (and empty, kiln/array.hpp).
//
// Each is named after the variable it initializes (`auto w = kiln::zeros<double>(n);` is `w` in IR dumps and
// diagnostics); extents are given one by one (1..4) or as `kiln::shape(n, m)`.
#pragma once

#include "kiln/array.hpp"
#include "kiln/control.hpp"

namespace kiln {
namespace detail {

/// A new array of the given extents with every element `value`.
ArrayHandle fill(DType t, const Int* const* extents, int n, const TracedValue& value, Where w);
/// A new array shaped like `like`, filled with `value` (uninitialized when null).
ArrayHandle fill_like(DType t, const ArrayHandle& like, const TracedValue* value, Where w);
/// [lo, hi) in steps of `step` (lo 0 and step 1 when null), as NumPy's arange; a zero step is an error.
ArrayHandle arange(DType t, const TracedValue* lo, const TracedValue& hi, const TracedValue* step, Where w);
/// `num` values from lo to hi (hi included when `endpoint`), as NumPy's linspace.
ArrayHandle linspace(DType t, const TracedValue& lo, const TracedValue& hi, const Int& num, bool endpoint, Where w);

template <int N>
ArrayHandle fill_extents(DType t, const Extents<N>& e, const TracedValue* value, Where w) {
  const Int* p[N];
  for (int k = 0; k < N; ++k) p[k] = &e.hi[k];
  return value ? fill(t, p, N, *value, w) : allocate(t, p, N, nullptr, w);
}

/// The element type arange/linspace produce: T if given, else double when any bound is floating, else Int.
template <class T, class... A>
using range_elem_t = std::conditional_t<!std::is_void_v<T>, T,
                                        std::conditional_t<(std::is_floating_point_v<operand_t<A>> || ...), double,
                                                           std::int64_t>>;

}  // namespace detail

/// A new uninitialized array of the given shape: `kiln::empty<float>(kiln::shape(n, m))`.
template <Element T, int N>
Array<T, N> empty(const Extents<N>& e, std::source_location l = std::source_location::current()) {
  return Array<T, N>(detail::fill_extents<N>(dtype_of<T>(), e, nullptr, detail::Where::here(l)));
}

/// A new array filled with `value`: `full<double>(n, 2.5)`, `full<float>(kiln::shape(n, m), x)`.
template <Element T, detail::IndexLike S, detail::Operand V>
Array<T, 1> full(const S& n, const V& value, std::source_location l = std::source_location::current()) {
  const Scalar<T> v = detail::to_scalar<T>(value);
  return Array<T, 1>(detail::fill_extents<1>(dtype_of<T>(), shape(n), &v, detail::Where::here(l)));
}
template <Element T, int N, detail::Operand V>
Array<T, N> full(const Extents<N>& e, const V& value, std::source_location l = std::source_location::current()) {
  const Scalar<T> v = detail::to_scalar<T>(value);
  return Array<T, N>(detail::fill_extents<N>(dtype_of<T>(), e, &v, detail::Where::here(l)));
}

#define KILN_FILLED(name, constant)                                                                             \
  template <Element T, int N>                                                                                   \
  Array<T, N> name(const Extents<N>& e, std::source_location l = std::source_location::current()) {             \
    const Scalar<T> v = T(constant);                                                                            \
    return Array<T, N>(detail::fill_extents<N>(dtype_of<T>(), e, &v, detail::Where::here(l)));                  \
  }                                                                                                             \
  template <Element T, detail::IndexLike S0>                                                                    \
  Array<T, 1> name(const S0& n0, std::source_location l = std::source_location::current()) {                    \
    return name<T>(shape(n0), l);                                                                               \
  }                                                                                                             \
  template <Element T, detail::IndexLike S0, detail::IndexLike S1>                                              \
  Array<T, 2> name(const S0& n0, const S1& n1, std::source_location l = std::source_location::current()) {      \
    return name<T>(shape(n0, n1), l);                                                                           \
  }                                                                                                             \
  template <Element T, detail::IndexLike S0, detail::IndexLike S1, detail::IndexLike S2>                        \
  Array<T, 3> name(const S0& n0, const S1& n1, const S2& n2,                                                    \
                   std::source_location l = std::source_location::current()) {                                  \
    return name<T>(shape(n0, n1, n2), l);                                                                       \
  }                                                                                                             \
  template <Element T, detail::IndexLike S0, detail::IndexLike S1, detail::IndexLike S2, detail::IndexLike S3>  \
  Array<T, 4> name(const S0& n0, const S1& n1, const S2& n2, const S3& n3,                                      \
                   std::source_location l = std::source_location::current()) {                                  \
    return name<T>(shape(n0, n1, n2, n3), l);                                                                   \
  }
/// A new array of zeros: `zeros<double>(n)`, `zeros<float>(n, m)`, `zeros<int>(kiln::shape(n, m))`.
KILN_FILLED(zeros, 0)
/// A new array of ones.
KILN_FILLED(ones, 1)
#undef KILN_FILLED

/// Arrays shaped like `like` (a view's shape, for views): zeros, ones, `value`; the element type is
/// like's unless given (`zeros_like<float>(a)`).
template <class T = void, Element U, int R>
auto zeros_like(const Array<U, R>& like, std::source_location l = std::source_location::current()) {
  using E = std::conditional_t<std::is_void_v<T>, U, T>;
  const Scalar<E> v = E(0);
  return Array<E, R>(detail::fill_like(dtype_of<E>(), like.traced_handle(), &v, detail::Where::here(l)));
}
template <class T = void, Element U, int R>
auto ones_like(const Array<U, R>& like, std::source_location l = std::source_location::current()) {
  using E = std::conditional_t<std::is_void_v<T>, U, T>;
  const Scalar<E> v = E(1);
  return Array<E, R>(detail::fill_like(dtype_of<E>(), like.traced_handle(), &v, detail::Where::here(l)));
}
template <class T = void, Element U, int R, detail::Operand V>
auto full_like(const Array<U, R>& like, const V& value, std::source_location l = std::source_location::current()) {
  using E = std::conditional_t<std::is_void_v<T>, U, T>;
  const Scalar<E> v = detail::to_scalar<E>(value);
  return Array<E, R>(detail::fill_like(dtype_of<E>(), like.traced_handle(), &v, detail::Where::here(l)));
}

/// 0, 1, ..., hi - 1 (NumPy's arange(hi)); `arange<float>(n)` picks the element type.
template <class T = void, detail::Operand H>
auto arange(const H& hi, std::source_location l = std::source_location::current()) {
  using E = detail::range_elem_t<T, H>;
  const Scalar<E> h = detail::to_scalar<E>(hi);
  return Array<E, 1>(detail::arange(dtype_of<E>(), nullptr, h, nullptr, detail::Where::here(l)));
}
/// lo, lo + 1, ... below hi.
template <class T = void, detail::Operand L, detail::Operand H>
auto arange(const L& lo, const H& hi, std::source_location l = std::source_location::current()) {
  using E = detail::range_elem_t<T, L, H>;
  const Scalar<E> a = detail::to_scalar<E>(lo), b = detail::to_scalar<E>(hi);
  return Array<E, 1>(detail::arange(dtype_of<E>(), &a, b, nullptr, detail::Where::here(l)));
}
/// lo, lo + step, ... up to (excluding) hi; step may be negative, not zero.
template <class T = void, detail::Operand L, detail::Operand H, detail::Operand S>
auto arange(const L& lo, const H& hi, const S& step, std::source_location l = std::source_location::current()) {
  using E = detail::range_elem_t<T, L, H, S>;
  const Scalar<E> a = detail::to_scalar<E>(lo), b = detail::to_scalar<E>(hi), s = detail::to_scalar<E>(step);
  return Array<E, 1>(detail::arange(dtype_of<E>(), &a, b, &s, detail::Where::here(l)));
}

/// `num` evenly spaced values from lo to hi, hi included unless endpoint is false (NumPy's linspace).
/// Floating: double unless given (`linspace<float>(...)`).
template <class T = double, detail::Operand L, detail::Operand H, detail::IndexLike N>
  requires std::is_floating_point_v<T>
Array<T, 1> linspace(const L& lo, const H& hi, const N& num, bool endpoint = true,
                     std::source_location l = std::source_location::current()) {
  const Scalar<T> a = detail::to_scalar<T>(lo), b = detail::to_scalar<T>(hi);
  const Int n = detail::to_scalar<std::int64_t>(num);
  return Array<T, 1>(detail::linspace(dtype_of<T>(), a, b, n, endpoint, detail::Where::here(l)));
}

}  // namespace kiln
