// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Complex-number kernels and operands shared by complex_test (CPU and interpreter) and complex_cuda_test
// (NVRTC here, the GPU where there is one).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <kiln/kiln.hpp>

namespace cxtest {

using kiln::Array;
using kiln::Int;

/// Every arithmetic operation of two complex arrays and of a complex with a real array, one output row each:
/// x+y, x-y, x*y, x/y, -x, x*r, r*x, x/r, r/x, x+r, r-x, conj(x).
template <class R>
inline const auto arith = [](Array<std::complex<R>, 1> x, Array<std::complex<R>, 1> y, Array<R, 1> r,
                             Array<std::complex<R>, 2> out) {
  kiln::prange(x.shape(0), [&](Int i) {
    const kiln::Complex<R> a = x[i], b = y[i];
    const kiln::Scalar<R> s = r[i];
    out(0, i) = a + b;
    out(1, i) = a - b;
    out(2, i) = a * b;
    out(3, i) = a / b;
    out(4, i) = -a;
    out(5, i) = a * s;
    out(6, i) = s * a;
    out(7, i) = a / s;
    out(8, i) = s / a;
    out(9, i) = a + s;
    out(10, i) = s - a;
    out(11, i) = kiln::conj(a);
  });
};
constexpr int kArithRows = 12;

/// The functions, one row each: abs, arg (as re + 0i), exp, log, sqrt, pow(x, y); then ==, != as 0/1 parts.
template <class R>
inline const auto functions = [](Array<std::complex<R>, 1> x, Array<std::complex<R>, 1> y,
                                 Array<std::complex<R>, 2> out) {
  kiln::prange(x.shape(0), [&](Int i) {
    const kiln::Complex<R> a = x[i], b = y[i];
    out(0, i) = kiln::abs(a);
    out(1, i) = kiln::arg(a);
    out(2, i) = kiln::exp(a);
    out(3, i) = kiln::log(a);
    out(4, i) = kiln::sqrt(a);
    out(5, i) = kiln::pow(a, b);
    out(6, i) = kiln::complex(kiln::select(a == b, R(1), R(0)), kiln::select(a != b, R(1), R(0)));
  });
};
constexpr int kFunctionRows = 7;

/// The special parts every operand list mixes in: ±0, ±inf, NaN, tiny and huge magnitudes.
template <class R>
std::vector<R> special_parts() {
  using L = std::numeric_limits<R>;
  return {R(0), -R(0), L::infinity(), -L::infinity(), L::quiet_NaN(), R(1), R(-2.5), L::min(), L::denorm_min(),
          L::max(), -L::max() / 3, R(1e-20), R(3e15)};
}

/// n complex numbers: every third has parts drawn from special_parts, the rest uniform in [-4, 4) with
/// random binary exponents in [-40, 40] (so quotients cover small and large magnitudes).
template <class R>
std::vector<std::complex<R>> operands(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<R> u(R(-4), R(4));
  std::uniform_int_distribution<int> e(-40, 40);
  const std::vector<R> sp = special_parts<R>();
  std::vector<std::complex<R>> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 1) v[i] = {sp[rng() % sp.size()], sp[rng() % sp.size()]};
    else v[i] = {std::ldexp(u(rng), e(rng)), std::ldexp(u(rng), e(rng))};
  }
  return v;
}

/// Same bits, or NaN for NaN (payloads may differ between targets).
template <class R>
bool same(R a, R b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}
template <class R>
bool same(std::complex<R> a, std::complex<R> b) {
  return same(a.real(), b.real()) && same(a.imag(), b.imag());
}

}  // namespace cxtest
