// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise array operations: arithmetic, comparisons, math, where, casts, with NumPy broadcasting.
//
// Operands may be arrays (or views), traced scalars, array elements and literals, with at least one array.
// Shapes broadcast as in NumPy: ranks are aligned at the trailing dimension and an extent broadcasts when it
// is 1 when the kernel is traced (a constant 1, or a parameter whose extent is 1 in this call: kernels are
// compiled per call signature, which records extents equal to 1). Extents that must be equal but are not
// known to be when tracing are checked when the kernel runs (kiln::ShapeError naming the expression and
// both shapes). Element types combine as for scalars (kiln/traced.hpp). Each operation is evaluated where
// it is written into a new array; kiln's passes fuse the loops and remove the temporaries.
#pragma once

#include "kiln/array.hpp"
#include "kiln/math.hpp"

namespace kiln {
namespace detail {

/// Clip is min(max(x, lo), hi); Square is x * x; Sign is NumPy's sign (-1, 0 or 1; NaN stays NaN, -0 gives +0).
enum class ElemKind : std::uint8_t { Unary, Binary, Call, Select, Cast, Clip, Square, Sign };

/// What an elementwise operation computes per element. Operands are converted to `operand` first (a
/// select's condition to bool).
struct ElemOp {
  ElemKind kind;
  std::uint8_t code;  ///< the UnaryOp, BinaryOp or Intrinsic
  DType operand;
  DType result;
};

/// Emits the operation into a new array and returns it. `name` is the operator ("+") or function ("exp").
ArrayHandle elementwise(const ElemOp& op, const OpArg* args, int n, const char* name, Where w);

/// np.outer of two 1-d arrays: `a[:, None] * b` converted to t, one elementwise operation (TraceError for
/// another rank).
ArrayHandle outer(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w);

template <class... X>
concept ArrayOperands = (ArrayOrOperand<X> && ...) && (IsArray<X> || ...);

template <class X>
constexpr int rank_of() {
  if constexpr (IsArray<X>) return array_traits<std::remove_cvref_t<X>>::rank;
  else return -1;
}
/// The static rank of a broadcast result: the largest operand rank, or 0 (any) if one is known only when
/// traced.
template <class... X>
constexpr int result_rank() {
  int r = -1;
  bool dynamic = false;
  ((rank_of<X>() == 0 ? void(dynamic = true) : void(r = rank_of<X>() > r ? rank_of<X>() : r)), ...);
  return dynamic ? 0 : r;
}

/// Applies an operation whose operands all convert to S.
template <Element R, Element S, class... X>
Array<R, result_rank<X...>()> apply(ElemKind kind, std::uint8_t code, const char* name, Where w, X&&... x) {
  const ArgHolder<S> held[] = {ArgHolder<S>(x)...};
  OpArg args[sizeof...(X)];
  for (std::size_t k = 0; k < sizeof...(X); ++k) args[k] = held[k].get();
  ArrayHandle r = elementwise(ElemOp{kind, code, dtype_of<S>(), dtype_of<R>()}, args, static_cast<int>(sizeof...(X)),
                              name, w);
  (expire(std::forward<X>(x)), ...);
  return Array<R, result_rank<X...>()>(std::move(r));
}

template <class A, class B>
using array_arith_t = arith_result_t<scalar_like_t<A>, scalar_like_t<B>>;
template <class A, class B>
using array_compare_t = compare_operand_t<scalar_like_t<A>, scalar_like_t<B>>;

}  // namespace detail

// ---- operators ----------------------------------------------------------------------------------------------

#define KILN_ARRAY_ARITH(sym, op, result_t)                                                                     \
  template <class A, class B>                                                                                   \
    requires detail::ArrayOperands<A, B>                                                                        \
  Array<detail::result_t<A, B>, detail::result_rank<A, B>()> operator sym(A&& a, B&& b) {                       \
    using R = detail::result_t<A, B>;                                                                           \
    return detail::apply<R, R>(detail::ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::op), #sym, {},     \
                               std::forward<A>(a), std::forward<B>(b));                                        \
  }
KILN_ARRAY_ARITH(+, Add, array_arith_t)
KILN_ARRAY_ARITH(-, Sub, array_arith_t)
KILN_ARRAY_ARITH(*, Mul, array_arith_t)
KILN_ARRAY_ARITH(/, Div, array_arith_t)
KILN_ARRAY_ARITH(%, Mod, array_arith_t)
#undef KILN_ARRAY_ARITH

// Bitwise operators and shifts: integer arrays (and bool for & | ^), checked at compile time.
#define KILN_ARRAY_BITS(sym, op, result_t)                                                                      \
  template <class A, class B>                                                                                   \
    requires detail::ArrayOperands<A, B> && std::is_integral_v<detail::operand_t<detail::scalar_like_t<A>>> &&  \
             std::is_integral_v<detail::operand_t<detail::scalar_like_t<B>>>                                    \
  Array<detail::result_t<A, B>, detail::result_rank<A, B>()> operator sym(A&& a, B&& b) {                       \
    using R = detail::result_t<A, B>;                                                                           \
    return detail::apply<R, R>(detail::ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::op), #sym, {},     \
                               std::forward<A>(a), std::forward<B>(b));                                        \
  }
KILN_ARRAY_BITS(&, BitAnd, array_compare_t)
KILN_ARRAY_BITS(|, BitOr, array_compare_t)
KILN_ARRAY_BITS(^, BitXor, array_compare_t)
KILN_ARRAY_BITS(<<, Shl, array_arith_t)
KILN_ARRAY_BITS(>>, Shr, array_arith_t)
#undef KILN_ARRAY_BITS

#define KILN_ARRAY_CMP(sym, op)                                                                                 \
  template <class A, class B>                                                                                   \
    requires detail::ArrayOperands<A, B>                                                                        \
  Array<bool, detail::result_rank<A, B>()> operator sym(A&& a, B&& b) {                                         \
    using S = detail::array_compare_t<A, B>;                                                                    \
    return detail::apply<bool, S>(detail::ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::op), #sym, {},  \
                                  std::forward<A>(a), std::forward<B>(b));                                     \
  }
KILN_ARRAY_CMP(==, Eq)
KILN_ARRAY_CMP(!=, Ne)
KILN_ARRAY_CMP(<, Lt)
KILN_ARRAY_CMP(<=, Le)
KILN_ARRAY_CMP(>, Gt)
KILN_ARRAY_CMP(>=, Ge)
#undef KILN_ARRAY_CMP

template <detail::IsArray A>
auto operator-(A&& a) {
  using R = detail::arith_promote_t<detail::operand_t<detail::scalar_like_t<A>>>;
  return detail::apply<R, R>(detail::ElemKind::Unary, static_cast<std::uint8_t>(UnaryOp::Neg), "-", {},
                             std::forward<A>(a));
}
/// A copy of the array (as NumPy's +a).
template <detail::IsArray A>
auto operator+(A&& a) {
  using R = detail::operand_t<detail::scalar_like_t<A>>;
  return detail::apply<R, R>(detail::ElemKind::Cast, 0, "+", {}, std::forward<A>(a));
}
/// Logical not of a bool array.
template <detail::IsArray A>
auto operator!(A&& a) {
  return detail::apply<bool, bool>(detail::ElemKind::Unary, static_cast<std::uint8_t>(UnaryOp::Not), "!", {},
                                   std::forward<A>(a));
}
/// Bitwise complement of an integer array (logical not of a bool array, as NumPy's ~).
template <detail::IsArray A>
  requires std::is_integral_v<detail::operand_t<detail::scalar_like_t<A>>>
auto operator~(A&& a) {
  using R = detail::operand_t<detail::scalar_like_t<A>>;
  const UnaryOp op = std::is_same_v<R, bool> ? UnaryOp::Not : UnaryOp::BitNot;
  return detail::apply<R, R>(detail::ElemKind::Unary, static_cast<std::uint8_t>(op), "~", {}, std::forward<A>(a));
}

// ---- math ------------------------------------------------------------------------------------------------------

#define KILN_ARRAY_FLOAT_FN(name, fn)                                                                           \
  template <detail::IsArray X>                                                                                  \
  auto name(X&& x, std::source_location l = std::source_location::current()) {                                 \
    using R = detail::float_of_t<detail::scalar_like_t<X>>;                                                     \
    return detail::apply<R, R>(detail::ElemKind::Call, static_cast<std::uint8_t>(Intrinsic::fn), #name,         \
                               detail::Where::here(l), std::forward<X>(x));                                     \
  }
KILN_ARRAY_FLOAT_FN(sqrt, Sqrt)
KILN_ARRAY_FLOAT_FN(exp, Exp)
KILN_ARRAY_FLOAT_FN(exp2, Exp2)
KILN_ARRAY_FLOAT_FN(expm1, Expm1)
KILN_ARRAY_FLOAT_FN(log, Log)
KILN_ARRAY_FLOAT_FN(log2, Log2)
KILN_ARRAY_FLOAT_FN(log10, Log10)
KILN_ARRAY_FLOAT_FN(log1p, Log1p)
KILN_ARRAY_FLOAT_FN(cbrt, Cbrt)
KILN_ARRAY_FLOAT_FN(sin, Sin)
KILN_ARRAY_FLOAT_FN(cos, Cos)
KILN_ARRAY_FLOAT_FN(tan, Tan)
KILN_ARRAY_FLOAT_FN(asin, Asin)
KILN_ARRAY_FLOAT_FN(acos, Acos)
KILN_ARRAY_FLOAT_FN(atan, Atan)
KILN_ARRAY_FLOAT_FN(sinh, Sinh)
KILN_ARRAY_FLOAT_FN(cosh, Cosh)
KILN_ARRAY_FLOAT_FN(tanh, Tanh)
KILN_ARRAY_FLOAT_FN(erf, Erf)
KILN_ARRAY_FLOAT_FN(floor, Floor)
KILN_ARRAY_FLOAT_FN(ceil, Ceil)
KILN_ARRAY_FLOAT_FN(round, Round)
KILN_ARRAY_FLOAT_FN(trunc, Trunc)
#undef KILN_ARRAY_FLOAT_FN

#define KILN_ARRAY_FLOAT_PRED(name, fn)                                                                         \
  template <detail::IsArray X>                                                                                  \
  auto name(X&& x, std::source_location l = std::source_location::current()) {                                 \
    using S = detail::float_of_t<detail::scalar_like_t<X>>;                                                     \
    return detail::apply<bool, S>(detail::ElemKind::Call, static_cast<std::uint8_t>(Intrinsic::fn), #name,      \
                                  detail::Where::here(l), std::forward<X>(x));                                  \
  }
KILN_ARRAY_FLOAT_PRED(isnan, IsNan)
KILN_ARRAY_FLOAT_PRED(isinf, IsInf)
KILN_ARRAY_FLOAT_PRED(isfinite, IsFinite)
#undef KILN_ARRAY_FLOAT_PRED

#define KILN_ARRAY_FLOAT_FN2(name, fn)                                                                          \
  template <class A, class B>                                                                                   \
    requires detail::ArrayOperands<A, B>                                                                        \
  auto name(A&& a, B&& b, std::source_location l = std::source_location::current()) {                          \
    using R = detail::float_result_t<detail::scalar_like_t<A>, detail::scalar_like_t<B>>;                       \
    return detail::apply<R, R>(detail::ElemKind::Call, static_cast<std::uint8_t>(Intrinsic::fn), #name,         \
                               detail::Where::here(l), std::forward<A>(a), std::forward<B>(b));                 \
  }
KILN_ARRAY_FLOAT_FN2(pow, Pow)
KILN_ARRAY_FLOAT_FN2(atan2, Atan2)
KILN_ARRAY_FLOAT_FN2(copysign, Copysign)
#undef KILN_ARRAY_FLOAT_FN2

/// a * b + c with a single rounding, elementwise.
template <class A, class B, class C>
  requires detail::ArrayOperands<A, B, C>
auto fma(A&& a, B&& b, C&& c, std::source_location l = std::source_location::current()) {
  using R = detail::float_result3_t<detail::scalar_like_t<A>, detail::scalar_like_t<B>, detail::scalar_like_t<C>>;
  return detail::apply<R, R>(detail::ElemKind::Call, static_cast<std::uint8_t>(Intrinsic::Fma), "fma",
                             detail::Where::here(l), std::forward<A>(a), std::forward<B>(b), std::forward<C>(c));
}

/// |x| elementwise; integers wrap (abs of the most negative value is itself).
template <detail::IsArray X>
auto abs(X&& x, std::source_location l = std::source_location::current()) {
  using R = detail::arith_promote_t<detail::operand_t<detail::scalar_like_t<X>>>;
  return detail::apply<R, R>(detail::ElemKind::Call, static_cast<std::uint8_t>(Intrinsic::Abs), "abs",
                             detail::Where::here(l), std::forward<X>(x));
}

/// Elementwise minimum/maximum (NumPy's np.minimum/np.maximum): NaN propagates, -0 orders before +0.
template <class A, class B>
  requires detail::ArrayOperands<A, B>
auto minimum(A&& a, B&& b, std::source_location l = std::source_location::current()) {
  using R = detail::array_arith_t<A, B>;
  return detail::apply<R, R>(detail::ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::Min), "minimum",
                             detail::Where::here(l), std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
  requires detail::ArrayOperands<A, B>
auto maximum(A&& a, B&& b, std::source_location l = std::source_location::current()) {
  using R = detail::array_arith_t<A, B>;
  return detail::apply<R, R>(detail::ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::Max), "maximum",
                             detail::Where::here(l), std::forward<A>(a), std::forward<B>(b));
}
/// min/max of two arrays are elementwise (with one array, or an array and an axis, they are reductions:
/// kiln/reduce.hpp; use minimum/maximum to mix an array with a scalar).
template <detail::IsArray A, detail::IsArray B>
auto min(A&& a, B&& b, std::source_location l = std::source_location::current()) {
  return minimum(std::forward<A>(a), std::forward<B>(b), l);
}
template <detail::IsArray A, detail::IsArray B>
auto max(A&& a, B&& b, std::source_location l = std::source_location::current()) {
  return maximum(std::forward<A>(a), std::forward<B>(b), l);
}

/// NumPy's np.clip(x, lo, hi): minimum(maximum(x, lo), hi) elementwise, in one operation, with lo and hi
/// scalars or arrays broadcast against x. The result type combines all three as arithmetic does (a literal
/// bound adopts x's type: clip of a float array to 0.0 and 1.0 stays float). A NaN in x, lo or hi gives NaN
/// (minimum/maximum propagate it), -0 orders before +0, and where lo > hi the result is hi (NumPy checks
/// neither). For one bound only, use kiln::maximum or kiln::minimum.
template <detail::IsArray X, class L, class H>
  requires detail::ArrayOrOperand<L> && detail::ArrayOrOperand<H>
auto clip(X&& x, L&& lo, H&& hi, std::source_location l = std::source_location::current()) {
  using R = detail::arith_result_t<Scalar<detail::array_arith_t<X, L>>, detail::scalar_like_t<H>>;
  return detail::apply<R, R>(detail::ElemKind::Clip, 0, "clip", detail::Where::here(l), std::forward<X>(x),
                             std::forward<L>(lo), std::forward<H>(hi));
}

/// x * x elementwise (np.square); bool is squared as int32, as in arithmetic.
template <detail::IsArray X>
auto square(X&& x, std::source_location l = std::source_location::current()) {
  using R = detail::arith_promote_t<detail::operand_t<detail::scalar_like_t<X>>>;
  return detail::apply<R, R>(detail::ElemKind::Square, 0, "square", detail::Where::here(l), std::forward<X>(x));
}

/// np.sign: -1, 0 or 1 in x's type; the sign of NaN is NaN and that of -0 is +0 (NumPy's rule:
/// x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x). Not for bool arrays (NumPy refuses them too).
template <detail::IsArray X>
  requires(!std::is_same_v<detail::operand_t<detail::scalar_like_t<X>>, bool>)
auto sign(X&& x, std::source_location l = std::source_location::current()) {
  using R = detail::operand_t<detail::scalar_like_t<X>>;
  return detail::apply<R, R>(detail::ElemKind::Sign, 0, "sign", detail::Where::here(l), std::forward<X>(x));
}

/// np.outer(u, v) of two 1-d arrays: out(i, j) = u[i] * v[j], of shape (u.size(), v.size()), in the type
/// `u * v` has. The same as `u(kiln::all, kiln::newaxis) * v`: one elementwise operation that fuses with its
/// neighbours, so `A += kiln::outer(u1, v1) + kiln::outer(u2, v2)` is one pass over A with no temporary.
template <detail::IsArray A, detail::IsArray B>
auto outer(const A& a, const B& b, std::source_location l = std::source_location::current()) {
  static_assert(detail::rank_of<A>() <= 1 && detail::rank_of<B>() <= 1, "kiln::outer takes two 1-d arrays");
  using R = detail::array_arith_t<A, B>;
  return Array<R, 2>(detail::outer(a.traced_handle(), b.traced_handle(), dtype_of<R>(), detail::Where::here(l)));
}

/// cond ? a : b elementwise (NumPy's np.where), broadcasting all three.
template <class C, class A, class B>
  requires detail::ArrayOperands<C, A, B>
auto where(C&& cond, A&& a, B&& b, std::source_location l = std::source_location::current()) {
  using R = detail::array_compare_t<A, B>;
  const detail::ArgHolder<bool> c(cond);
  const detail::ArgHolder<R> x(a), y(b);
  const detail::OpArg args[] = {c.get(), x.get(), y.get()};
  detail::ArrayHandle r = detail::elementwise(detail::ElemOp{detail::ElemKind::Select, 0, dtype_of<R>(), dtype_of<R>()},
                                              args, 3, "where", detail::Where::here(l));
  detail::expire(std::forward<C>(cond));
  detail::expire(std::forward<A>(a));
  detail::expire(std::forward<B>(b));
  return Array<R, detail::result_rank<C, A, B>()>(std::move(r));
}
/// The same as where (the scalar function's name).
template <class C, class A, class B>
  requires detail::ArrayOperands<C, A, B>
auto select(C&& cond, A&& a, B&& b, std::source_location l = std::source_location::current()) {
  return where(std::forward<C>(cond), std::forward<A>(a), std::forward<B>(b), l);
}

/// Elementwise conversion (float to integer saturates, NaN -> 0; integer narrowing wraps; to bool is x != 0).
template <Element T, detail::IsArray X>
Array<T, detail::result_rank<X>()> cast(X&& x, std::source_location l = std::source_location::current()) {
  using S = detail::operand_t<detail::scalar_like_t<X>>;
  const detail::ArgHolder<S> h(x);
  const detail::OpArg arg = h.get();
  return Array<T, detail::result_rank<X>()>(
      detail::elementwise(detail::ElemOp{detail::ElemKind::Cast, 0, dtype_of<S>(), dtype_of<T>()}, &arg, 1, "cast",
                          detail::Where::here(l)));
}
template <detail::IsArray X>
auto to_double(X&& x, std::source_location l = std::source_location::current()) {
  return cast<double>(std::forward<X>(x), l);
}
template <detail::IsArray X>
auto to_float(X&& x, std::source_location l = std::source_location::current()) {
  return cast<float>(std::forward<X>(x), l);
}
template <detail::IsArray X>
auto to_int(X&& x, std::source_location l = std::source_location::current()) {
  return cast<std::int64_t>(std::forward<X>(x), l);
}
template <detail::IsArray X>
auto to_int32(X&& x, std::source_location l = std::source_location::current()) {
  return cast<std::int32_t>(std::forward<X>(x), l);
}

}  // namespace kiln
