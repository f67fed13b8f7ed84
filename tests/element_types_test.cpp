// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The element types beyond bool/i32/i64/f32/f64: uint8..uint64, int8, int16, f16 and bf16. The promotion
// table (compile time), kiln's arithmetic on them (ir/semantics.hpp against hand-computed values), the 16-bit
// float conversions against an independent round-to-nearest-even reference, kernels on the CPU backend
// against the interpreter and against the semantics functions (sizes 0, 1, primes, large), reductions'
// accumulation types, the cache key, serialization, and the errors for calls with the wrong types.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <kiln/kiln.hpp>

#include "ir/builder.hpp"
#include "ir/hash.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "ir/serialize.hpp"
#include "tests/element_type_kernels.hpp"

namespace {

using namespace kiln;
namespace sem = kiln::ir::sem;

// ---- the promotion table (README "Arithmetic") ----------------------------------------------------------

template <class A, class B>
using plus_t = decltype(std::declval<A>() + std::declval<B>());

// Integers: the smallest type holding both ranges.
static_assert(std::is_same_v<plus_t<UInt8, UInt8>, UInt8>);
static_assert(std::is_same_v<plus_t<UInt8, Int8>, Int16>);
static_assert(std::is_same_v<plus_t<Int8, UInt8>, Int16>);
static_assert(std::is_same_v<plus_t<UInt8, Int16>, Int16>);
static_assert(std::is_same_v<plus_t<UInt16, Int16>, Int32>);
static_assert(std::is_same_v<plus_t<UInt16, Int8>, Int32>);
static_assert(std::is_same_v<plus_t<UInt32, Int32>, Int64>);
static_assert(std::is_same_v<plus_t<UInt32, Int8>, Int64>);
static_assert(std::is_same_v<plus_t<UInt32, Int64>, Int64>);
static_assert(std::is_same_v<plus_t<UInt8, UInt64>, UInt64>);
static_assert(std::is_same_v<plus_t<Int8, Int64>, Int64>);
static_assert(std::is_same_v<plus_t<Int16, Int32>, Int32>);
static_assert(std::is_same_v<plus_t<UInt16, UInt32>, UInt32>);
// bool counts as int32 in arithmetic (as in C++).
static_assert(std::is_same_v<plus_t<Bool, UInt8>, Int32>);
// Floats: the wider; f16 with bf16 is f32; a float with an integer keeps the float type (C++, not NumPy).
static_assert(std::is_same_v<plus_t<Half, Half>, Half>);
static_assert(std::is_same_v<plus_t<Half, BFloat16>, Float>);
static_assert(std::is_same_v<plus_t<BFloat16, Float>, Float>);
static_assert(std::is_same_v<plus_t<Half, Double>, Double>);
static_assert(std::is_same_v<plus_t<Int64, Half>, Half>);
static_assert(std::is_same_v<plus_t<UInt64, Float>, Float>);
static_assert(std::is_same_v<plus_t<UInt8, Double>, Double>);
// Literals are weak: they take the traced operand's type (an integer with a float literal is f64).
static_assert(std::is_same_v<plus_t<UInt8, int>, UInt8>);
static_assert(std::is_same_v<plus_t<Int8, long long>, Int8>);
static_assert(std::is_same_v<plus_t<UInt16, double>, Double>);
static_assert(std::is_same_v<plus_t<Half, double>, Half>);
static_assert(std::is_same_v<plus_t<BFloat16, int>, BFloat16>);
// Shifts and bitwise operators follow the same table; comparisons are Bool for every pair.
static_assert(std::is_same_v<decltype(std::declval<UInt8>() << std::declval<UInt8>()), UInt8>);
static_assert(std::is_same_v<decltype(std::declval<UInt64>() < std::declval<Int64>()), Bool>);
// Reductions (kiln/reduce.hpp): integer sums in 64 bits, 16-bit floats in f32.
static_assert(std::is_same_v<detail::sum_t<std::uint8_t>, std::uint64_t>);
static_assert(std::is_same_v<detail::sum_t<std::int16_t>, std::int64_t>);
static_assert(std::is_same_v<detail::sum_t<std::uint64_t>, std::uint64_t>);
static_assert(std::is_same_v<detail::sum_t<half>, float>);
static_assert(std::is_same_v<detail::moment_t<bfloat16>, float>);
// Implicit conversions only where nothing is lost.
static_assert(std::is_convertible_v<UInt8, Int16> && std::is_convertible_v<UInt8, UInt32>);
static_assert(!std::is_convertible_v<Int8, UInt16> && !std::is_convertible_v<UInt16, Int16>);
static_assert(std::is_convertible_v<Half, Float> && !std::is_convertible_v<Float, Half>);
static_assert(!std::is_convertible_v<Half, BFloat16>);

// ---- the arithmetic (ir/semantics.hpp) ---------------------------------------------------------------------

TEST(ElementSemantics, IntegersWrapAndDivisionIsTotal) {
  EXPECT_EQ(sem::binary<std::uint8_t>(BinaryOp::Add, 250, 10), 4);
  EXPECT_EQ(sem::binary<std::uint8_t>(BinaryOp::Sub, 3, 5), 254);
  EXPECT_EQ(sem::binary<std::uint16_t>(BinaryOp::Mul, 65535, 65535), 1);  // no signed-int overflow on the way
  EXPECT_EQ(sem::binary<std::int8_t>(BinaryOp::Add, 127, 1), -128);
  EXPECT_EQ(sem::binary<std::int8_t>(BinaryOp::Div, -128, -1), -128);
  EXPECT_EQ(sem::binary<std::int16_t>(BinaryOp::Mod, -32768, -1), 0);
  EXPECT_EQ(sem::binary<std::uint32_t>(BinaryOp::Div, 7, 0), 0u);
  EXPECT_EQ(sem::binary<std::uint32_t>(BinaryOp::Mod, 7, 0), 7u);
  // -1 is an ordinary divisor of unsigned types: UINT32_MAX / UINT32_MAX == 1.
  EXPECT_EQ(sem::binary<std::uint32_t>(BinaryOp::Div, UINT32_MAX, UINT32_MAX), 1u);
  EXPECT_EQ(sem::binary<std::uint64_t>(BinaryOp::Mod, 10, UINT64_MAX), 10u);
  EXPECT_EQ(sem::unary<std::uint8_t>(UnaryOp::Neg, 1), 255);
  EXPECT_EQ(sem::call<std::uint8_t>(Intrinsic::Abs, 200), 200);
  EXPECT_EQ(sem::call<std::int8_t>(Intrinsic::Abs, -128), -128);
  EXPECT_EQ(sem::binary<std::uint8_t>(BinaryOp::Min, 200, 3), 3);  // unsigned order
}

TEST(ElementSemantics, ShiftsTakeTheCountModuloTheWidth) {
  EXPECT_EQ(sem::binary<std::uint8_t>(BinaryOp::Shl, 1, 9), 2);   // 9 mod 8
  EXPECT_EQ(sem::binary<std::int16_t>(BinaryOp::Shl, 1, 15), -32768);
  EXPECT_EQ(sem::binary<std::int8_t>(BinaryOp::Shr, -128, 7), -1);  // arithmetic on signed types
  EXPECT_EQ(sem::binary<std::uint8_t>(BinaryOp::Shr, 128, 7), 1);   // logical on unsigned ones
  EXPECT_EQ(sem::binary<std::uint32_t>(BinaryOp::Shr, 0x80000000u, 31), 1u);
  EXPECT_EQ(sem::binary<std::uint64_t>(BinaryOp::Shr, UINT64_MAX, 64), UINT64_MAX);
}

TEST(ElementSemantics, ConversionsSaturateFromFloatsAndWrapBetweenIntegers) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ((sem::cast<std::uint8_t, double>(300.7)), 255);
  EXPECT_EQ((sem::cast<std::uint8_t, double>(-5.0)), 0);
  EXPECT_EQ((sem::cast<std::uint8_t, double>(nan)), 0);
  EXPECT_EQ((sem::cast<std::int8_t, float>(-129.0f)), -128);
  EXPECT_EQ((sem::cast<std::int16_t, double>(-inf)), -32768);
  EXPECT_EQ((sem::cast<std::uint32_t, double>(4294967296.0)), UINT32_MAX);
  EXPECT_EQ((sem::cast<std::uint64_t, double>(1.8446744073709552e19)), UINT64_MAX);
  EXPECT_EQ((sem::cast<std::uint64_t, double>(9.3e18)), 9300000000000000000ull);
  EXPECT_EQ((sem::cast<std::uint8_t, std::int32_t>(-1)), 255);
  EXPECT_EQ((sem::cast<std::int8_t, std::uint16_t>(0x1ff)), -1);
  EXPECT_EQ((sem::cast<std::int64_t, std::uint32_t>(UINT32_MAX)), 4294967295ll);  // zero-extends
  EXPECT_EQ((sem::cast<std::int64_t, std::int8_t>(-1)), -1);                     // sign-extends
  EXPECT_EQ((sem::cast<double, std::uint64_t>(UINT64_MAX)), 18446744073709551616.0);
  EXPECT_EQ((sem::cast<std::uint8_t, half>(half(254.6f))), 254);  // 254.625 in f16, truncated
  EXPECT_EQ((sem::cast<std::uint8_t, half>(half(300.0f))), 255);
  EXPECT_EQ((sem::cast<std::int8_t, bfloat16>(bfloat16(-1e30f))), -128);
}

// ---- f16 and bf16 against an independent rounding -----------------------------------------------------------

/// Round-to-nearest-even of x (finite, as double) to a binary format with `mant` stored mantissa bits and the
/// smallest normal exponent `emin`, largest finite `max`: computed with nearbyint on the scaled value.
double reference_round(double x, int mant, int emin, double max) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  const double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e < emin) e = emin;  // subnormal: the quantum of the smallest binade
  const double quantum = std::ldexp(1.0, e - mant);
  double r = std::nearbyint(a / quantum) * quantum;  // the default rounding mode: ties to even
  if (r > max) r = std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}
double reference_f16(float x) { return reference_round(x, 10, -14, 65504.0); }
double reference_bf16(float x) { return reference_round(x, 7, -126, 3.3895313892515355e38); }

std::vector<float> interesting_floats() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e-8f, 5.96e-8f,
                          2.98e-8f, 2.9802322e-8f, 6.1035156e-5f, 6.1e-5f, 3.0e38f, 3.4028235e38f, 1e-40f,
                          std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  // Every f16 value, and the midpoints between neighbours (the ties) and just beside them.
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {
    const float lo = static_cast<float>(half::from_bits(static_cast<std::uint16_t>(b)));
    const float hi = static_cast<float>(half::from_bits(static_cast<std::uint16_t>(b + 1)));
    const float mid = (lo + hi) / 2;
    for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      v.push_back(f);
      v.push_back(-f);
    }
  }
  std::mt19937 rng(19);
  for (int k = 0; k < 200000; ++k) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  return v;
}

TEST(HalfConversions, RoundToNearestEvenLikeAnIndependentReference) {
  for (float x : interesting_floats()) {
    const float h = static_cast<float>(half(x)), b = static_cast<float>(bfloat16(x));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(h) && std::isnan(b)) << x;
      EXPECT_EQ(std::signbit(h), std::signbit(x));
      continue;
    }
    const double rh = reference_f16(x), rb = reference_bf16(x);
    ASSERT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(h)), std::bit_cast<std::uint64_t>(rh))
        << "f16 of " << x << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
    ASSERT_EQ(std::bit_cast<std::uint64_t>(static_cast<double>(b)), std::bit_cast<std::uint64_t>(rb))
        << "bf16 of " << x << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x) << ")";
  }
}

TEST(HalfConversions, EveryPatternWidensExactlyAndRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = static_cast<float>(half::from_bits(bits)), f = static_cast<float>(bfloat16::from_bits(bits));
    if (std::isnan(h)) {
      EXPECT_EQ((b & 0x7c00u), 0x7c00u);
      EXPECT_EQ(half(h).bits & 0x7e00u, 0x7e00u) << b;  // quiet NaN out
    } else {
      EXPECT_EQ(half(h).bits, bits) << b;
    }
    if (!std::isnan(f)) {
      EXPECT_EQ(bfloat16(f).bits, bits) << b;
    }
  }
  EXPECT_EQ(half(1.0f).bits, 0x3c00);
  EXPECT_EQ(half(-2.0f).bits, 0xc000);
  EXPECT_EQ(half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(half(-0.0f).bits, 0x8000);
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16(1.00390625f).bits, 0x3f80);  // a tie: to the even neighbour
  EXPECT_EQ(bfloat16(1.01171875f).bits, 0x3f82);  // a tie: to the even neighbour, up
}

// ---- kernels: CPU against the interpreter and against the definition --------------------------------------

const std::int64_t kSizes[] = {0, 1, 2, 7, 13, 1021, 100003};

Options on(Target t) {
  Options o;
  o.target = t;
  return o;
}

template <class T>
std::vector<T> values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  using L = std::numeric_limits<T>;
  const T edges[] = {T(0), T(1), static_cast<T>(-1), L::max(), L::min(), static_cast<T>(L::min() + 1),
                     static_cast<T>(sizeof(T) * 8), static_cast<T>(sizeof(T) * 8 - 1), T(2), T(3)};
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i % 3 == 0 ? edges[rng() % 10] : static_cast<T>(rng());
  return v;
}

/// Every operator on T, element by element, into 16 output rows; comparisons into 6 bool rows.
template <class T>
void check_integer_kernel() {
  const auto& fn = elemtest::int_ops<T>;
  auto cpu = jit("int_ops", fn, on(Target::cpu));
  auto ref = jit("int_ops", fn, on(Target::interpreter));
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Shl,
                          BinaryOp::Shr, BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::Min, BinaryOp::Max};
  const BinaryOp cmps[] = {BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge, BinaryOp::Eq, BinaryOp::Ne};
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << name_of(dtype_of<T>()) << " n=" << n);
    const auto a = values<T>(static_cast<std::size_t>(n), 1), b = values<T>(static_cast<std::size_t>(n), 2);
    NDArray<T> o1({16, n}), o2({16, n});
    NDArray<bool> c1({6, n}), c2({6, n});
    cpu(a, b, o1, c1);
    ref(a, b, o2, c2);
    for (std::int64_t i = 0; i < n; ++i) {
      const T x = a[static_cast<std::size_t>(i)], y = b[static_cast<std::size_t>(i)];
      T want[16];
      for (int k = 0; k < 12; ++k) want[k] = sem::binary<T>(ops[k], x, y);
      want[12] = sem::unary<T>(UnaryOp::Neg, x);
      want[13] = sem::unary<T>(UnaryOp::BitNot, x);
      want[14] = sem::call<T>(Intrinsic::Abs, x);
      want[15] = sem::cast<T, double>(static_cast<double>(x) * 1.5 - 3.0);
      for (int k = 0; k < 16; ++k) {
        ASSERT_EQ(o1(k, i), want[k]) << "cpu row " << k << " at " << i << " x=" << +x << " y=" << +y;
        ASSERT_EQ(o2(k, i), want[k]) << "interpreter row " << k << " at " << i;
      }
      for (int k = 0; k < 6; ++k) {
        ASSERT_EQ(c1(k, i), sem::compare<T>(cmps[k], x, y)) << "cpu comparison " << k << " at " << i;
        ASSERT_EQ(c2(k, i), sem::compare<T>(cmps[k], x, y)) << "interpreter comparison " << k << " at " << i;
      }
    }
  }
}

TEST(ElementKernels, UInt8EveryOperator) { check_integer_kernel<std::uint8_t>(); }
TEST(ElementKernels, UInt16EveryOperator) { check_integer_kernel<std::uint16_t>(); }
TEST(ElementKernels, UInt32EveryOperator) { check_integer_kernel<std::uint32_t>(); }
TEST(ElementKernels, UInt64EveryOperator) { check_integer_kernel<std::uint64_t>(); }
TEST(ElementKernels, Int8EveryOperator) { check_integer_kernel<std::int8_t>(); }
TEST(ElementKernels, Int16EveryOperator) { check_integer_kernel<std::int16_t>(); }

TEST(ElementKernels, MixedSignednessComparesValues) {
  const auto& fn = elemtest::mixed_compare;
  auto cpu = jit("mixed_compare", fn, on(Target::cpu));
  auto ref = jit("mixed_compare", fn, on(Target::interpreter));
  const std::vector<std::uint64_t> u = {0, 1, UINT64_MAX, 5, 1ull << 63, 7};
  const std::vector<std::int64_t> s = {-1, 1, -1, 6, INT64_MIN, 7};
  const std::vector<std::uint32_t> w = {0, UINT32_MAX, 3, 5, 2147483648u, 1};
  const std::vector<std::int32_t> t = {-1, -1, 3, 6, INT32_MIN, 0};
  for (auto& k : {cpu, ref}) {
    NDArray<bool> o({6, 6});
    k(u, s, w, t, o);
    for (int i = 0; i < 6; ++i) {
      const auto ui = static_cast<__int128>(u[static_cast<std::size_t>(i)]), si = static_cast<__int128>(s[static_cast<std::size_t>(i)]);
      EXPECT_EQ(o(0, i), ui < si) << i;
      EXPECT_EQ(o(1, i), si <= ui) << i;
      EXPECT_EQ(o(2, i), ui == si) << i;
      EXPECT_EQ(o(3, i), static_cast<std::int64_t>(w[static_cast<std::size_t>(i)]) > t[static_cast<std::size_t>(i)]) << i;
      EXPECT_FALSE(o(4, i)) << i;
      EXPECT_TRUE(o(5, i)) << i;
    }
  }
}

TEST(ElementKernels, SmallIntegerSumsAccumulateIn64Bits) {
  auto fn = [](Array<std::uint8_t> a, Array<std::int8_t> b) { return std::pair{kiln::sum(a), kiln::sum(b)}; };
  auto cpu = jit("small_sums", fn, on(Target::cpu));
  auto ref = jit("small_sums", fn, on(Target::interpreter));
  for (std::int64_t n : kSizes) {
    std::vector<std::uint8_t> a(static_cast<std::size_t>(n), 255);
    std::vector<std::int8_t> b(static_cast<std::size_t>(n), -128);
    const auto [s1, t1] = cpu(a, b);
    const auto [s2, t2] = ref(a, b);
    static_assert(std::is_same_v<decltype(s1), const std::uint64_t>);
    static_assert(std::is_same_v<decltype(t1), const std::int64_t>);
    EXPECT_EQ(s1, 255u * static_cast<std::uint64_t>(n));
    EXPECT_EQ(t1, -128 * n);
    EXPECT_EQ(s2, s1);
    EXPECT_EQ(t2, t1);
  }
}

/// f16 and bf16: stored as 2 bytes, arithmetic in f32 rounded once per operation, NaN/±0/±inf kept.
template <class H>
void check_half_kernel() {
  const auto& fn = elemtest::half_ops<H>;
  auto cpu = jit("half_ops", fn, on(Target::cpu));
  auto ref = jit("half_ops", fn, on(Target::interpreter));
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << name_of(dtype_of<H>()) << " n=" << n);
    const auto [a, b] = elemtest::half_inputs<H>(n, 5);
    NDArray<H> o1({8, n}), o2({8, n});
    NDArray<float> w1({n}), w2({n});
    NDArray<std::uint8_t> u1({n}), u2({n});
    cpu(a, b, o1, w1, u1);
    ref(a, b, o2, w2, u2);
    for (std::int64_t i = 0; i < n; ++i) {
      const float x = static_cast<float>(a[static_cast<std::size_t>(i)]), y = static_cast<float>(b[static_cast<std::size_t>(i)]);
      const float want[8] = {x + y, x * y, x / y, std::sqrt(x), sem::float_min(x, y), -x,
                             static_cast<float>(static_cast<double>(x) * 3.0), x < y ? x : y};
      for (int k = 0; k < 8; ++k) {
        const H w = H(want[k]);
        const bool nan_row = std::isnan(static_cast<float>(w));
        EXPECT_TRUE(nan_row ? std::isnan(static_cast<float>(o1(k, i))) : o1(k, i).bits == w.bits)
            << "cpu row " << k << " at " << i << ": x=" << x << " y=" << y;
        EXPECT_TRUE(nan_row ? std::isnan(static_cast<float>(o2(k, i))) : o2(k, i).bits == w.bits)
            << "interpreter row " << k << " at " << i;
        if (::testing::Test::HasFailure()) return;
      }
      const float ww = x + 0.5f;
      EXPECT_TRUE(std::isnan(ww) ? std::isnan(w1(i)) && std::isnan(w2(i)) : w1(i) == ww && w2(i) == ww) << i;
      EXPECT_EQ(u1(i), (sem::cast<std::uint8_t, float>(x))) << i;
      EXPECT_EQ(u2(i), u1(i)) << i;
    }
  }
}

TEST(ElementKernels, Float16StoredAsTwoBytesComputedInF32) { check_half_kernel<half>(); }
TEST(ElementKernels, BFloat16StoredAsTwoBytesComputedInF32) { check_half_kernel<bfloat16>(); }

TEST(ElementKernels, HalfReductionsAccumulateInF32) {
  auto fn = [](Array<half> a) { return std::tuple{kiln::sum(a), kiln::max(a), kiln::mean(a)}; };
  auto cpu = jit("half_sums", fn, on(Target::cpu));
  auto ref = jit("half_sums", fn, on(Target::interpreter));
  // 4096 ones: an f16 running sum would stop at 2048 (2048 + 1 rounds back to 2048).
  const std::vector<half> a(4096, half(1.0f));
  const auto [s1, m1, avg1] = cpu(a);
  const auto [s2, m2, avg2] = ref(a);
  static_assert(std::is_same_v<decltype(s1), const float>);
  EXPECT_EQ(s1, 4096.0f);
  EXPECT_EQ(s2, 4096.0f);
  EXPECT_EQ(m1, 1.0f);
  EXPECT_EQ(m2, 1.0f);
  EXPECT_EQ(avg1, 1.0f);
  EXPECT_EQ(avg2, 1.0f);
}

TEST(ElementKernels, HalfAccumulatorInAPrangeIsRefused) {
  // Each update would round to f16 and the order would matter: not a reduction kiln parallelizes.
  auto k = jit("half_acc", [](Array<half> x) {
    Half s = 0.0f;
    prange(x.shape(0), [&](Int i) { s += x[i]; });
    return s;
  }, on(Target::interpreter));
  const std::vector<half> x(8, half(1.0f));
  EXPECT_THROW(k(x), TraceError);
}

TEST(ElementKernels, ScalarArgumentsAndResultsOfEveryType) {
  auto fn = [](UInt8 a, Int16 b, UInt64 c, Half h) { return std::tuple{a + 1, b * 2, c >> 1, h * 2.0}; };
  auto cpu = jit("scalars", fn, on(Target::cpu));
  auto ref = jit("scalars", fn, on(Target::interpreter));
  for (auto& k : {cpu, ref}) {
    const auto [a, b, c, h] = k(std::uint8_t{255}, std::int16_t{-20000}, UINT64_MAX, half(1.5f));
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, static_cast<std::int16_t>(-40000));
    EXPECT_EQ(c, UINT64_MAX >> 1);
    EXPECT_EQ(h.bits, half(3.0f).bits);
  }
  // Values are checked against the parameter's type at the call.
  EXPECT_THROW(cpu(300, std::int16_t{0}, std::uint64_t{0}, half(0.0f)), TypeError);
  EXPECT_THROW(cpu(-1, std::int16_t{0}, std::uint64_t{0}, half(0.0f)), TypeError);
  EXPECT_THROW(cpu(1, std::int16_t{0}, -1, half(0.0f)), TypeError);
  EXPECT_NO_THROW(cpu(1, 5, 7u, 2.5f));  // fitting values of other types convert
}

TEST(ElementKernels, ByteHistogramsInEveryCounterType) {
  std::mt19937 rng(7);
  for (std::int64_t n : kSizes) {
    std::vector<std::uint8_t> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = static_cast<std::uint8_t>(rng() % 7 == 0 ? 255 : rng());
    std::vector<std::int64_t> want(256, 0);
    for (auto v : x) ++want[v];
    auto check = [&](auto counter) {
      using C = decltype(counter);
      for (Target t : {Target::cpu, Target::interpreter}) {
        std::vector<C> hist(256, C(0));
        jit("byte_histogram", elemtest::byte_histogram<C>, on(t))(x, hist);
        for (int k = 0; k < 256; ++k)
          ASSERT_EQ(static_cast<std::int64_t>(hist[static_cast<std::size_t>(k)]),
                    static_cast<std::int64_t>(static_cast<C>(want[static_cast<std::size_t>(k)])))  // wrapped to C
              << name_of(dtype_of<C>()) << " n=" << n << " bin " << k;
      }
    };
    check(std::uint8_t{});
    check(std::uint16_t{});
    check(std::int16_t{});
    check(std::uint32_t{});
    check(std::uint64_t{});
  }
}

TEST(ElementKernels, WholeAndAxisReductionsOfSmallTypes) {
  for (std::int64_t rows : {1, 3, 17}) {
    for (std::int64_t cols : {1, 2, 13, 1021}) {
      NDArray<std::uint8_t> a({rows, cols});
      NDArray<std::int16_t> b({rows, cols});
      NDArray<half> h({rows, cols});
      std::mt19937 rng(static_cast<unsigned>(rows * cols));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          a(r, c) = static_cast<std::uint8_t>(rng());
          b(r, c) = static_cast<std::int16_t>(rng());
          h(r, c) = half(static_cast<float>(rng() % 2001) / 100.0f - 10.0f);
        }
      const auto [s1, m1, hs1, rs1, cm1, hm1] = jit("small_reductions", elemtest::small_reductions, on(Target::cpu))(a, b, h);
      const auto [s2, m2, hs2, rs2, cm2, hm2] =
          jit("small_reductions", elemtest::small_reductions, on(Target::interpreter))(a, b, h);
      std::uint64_t s = 0;
      std::int16_t m = INT16_MIN;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          s += a(r, c);
          m = std::max(m, b(r, c));
        }
      EXPECT_EQ(s1, s);
      EXPECT_EQ(s2, s);
      EXPECT_EQ(m1, m);
      EXPECT_EQ(m2, m);
      EXPECT_NEAR(hs1, hs2, 1e-3 * static_cast<double>(rows * cols));  // f32 sums in blocks vs in order
      for (std::int64_t r = 0; r < rows; ++r) {
        EXPECT_EQ(rs1(r), rs2(r));
        EXPECT_NEAR(hm1(r), hm2(r), 1e-4);
      }
      for (std::int64_t c = 0; c < cols; ++c) EXPECT_EQ(cm1(c), cm2(c));
    }
  }
}

/// kiln::sort/argsort of the newer types on the CPU (radix sort) and the interpreter, against std::stable_sort
/// by the types' order (f16: NaN last, -0 == +0).
template <class T, class Less>
void check_sort(const std::vector<T>& x, Less less) {
  std::vector<std::int64_t> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<std::int64_t>(i);
  std::stable_sort(want.begin(), want.end(), [&](std::int64_t a, std::int64_t b) {
    return less(x[static_cast<std::size_t>(a)], x[static_cast<std::size_t>(b)]);
  });
  for (Target t : {Target::cpu, Target::interpreter}) {
    const auto [sorted, order] =
        jit("sort_types", [](Array<T> a) { return std::pair{kiln::sort(a), kiln::argsort(a)}; }, on(t))(x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto k = static_cast<std::int64_t>(i);
      ASSERT_EQ(order(k), want[i]) << name_of(dtype_of<T>()) << " " << name_of(t) << " at " << i;
      ASSERT_EQ(std::memcmp(&sorted(k), &x[static_cast<std::size_t>(want[i])], sizeof(T)), 0) << i;
    }
  }
}

TEST(ElementKernels, SortsOfEveryNewType) {
  for (std::int64_t n : {0, 1, 13, 100003}) {
    std::mt19937_64 rng(static_cast<unsigned>(n));
    std::vector<std::uint8_t> u8(static_cast<std::size_t>(n));
    std::vector<std::int16_t> i16(static_cast<std::size_t>(n));
    std::vector<std::uint64_t> u64(static_cast<std::size_t>(n));
    std::vector<std::int8_t> i8(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < u8.size(); ++i) {
      u8[i] = static_cast<std::uint8_t>(rng());
      i16[i] = static_cast<std::int16_t>(rng() % 50);  // many equal keys: stability shows
      u64[i] = rng() % 3 == 0 ? UINT64_MAX - rng() % 4 : rng();
      i8[i] = static_cast<std::int8_t>(rng());
    }
    auto plain = [](auto a, auto b) { return a < b; };
    check_sort(u8, plain);
    check_sort(i16, plain);
    check_sort(u64, plain);
    check_sort(i8, plain);
    auto by_value = [](auto a, auto b) {
      const float x = static_cast<float>(a), y = static_cast<float>(b);
      return x < y || (std::isnan(y) && !std::isnan(x));
    };
    const auto [h, hb] = elemtest::half_inputs<half>(n, 9);
    check_sort(h, by_value);
    const auto [b, bb] = elemtest::half_inputs<bfloat16>(n, 10);
    check_sort(b, by_value);
  }
}

// ---- IR: printing, serialization, the cache key ---------------------------------------------------------

TEST(ElementIR, ConstantsPrintSerializeAndKeyByType) {
  using namespace kiln::ir;
  const DType types[] = {DType::U8, DType::U16, DType::U32, DType::U64, DType::I8, DType::I16, DType::F16, DType::BF16};
  std::vector<std::string> keys;
  for (DType t : types) {
    const Var out = make_var("out", Type::array(t, 1, true), VarKind::Param);
    const Var i = make_var("i", Type::scalar(DType::I64), VarKind::Index);
    const Expr value = is_float(t) ? make_float(t, 1.5) : make_int(t, -1);
    Function f;
    f.name = "k";
    f.params = {out};
    f.body = make_parfor({i}, {make_i64(0)}, {make_dim(out, 0)}, make_store(out, {make_ref(i)}, value), {}, "test");
    const std::string text = to_string(f);
    EXPECT_NE(text.find(std::string(name_of(t))), std::string::npos) << text;
    const Function back = deserialize(serialize(f));
    EXPECT_EQ(to_string(back), text);
    keys.push_back(structural_hash(f).hex());
  }
  // Literals are wrapped to their type: u8's -1 is 255, u64's is 2^64 - 1.
  EXPECT_EQ(ir::to_string(ir::make_int(DType::U8, -1)), "255u8");
  EXPECT_EQ(ir::to_string(ir::make_int(DType::U64, -1)), "18446744073709551615u64");
  EXPECT_EQ(ir::to_string(ir::make_float(DType::F16, 0.1)), "0.099975586f16");
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::unique(keys.begin(), keys.end()), keys.end()) << "two element types gave one cache key";
}

TEST(ElementIR, ArithmeticOnHalvesIsBuiltInF32) {
  using namespace kiln::ir;
  const Var x = make_var("x", Type::scalar(DType::F16), VarKind::Param);
  const Expr sum = make_binary(BinaryOp::Add, make_ref(x), make_ref(x));
  EXPECT_EQ(sum->type, DType::F16);
  EXPECT_EQ(to_string(sum), "f16((f32(x) + f32(x)))");
  EXPECT_THROW(make_reduce(make_var("s", Type::scalar(DType::F16), VarKind::Local), ReduceOp::Add,
                           {make_var("i", Type::scalar(DType::I64), VarKind::Index)}, {make_i64(4)}, make_ref(x), "t"),
               IRError);
}

}  // namespace
