// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The definition of kiln's complex arithmetic, written once over a policy: HostOps<float|double> computes it
// on the host (the reference ir/semantics.hpp names and the tests use), TracedOps in kiln/complex.hpp records
// the same operations into a kernel. Only + - * /, sqrt, comparisons and selects of reals appear in the
// arithmetic (all correctly rounded on every target, no FMA: the CPU and CUDA code is compiled without
// contraction), so a complex product, quotient or abs is bitwise the same on the interpreter, the CPU and the
// GPU. exp, log, arg and pow call the real functions of the same name, which are as exact as each target's.
#pragma once

#include <cmath>
#include <limits>

namespace kiln::complex_math {

template <class T>
struct Parts {
  T re, im;
};

/// Plain floats: the reference of the definitions below.
template <class F>
struct HostOps {
  using scalar = F;
  using real = F;
  using wide = double;
  static F sel(bool c, F a, F b) { return c ? a : b; }
  static F abs(F x) { return std::fabs(x); }
  static F sqrt(F x) { return std::sqrt(x); }
  static F exp(F x) { return std::exp(x); }
  static F log(F x) { return std::log(x); }
  static F cos(F x) { return std::cos(x); }
  static F sin(F x) { return std::sin(x); }
  static F atan2(F y, F x) { return std::atan2(y, x); }
  static F copysign(F x, F s) { return std::copysign(x, s); }
  static bool isinf(F x) { return std::isinf(x); }
  static double widen(F x) { return static_cast<double>(x); }
  static double sqrt_wide(double x) { return std::sqrt(x); }
  static F narrow(double x) { return static_cast<F>(x); }
};

/// (a + bi)(c + di) = (ac - bd) + (ad + bc)i, as written (NumPy's and C's textbook product; no Annex G
/// recovery of infinities, as in NumPy).
template <class O, class T>
Parts<T> mul(const T& a, const T& b, const T& c, const T& d) {
  return {a * c - b * d, a * d + b * c};
}

/// (a + bi) / (c + di) by Baudin and Smith's robust algorithm ("A Robust Complex Division in Scilab", 2012):
/// Smith's quotient (divide by the larger of |c| and |d|, so no intermediate squares overflow), with the parts
/// scaled by powers of two first when they lie near the overflow or underflow threshold, and the ratio's
/// underflow to zero handled apart. NumPy's loop is Smith's without the scaling: where it overflows to inf or
/// NaN ((1e308 + 1e308i) / (1e308 + 1e308i)), this gives the quotient. A zero divisor gives a / |c| and
/// b / |c| (±inf or NaN per part), as NumPy.
template <class O, class T>
Parts<T> div(const T& a, const T& b, const T& c, const T& d) {
  using F = typename O::scalar;
  using L = std::numeric_limits<F>;
  constexpr F big = L::max() / 2, small = L::min() * 2 / L::epsilon(), up = 2 / (L::epsilon() * L::epsilon());
  const T aa = O::abs(a), ab = O::abs(b), ac = O::abs(c), ad = O::abs(d);
  const T n = O::sel(aa >= ab, aa, ab), m = O::sel(ac >= ad, ac, ad);
  // Scale factors (powers of two, so exact): halve parts near the largest float, lift parts near the smallest.
  const T sn = O::sel(n >= big, T(F(0.5)), O::sel(n <= small, T(up), T(F(1))));
  const T sm = O::sel(m >= big, T(F(0.5)), O::sel(m <= small, T(up), T(F(1))));
  const T x = a * sn, y = b * sn, u = c * sm, v = d * sm;
  // Divide by the larger part of the divisor: with |v| > |u|, (x + yi)/(u + vi) = conj((y + xi)/(v + ui)).
  const auto swap = O::abs(v) > O::abs(u);
  const T p = O::sel(swap, y, x), q = O::sel(swap, x, y), r0 = O::sel(swap, v, u), s0 = O::sel(swap, u, v);
  const T r = s0 / r0;
  const T t = 1 / (r0 + s0 * r);
  const auto tiny = r == 0;  // the ratio underflowed: divide in the other order
  const T e = O::sel(tiny, (p + s0 * (q / r0)) * t, (p + q * r) * t);
  const T f0 = O::sel(tiny, (q - s0 * (p / r0)) * t, (q - p * r) * t);
  const T f = O::sel(swap, -f0, f0);
  const T scale = sm / sn;
  const auto zero = ac == 0 && ad == 0;
  T re = O::sel(zero, a / ac, e * scale);
  T im = O::sel(zero, b / ac, f * scale);
  return {re, im};
}

/// |a + bi| without overflow or underflow: in double for float parts (exact squares, two roundings), else
/// scaled by the larger part, m·sqrt(1 + (n/m)²). An infinite part gives +inf even beside a NaN (C99 hypot).
template <class O, class T>
T abs(const T& a, const T& b) {
  const T x = O::abs(a), y = O::abs(b);
  const auto inf = O::isinf(a) || O::isinf(b);
  if constexpr (sizeof(typename O::scalar) == 4) {
    const auto wa = O::widen(x), wb = O::widen(y);
    return O::sel(inf, T(std::numeric_limits<float>::infinity()), O::narrow(O::sqrt_wide(wa * wa + wb * wb)));
  } else {
    const auto big = x >= y;
    const T m = O::sel(big, x, y), n = O::sel(big, y, x);
    const T r = n / m;
    return O::sel(inf, T(std::numeric_limits<double>::infinity()), O::sel(m == 0, n, m * O::sqrt(1 + r * r)));
  }
}

/// arg(a + bi) = atan2(b, a), in (-pi, pi], with atan2's signed zeros.
template <class O, class T>
T arg(const T& a, const T& b) {
  return O::atan2(b, a);
}

/// e^(a + bi) = e^a (cos b + i sin b); a real argument (b == ±0) gives (e^a, b) exactly, so e^(inf + 0i) is
/// inf + 0i (C99 Annex G) rather than inf·sin(0) = NaN.
template <class O, class T>
Parts<T> exp(const T& a, const T& b) {
  const T e = O::exp(a);
  const auto real = b == 0;
  T re = O::sel(real, e, e * O::cos(b));
  T im = O::sel(real, b, e * O::sin(b));
  return {re, im};
}

/// log(a + bi) = log|z| + i arg z: log(0) = -inf + 0i, as NumPy.
template <class O, class T>
Parts<T> log(const T& a, const T& b) {
  return {O::log(complex_math::abs<O>(a, b)), O::atan2(b, a)};
}

/// The principal square root (non-negative real part): t = sqrt((|a| + |z|) / 2), then (t, b / 2t) for a >= 0
/// and (|b| / 2t, ±t) with b's sign for a < 0. sqrt(±0 + 0i) = +0 + 0i with b's sign, an infinite b gives
/// inf + bi, sqrt(-inf + NaN i) = NaN ± inf i (C99 Annex G). The halving comes first for parts near the
/// largest float, which would overflow |a| + |z|.
template <class O, class T>
Parts<T> sqrt(const T& a, const T& b) {
  using F = typename O::scalar;
  const T x = O::abs(a);
  const T h = complex_math::abs<O>(a, b);
  const auto huge = h > std::numeric_limits<F>::max() / 4;
  const T t = O::sqrt(O::sel(huge, F(0.5) * x + F(0.5) * h, (x + h) * F(0.5)));
  const T two_t = 2 * t;
  const auto zero = a == 0 && b == 0;
  const auto positive = a >= 0;
  const auto inf_im = O::isinf(b);
  T re = O::sel(inf_im, T(std::numeric_limits<F>::infinity()),
                O::sel(zero, T(F(0)), O::sel(positive, t, O::abs(b) / two_t)));
  T im = O::sel(inf_im || zero, b, O::sel(positive, b / two_t, O::copysign(t, b)));
  return {re, im};
}

/// z^w = e^(w log z), with NumPy's two special cases: w == 0 gives 1, z == 0 gives 0 for a real positive w
/// and NaN + NaN i otherwise. (NumPy also multiplies out small integer powers; kiln does not.)
template <class O, class T>
Parts<T> pow(const T& a, const T& b, const T& c, const T& d) {
  using F = typename O::scalar;
  const Parts<T> l = complex_math::log<O>(a, b);
  const Parts<T> p = complex_math::mul<O>(c, d, l.re, l.im);
  const Parts<T> e = complex_math::exp<O>(p.re, p.im);
  const auto w_zero = c == 0 && d == 0;
  const auto z_zero = a == 0 && b == 0;
  const auto to_zero = c > 0 && d == 0;
  const T nan = T(std::numeric_limits<F>::quiet_NaN());
  T re = O::sel(w_zero, T(F(1)), O::sel(z_zero, O::sel(to_zero, T(F(0)), nan), e.re));
  T im = O::sel(w_zero, T(F(0)), O::sel(z_zero, O::sel(to_zero, T(F(0)), nan), e.im));
  return {re, im};
}

}  // namespace kiln::complex_math
