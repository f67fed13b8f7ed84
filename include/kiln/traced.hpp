// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Traced scalars: C++ values that record kiln IR when a kernel is traced.
//
// Semantics follow C++ value semantics exactly. A Scalar holds an expression; it becomes a mutable IR
// variable ("slot") when it is assigned to, or when it is read inside a loop or branch nested deeper than
// where it was created (so that a later assignment in that loop is seen by every iteration). Expressions
// that read memory or variables are snapshotted just before a store or assignment would change what they
// read. The rules live in frontend/trace_context.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kiln/dtype.hpp"
#include "kiln/ops.hpp"

namespace kiln {

namespace ir {
struct ExprNode;
struct VarNode;
}  // namespace ir

template <Element T>
class Scalar;
template <Element T>
class ElementRef;

using Bool = Scalar<bool>;
using Int32 = Scalar<std::int32_t>;
using Int64 = Scalar<std::int64_t>;
using Int = Int64;  ///< the index type
using Float = Scalar<float>;
using Double = Scalar<double>;
using Int8 = Scalar<std::int8_t>;
using Int16 = Scalar<std::int16_t>;
using UInt8 = Scalar<std::uint8_t>;
using UInt16 = Scalar<std::uint16_t>;
using UInt32 = Scalar<std::uint32_t>;
using UInt64 = Scalar<std::uint64_t>;
using Half = Scalar<half>;
using BFloat16 = Scalar<bfloat16>;

namespace detail {

using ExprPtr = std::shared_ptr<const ir::ExprNode>;
using VarPtr = std::shared_ptr<const ir::VarNode>;
class TraceContext;

/// A place in user source, captured with std::source_location for names and messages.
struct Where {
  const char* file = nullptr;
  unsigned line = 0, column = 0;
  static Where here(const std::source_location& l) { return {l.file_name(), l.line(), l.column()}; }
  std::string str() const;  ///< "file.cpp:12" (basename), or "" if unknown
};

/// An expression plus what it reads, which decides when it must be snapshotted.
struct Node {
  ExprPtr expr;
  DType type = DType::F64;
  bool reads_memory = false;  ///< contains an array load
  bool reads_locals = false;  ///< reads a mutable variable
};

Node constant(DType t, double v);
Node constant_int(DType t, std::int64_t v);

/// The common base of Scalar<T>: holds the node and implements the tracing rules.
class TracedValue {
 public:
  DType dtype() const { return node_.type; }
  /// The value as an IR node valid at the current point of the trace (snapshotting it if needed).
  Node read() const;
  /// Stops watching this value for snapshots: it is an expiring temporary that nothing reads again.
  /// The operators call it on rvalue operands; user code has no need to.
  void release() const { withdraw(); }

 protected:
  TracedValue(Node n, Where w);
  TracedValue(const TracedValue& other, Where w);
  TracedValue& operator=(const TracedValue&) = delete;
  ~TracedValue();

  /// `*this = v` in the traced program (v already converted to this type). `consume`: v is a temporary
  /// that nobody reads afterwards, so it need not be snapshotted if the assignment changes what it reads.
  void assign(const TracedValue& v, bool consume);
  void set_name(std::string_view n);

 public:
  /// Marks a loop index: assigning it is a TraceError, and reads never need to snapshot it.
  void make_read_only() { read_only_ = true; }

 protected:

 private:
  friend class TraceContext;
  mutable Node node_;
  mutable VarPtr slot_;  ///< the IR variable once this value is one
  mutable TraceContext* ctx_ = nullptr;  ///< the trace it is enrolled in (only volatile values enroll)
  mutable TracedValue* prev_ = nullptr;
  mutable TracedValue* next_ = nullptr;
  std::uint64_t scope_ = 0;  ///< the scope it was created in; 0 outside any trace (constants only)
  Where where_;
  std::string name_;
  bool read_only_ = false;  ///< a loop index: never assigned, so never needs to become a variable

  void enroll();
  void withdraw() const;
};

// Out-of-line operations; operands are converted to a common type first by the templates below.
Node unary(UnaryOp op, const TracedValue& a);
Node binary(BinaryOp op, const TracedValue& a, const TracedValue& b);
Node cast(DType t, const TracedValue& a);
Node call(Intrinsic fn, const TracedValue& a);
Node call(Intrinsic fn, const TracedValue& a, const TracedValue& b);
Node call(Intrinsic fn, const TracedValue& a, const TracedValue& b, const TracedValue& c);
Node select(const TracedValue& c, const TracedValue& a, const TracedValue& b);

template <class X>
struct traced_elem {};
template <Element T>
struct traced_elem<Scalar<T>> {
  using type = T;
};
template <Element T>
struct traced_elem<ElementRef<T>> {
  using type = T;
};

template <class X>
concept Traced = requires { typename traced_elem<std::remove_cvref_t<X>>::type; };
template <class X>
concept Literal = std::is_arithmetic_v<std::remove_cvref_t<X>>;
template <class X>
concept Operand = Traced<X> || Literal<X>;
template <class A, class B>
concept BinaryOperands = Operand<A> && Operand<B> && (Traced<A> || Traced<B>);

/// The element type an operand contributes: traced values their type, literals their C++ type.
template <class X>
struct operand_elem {
  using type = std::remove_cvref_t<X>;
};
template <Traced X>
struct operand_elem<X> {
  using type = typename traced_elem<std::remove_cvref_t<X>>::type;
};
template <class X>
using operand_t = typename operand_elem<X>::type;

/// The fixed-width integer type of `bits` bits and the given signedness.
template <int Bits, bool Signed>
using int_of_t = std::conditional_t<
    Bits <= 8, std::conditional_t<Signed, std::int8_t, std::uint8_t>,
    std::conditional_t<Bits <= 16, std::conditional_t<Signed, std::int16_t, std::uint16_t>,
                       std::conditional_t<Bits <= 32, std::conditional_t<Signed, std::int32_t, std::uint32_t>,
                                          std::conditional_t<Signed, std::int64_t, std::uint64_t>>>>;

/// Normalizes a C++ arithmetic type to one of kiln's element types (long long -> int64_t, unsigned short ->
/// uint16_t, char -> int8_t or uint8_t, long double -> double, ...); element types stay what they are.
template <class T>
using kiln_type_t = std::conditional_t<
    is_element_v<T> || std::is_same_v<T, bool>, T,
    std::conditional_t<std::is_floating_point_v<T>, std::conditional_t<(sizeof(T) <= 4), float, double>,
                       int_of_t<static_cast<int>(sizeof(T) * 8), std::is_signed_v<T>>>>;

/// bool takes part in arithmetic as int32 (as in C++).
template <class T>
using arith_promote_t = std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>;

/// The type two traced operands of element types A and B combine in (README "Arithmetic", the promotion
/// table): NumPy's rules among integers (the smallest type holding both ranges: u8 and i8 give i16, u32 and
/// i32 give i64), the wider float among floats (f16 and bf16 give f32), and, as in C++ rather than NumPy,
/// the float type when a float meets an integer (f32 * i64 stays f32). uint64 with a signed integer has no
/// such type (NumPy gives float64, which loses integers above 2^53): it is a compile error naming the fix,
/// except in comparisons, which compare the values exactly.
template <class A, class B>
struct promote {
  struct no_common_integer {};
  static auto pick() {
    if constexpr (std::is_same_v<A, B>) {
      return A{};
    } else if constexpr (is_float_element_v<A> && is_float_element_v<B>) {
      if constexpr (sizeof(A) == 2 && sizeof(B) == 2) return float{};  // f16 with bf16: neither holds the other
      else if constexpr (sizeof(A) >= sizeof(B)) return A{};
      else return B{};
    } else if constexpr (is_float_element_v<A>) {
      return A{};
    } else if constexpr (is_float_element_v<B>) {
      return B{};
    } else if constexpr (std::is_signed_v<A> == std::is_signed_v<B>) {
      if constexpr (sizeof(A) >= sizeof(B)) return A{};
      else return B{};
    } else {
      using S = std::conditional_t<std::is_signed_v<A>, A, B>;
      using U = std::conditional_t<std::is_signed_v<A>, B, A>;
      if constexpr (sizeof(S) > sizeof(U)) return S{};
      else if constexpr (sizeof(U) < 8) return int_of_t<static_cast<int>(sizeof(U) * 16), true>{};
      else return no_common_integer{};
    }
  }
  using type = decltype(pick());
  static constexpr bool exists = !std::is_same_v<type, no_common_integer>;
};

/// The result type of `a op b` for arithmetic ops: the promotion table for two traced operands; a literal
/// adopts the traced operand's type when that loses nothing meaningful (float stays float with 2.0; uint8
/// stays uint8 with 1), like NumPy's weak scalars; an integer traced value with a float literal is double.
template <class A, class B>
struct arith_result {
  using TA = arith_promote_t<operand_t<A>>;
  using TB = arith_promote_t<operand_t<B>>;
  static auto pick() {
    if constexpr (Traced<A> && !Traced<B>) {
      if constexpr (is_float_element_v<TA> || std::is_integral_v<TB>) return TA{};
      else return std::common_type_t<TA, TB>{};
    } else if constexpr (!Traced<A> && Traced<B>) {
      if constexpr (is_float_element_v<TB> || std::is_integral_v<TA>) return TB{};
      else return std::common_type_t<TA, TB>{};
    } else {
      static_assert(promote<TA, TB>::exists,
                    "kiln: uint64 and a signed integer have no common integer type (NumPy would use float64 and lose "
                    "precision): convert one of them with kiln::cast<T>(x)");
      if constexpr (promote<TA, TB>::exists) return typename promote<TA, TB>::type{};
      else return TA{};
    }
  }
  using type = kiln_type_t<decltype(pick())>;
};
template <class A, class B>
using arith_result_t = typename arith_result<A, B>::type;

/// Comparisons and bitwise ops between two bools stay bool; otherwise as arithmetic.
template <class A, class B>
struct compare_operand {
  static auto pick() {
    if constexpr (std::is_same_v<operand_t<A>, bool> && std::is_same_v<operand_t<B>, bool>) return bool{};
    else return arith_result_t<A, B>{};
  }
  using type = decltype(pick());
};
template <class A, class B>
using compare_operand_t = typename compare_operand<A, B>::type;

/// A comparison of two integers with no common type (uint64 with a signed one) compares the values.
template <class A, class B>
constexpr bool mixed_compare_v =
    Traced<A> && Traced<B> && std::is_integral_v<operand_t<A>> && std::is_integral_v<operand_t<B>> &&
    !std::is_same_v<operand_t<A>, bool> && !std::is_same_v<operand_t<B>, bool> &&
    !promote<operand_t<A>, operand_t<B>>::exists;

template <Element T, class X>
Scalar<T> to_scalar(const X& x);

/// True when converting From to To implicitly loses nothing (the conversions C++ list-init allows,
/// plus int -> float types, which users write all the time).
template <class From, class To>
constexpr bool widens() {
  if constexpr (std::is_same_v<From, To>) return true;
  else if constexpr (std::is_same_v<From, bool> || std::is_same_v<To, bool>) return false;
  else if constexpr (std::is_integral_v<From> && is_float_element_v<To>) return true;
  else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>)
    return std::is_signed_v<From> == std::is_signed_v<To> ? sizeof(From) <= sizeof(To)
                                                          : std::is_unsigned_v<From> && sizeof(From) < sizeof(To);
  else if constexpr (is_float_element_v<From> && is_float_element_v<To>)
    return sizeof(From) < sizeof(To) || (sizeof(From) == sizeof(To) && sizeof(From) > 2);
  else return false;
}

}  // namespace detail

/// A traced scalar of type T. Literals convert implicitly; so do traced values of a narrower type.
template <Element T>
class Scalar : public detail::TracedValue {
 public:
  using value_type = T;

  Scalar(std::source_location l = std::source_location::current())
      : TracedValue(literal_node(T{}), detail::Where::here(l)) {}

  template <class U>
    requires std::is_arithmetic_v<U>
  Scalar(U v, std::source_location l = std::source_location::current())
      : TracedValue(literal_node(v), detail::Where::here(l)) {}

  Scalar(const Scalar& other, std::source_location l = std::source_location::current())
      : TracedValue(other, detail::Where::here(l)) {}

  template <Element U>
    requires(!std::is_same_v<U, T> && detail::widens<U, T>())
  Scalar(const Scalar<U>& other, std::source_location l = std::source_location::current())
      : TracedValue(detail::cast(kiln::dtype_of<T>(), other), detail::Where::here(l)) {}

  Scalar(const ElementRef<T>& element, std::source_location l = std::source_location::current());

  /// Wraps a node built by an operation (not a declaration): used by the operator templates.
  explicit Scalar(detail::Node n, detail::Where w = {}) : TracedValue(std::move(n), w) {}

  Scalar& operator=(const Scalar& v) {
    assign(v, false);
    return *this;
  }
  Scalar& operator=(Scalar&& v) {
    assign(v, true);
    return *this;
  }
  template <class U>
    requires detail::Operand<U> && (!std::is_same_v<std::remove_cvref_t<U>, Scalar>)
  Scalar& operator=(U&& v) {
    assign_expiring(std::forward<U>(v));
    return *this;
  }

  // Compound assignment: C++ semantics, `x op= v` is `x = T(x op v)`.
  template <class U> requires detail::Operand<U> Scalar& operator+=(U&& v) { return assign_expiring(*this + std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> Scalar& operator-=(U&& v) { return assign_expiring(*this - std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> Scalar& operator*=(U&& v) { return assign_expiring(*this * std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> Scalar& operator/=(U&& v) { return assign_expiring(*this / std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> Scalar& operator%=(U&& v) { return assign_expiring(*this % std::forward<U>(v)); }

  /// A traced value has no C++ value while the kernel is traced, so `if (x)`, `x ? a : b` and `while (x)`
  /// cannot work: this conversion exists only to say so in one line.
  template <class U = T>
  explicit operator bool() const {
    static_assert(sizeof(U) == 0,
                  "a traced value is not a C++ bool: branch with kiln::if_(c, [&] {...}).else_([&] {...}) or choose with kiln::select(c, a, b)");
    return false;
  }

  /// Names the variable in IR dumps and error messages (otherwise the name is read from the source line).
  Scalar& named(std::string_view name) {
    set_name(name);
    return *this;
  }

 private:
  /// Assigns a value nothing else will read (a temporary, or a conversion of one).
  template <class X>
  Scalar& assign_expiring(X&& r);

  template <class U>
  static detail::Node literal_node(U v) {
    if constexpr (is_float_element_v<T>) return detail::constant(dtype_of<T>(), static_cast<double>(v));
    else if constexpr (std::is_floating_point_v<U>) return detail::constant(dtype_of<T>(), static_cast<double>(v));
    else return detail::constant_int(dtype_of<T>(), static_cast<std::int64_t>(v));
  }
};

namespace detail {

/// Converts any operand to a traced Scalar<T> (with a cast if the type differs).
template <Element T, class X>
Scalar<T> to_scalar(const X& x) {
  if constexpr (Literal<X>) {
    return Scalar<T>(x);
  } else {
    using E = operand_t<X>;
    if constexpr (std::is_same_v<E, T>) {
      if constexpr (std::is_same_v<std::remove_cvref_t<X>, Scalar<T>>) return x;
      else return Scalar<T>(x);  // an ElementRef: load it
    } else {
      return Scalar<T>(cast(kiln::dtype_of<T>(), to_scalar<E>(x)));
    }
  }
}
/// An rvalue traced operand is an expiring temporary: once an operator has read it, nothing can read it
/// again, so a later store or assignment in the same full-expression must not snapshot it.
template <class X>
void expire(X&& x) {
  if constexpr (!std::is_lvalue_reference_v<X> && requires { x.release(); }) x.release();
}

/// Returns `result` after expiring the operands it was built from.
template <class R, class... X>
R expiring(R&& result, X&&... operands) {
  (expire(std::forward<X>(operands)), ...);
  return std::move(result);
}

}  // namespace detail

// ---- operators --------------------------------------------------------------------------------------------

#define KILN_ARITH_OP(sym, op)                                                              \
  template <class A, class B>                                                               \
    requires detail::BinaryOperands<A, B>                                                   \
  Scalar<detail::arith_result_t<A, B>> operator sym(A&& a, B&& b) {               \
    using R = detail::arith_result_t<A, B>;                                                 \
    return detail::expiring(Scalar<R>(detail::binary(BinaryOp::op, detail::to_scalar<R>(a), detail::to_scalar<R>(b))), std::forward<A>(a), std::forward<B>(b));\
  }
KILN_ARITH_OP(+, Add)
KILN_ARITH_OP(-, Sub)
KILN_ARITH_OP(*, Mul)
KILN_ARITH_OP(/, Div)
#undef KILN_ARITH_OP

template <class A, class B>
  requires detail::BinaryOperands<A, B>
Scalar<detail::arith_result_t<A, B>> operator%(A&& a, B&& b) {
  using R = detail::arith_result_t<A, B>;
  return detail::expiring(Scalar<R>(detail::binary(BinaryOp::Mod, detail::to_scalar<R>(a), detail::to_scalar<R>(b))), std::forward<A>(a), std::forward<B>(b));
}

// Bitwise operators and shifts: integers (and bool for & | ^), checked at compile time.
#define KILN_BIT_OP(sym, op, result_t)                                                      \
  template <class A, class B>                                                               \
    requires detail::BinaryOperands<A, B> && std::is_integral_v<detail::operand_t<A>> &&    \
             std::is_integral_v<detail::operand_t<B>>                                       \
  Scalar<result_t<A, B>> operator sym(A&& a, B&& b) {                             \
    using R = result_t<A, B>;                                                               \
    return detail::expiring(Scalar<R>(detail::binary(BinaryOp::op, detail::to_scalar<R>(a), detail::to_scalar<R>(b))), std::forward<A>(a), std::forward<B>(b));\
  }
KILN_BIT_OP(&, BitAnd, detail::compare_operand_t)
KILN_BIT_OP(|, BitOr, detail::compare_operand_t)
KILN_BIT_OP(^, BitXor, detail::compare_operand_t)
KILN_BIT_OP(<<, Shl, detail::arith_result_t)
KILN_BIT_OP(>>, Shr, detail::arith_result_t)
#undef KILN_BIT_OP

namespace detail {

/// The value of `x op literal` when the literal lies outside x's type: above it (`above`) or below it.
constexpr bool outside_compare(BinaryOp op, bool above, bool literal_first) {
  if (literal_first) {  // `literal op x` is `x op' literal` with the order reversed
    if (op == BinaryOp::Lt) op = BinaryOp::Gt;
    else if (op == BinaryOp::Le) op = BinaryOp::Ge;
    else if (op == BinaryOp::Gt) op = BinaryOp::Lt;
    else if (op == BinaryOp::Ge) op = BinaryOp::Le;
  }
  switch (op) {
    case BinaryOp::Ne: return true;
    case BinaryOp::Lt: case BinaryOp::Le: return above;
    case BinaryOp::Gt: case BinaryOp::Ge: return !above;
    default: return false;
  }
}

/// Comparisons are exact for every pair of types: mixed signedness compares the values (u32 < i32 in
/// i64, u64 with a signed integer by its sign first), and an integer literal outside the traced operand's
/// type decides the result while tracing (`u8 < 300` is true, `u32 == -1` false), as NumPy 2 does.
template <class A, class B>
Bool compare(BinaryOp op, A&& a, B&& b) {
  using TA = operand_t<A>;
  using TB = operand_t<B>;
  if constexpr (mixed_compare_v<A, B>) {
    const bool unsigned_first = std::is_unsigned_v<TA>;
    const Scalar<std::uint64_t> u = unsigned_first ? to_scalar<std::uint64_t>(a) : to_scalar<std::uint64_t>(b);
    const Scalar<std::int64_t> sv = unsigned_first ? to_scalar<std::int64_t>(b) : to_scalar<std::int64_t>(a);
    const Bool negative(binary(BinaryOp::Lt, sv, to_scalar<std::int64_t>(0)));
    const Scalar<std::uint64_t> su(cast(DType::U64, sv));
    const Bool same(unsigned_first ? binary(op, u, su) : binary(op, su, u));
    // A negative signed operand lies below every unsigned value, as an out-of-range literal would.
    const Bool known(outside_compare(op, false, !unsigned_first));
    return expiring(Bool(select(negative, known, same)), std::forward<A>(a), std::forward<B>(b));
  } else {
    if constexpr (Literal<A> && Traced<B> && std::is_integral_v<std::remove_cvref_t<A>> && std::is_integral_v<TB> &&
                  !std::is_same_v<TB, bool> && !std::is_same_v<std::remove_cvref_t<A>, bool>) {
      if (!std::in_range<TB>(a)) return expiring(Bool(outside_compare(op, std::cmp_greater(a, 0), true)), std::forward<B>(b));
    }
    if constexpr (Traced<A> && Literal<B> && std::is_integral_v<std::remove_cvref_t<B>> && std::is_integral_v<TA> &&
                  !std::is_same_v<TA, bool> && !std::is_same_v<std::remove_cvref_t<B>, bool>) {
      if (!std::in_range<TA>(b)) return expiring(Bool(outside_compare(op, std::cmp_greater(b, 0), false)), std::forward<A>(a));
    }
    using R = compare_operand_t<A, B>;
    return expiring(Bool(binary(op, to_scalar<R>(a), to_scalar<R>(b))), std::forward<A>(a), std::forward<B>(b));
  }
}

}  // namespace detail

#define KILN_CMP_OP(sym, op)                                                                \
  template <class A, class B>                                                               \
    requires detail::BinaryOperands<A, B>                                                   \
  Bool operator sym(A&& a, B&& b) {                                                         \
    return detail::compare(BinaryOp::op, std::forward<A>(a), std::forward<B>(b));            \
  }
KILN_CMP_OP(==, Eq)
KILN_CMP_OP(!=, Ne)
KILN_CMP_OP(<, Lt)
KILN_CMP_OP(<=, Le)
KILN_CMP_OP(>, Gt)
KILN_CMP_OP(>=, Ge)
#undef KILN_CMP_OP

/// Logical and/or on traced bools. The right operand is evaluated only when needed in the compiled code
/// (so `i < n && a[i] > 0` never reads out of range), even though C++ evaluates both while tracing.
template <class A, class B>
  requires detail::BinaryOperands<A, B>
Bool operator&&(A&& a, B&& b) {
  return detail::expiring(Bool(detail::binary(BinaryOp::And, detail::to_scalar<bool>(a), detail::to_scalar<bool>(b))), std::forward<A>(a), std::forward<B>(b));
}
template <class A, class B>
  requires detail::BinaryOperands<A, B>
Bool operator||(A&& a, B&& b) {
  return detail::expiring(Bool(detail::binary(BinaryOp::Or, detail::to_scalar<bool>(a), detail::to_scalar<bool>(b))), std::forward<A>(a), std::forward<B>(b));
}

template <detail::Traced A>
Scalar<detail::arith_promote_t<detail::operand_t<A>>> operator-(A&& a) {
  using R = detail::arith_promote_t<detail::operand_t<A>>;
  return detail::expiring(Scalar<R>(detail::unary(UnaryOp::Neg, detail::to_scalar<R>(a))), std::forward<A>(a));
}
template <detail::Traced A>
Scalar<detail::operand_t<A>> operator+(A&& a) {
  return detail::to_scalar<detail::operand_t<A>>(a);
}
template <detail::Traced A>
Bool operator!(A&& a) {
  return detail::expiring(Bool(detail::unary(UnaryOp::Not, detail::to_scalar<bool>(a))), std::forward<A>(a));
}
template <detail::Traced A>
  requires std::is_integral_v<detail::operand_t<A>>
Scalar<detail::operand_t<A>> operator~(A&& a) {
  using R = detail::operand_t<A>;
  if constexpr (std::is_same_v<R, bool>) return !a;
  return detail::expiring(Scalar<R>(detail::unary(UnaryOp::BitNot, detail::to_scalar<R>(a))), std::forward<A>(a));
}

template <Element T>
template <class X>
Scalar<T>& Scalar<T>::assign_expiring(X&& r) {
  if constexpr (std::is_same_v<std::remove_cvref_t<X>, Scalar<T>>) {
    assign(r, !std::is_lvalue_reference_v<X>);
  } else {
    const Scalar<T> c = detail::to_scalar<T>(r);
    detail::expire(std::forward<X>(r));
    assign(c, true);
  }
  return *this;
}

}  // namespace kiln
