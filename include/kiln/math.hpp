// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Math on traced scalars: intrinsics, min/max, select, casts.
#pragma once

#include "kiln/traced.hpp"

namespace kiln {
namespace detail {
/// Float-only functions compute in the operand's float type, and in double for integers (like NumPy); f16
/// and bf16 compute in f32 and round the result back (ir/semantics.hpp).
template <class X>
using float_of_t = std::conditional_t<is_float_element_v<operand_t<X>>, operand_t<X>, double>;
template <class A, class B>
using float_result_t =
    std::conditional_t<is_float_element_v<arith_result_t<A, B>>, arith_result_t<A, B>, double>;
template <class A, class B, class C>
using float_result3_t = float_result_t<Scalar<float_result_t<A, B>>, C>;
}  // namespace detail

#define KILN_FLOAT_FN(name, fn)                                                        \
  template <detail::Operand X>                                                         \
  Scalar<detail::float_of_t<X>> name(const X& x) {                                     \
    using R = detail::float_of_t<X>;                                                   \
    return Scalar<R>(detail::call(Intrinsic::fn, detail::to_scalar<R>(x)));            \
  }
KILN_FLOAT_FN(sqrt, Sqrt)
KILN_FLOAT_FN(exp, Exp)
KILN_FLOAT_FN(exp2, Exp2)
KILN_FLOAT_FN(expm1, Expm1)
KILN_FLOAT_FN(log, Log)
KILN_FLOAT_FN(log2, Log2)
KILN_FLOAT_FN(log10, Log10)
KILN_FLOAT_FN(log1p, Log1p)
KILN_FLOAT_FN(cbrt, Cbrt)
KILN_FLOAT_FN(sin, Sin)
KILN_FLOAT_FN(cos, Cos)
KILN_FLOAT_FN(tan, Tan)
KILN_FLOAT_FN(asin, Asin)
KILN_FLOAT_FN(acos, Acos)
KILN_FLOAT_FN(atan, Atan)
KILN_FLOAT_FN(sinh, Sinh)
KILN_FLOAT_FN(cosh, Cosh)
KILN_FLOAT_FN(tanh, Tanh)
KILN_FLOAT_FN(erf, Erf)
KILN_FLOAT_FN(floor, Floor)
KILN_FLOAT_FN(ceil, Ceil)
KILN_FLOAT_FN(round, Round)
KILN_FLOAT_FN(trunc, Trunc)
#undef KILN_FLOAT_FN

#define KILN_FLOAT_PRED(name, fn)                                                      \
  template <detail::Operand X>                                                         \
  Bool name(const X& x) {                                                              \
    using R = detail::float_of_t<X>;                                                   \
    return Bool(detail::call(Intrinsic::fn, detail::to_scalar<R>(x)));                 \
  }
KILN_FLOAT_PRED(isnan, IsNan)
KILN_FLOAT_PRED(isinf, IsInf)
KILN_FLOAT_PRED(isfinite, IsFinite)
#undef KILN_FLOAT_PRED

#define KILN_FLOAT_FN2(name, fn)                                                       \
  template <class A, class B>                                                          \
    requires detail::Operand<A> && detail::Operand<B>                                  \
  Scalar<detail::float_result_t<A, B>> name(const A& a, const B& b) {                  \
    using R = detail::float_result_t<A, B>;                                            \
    return Scalar<R>(detail::call(Intrinsic::fn, detail::to_scalar<R>(a), detail::to_scalar<R>(b))); \
  }
KILN_FLOAT_FN2(pow, Pow)
KILN_FLOAT_FN2(atan2, Atan2)
KILN_FLOAT_FN2(copysign, Copysign)
#undef KILN_FLOAT_FN2

/// a * b + c with a single rounding.
template <class A, class B, class C>
  requires detail::Operand<A> && detail::Operand<B> && detail::Operand<C>
Scalar<detail::float_result3_t<A, B, C>> fma(const A& a, const B& b, const C& c) {
  using R = detail::float_result3_t<A, B, C>;
  return Scalar<R>(detail::call(Intrinsic::Fma, detail::to_scalar<R>(a), detail::to_scalar<R>(b), detail::to_scalar<R>(c)));
}

/// |x|; integers wrap (abs of the most negative value is itself).
template <detail::Operand X>
Scalar<detail::arith_promote_t<detail::operand_t<X>>> abs(const X& x) {
  using R = detail::arith_promote_t<detail::operand_t<X>>;
  return Scalar<R>(detail::call(Intrinsic::Abs, detail::to_scalar<R>(x)));
}

/// min/max propagate NaN and order -0 before +0 (IEEE 754-2019 minimum/maximum).
template <class A, class B>
  requires detail::BinaryOperands<A, B>
Scalar<detail::arith_result_t<A, B>> min(const A& a, const B& b) {
  using R = detail::arith_result_t<A, B>;
  return Scalar<R>(detail::binary(BinaryOp::Min, detail::to_scalar<R>(a), detail::to_scalar<R>(b)));
}
template <class A, class B>
  requires detail::BinaryOperands<A, B>
Scalar<detail::arith_result_t<A, B>> max(const A& a, const B& b) {
  using R = detail::arith_result_t<A, B>;
  return Scalar<R>(detail::binary(BinaryOp::Max, detail::to_scalar<R>(a), detail::to_scalar<R>(b)));
}

/// cond ? a : b. Only the chosen operand is evaluated in compiled code.
template <class C, class A, class B>
  requires detail::Operand<C> && detail::Operand<A> && detail::Operand<B>
Scalar<detail::compare_operand_t<A, B>> select(const C& cond, const A& a, const B& b) {
  using R = detail::compare_operand_t<A, B>;
  return Scalar<R>(detail::select(detail::to_scalar<bool>(cond), detail::to_scalar<R>(a), detail::to_scalar<R>(b)));
}

/// Explicit conversion. Float to integer saturates (NaN -> 0); integer narrowing wraps; to bool is x != 0.
template <Element T, detail::Operand X>
Scalar<T> cast(const X& x) {
  return detail::to_scalar<T>(x);
}
template <detail::Operand X>
Double to_double(const X& x) {
  return cast<double>(x);
}
template <detail::Operand X>
Float to_float(const X& x) {
  return cast<float>(x);
}
template <detail::Operand X>
Int to_int(const X& x) {
  return cast<std::int64_t>(x);
}
template <detail::Operand X>
Int32 to_int32(const X& x) {
  return cast<std::int32_t>(x);
}

}  // namespace kiln
