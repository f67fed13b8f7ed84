// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Complex numbers in kernels: kiln::Complex64 / kiln::Complex128 traced values and kiln::Array<std::complex<T>>.
//
// A complex value is traced as its two real parts and every operation as the real operations that define it
// (kiln/complex_math.hpp), so the IR, the passes and every backend see only reals: one semantics everywhere by
// construction. A complex array is, underneath, a real array with one more, innermost dimension of extent 2
// (re, im): std::complex's own layout, so host arrays pass without a copy, and complex arrays have rank 1..3.
// The rules (promotion, special values, what is refused) are in docs/element_types.md, "Complex numbers".
#pragma once

#include <complex>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/array.hpp"
#include "kiln/complex_math.hpp"
#include "kiln/control.hpp"
#include "kiln/math.hpp"
#include "kiln/reduce.hpp"

namespace kiln {

template <class R>
class Complex;
template <class R>
class ComplexRef;

using Complex64 = Complex<float>;    ///< complex64: two f32 parts
using Complex128 = Complex<double>;  ///< complex128: two f64 parts

namespace detail {

/// Throws kiln::TypeError for an operation complex numbers do not have, naming the kernel being traced, the
/// operation and the fix (frontend/complex.cpp).
[[noreturn]] void refuse_complex(const char* operation, const char* fix, Where where);

/// The operations of complex_math recorded into the trace.
template <class R>
struct TracedOps {
  using scalar = R;
  using real = Scalar<R>;
  static Scalar<R> sel(const Bool& c, const Scalar<R>& a, const Scalar<R>& b) { return kiln::select(c, a, b); }
  static Scalar<R> abs(const Scalar<R>& x) { return kiln::abs(x); }
  static Scalar<R> sqrt(const Scalar<R>& x) { return kiln::sqrt(x); }
  static Scalar<R> exp(const Scalar<R>& x) { return kiln::exp(x); }
  static Scalar<R> log(const Scalar<R>& x) { return kiln::log(x); }
  static Scalar<R> cos(const Scalar<R>& x) { return kiln::cos(x); }
  static Scalar<R> sin(const Scalar<R>& x) { return kiln::sin(x); }
  static Scalar<R> atan2(const Scalar<R>& y, const Scalar<R>& x) { return kiln::atan2(y, x); }
  static Scalar<R> copysign(const Scalar<R>& x, const Scalar<R>& s) { return kiln::copysign(x, s); }
  static Bool isinf(const Scalar<R>& x) { return kiln::isinf(x); }
  static Double widen(const Scalar<R>& x) { return kiln::cast<double>(x); }
  static Double sqrt_wide(const Double& x) { return kiln::sqrt(x); }
  static Scalar<R> narrow(const Double& x) { return kiln::cast<R>(x); }
};

/// What an operand of a complex operation is: complex or real, traced or a C++ value, and its precision in
/// bytes (4 or 8; 0 for integers and real literals, which take the other operand's).
template <class X>
struct cx_operand {
  static constexpr bool valid = false, is_complex = false, traced = false;
  static constexpr int strong = 0, weak = 0;
};
template <class R>
struct cx_operand<Complex<R>> {
  static constexpr bool valid = true, is_complex = true, traced = true;
  static constexpr int strong = sizeof(R), weak = 0;
};
template <class R>
struct cx_operand<ComplexRef<R>> : cx_operand<Complex<R>> {};
template <class R>
  requires ComplexElement<std::complex<R>>
struct cx_operand<std::complex<R>> {
  static constexpr bool valid = true, is_complex = true, traced = false;
  static constexpr int strong = 0, weak = sizeof(R);
};
template <class X>
  requires Traced<X>
struct cx_operand<X> {
  using T = operand_t<X>;
  static constexpr bool valid = true, is_complex = false, traced = true;
  static constexpr int strong = std::is_same_v<T, double> ? 8 : (is_float_element_v<T> ? 4 : 0);
  static constexpr int weak = 0;
};
template <class X>
  requires Literal<X>
struct cx_operand<X> {
  static constexpr bool valid = true, is_complex = false, traced = false;
  static constexpr int strong = 0, weak = 0;
};

template <class X>
using cx_t = cx_operand<std::remove_cvref_t<X>>;

/// Operands of a complex operation: at least one complex, at least one traced.
template <class A, class B>
concept ComplexOperands = cx_t<A>::valid && cx_t<B>::valid && (cx_t<A>::is_complex || cx_t<B>::is_complex) &&
                          (cx_t<A>::traced || cx_t<B>::traced);

/// The parts' type of `a op b` (docs/element_types.md): double when either operand is complex128 or a traced
/// f64, else float when either is complex64 or a traced float type; otherwise (an integer with a complex
/// literal) the literal's precision. Integers and literals never widen a complex operand.
template <class A, class B>
using cx_result_t = std::conditional_t<
    (cx_t<A>::strong == 8 || cx_t<B>::strong == 8), double,
    std::conditional_t<(cx_t<A>::strong == 4 || cx_t<B>::strong == 4), float,
                       std::conditional_t<(cx_t<A>::weak == 8 || cx_t<B>::weak == 8), double, float>>>;

template <class P, class X>
Complex<P> to_complex(const X& x);
template <class X>
constexpr bool is_complex_operand_v = cx_t<X>::valid && cx_t<X>::is_complex;

/// A 1 when a traced-real conversion to P loses nothing (as Scalar's implicit conversion requires).
template <class X, class P>
constexpr bool real_widens_to() {
  if constexpr (Literal<X>) return true;
  else if constexpr (Traced<X>) return widens<operand_t<X>, P>();
  else return false;
}

}  // namespace detail

/// A traced complex number with parts of type R (float: complex64, double: complex128). Behaves like a
/// kiln::Scalar: `Complex64 z = a[i]; z *= w; out[i] = z;`.
template <class R>
class Complex {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>,
                "kiln::Complex<R>: the parts are float (complex64) or double (complex128)");

 public:
  using value_type = std::complex<R>;

  Complex(std::source_location l = std::source_location::current()) : re_(R(0), l), im_(R(0), l) {}
  /// From the two parts (`kiln::complex(re, im)` deduces R).
  Complex(Scalar<R> re, Scalar<R> im) : re_(std::move(re)), im_(std::move(im)) {}
  /// A C++ complex constant.
  template <class U>
    requires ComplexElement<std::complex<U>>
  Complex(std::complex<U> v, std::source_location l = std::source_location::current())
      : re_(static_cast<R>(v.real()), l), im_(static_cast<R>(v.imag()), l) {}
  /// A real value (a literal, or a traced real that converts to R without loss) is re + 0i.
  template <class X>
    requires(detail::Operand<X> && detail::real_widens_to<std::remove_cvref_t<X>, R>())
  Complex(const X& x) : re_(detail::to_scalar<R>(x)), im_(R(0)) {}
  /// complex64 widens to complex128 implicitly; the other way is kiln::cast<std::complex<float>>(z).
  template <class U>
    requires(sizeof(U) < sizeof(R))
  Complex(const Complex<U>& z) : re_(z.real()), im_(z.imag()) {}
  Complex(const ComplexRef<R>& e) : Complex(e.get()) {}
  Complex(const Complex&) = default;

  // Assigning the real part first is safe: the imaginary part's expression is a live traced value, which the
  // trace snapshots before the assignment changes what it reads (z = z * w reads z.re in both parts).
  Complex& operator=(const Complex& v) {
    re_ = v.re_;
    im_ = v.im_;
    return *this;
  }
  /// A temporary's parts are consumed: nothing reads them again, so only what they read of the other part
  /// is kept (`s += x[i]` stays two plain sums, which kiln can parallelize).
  Complex& operator=(Complex&& v) {
    re_ = std::move(v.re_);
    im_ = std::move(v.im_);
    return *this;
  }
  template <class X>
    requires detail::cx_t<X>::valid
  Complex& operator=(const X& v) {
    return *this = detail::to_complex<R>(v);
  }
  template <class X> requires detail::cx_t<X>::valid Complex& operator+=(const X& v) { return update(*this + v); }
  template <class X> requires detail::cx_t<X>::valid Complex& operator-=(const X& v) { return update(*this - v); }
  template <class X> requires detail::cx_t<X>::valid Complex& operator*=(const X& v) { return update(*this * v); }
  template <class X> requires detail::cx_t<X>::valid Complex& operator/=(const X& v) { return update(*this / v); }

  const Scalar<R>& real() const { return re_; }
  const Scalar<R>& imag() const { return im_; }
  /// Stops watching both parts for snapshots (an expiring temporary; see Scalar::release).
  void release() const {
    re_.release();
    im_.release();
  }
  /// The parts of an expiring value, for a store that consumes them.
  Scalar<R>&& take_real() && { return std::move(re_); }
  Scalar<R>&& take_imag() && { return std::move(im_); }

  /// Names the parts in IR dumps and messages (`z.re`, `z.im`).
  Complex& named(std::string_view name) {
    re_.named(std::string(name) + ".re");
    im_.named(std::string(name) + ".im");
    return *this;
  }

  /// No C++ value while tracing (as for Scalar).
  template <class U = R>
  explicit operator bool() const {
    static_assert(sizeof(U) == 0, "a traced complex value is not a C++ bool: compare it (z != 0) and branch with kiln::if_");
    return false;
  }

 private:
  /// `*this = T(result)`: the result is computed in a statement of its own, so that its operands' copies of
  /// this value are gone before it is assigned (a live copy would be snapshotted, a read of the variable that
  /// would stop `s += x[i]` from being a reduction).
  template <class X>
  Complex& update(X&& result) {
    Complex r = detail::to_complex<R>(result);
    detail::expire(std::forward<X>(result));
    return *this = std::move(r);
  }

  Scalar<R> re_, im_;
};

/// One element of a complex array, `a(i, j)`: a value (its parts as loaded when `a(i, j)` was evaluated), and the
/// target of `a(i, j) = z` and `a(i, j) += z`.
template <class R>
class ComplexRef {
 public:
  ComplexRef(const detail::ArrayHandle& parts, const std::vector<Int>& idx)
      : re_(parts, with_part(idx, 0)), im_(parts, with_part(idx, 1)) {}

  Complex<R> get() const { return Complex<R>(re_.get(), im_.get()); }
  void release() const {
    re_.release();
    im_.release();
  }

  template <class X> requires detail::cx_t<X>::valid const ComplexRef& operator=(const X& v) && { return std::move(*this).set(detail::to_complex<R>(v)); }
  const ComplexRef& operator=(const ComplexRef& v) && { return std::move(*this).set(v.get()); }
  template <class X> requires detail::cx_t<X>::valid const ComplexRef& operator+=(const X& v) && { return std::move(*this).set(detail::to_complex<R>(get() + v)); }
  template <class X> requires detail::cx_t<X>::valid const ComplexRef& operator-=(const X& v) && { return std::move(*this).set(detail::to_complex<R>(get() - v)); }
  template <class X> requires detail::cx_t<X>::valid const ComplexRef& operator*=(const X& v) && { return std::move(*this).set(detail::to_complex<R>(get() * v)); }
  template <class X> requires detail::cx_t<X>::valid const ComplexRef& operator/=(const X& v) && { return std::move(*this).set(detail::to_complex<R>(get() / v)); }

 private:
  static std::vector<Int> with_part(std::vector<Int> idx, int part) {
    idx.emplace_back(std::int64_t{part});
    return idx;
  }
  /// Stores both parts. The imaginary part stays alive across the first store, so if it reads the element it is
  /// snapshotted before the real part changes; each part is consumed by its store.
  const ComplexRef& set(Complex<R> v) && {
    std::move(re_) = std::move(v).take_real();
    std::move(im_) = std::move(v).take_imag();
    return *this;
  }

  ElementRef<R> re_, im_;
};

namespace detail {

template <class P, class X>
Complex<P> to_complex(const X& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (std::is_same_v<D, Complex<P>>) {
    return x;
  } else if constexpr (requires { x.get(); x.release(); } && cx_t<X>::is_complex) {  // ComplexRef
    return to_complex<P>(x.get());
  } else if constexpr (requires { x.real(); x.imag(); } && cx_t<X>::traced) {  // Complex<other precision>
    return Complex<P>(kiln::cast<P>(x.real()), kiln::cast<P>(x.imag()));
  } else if constexpr (cx_t<X>::is_complex) {  // std::complex constant
    return Complex<P>(Scalar<P>(static_cast<P>(x.real())), Scalar<P>(static_cast<P>(x.imag())));
  } else {  // a real operand
    return Complex<P>(to_scalar<P>(x), Scalar<P>(P(0)));
  }
}

template <class P>
using cx_parts = complex_math::Parts<Scalar<P>>;

template <class P>
Complex<P> from_parts(cx_parts<P>&& p) {
  return Complex<P>(std::move(p.re), std::move(p.im));
}

/// A complex value's parts in P, or a real operand in P (the mixed operations keep it real).
template <class P, class X>
Scalar<P> real_of(const X& x) {
  return to_scalar<P>(x);
}

}  // namespace detail

// ---- construction and parts ---------------------------------------------------------------------------------

/// re + im·i from two real operands (traced or not, at least one traced): the parts' type is the promotion of
/// theirs, computed in float for float, f16 and bf16 and integers with a float, in double otherwise.
template <class A, class B>
  requires detail::BinaryOperands<A, B>
auto complex(const A& re, const B& im) {
  using T = detail::float_result_t<A, B>;
  using P = std::conditional_t<std::is_same_v<T, double>, double, float>;
  return Complex<P>(detail::to_scalar<P>(re), detail::to_scalar<P>(im));
}

template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
auto real(const X& z) {
  using P = detail::cx_result_t<X, X>;
  return Scalar<P>(detail::to_complex<P>(z).real());
}
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
auto imag(const X& z) {
  using P = detail::cx_result_t<X, X>;
  return Scalar<P>(detail::to_complex<P>(z).imag());
}
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
auto conj(const X& z) {
  using P = detail::cx_result_t<X, X>;
  const Complex<P> c = detail::to_complex<P>(z);
  return Complex<P>(c.real(), -c.imag());
}

/// Explicit conversion between complex precisions, and from a real (as re + 0i).
template <ComplexElement T, class X>
  requires detail::cx_t<X>::valid && detail::cx_t<X>::traced
Complex<typename T::value_type> cast(const X& x) {
  using P = typename T::value_type;
  if constexpr (detail::is_complex_operand_v<X>) {
    using Q = detail::cx_result_t<X, X>;
    const Complex<Q> c = detail::to_complex<Q>(x);
    return Complex<P>(kiln::cast<P>(c.real()), kiln::cast<P>(c.imag()));
  } else {
    return Complex<P>(kiln::cast<P>(x), Scalar<P>(P(0)));
  }
}

// ---- arithmetic ---------------------------------------------------------------------------------------------
// A complex operand with a real one keeps the real one real (C99 Annex G, std::complex): (a + bi)·x is ax + bxi,
// not (a + bi)(x + 0i), whose 0·inf would make NaNs; NumPy converts the real operand first (see
// docs/element_types.md). A real divided by a complex number is the complex quotient of x + 0i.

template <class A, class B>
  requires detail::ComplexOperands<A, B>
auto operator+(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  if constexpr (!detail::is_complex_operand_v<A>) {
    const Complex<P> z = detail::to_complex<P>(b);
    return Complex<P>(detail::to_scalar<P>(a) + z.real(), z.imag());
  } else if constexpr (!detail::is_complex_operand_v<B>) {
    const Complex<P> z = detail::to_complex<P>(a);
    return Complex<P>(z.real() + detail::to_scalar<P>(b), z.imag());
  } else {
    const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
    return Complex<P>(x.real() + y.real(), x.imag() + y.imag());
  }
}

template <class A, class B>
  requires detail::ComplexOperands<A, B>
auto operator-(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  if constexpr (!detail::is_complex_operand_v<A>) {
    const Complex<P> z = detail::to_complex<P>(b);
    return Complex<P>(detail::to_scalar<P>(a) - z.real(), -z.imag());
  } else if constexpr (!detail::is_complex_operand_v<B>) {
    const Complex<P> z = detail::to_complex<P>(a);
    return Complex<P>(z.real() - detail::to_scalar<P>(b), z.imag());
  } else {
    const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
    return Complex<P>(x.real() - y.real(), x.imag() - y.imag());
  }
}

template <class A, class B>
  requires detail::ComplexOperands<A, B>
auto operator*(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  if constexpr (!detail::is_complex_operand_v<A>) {
    const Scalar<P> x = detail::to_scalar<P>(a);
    const Complex<P> z = detail::to_complex<P>(b);
    return Complex<P>(x * z.real(), x * z.imag());
  } else if constexpr (!detail::is_complex_operand_v<B>) {
    const Complex<P> z = detail::to_complex<P>(a);
    const Scalar<P> x = detail::to_scalar<P>(b);
    return Complex<P>(z.real() * x, z.imag() * x);
  } else {
    const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
    return detail::from_parts<P>(
        complex_math::mul<detail::TracedOps<P>>(x.real(), x.imag(), y.real(), y.imag()));
  }
}

template <class A, class B>
  requires detail::ComplexOperands<A, B>
auto operator/(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  if constexpr (!detail::is_complex_operand_v<B>) {
    const Complex<P> z = detail::to_complex<P>(a);
    const Scalar<P> x = detail::to_scalar<P>(b);
    return Complex<P>(z.real() / x, z.imag() / x);
  } else {
    const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
    return detail::from_parts<P>(
        complex_math::div<detail::TracedOps<P>>(x.real(), x.imag(), y.real(), y.imag()));
  }
}

template <class R>
Complex<R> operator-(const Complex<R>& z) {
  return Complex<R>(-z.real(), -z.imag());
}
template <class R>
Complex<R> operator-(const ComplexRef<R>& z) {
  return -z.get();
}
template <class R>
Complex<R> operator+(const Complex<R>& z) {
  return z;
}

/// Equal when both parts are equal (so a NaN part makes every == false and != true, as in NumPy).
template <class A, class B>
  requires detail::ComplexOperands<A, B>
Bool operator==(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
  return x.real() == y.real() && x.imag() == y.imag();
}
template <class A, class B>
  requires detail::ComplexOperands<A, B>
Bool operator!=(const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
  return x.real() != y.real() || x.imag() != y.imag();
}

// Complex numbers have no order: NumPy's lexicographic one is deprecated. Each is a kiln::TypeError when traced.
#define KILN_COMPLEX_NO_ORDER(sym)                                                                          \
  template <class A, class B>                                                                               \
    requires detail::ComplexOperands<A, B>                                                                  \
  Bool operator sym(const A&, const B&) {                                                                   \
    detail::refuse_complex("'" #sym "' on complex numbers (they have no order)",                            \
                           "compare kiln::abs(z), kiln::real(z) or kiln::imag(z) instead", {});             \
  }
KILN_COMPLEX_NO_ORDER(<)
KILN_COMPLEX_NO_ORDER(<=)
KILN_COMPLEX_NO_ORDER(>)
KILN_COMPLEX_NO_ORDER(>=)
#undef KILN_COMPLEX_NO_ORDER

// ---- functions ----------------------------------------------------------------------------------------------

/// |z|, without spurious overflow or underflow (kiln/complex_math.hpp: abs).
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
auto abs(const X& z) {
  using P = detail::cx_result_t<X, X>;
  const Complex<P> c = detail::to_complex<P>(z);
  return complex_math::abs<detail::TracedOps<P>>(c.real(), c.imag());
}
/// The phase angle atan2(imag, real), in (-pi, pi].
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
auto arg(const X& z) {
  using P = detail::cx_result_t<X, X>;
  const Complex<P> c = detail::to_complex<P>(z);
  return complex_math::arg<detail::TracedOps<P>>(c.real(), c.imag());
}

#define KILN_COMPLEX_FN(name)                                                                               \
  template <class X>                                                                                        \
    requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced                                     \
  auto name(const X& z) {                                                                                   \
    using P = detail::cx_result_t<X, X>;                                                                    \
    const Complex<P> c = detail::to_complex<P>(z);                                                          \
    return detail::from_parts<P>(complex_math::name<detail::TracedOps<P>>(c.real(), c.imag()));             \
  }
KILN_COMPLEX_FN(exp)
KILN_COMPLEX_FN(log)
KILN_COMPLEX_FN(sqrt)
#undef KILN_COMPLEX_FN

/// z^w = e^(w log z) (kiln/complex_math.hpp: pow); either operand may be real.
template <class A, class B>
  requires detail::ComplexOperands<A, B>
auto pow(const A& z, const B& w) {
  using P = detail::cx_result_t<A, B>;
  const Complex<P> x = detail::to_complex<P>(z), y = detail::to_complex<P>(w);
  return detail::from_parts<P>(
      complex_math::pow<detail::TracedOps<P>>(x.real(), x.imag(), y.real(), y.imag()));
}

/// cond ? a : b for complex values (either may be real).
template <class C, class A, class B>
  requires detail::Operand<C> && detail::ComplexOperands<A, B>
auto select(const C& cond, const A& a, const B& b) {
  using P = detail::cx_result_t<A, B>;
  const Bool c = detail::to_scalar<bool>(cond);
  const Complex<P> x = detail::to_complex<P>(a), y = detail::to_complex<P>(b);
  return Complex<P>(kiln::select(c, x.real(), y.real()), kiln::select(c, x.imag(), y.imag()));
}

/// Whether either part is NaN (NumPy's isnan of a complex number); isinf: either part infinite; isfinite: both
/// finite.
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
Bool isnan(const X& z) {
  const auto c = detail::to_complex<detail::cx_result_t<X, X>>(z);
  return kiln::isnan(c.real()) || kiln::isnan(c.imag());
}
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
Bool isinf(const X& z) {
  const auto c = detail::to_complex<detail::cx_result_t<X, X>>(z);
  return kiln::isinf(c.real()) || kiln::isinf(c.imag());
}
template <class X>
  requires detail::is_complex_operand_v<X> && detail::cx_t<X>::traced
Bool isfinite(const X& z) {
  const auto c = detail::to_complex<detail::cx_result_t<X, X>>(z);
  return kiln::isfinite(c.real()) && kiln::isfinite(c.imag());
}

// ---- arrays -------------------------------------------------------------------------------------------------

/// An array of complex numbers: underneath, the real array of its parts, with one more innermost dimension
/// of extent 2 and stride 1 (std::complex's layout). Element access, views along the leading dimensions,
/// shape and size are as for any kiln::Array.
template <class R, int Rank>
class Array<std::complex<R>, Rank> {
  static_assert(Rank >= 0 && Rank < kMaxRank, "kiln arrays of complex numbers have rank 1..3 (0 = any): their "
                                              "parts take the fourth dimension");

 public:
  using value_type = std::complex<R>;
  static constexpr int static_rank = Rank;

  /// From the parts' array (a kernel parameter, an allocation or a view), whose last dimension holds (re, im).
  explicit Array(detail::ArrayHandle parts) : parts_(std::move(parts)) {}
  template <int Q>
    requires(Rank == 0 && Q != 0)
  Array(const Array<std::complex<R>, Q>& other) : parts_(other.parts()) {}

  int rank() const { return parts_.rank() - 1; }
  Int shape(int axis) const { return parts_.shape(axis); }
  /// The number of (complex) elements.
  Int size() const { return parts_.size() / 2; }

  template <class I>
    requires detail::is_index_v<I>
  ComplexRef<R> operator[](const I& i) const {
    static_assert(Rank == 0 || Rank == 1, "a[i] indexes a 1-d array; use a(i, j, ...) for more dimensions");
    return ComplexRef<R>(parts_.traced_handle(), {detail::to_scalar<std::int64_t>(i)});
  }
  template <class... I>
    requires(sizeof...(I) >= 1 && (detail::is_index_v<I> && ...))
  ComplexRef<R> operator()(const I&... i) const {
    static_assert(Rank == 0 || static_cast<int>(sizeof...(I)) == Rank, "number of indices differs from the array's rank");
    return ComplexRef<R>(parts_.traced_handle(), {detail::to_scalar<std::int64_t>(i)...});
  }
  /// A view along the leading dimensions (slices keep theirs, integers drop theirs); the parts stay whole.
  template <class... I>
    requires(sizeof...(I) >= 1 && (detail::is_view_index_v<I> && ...) && ((detail::is_slice_v<I>) || ...))
  Array<std::complex<R>, detail::view_rank<Rank, I...>()> operator()(const I&... i) const {
    return Array<std::complex<R>, detail::view_rank<Rank, I...>()>(
        detail::view_of(parts_.traced_handle(), std::index_sequence_for<I...>{}, i...));
  }
  template <class S>
    requires detail::is_slice_v<S>
  Array<std::complex<R>, Rank> operator[](const S& s) const {
    return Array<std::complex<R>, Rank>(detail::view_of(parts_.traced_handle(), std::index_sequence_for<S>{}, s));
  }

  /// The real array of the parts (shape (..., 2)).
  const Array<R>& parts() const { return parts_; }
  const detail::ArrayHandle& traced_handle() const { return parts_.traced_handle(); }

 private:
  Array<R> parts_;
};

namespace detail {

/// The real or imaginary parts of a complex array as a real view of its shape (part 0 or 1 of the last axis).
template <class R, int Rank>
Array<R, Rank> part_view(const Array<std::complex<R>, Rank>& a, int part, std::source_location l) {
  const int n = a.parts().rank();
  const Int which(std::int64_t{part});
  ViewIndex v[kMaxRank] = {};
  v[n - 1] = ViewIndex{&which, nullptr};
  return Array<R, Rank>(make_view(a.traced_handle(), v, n, Where::here(l)));
}

/// Calls body(i...) for every index of `a` in row-major order, in a sequential kiln::range nest.
template <class R, int Rank, class F>
void for_each_index(const Array<std::complex<R>, Rank>& a, F&& body) {
  const int rank = a.rank();  // an Array of any rank (Rank 0) knows its rank once traced
  if constexpr (Rank == 0 || Rank == 1) {
    if (rank == 1) kiln::range(a.shape(0), [&](Int i) { body(a(i)); });
  }
  if constexpr (Rank == 0 || Rank == 2) {
    if (rank == 2) kiln::range(a.shape(0), [&](Int i) { kiln::range(a.shape(1), [&](Int j) { body(a(i, j)); }); });
  }
  if constexpr (Rank == 0 || Rank == 3) {
    if (rank == 3)
      kiln::range(a.shape(0), [&](Int i) {
        kiln::range(a.shape(1), [&](Int j) { kiln::range(a.shape(2), [&](Int k) { body(a(i, j, k)); }); });
      });
  }
}

}  // namespace detail

/// NumPy's a.real and a.imag: views of the parts, no copy; writable (`kiln::imag(a)(kiln::all) = 0.0f`).
template <class R, int Rank>
Array<R, Rank> real(const Array<std::complex<R>, Rank>& a, std::source_location l = std::source_location::current()) {
  return detail::part_view(a, 0, l);
}
template <class R, int Rank>
Array<R, Rank> imag(const Array<std::complex<R>, Rank>& a, std::source_location l = std::source_location::current()) {
  return detail::part_view(a, 1, l);
}

/// The sum of all elements: the sums of the real and of the imaginary parts, each a real kiln::sum (parallel,
/// in fixed blocks: the same bits for any number of threads). Empty: 0.
template <class R, int Rank>
Complex<R> sum(const Array<std::complex<R>, Rank>& a, std::source_location l = std::source_location::current()) {
  return Complex<R>(kiln::sum(real(a, l), l), kiln::sum(imag(a, l), l));
}
/// The mean: the sum divided by the number of elements (NaN + NaN i for an empty array, as NumPy).
template <class R, int Rank>
Complex<R> mean(const Array<std::complex<R>, Rank>& a, std::source_location l = std::source_location::current()) {
  return sum(a, l) / kiln::cast<R>(a.size());
}
/// The product of all elements, multiplied in row-major order from the first (a sequential loop: a complex
/// product is not a reduction of parts, and this order is the definition). Empty: 1.
template <class R, int Rank>
Complex<R> prod(const Array<std::complex<R>, Rank>& a, std::source_location = std::source_location::current()) {
  Complex<R> p(Scalar<R>(R(1)), Scalar<R>(R(0)));
  detail::for_each_index(a, [&](const ComplexRef<R>& e) { p *= e; });
  return p;
}

/// A new complex array inside a kernel (contents undefined until written): kiln::empty<std::complex<float>>(n).
template <ComplexElement T, detail::IndexLike... S>
  requires(sizeof...(S) >= 1 && sizeof...(S) < kMaxRank)
Array<T, static_cast<int>(sizeof...(S))> empty(const S&... n) {
  using R = typename T::value_type;
  const Int e[] = {detail::to_scalar<std::int64_t>(n)..., Int(std::int64_t{2})};
  const Int* p[sizeof...(S) + 1];
  for (std::size_t k = 0; k <= sizeof...(S); ++k) p[k] = &e[k];
  return Array<T, static_cast<int>(sizeof...(S))>(
      detail::allocate(dtype_of<R>(), p, static_cast<int>(sizeof...(S)) + 1, nullptr, {}));
}

// ---- what complex numbers do not have -------------------------------------------------------------------------

template <class R, int Rank, class... X>
Array<std::complex<R>, Rank> sort(const Array<std::complex<R>, Rank>&, X&&...) {
  detail::refuse_complex("kiln::sort of a complex array (complex numbers have no order)",
                         "sort kiln::abs of the elements, or kiln::real(a) / kiln::imag(a)", {});
}
template <class R, int Rank, class... X>
Array<std::int64_t, Rank> argsort(const Array<std::complex<R>, Rank>&, X&&...) {
  detail::refuse_complex("kiln::argsort of a complex array (complex numbers have no order)",
                         "argsort kiln::abs of the elements, or kiln::real(a) / kiln::imag(a)", {});
}

#define KILN_COMPLEX_NO_ATOMIC(fn)                                                                          \
  template <class R, class... X>                                                                            \
  Complex<R> fn(const ComplexRef<R>&, X&&...) {                                                             \
    detail::refuse_complex("kiln::" #fn " on an element of a complex array (no target updates both parts " \
                           "in one atomic operation)",                                                      \
                           "update kiln::real(a) and kiln::imag(a) with two atomics, or accumulate with "  \
                           "a(i) += z in a kiln::range loop", {});                                          \
  }
KILN_COMPLEX_NO_ATOMIC(atomic_add)
KILN_COMPLEX_NO_ATOMIC(atomic_sub)
KILN_COMPLEX_NO_ATOMIC(atomic_min)
KILN_COMPLEX_NO_ATOMIC(atomic_max)
KILN_COMPLEX_NO_ATOMIC(atomic_exchange)
KILN_COMPLEX_NO_ATOMIC(atomic_compare_exchange)
#undef KILN_COMPLEX_NO_ATOMIC

}  // namespace kiln
