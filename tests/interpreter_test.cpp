// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ir::interpret on hand-built IR: the executable definition of kiln's arithmetic (ir/semantics.hpp) and of
// loops, reductions, allocation, bounds checks and the calling convention (kiln/abi.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "ir/verifier.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln {
namespace {

using ir::Expr;
using ir::Stmt;
using ir::Var;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

// ---- IR construction shorthands: the shared ones (tools/test_support), then those only these tests use ------

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

Expr f64c(double v) { return ir::make_float(DType::F64, v); }
Expr add(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr load(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }
// Explicit begins, unlike test_support::parfor (which starts every index at 0).
Stmt parfor(std::vector<Var> idx, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
            std::vector<ir::Reduction> red = {}) {
  return ir::make_parfor(std::move(idx), std::move(begins), std::move(ends), std::move(body), std::move(red), "test");
}

/// test_support::function, then verified: every function the tests run is well formed (the interpreter does
/// not verify).
ir::Function function(std::string name, std::vector<Var> params, std::vector<Stmt> body, Expr result = nullptr,
                      Var result_array = nullptr) {
  ir::Function f = test_support::function(std::move(name), std::move(params), std::move(body), std::move(result),
                                          std::move(result_array));
  const auto problems = ir::verify(f);
  EXPECT_TRUE(problems.empty()) << problems.front() << "\n" << ir::to_string(f);
  return f;
}

/// A 1..4-d strided view of user memory, as a kernel receives it.
template <class T>
ArrayDesc desc(T* data, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
  ArrayDesc d;
  d.data = data;
  const int rank = static_cast<int>(shape.size());
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (int k = rank - 2; k >= 0; --k) strides[k] = strides[k + 1] * shape[k + 1];
  }
  for (int k = 0; k < rank; ++k) {
    d.shape[k] = shape[k];
    d.strides[k] = strides[k];
  }
  return d;
}

template <class T>
T scalar_result(const ir::Function& f, std::vector<void*> args) {
  ScalarSlot out;
  std::memset(&out, 0xCD, sizeof out);
  ir::interpret(f, args.data(), &out);
  T r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}

/// a (op) b computed by the interpreter from two parameters.
template <class T>
T binop(BinaryOp op, T a, T b) {
  const Var pa = param("a", dtype_of<T>()), pb = param("b", dtype_of<T>());
  return scalar_result<T>(function("binop", {pa, pb}, {}, bin(op, val(pa), val(pb))), {&a, &b});
}
template <class T>
bool compare(BinaryOp op, T a, T b) {
  const Var pa = param("a", dtype_of<T>()), pb = param("b", dtype_of<T>());
  return scalar_result<bool>(function("cmp", {pa, pb}, {}, bin(op, val(pa), val(pb))), {&a, &b});
}
template <class T>
T unop(UnaryOp op, T a) {
  const Var pa = param("a", dtype_of<T>());
  return scalar_result<T>(function("unop", {pa}, {}, ir::make_unary(op, val(pa))), {&a});
}
template <class To, class From>
To convert(From x) {
  const Var p = param("x", dtype_of<From>());
  return scalar_result<To>(function("cast", {p}, {}, ir::make_cast(dtype_of<To>(), val(p))), {&x});
}
template <class T>
T intrinsic(Intrinsic fn, std::vector<T> args) {
  std::vector<Var> ps;
  std::vector<Expr> refs;
  std::vector<void*> ptrs;
  for (size_t k = 0; k < args.size(); ++k) {
    ps.push_back(param("a" + std::to_string(k), dtype_of<T>()));
    refs.push_back(val(ps.back()));
    ptrs.push_back(&args[k]);
  }
  return scalar_result<T>(function("call", ps, {}, ir::make_call(fn, refs)), ptrs);
}
template <class T>
bool predicate(Intrinsic fn, T a) {
  const Var p = param("a", dtype_of<T>());
  return scalar_result<bool>(function("pred", {p}, {}, ir::make_call(fn, {val(p)})), {&a});
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// =========================================================================================================
// Integer arithmetic
// =========================================================================================================

template <class T>
class IntegerSemantics : public ::testing::Test {};
using IntTypes = ::testing::Types<std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(IntegerSemantics, IntTypes);

TYPED_TEST(IntegerSemantics, DivisionIsTotal) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  EXPECT_EQ(binop<T>(BinaryOp::Div, 7, 0), 0);
  EXPECT_EQ(binop<T>(BinaryOp::Div, -7, 0), 0);
  EXPECT_EQ(binop<T>(BinaryOp::Div, kMin, 0), 0);
  EXPECT_EQ(binop<T>(BinaryOp::Div, kMin, -1), kMin);  // wraps instead of trapping
  EXPECT_EQ(binop<T>(BinaryOp::Div, kMax, -1), -kMax);
  EXPECT_EQ(binop<T>(BinaryOp::Div, 7, 2), 3);   // truncating
  EXPECT_EQ(binop<T>(BinaryOp::Div, -7, 2), -3);
  EXPECT_EQ(binop<T>(BinaryOp::Div, 7, -2), -3);
  EXPECT_EQ(binop<T>(BinaryOp::Div, kMin, 1), kMin);
  EXPECT_EQ(binop<T>(BinaryOp::Div, kMin, 2), kMin / 2);
}

TYPED_TEST(IntegerSemantics, ModuloIsTotal) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  EXPECT_EQ(binop<T>(BinaryOp::Mod, 7, 0), 7);  // x % 0 == x
  EXPECT_EQ(binop<T>(BinaryOp::Mod, -7, 0), -7);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, kMin, 0), kMin);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, kMin, -1), 0);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, 7, -1), 0);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, -7, 3), -1);  // sign of the dividend
  EXPECT_EQ(binop<T>(BinaryOp::Mod, 7, -3), 1);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, -7, -3), -1);
  EXPECT_EQ(binop<T>(BinaryOp::Mod, 9, 3), 0);
}

TYPED_TEST(IntegerSemantics, Shifts) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T bits = sizeof(T) * 8;
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 1, 3), 8);
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 1, bits - 1), kMin);
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 1, bits), 1);          // the count is taken modulo the width
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 1, bits + 1), 2);
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 3, 2 * bits + 2), 12);
  EXPECT_EQ(binop<T>(BinaryOp::Shl, 1, -1), kMin);          // -1 mod width == width - 1
  EXPECT_EQ(binop<T>(BinaryOp::Shl, -1, 1), -2);
  EXPECT_EQ(binop<T>(BinaryOp::Shr, -8, 1), -4);            // arithmetic
  EXPECT_EQ(binop<T>(BinaryOp::Shr, -1, bits - 1), -1);
  EXPECT_EQ(binop<T>(BinaryOp::Shr, kMin, bits - 1), -1);
  EXPECT_EQ(binop<T>(BinaryOp::Shr, 64, bits + 2), 16);
  EXPECT_EQ(binop<T>(BinaryOp::Shr, 64, -2), 0);            // count width - 2
  EXPECT_EQ(binop<T>(BinaryOp::Shr, kMin, -2), -2);
}

TYPED_TEST(IntegerSemantics, WrappingArithmetic) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  EXPECT_EQ(binop<T>(BinaryOp::Add, kMax, 1), kMin);
  EXPECT_EQ(binop<T>(BinaryOp::Add, kMin, -1), kMax);
  EXPECT_EQ(binop<T>(BinaryOp::Sub, kMin, 1), kMax);
  EXPECT_EQ(binop<T>(BinaryOp::Sub, 0, kMin), kMin);
  EXPECT_EQ(binop<T>(BinaryOp::Mul, kMax, 2), -2);
  EXPECT_EQ(binop<T>(BinaryOp::Mul, kMin, -1), kMin);
  const T half = static_cast<T>(T(1) << (sizeof(T) * 4));  // 2^(bits/2)
  EXPECT_EQ(binop<T>(BinaryOp::Mul, half, half), 0);
  EXPECT_EQ(unop<T>(UnaryOp::Neg, kMin), kMin);
  EXPECT_EQ(unop<T>(UnaryOp::Neg, 5), -5);
  EXPECT_EQ(unop<T>(UnaryOp::Neg, kMax), kMin + 1);
  EXPECT_EQ(unop<T>(UnaryOp::BitNot, 0), -1);
  EXPECT_EQ(unop<T>(UnaryOp::BitNot, kMax), kMin);
  EXPECT_EQ(intrinsic<T>(Intrinsic::Abs, {kMin}), kMin);  // abs of the most negative value is itself
  EXPECT_EQ(intrinsic<T>(Intrinsic::Abs, {-5}), 5);
  EXPECT_EQ(intrinsic<T>(Intrinsic::Abs, {kMax}), kMax);
}

TYPED_TEST(IntegerSemantics, BitwiseMinMaxAndComparisons) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  EXPECT_EQ(binop<T>(BinaryOp::BitAnd, 12, 10), 8);
  EXPECT_EQ(binop<T>(BinaryOp::BitOr, 12, 10), 14);
  EXPECT_EQ(binop<T>(BinaryOp::BitXor, 12, 10), 6);
  EXPECT_EQ(binop<T>(BinaryOp::Min, -3, 2), -3);
  EXPECT_EQ(binop<T>(BinaryOp::Max, -3, 2), 2);
  EXPECT_EQ(binop<T>(BinaryOp::Min, kMin, 0), kMin);
  EXPECT_TRUE(compare<T>(BinaryOp::Lt, kMin, 0));  // signed comparison
  EXPECT_FALSE(compare<T>(BinaryOp::Gt, kMin, 0));
  EXPECT_TRUE(compare<T>(BinaryOp::Le, 3, 3));
  EXPECT_TRUE(compare<T>(BinaryOp::Ge, 3, 3));
  EXPECT_FALSE(compare<T>(BinaryOp::Ne, 3, 3));
  EXPECT_TRUE(compare<T>(BinaryOp::Eq, -1, -1));
}

// =========================================================================================================
// Floating point
// =========================================================================================================

template <class T>
class FloatSemantics : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatSemantics, FloatTypes);

TYPED_TEST(FloatSemantics, MinMaxPropagateNaNAndOrderSignedZeros) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Min, nan, 1)));
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Min, 1, nan)));
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Max, nan, 1)));
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Max, 1, nan)));
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Max, nan, -std::numeric_limits<T>::infinity())));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Min, T(-0.0), T(0.0)), T(-0.0)));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Min, T(0.0), T(-0.0)), T(-0.0)));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Max, T(-0.0), T(0.0)), T(0.0)));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Max, T(0.0), T(-0.0)), T(0.0)));
  EXPECT_EQ(binop<T>(BinaryOp::Min, T(-2.5), T(1)), T(-2.5));
  EXPECT_EQ(binop<T>(BinaryOp::Max, T(-2.5), T(1)), T(1));
}

TYPED_TEST(FloatSemantics, IeeeArithmetic) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_EQ(binop<T>(BinaryOp::Div, 1, 0), inf);
  EXPECT_EQ(binop<T>(BinaryOp::Div, -1, 0), -inf);
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Div, 0, 0)));
  EXPECT_EQ(binop<T>(BinaryOp::Mod, T(-7.5), T(2)), T(-1.5));  // fmod: sign of the dividend
  EXPECT_EQ(binop<T>(BinaryOp::Mod, T(7.5), T(-2)), T(1.5));
  EXPECT_TRUE(std::isnan(binop<T>(BinaryOp::Mod, 1, 0)));
  EXPECT_TRUE(same_bits(unop<T>(UnaryOp::Neg, T(0)), T(-0.0)));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Add, T(-0.0), T(0.0)), T(0.0)));
  EXPECT_TRUE(same_bits(binop<T>(BinaryOp::Sub, T(-0.0), T(0.0)), T(-0.0)));
}

TYPED_TEST(FloatSemantics, ComparisonsWithNaN) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (auto op : {BinaryOp::Eq, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge}) {
    EXPECT_FALSE(compare<T>(op, nan, nan)) << ir::name_of(op);
    EXPECT_FALSE(compare<T>(op, nan, 1)) << ir::name_of(op);
    EXPECT_FALSE(compare<T>(op, 1, nan)) << ir::name_of(op);
  }
  EXPECT_TRUE(compare<T>(BinaryOp::Ne, nan, nan));
  EXPECT_TRUE(compare<T>(BinaryOp::Ne, nan, 1));
  EXPECT_TRUE(compare<T>(BinaryOp::Eq, T(-0.0), T(0.0)));
}

TYPED_TEST(FloatSemantics, Intrinsics) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  // The interpreter calls the C library in the operand's precision: compare within 1 ulp-ish (4 ulps).
  auto near = [](T got, T want) {
    if constexpr (std::is_same_v<T, float>) EXPECT_FLOAT_EQ(got, want);
    else EXPECT_DOUBLE_EQ(got, want);
  };
  EXPECT_EQ(intrinsic<T>(Intrinsic::Sqrt, {T(16)}), T(4));
  EXPECT_TRUE(std::isnan(intrinsic<T>(Intrinsic::Sqrt, {T(-1)})));
  near(intrinsic<T>(Intrinsic::Exp, {T(1)}), std::exp(T(1)));
  near(intrinsic<T>(Intrinsic::Log, {T(10)}), std::log(T(10)));
  near(intrinsic<T>(Intrinsic::Sin, {T(0.5)}), std::sin(T(0.5)));
  near(intrinsic<T>(Intrinsic::Atan2, {T(1), T(-1)}), std::atan2(T(1), T(-1)));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Pow, {T(2), T(10)}), T(1024));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Fma, {T(2), T(3), T(4)}), T(10));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Copysign, {T(3), T(-0.0)}), T(-3));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Abs, {T(-2.5)}), T(2.5));
  EXPECT_TRUE(same_bits(intrinsic<T>(Intrinsic::Abs, {T(-0.0)}), T(0.0)));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Floor, {T(-2.5)}), T(-3));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Ceil, {T(-2.5)}), T(-2));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Round, {T(2.5)}), T(3));    // half away from zero
  EXPECT_EQ(intrinsic<T>(Intrinsic::Round, {T(-2.5)}), T(-3));
  EXPECT_EQ(intrinsic<T>(Intrinsic::Trunc, {T(-2.7)}), T(-2));
  EXPECT_TRUE(predicate<T>(Intrinsic::IsNan, nan));
  EXPECT_FALSE(predicate<T>(Intrinsic::IsNan, inf));
  EXPECT_TRUE(predicate<T>(Intrinsic::IsInf, -inf));
  EXPECT_FALSE(predicate<T>(Intrinsic::IsInf, nan));
  EXPECT_TRUE(predicate<T>(Intrinsic::IsFinite, T(1)));
  EXPECT_FALSE(predicate<T>(Intrinsic::IsFinite, nan));
  EXPECT_FALSE(predicate<T>(Intrinsic::IsFinite, inf));
}

TEST(FloatSemantics, F32ArithmeticRoundsToFloat) {
  // 2^24 + 1 is not a float: f32 arithmetic must not be carried out in double.
  EXPECT_EQ(binop<float>(BinaryOp::Add, 16777216.0f, 1.0f), 16777216.0f);
  EXPECT_EQ(binop<double>(BinaryOp::Add, 16777216.0, 1.0), 16777217.0);
  EXPECT_EQ(binop<float>(BinaryOp::Div, 1.0f, 3.0f), 1.0f / 3.0f);
  EXPECT_EQ(binop<float>(BinaryOp::Mul, 3.0e38f, 10.0f), kInff);  // overflows in float
}

// =========================================================================================================
// Conversions
// =========================================================================================================

TEST(Conversions, FloatToIntSaturatesAndNaNIsZero) {
  EXPECT_EQ((convert<std::int32_t, double>(2.9)), 2);
  EXPECT_EQ((convert<std::int32_t, double>(-2.9)), -2);
  EXPECT_EQ((convert<std::int32_t, double>(1e10)), INT32_MAX);
  EXPECT_EQ((convert<std::int32_t, double>(-1e10)), INT32_MIN);
  EXPECT_EQ((convert<std::int32_t, double>(2147483647.9)), INT32_MAX);
  EXPECT_EQ((convert<std::int32_t, double>(2147483648.0)), INT32_MAX);
  EXPECT_EQ((convert<std::int32_t, double>(-2147483648.9)), INT32_MIN);
  EXPECT_EQ((convert<std::int32_t, double>(kInf)), INT32_MAX);
  EXPECT_EQ((convert<std::int32_t, double>(-kInf)), INT32_MIN);
  EXPECT_EQ((convert<std::int32_t, double>(kNaN)), 0);
  EXPECT_EQ((convert<std::int32_t, double>(-kNaN)), 0);
  EXPECT_EQ((convert<std::int32_t, float>(3e9f)), INT32_MAX);
  EXPECT_EQ((convert<std::int32_t, float>(kNaNf)), 0);
  EXPECT_EQ((convert<std::int64_t, double>(9223372036854775808.0)), INT64_MAX);  // 2^63
  EXPECT_EQ((convert<std::int64_t, double>(-9223372036854775808.0)), INT64_MIN);
  EXPECT_EQ((convert<std::int64_t, double>(9223372036854774784.0)), 9223372036854774784LL);  // largest below 2^63
  EXPECT_EQ((convert<std::int64_t, double>(1e300)), INT64_MAX);
  EXPECT_EQ((convert<std::int64_t, double>(kNaN)), 0);
  EXPECT_EQ((convert<std::int64_t, float>(-kInff)), INT64_MIN);
  EXPECT_EQ((convert<std::int64_t, float>(3e19f)), INT64_MAX);
  EXPECT_EQ((convert<std::int64_t, float>(-0.5f)), 0);
}

TEST(Conversions, IntegerNarrowingWrapsAndWideningExtends) {
  EXPECT_EQ((convert<std::int32_t, std::int64_t>((std::int64_t{1} << 32) + 5)), 5);
  EXPECT_EQ((convert<std::int32_t, std::int64_t>(0x80000000LL)), INT32_MIN);
  EXPECT_EQ((convert<std::int32_t, std::int64_t>(-1)), -1);
  EXPECT_EQ((convert<std::int32_t, std::int64_t>(INT64_MIN)), 0);
  EXPECT_EQ((convert<std::int64_t, std::int32_t>(-1)), -1);
  EXPECT_EQ((convert<std::int64_t, std::int32_t>(INT32_MIN)), INT32_MIN);
  EXPECT_EQ((convert<double, std::int64_t>((std::int64_t{1} << 53) + 1)), 9007199254740992.0);  // rounds to nearest
  EXPECT_EQ((convert<float, std::int32_t>(16777217)), 16777216.0f);
  EXPECT_EQ((convert<double, std::int32_t>(INT32_MIN)), -2147483648.0);
  EXPECT_EQ((convert<float, double>(1e300)), kInff);
  EXPECT_EQ((convert<double, float>(0.1f)), static_cast<double>(0.1f));
}

TEST(Conversions, ToBoolIsNotEqualZero) {
  EXPECT_FALSE((convert<bool, std::int32_t>(0)));
  EXPECT_TRUE((convert<bool, std::int32_t>(2)));
  EXPECT_TRUE((convert<bool, std::int32_t>(256)));  // not a truncation to the low byte
  EXPECT_TRUE((convert<bool, std::int32_t>(-1)));
  EXPECT_TRUE((convert<bool, std::int64_t>(std::int64_t{1} << 40)));
  EXPECT_FALSE((convert<bool, double>(0.0)));
  EXPECT_FALSE((convert<bool, double>(-0.0)));
  EXPECT_TRUE((convert<bool, double>(0.5)));
  EXPECT_TRUE((convert<bool, double>(kNaN)));  // NaN != 0
  EXPECT_TRUE((convert<bool, float>(kNaNf)));
  EXPECT_TRUE((convert<bool, float>(1e-45f)));  // a denormal is not zero
  EXPECT_EQ((convert<std::int32_t, bool>(true)), 1);
  EXPECT_EQ((convert<double, bool>(true)), 1.0);
  EXPECT_EQ((convert<std::int64_t, bool>(false)), 0);
}

TEST(Conversions, SemanticsHeaderAgreesWithTheInterpreter) {
  // ir/semantics.hpp is what constant folding uses: spot-check that it is the same function.
  for (double v : {0.0, -0.0, 2.5, -2.5, 1e10, -1e10, kNaN, kInf, -kInf, 2147483647.5}) {
    EXPECT_EQ((ir::sem::cast<std::int32_t, double>(v)), (convert<std::int32_t, double>(v))) << v;
    EXPECT_EQ((ir::sem::cast<bool, double>(v)), (convert<bool, double>(v))) << v;
  }
  for (std::int64_t a : {INT64_MIN, std::int64_t{-7}, std::int64_t{0}, std::int64_t{9}})
    for (std::int64_t b : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{2}, std::int64_t{65}}) {
      for (auto op : {BinaryOp::Div, BinaryOp::Mod, BinaryOp::Shl, BinaryOp::Shr, BinaryOp::Mul})
        EXPECT_EQ(ir::sem::binary<std::int64_t>(op, a, b), binop<std::int64_t>(op, a, b)) << ir::name_of(op);
    }
}

// =========================================================================================================
// Bool logic and short-circuit evaluation
// =========================================================================================================

TEST(BoolLogic, Operators) {
  for (bool a : {false, true})
    for (bool b : {false, true}) {
      EXPECT_EQ(binop<bool>(BinaryOp::And, a, b), a && b);
      EXPECT_EQ(binop<bool>(BinaryOp::Or, a, b), a || b);
      EXPECT_EQ(binop<bool>(BinaryOp::BitAnd, a, b), a && b);
      EXPECT_EQ(binop<bool>(BinaryOp::BitOr, a, b), a || b);
      EXPECT_EQ(binop<bool>(BinaryOp::BitXor, a, b), a != b);
      EXPECT_EQ(compare<bool>(BinaryOp::Eq, a, b), a == b);
      EXPECT_EQ(compare<bool>(BinaryOp::Lt, a, b), a < b);
    }
  EXPECT_TRUE(unop<bool>(UnaryOp::Not, false));
  EXPECT_FALSE(unop<bool>(UnaryOp::Not, true));
}

/// f(x: f64[:], i: i64) -> T with the given result expression.
template <class T>
T with_array(const std::function<Expr(const Var&, const Var&)>& result, std::vector<double> data, std::int64_t i) {
  const Var x = array_param("x", DType::F64), pi = param("i", DType::I64);
  ArrayDesc d = desc(data.data(), {static_cast<std::int64_t>(data.size())});
  return scalar_result<T>(function("guarded", {x, pi}, {}, result(x, pi)), {&d, &i});
}

TEST(ShortCircuit, AndDoesNotEvaluateAnOutOfBoundsLoad) {
  // i < dim(x, 0) && x[i] > 0, with i == 3 == dim: the load must not be evaluated.
  auto guarded_and = [](const Var& x, const Var& i) {
    return bin(BinaryOp::And, bin(BinaryOp::Lt, val(i), dim(x)), bin(BinaryOp::Gt, load(x, {val(i)}), f64c(0)));
  };
  EXPECT_NO_THROW(EXPECT_FALSE(with_array<bool>(guarded_and, {1, 2, 3}, 3)));
  EXPECT_TRUE(with_array<bool>(guarded_and, {1, 2, 3}, 2));
  EXPECT_FALSE(with_array<bool>(guarded_and, {1, 2, -3}, 2));
  // i >= dim(x, 0) || x[i] < 0
  auto guarded_or = [](const Var& x, const Var& i) {
    return bin(BinaryOp::Or, bin(BinaryOp::Ge, val(i), dim(x)), bin(BinaryOp::Lt, load(x, {val(i)}), f64c(0)));
  };
  EXPECT_NO_THROW(EXPECT_TRUE(with_array<bool>(guarded_or, {1, 2, 3}, 7)));
  EXPECT_FALSE(with_array<bool>(guarded_or, {1, 2, 3}, 0));
  // The control: without the guard the same load throws.
  auto unguarded = [](const Var& x, const Var& i) { return bin(BinaryOp::Gt, load(x, {val(i)}), f64c(0)); };
  EXPECT_THROW(with_array<bool>(unguarded, {1, 2, 3}, 3), IndexError);
  // And the right operand is evaluated when needed.
  auto always = [](const Var& x, const Var& i) {
    return bin(BinaryOp::And, ir::make_bool(true), bin(BinaryOp::Gt, load(x, {val(i)}), f64c(0)));
  };
  EXPECT_THROW(with_array<bool>(always, {1, 2, 3}, 3), IndexError);
}

TEST(ShortCircuit, SelectEvaluatesOnlyTheChosenOperand) {
  auto guarded = [](const Var& x, const Var& i) {
    return ir::make_select(bin(BinaryOp::Lt, val(i), dim(x)), load(x, {val(i)}), f64c(-1));
  };
  EXPECT_NO_THROW(EXPECT_EQ(with_array<double>(guarded, {1, 2, 3}, 3), -1.0));
  EXPECT_EQ(with_array<double>(guarded, {1, 2, 3}, 1), 2.0);
  auto other_way = [](const Var& x, const Var& i) {
    return ir::make_select(bin(BinaryOp::Lt, val(i), i64c(0)), f64c(-1), load(x, {val(i)}));
  };
  EXPECT_NO_THROW(EXPECT_EQ(with_array<double>(other_way, {1, 2, 3}, -5), -1.0));
  EXPECT_THROW(with_array<double>(other_way, {1, 2, 3}, 3), IndexError);
}

// =========================================================================================================
// Bounds, allocation and results
// =========================================================================================================

TEST(Bounds, OutOfRangeLoadThrowsIndexErrorNamingTheArray) {
  const Var grid = array_param("grid", DType::F64, 2), pi = param("i", DType::I64), pj = param("j", DType::I64);
  const ir::Function f = function("reader", {grid, pi, pj}, {}, load(grid, {val(pi), val(pj)}));
  std::vector<double> data(6, 1.0);
  ArrayDesc d = desc(data.data(), {2, 3});
  auto run = [&](std::int64_t i, std::int64_t j) { return scalar_result<double>(f, {&d, &i, &j}); };
  EXPECT_EQ(run(1, 2), 1.0);
  try {
    run(1, 3);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'reader'"), std::string::npos) << m;
    EXPECT_NE(m.find("index 3 out of range on axis 1 of grid"), std::string::npos) << m;
    EXPECT_NE(m.find("shape (2, 3)"), std::string::npos) << m;
  }
  try {
    run(-1, 0);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index -1 out of range on axis 0 of grid"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(2, 0), IndexError);
  static_assert(std::is_base_of_v<Error, IndexError>);
}

TEST(Bounds, OutOfRangeStoreThrowsIndexErrorAndWritesNothing) {
  const Var out = array_param("out", DType::I32, 1), pi = param("i", DType::I64);
  const ir::Function f = function("writer", {out, pi}, {store(out, {val(pi)}, ir::make_int(DType::I32, 7))});
  std::vector<std::int32_t> data(4, 0);
  // A guard element after the view: a store at index 4 must not reach it.
  ArrayDesc d = desc(data.data(), {3});
  std::int64_t i = 3;
  void* args[] = {&d, &i};
  try {
    ir::interpret(f, args, nullptr);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'writer'"), std::string::npos) << m;
    EXPECT_NE(m.find("index 3 out of range on axis 0 of out"), std::string::npos) << m;
  }
  EXPECT_EQ(data, (std::vector<std::int32_t>{0, 0, 0, 0}));
  i = 2;
  ir::interpret(f, args, nullptr);
  EXPECT_EQ(data, (std::vector<std::int32_t>{0, 0, 7, 0}));
}

TEST(Allocation, NegativeExtentThrowsShapeError) {
  const Var n = param("n", DType::I64), buf = local_array("buf", DType::F64, 2);
  const ir::Function f = function("alloc", {n}, {ir::make_allocate(buf, {i64c(2), val(n)})}, nullptr, buf);
  std::int64_t m = -1;
  void* args[] = {&m};
  ArrayDesc out{};
  try {
    ir::interpret(f, args, &out);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("buf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("-1"), std::string::npos) << msg;
  }
  // Zero extents are fine: an empty array.
  m = 0;
  ir::interpret(f, args, &out);
  EXPECT_EQ(out.shape[0], 2);
  EXPECT_EQ(out.shape[1], 0);
  EXPECT_NE(out.data, nullptr);
  std::free(out.data);
}

TEST(Allocation, ArrayResultIsRowMajorAndOwnedByTheCaller) {
  const Var n = param("n", DType::I64), m = param("m", DType::I64), p = param("p", DType::I64);
  const Var out = local_array("out", DType::I64, 3);
  const Var i = index("i"), j = index("j"), k = index("k");
  const ir::Function f = function(
      "make3d", {n, m, p},
      {ir::make_allocate(out, {val(n), val(m), val(p)}),
       parfor({i, j, k}, {i64c(0), i64c(0), i64c(0)}, {val(n), val(m), val(p)},
              block({store(out, {val(i), val(j), val(k)},
                           add(add(mul(val(i), i64c(100)), mul(val(j), i64c(10))), val(k)))}))},
      nullptr, out);
  std::int64_t a = 2, b = 3, c = 4;
  void* args[] = {&a, &b, &c};
  ArrayDesc r{};
  ir::interpret(f, args, &r);
  ASSERT_NE(r.data, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.data) % 64, 0u) << "64-byte aligned";
  EXPECT_EQ(r.shape[0], 2);
  EXPECT_EQ(r.shape[1], 3);
  EXPECT_EQ(r.shape[2], 4);
  EXPECT_EQ(r.strides[0], 12);
  EXPECT_EQ(r.strides[1], 4);
  EXPECT_EQ(r.strides[2], 1);
  const auto* v = static_cast<const std::int64_t*>(r.data);
  for (std::int64_t x = 0; x < 2; ++x)
    for (std::int64_t y = 0; y < 3; ++y)
      for (std::int64_t z = 0; z < 4; ++z) EXPECT_EQ(v[x * 12 + y * 4 + z], x * 100 + y * 10 + z);
  std::free(r.data);  // the caller owns it (ASan would catch a double free by the interpreter)
}

TEST(Allocation, UninitializedElementsReadAsPoison) {
  auto first = [](DType t) {
    const Var buf = local_array("buf", t, 1);
    return function("poison", {}, {ir::make_allocate(buf, {i64c(4)})}, load(buf, {i64c(3)}));
  };
  EXPECT_TRUE(std::isnan(scalar_result<double>(first(DType::F64), {})));
  EXPECT_TRUE(std::isnan(scalar_result<float>(first(DType::F32), {})));
  EXPECT_EQ(scalar_result<std::int32_t>(first(DType::I32), {}), 0x5A5A5A5A);
  EXPECT_EQ(scalar_result<std::int64_t>(first(DType::I64), {}), 0x5A5A5A5A5A5A5A5ALL);
}

TEST(Allocation, TemporaryArraysAreFreedAndIndependentPerCall) {
  // A scratch array written and read within the call; two calls see their own memory.
  const Var n = param("n", DType::I64), tmp = local_array("tmp", DType::F64, 1), s = local("s", DType::F64);
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "scratch", {n},
      {ir::make_allocate(tmp, {val(n)}),
       for_loop(i, i64c(0), val(n), block({store(tmp, {val(i)}, ir::make_cast(DType::F64, val(i)))})),
       let(s, f64c(0)), for_loop(j, i64c(0), dim(tmp), block({assign(s, add(val(s), load(tmp, {val(j)})))}))},
      val(s));
  std::int64_t a = 10, b = 5;
  EXPECT_EQ(scalar_result<double>(f, {&a}), 45.0);
  EXPECT_EQ(scalar_result<double>(f, {&b}), 10.0);
}

// =========================================================================================================
// Strided arguments
// =========================================================================================================

TEST(StridedArguments, NonContiguous1d) {
  // Every other element of a buffer: shape 5, stride 2. Sum it and write i*10 into the view.
  const Var x = array_param("x", DType::F64, 1, false), s = local("s", DType::F64), i = index("i"), j = index("j");
  const ir::Function f = function(
      "strided", {x},
      {let(s, f64c(0)), for_loop(i, i64c(0), dim(x), block({assign(s, add(val(s), load(x, {val(i)})))})),
       parfor({j}, {i64c(0)}, {dim(x)}, block({store(x, {val(j)}, mul(ir::make_cast(DType::F64, val(j)), f64c(10)))}))},
      val(s));
  std::vector<double> buf = {1, -1, 2, -1, 3, -1, 4, -1, 5, -1};
  ArrayDesc d = desc(buf.data(), {5}, {2});
  EXPECT_EQ(scalar_result<double>(f, {&d}), 15.0);
  EXPECT_EQ(buf, (std::vector<double>{0, -1, 10, -1, 20, -1, 30, -1, 40, -1}));
  // A negative stride walks backwards from the base pointer.
  std::vector<double> rev = {1, 2, 3, 4};
  ArrayDesc r = desc(rev.data() + 3, {4}, {-1});
  EXPECT_EQ(scalar_result<double>(f, {&r}), 10.0);
  EXPECT_EQ(rev, (std::vector<double>{30, 20, 10, 0}));
}

TEST(StridedArguments, Transposed2d) {
  // out[i, j] = x[i, j] for a transposed view of a 2x3 row-major buffer (shape (3, 2), strides (1, 3)).
  const Var x = array_param("x", DType::F32, 2, false), out = local_array("out", DType::F32, 2);
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "transpose", {x},
      {ir::make_allocate(out, {dim(x, 0), dim(x, 1)}),
       parfor({i, j}, {i64c(0), i64c(0)}, {dim(x, 0), dim(x, 1)},
              block({store(out, {val(i), val(j)}, load(x, {val(i), val(j)}))}))},
      nullptr, out);
  std::vector<float> buf = {1, 2, 3, 4, 5, 6};  // [[1,2,3],[4,5,6]]
  ArrayDesc d = desc(buf.data(), {3, 2}, {1, 3});
  void* args[] = {&d};
  ArrayDesc r{};
  ir::interpret(f, args, &r);
  ASSERT_EQ(r.shape[0], 3);
  ASSERT_EQ(r.shape[1], 2);
  EXPECT_EQ(r.strides[0], 2);
  EXPECT_EQ(r.strides[1], 1);
  const auto* v = static_cast<const float*>(r.data);
  EXPECT_EQ(std::vector<float>(v, v + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  std::free(r.data);
}

// =========================================================================================================
// Loops and reductions
// =========================================================================================================

/// s = init; parfor i in 0..dim(x): s = s (op) x[i]  (or the commuted form), reduce(red s); return s.
template <class T>
T reduce(ReduceOp red, BinaryOp op, T init, std::vector<T> data, bool commuted = false) {
  const DType t = dtype_of<T>();
  const Var x = array_param("x", t, 1, true), s = local("s", t), i = index("i");
  Expr upd = commuted ? bin(op, load(x, {val(i)}), val(s)) : bin(op, val(s), load(x, {val(i)}));
  const ir::Function f = function(
      "reduce", {x},
      {let(s, ir::make_const(t, static_cast<double>(init))),
       parfor({i}, {i64c(0)}, {dim(x)}, block({assign(s, upd)}), {{s, red}})},
      val(s));
  ArrayDesc d = desc(data.data(), {static_cast<std::int64_t>(data.size())});
  return scalar_result<T>(f, {&d});
}

TEST(Reductions, EveryOperatorOnEveryType) {
  // The interpreter runs a parfor in row-major order, accumulating into the variable from its initial value.
  EXPECT_EQ(reduce<double>(ReduceOp::Add, BinaryOp::Add, 10, {1, 2, 3.5}), 16.5);
  EXPECT_EQ(reduce<double>(ReduceOp::Add, BinaryOp::Add, 10, {1, 2, 3.5}, true), 16.5);
  EXPECT_EQ(reduce<double>(ReduceOp::Add, BinaryOp::Sub, 10, {1, 2, 3.5}), 3.5);
  EXPECT_EQ(reduce<double>(ReduceOp::Mul, BinaryOp::Mul, 2, {1.5, 2, 4}), 24.0);
  EXPECT_EQ(reduce<double>(ReduceOp::Mul, BinaryOp::Div, 24, {2, 4, 0.5}), 6.0);
  EXPECT_EQ(reduce<double>(ReduceOp::Min, BinaryOp::Min, kInf, {3, -2, 7}), -2.0);
  EXPECT_EQ(reduce<double>(ReduceOp::Max, BinaryOp::Max, -kInf, {3, -2, 7}), 7.0);
  EXPECT_TRUE(std::isnan(reduce<double>(ReduceOp::Max, BinaryOp::Max, -kInf, {3, kNaN, 7})));  // NaN propagates
  EXPECT_EQ(reduce<double>(ReduceOp::Min, BinaryOp::Min, 5, {}), 5.0);  // empty: the initial value

  EXPECT_EQ(reduce<float>(ReduceOp::Add, BinaryOp::Add, 0, {0.5f, 0.25f}), 0.75f);
  EXPECT_EQ(reduce<float>(ReduceOp::Mul, BinaryOp::Mul, 1, {3, 3}), 9.0f);
  EXPECT_EQ(reduce<float>(ReduceOp::Min, BinaryOp::Min, kInff, {3, -2}, true), -2.0f);
  EXPECT_EQ(reduce<float>(ReduceOp::Max, BinaryOp::Max, -kInff, {3, -2}), 3.0f);

  EXPECT_EQ(reduce<std::int64_t>(ReduceOp::Add, BinaryOp::Add, 0, {1, 2, 3, 4}), 10);
  EXPECT_EQ(reduce<std::int64_t>(ReduceOp::Add, BinaryOp::Sub, 0, {1, 2, 3, 4}), -10);
  EXPECT_EQ(reduce<std::int64_t>(ReduceOp::Mul, BinaryOp::Mul, 1, {1, 2, 3, 4}), 24);
  EXPECT_EQ(reduce<std::int64_t>(ReduceOp::Min, BinaryOp::Min, INT64_MAX, {5, -9, 3}), -9);
  EXPECT_EQ(reduce<std::int64_t>(ReduceOp::Max, BinaryOp::Max, INT64_MIN, {5, -9, 3}), 5);

  EXPECT_EQ(reduce<std::int32_t>(ReduceOp::Add, BinaryOp::Add, INT32_MAX, {1}), INT32_MIN);  // wraps
  EXPECT_EQ(reduce<std::int32_t>(ReduceOp::Mul, BinaryOp::Mul, 1, {65536, 65536}), 0);
  EXPECT_EQ(reduce<std::int32_t>(ReduceOp::Min, BinaryOp::Min, INT32_MAX, {5, -9, 3}), -9);
  EXPECT_EQ(reduce<std::int32_t>(ReduceOp::Max, BinaryOp::Max, INT32_MIN, {5, -9, 3}, true), 5);
}

TEST(Reductions, SeveralReductionsInOneParfor) {
  const Var x = array_param("x", DType::F64, 1, true), lo = local("lo", DType::F64), hi = local("hi", DType::F64),
            sum = local("sum", DType::F64), out = local_array("out", DType::F64, 1), i = index("i");
  const ir::Function f = function(
      "stats", {x},
      {let(lo, f64c(kInf)), let(hi, f64c(-kInf)), let(sum, f64c(0)),
       parfor({i}, {i64c(0)}, {dim(x)},
              block({assign(lo, bin(BinaryOp::Min, val(lo), load(x, {val(i)}))),
                     assign(hi, bin(BinaryOp::Max, load(x, {val(i)}), val(hi))),
                     assign(sum, add(val(sum), load(x, {val(i)})))}),
              {{lo, ReduceOp::Min}, {hi, ReduceOp::Max}, {sum, ReduceOp::Add}}),
       ir::make_allocate(out, {i64c(3)}), store(out, {i64c(0)}, val(lo)), store(out, {i64c(1)}, val(hi)),
       store(out, {i64c(2)}, val(sum))},
      nullptr, out);
  std::vector<double> data = {4, -1, 9, 2};
  ArrayDesc d = desc(data.data(), {4});
  void* args[] = {&d};
  ArrayDesc r{};
  ir::interpret(f, args, &r);
  const auto* v = static_cast<const double*>(r.data);
  EXPECT_EQ(v[0], -1.0);
  EXPECT_EQ(v[1], 9.0);
  EXPECT_EQ(v[2], 14.0);
  std::free(r.data);
}

TEST(Loops, NestedSequentialLoopsAndBounds) {
  // s = sum over i in [lo, hi), j in [0, i) of j
  const Var lo = param("lo", DType::I64), hi = param("hi", DType::I64), s = local("s", DType::I64);
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "nested", {lo, hi},
      {let(s, i64c(0)),
       for_loop(i, val(lo), val(hi), block({for_loop(j, i64c(0), val(i), block({assign(s, add(val(s), val(j)))}))}))},
      val(s));
  auto run = [&](std::int64_t a, std::int64_t b) { return scalar_result<std::int64_t>(f, {&a, &b}); };
  auto ref = [](std::int64_t a, std::int64_t b) {
    std::int64_t s = 0;
    for (std::int64_t i = a; i < b; ++i)
      for (std::int64_t j = 0; j < i; ++j) s += j;
    return s;
  };
  EXPECT_EQ(run(0, 10), ref(0, 10));
  EXPECT_EQ(run(3, 7), ref(3, 7));
  EXPECT_EQ(run(5, 5), 0);   // empty
  EXPECT_EQ(run(7, 3), 0);   // begin > end runs zero times
  EXPECT_EQ(run(-4, 2), ref(-4, 2));
}

TEST(Loops, ParforInsideSequentialLoopAndLoopCarriedVariables) {
  // for t in 0..3: parfor i: x[i] = x[i] * 2 + t; then a running prefix sum in a sequential loop.
  const Var x = array_param("x", DType::I64, 1, true), t = index("t"), i = index("i"), k = index("k");
  const Var acc = local("acc", DType::I64);
  const ir::Function f = function(
      "passes", {x},
      {for_loop(t, i64c(0), i64c(3),
                block({parfor({i}, {i64c(0)}, {dim(x)},
                              block({store(x, {val(i)}, add(mul(load(x, {val(i)}), i64c(2)), val(t)))}))})),
       let(acc, i64c(0)),
       for_loop(k, i64c(0), dim(x), block({assign(acc, add(val(acc), load(x, {val(k)}))), store(x, {val(k)}, val(acc))}))});
  std::vector<std::int64_t> data = {0, 1, 2};
  std::vector<std::int64_t> want = data;
  for (int tt = 0; tt < 3; ++tt)
    for (auto& v : want) v = v * 2 + tt;
  std::partial_sum(want.begin(), want.end(), want.begin());
  ArrayDesc d = desc(data.data(), {3});
  void* args[] = {&d};
  ir::interpret(f, args, nullptr);
  EXPECT_EQ(data, want);
}

TEST(Loops, MultiDimensionalParforsRunInRowMajorOrder) {
  // A 3-d parfor with non-zero lower bounds writes every element once, and the last store to a shared
  // cell is the last index in row-major order (the interpreter's documented order).
  const Var out = array_param("out", DType::I64, 3, true), last = array_param("last", DType::I64, 1, true);
  const Var count = array_param("count", DType::I64, 1, true);
  const Var i = index("i"), j = index("j"), k = index("k");
  Expr code = add(add(mul(val(i), i64c(100)), mul(val(j), i64c(10))), val(k));
  const ir::Function f = function(
      "grid", {out, last, count},
      {parfor({i, j, k}, {i64c(1), i64c(0), i64c(2)}, {i64c(3), i64c(3), i64c(6)},
              block({store(out, {add(val(i), i64c(-1)), val(j), add(val(k), i64c(-2))}, code),
                     store(last, {i64c(0)}, code),
                     store(count, {i64c(0)}, add(load(count, {i64c(0)}), i64c(1)))}))});
  std::vector<std::int64_t> data(2 * 3 * 4, -1), l(1, -1), c(1, 0);
  ArrayDesc d = desc(data.data(), {2, 3, 4}), dl = desc(l.data(), {1}), dc = desc(c.data(), {1});
  void* args[] = {&d, &dl, &dc};
  ir::interpret(f, args, nullptr);
  for (std::int64_t a = 0; a < 2; ++a)
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t e = 0; e < 4; ++e) EXPECT_EQ(data[a * 12 + b * 4 + e], (a + 1) * 100 + b * 10 + (e + 2));
  EXPECT_EQ(l[0], 2 * 100 + 2 * 10 + 5);
  EXPECT_EQ(c[0], 24);
}

TEST(Loops, TwoDimensionalReductionAndEmptyExtents) {
  const Var n = param("n", DType::I64), m = param("m", DType::I64), s = local("s", DType::I64);
  const Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "area", {n, m},
      {let(s, i64c(0)), parfor({i, j}, {i64c(0), i64c(0)}, {val(n), val(m)},
                               block({assign(s, add(val(s), mul(val(i), val(j))))}), {{s, ReduceOp::Add}})},
      val(s));
  auto run = [&](std::int64_t a, std::int64_t b) { return scalar_result<std::int64_t>(f, {&a, &b}); };
  EXPECT_EQ(run(4, 5), (0 + 1 + 2 + 3) * (0 + 1 + 2 + 3 + 4));
  EXPECT_EQ(run(0, 5), 0);
  EXPECT_EQ(run(5, 0), 0);
  EXPECT_EQ(run(-3, 5), 0);
  // An empty outer extent never evaluates the body, even a body that would fault.
  const Var x = array_param("x", DType::F64, 1, true), i2 = index("i"), j2 = index("j");
  const ir::Function g = function(
      "never", {x, n, m},
      {parfor({i2, j2}, {i64c(0), i64c(0)}, {val(n), val(m)}, block({store(x, {i64c(1000)}, f64c(1))}))});
  std::vector<double> data(2, 0);
  ArrayDesc d = desc(data.data(), {2});
  std::int64_t a = 3, b = 0;
  void* args[] = {&d, &a, &b};
  EXPECT_NO_THROW(ir::interpret(g, args, nullptr));
  b = 1;
  EXPECT_THROW(ir::interpret(g, args, nullptr), IndexError);
}

TEST(Statements, IfElseLetsAndBoolResults) {
  // sign(x) with an if/else chain, returning i32; and a bool result.
  const Var x = param("x", DType::F64), r = local("r", DType::I32);
  const Var inner = local("inner", DType::I32);
  const ir::Function f = function(
      "sign", {x},
      {let(r, ir::make_int(DType::I32, 0)),
       ir::make_if(bin(BinaryOp::Gt, val(x), f64c(0)), block({assign(r, ir::make_int(DType::I32, 1))}),
                   block({ir::make_if(bin(BinaryOp::Lt, val(x), f64c(0)),
                                      block({let(inner, ir::make_int(DType::I32, -1)), assign(r, val(inner))}))}))},
      val(r));
  for (double v : {3.0, -2.0, 0.0, -0.0, kNaN}) {
    const std::int32_t want = v > 0 ? 1 : v < 0 ? -1 : 0;
    EXPECT_EQ(scalar_result<std::int32_t>(f, {&v}), want) << v;
  }
  const Var a = param("a", DType::I64);
  const ir::Function g = function("is_even", {a}, {}, bin(BinaryOp::Eq, bin(BinaryOp::Mod, val(a), i64c(2)), i64c(0)));
  std::int64_t four = 4, five = 5;
  EXPECT_TRUE(scalar_result<bool>(g, {&four}));
  EXPECT_FALSE(scalar_result<bool>(g, {&five}));
}

TEST(Statements, DimReadsTheArgumentShape) {
  const Var x = array_param("x", DType::F32, 3);
  const ir::Function f = function("dims", {x}, {},
                                  add(mul(dim(x, 0), i64c(100)), add(mul(dim(x, 1), i64c(10)), dim(x, 2))));
  std::vector<float> buf(1);
  ArrayDesc d = desc(buf.data(), {4, 0, 7});
  EXPECT_EQ(scalar_result<std::int64_t>(f, {&d}), 407);
}

TEST(Statements, StoreToParameterIsVisibleToTheCaller) {
  const Var x = array_param("x", DType::Bool, 1, true), i = index("i");
  const ir::Function f = function(
      "flags", {x},
      {parfor({i}, {i64c(0)}, {dim(x)}, block({store(x, {val(i)}, bin(BinaryOp::Eq, bin(BinaryOp::Mod, val(i), i64c(3)), i64c(0)))}))});
  bool data[7] = {};
  ArrayDesc d = desc(data, {7});
  void* args[] = {&d};
  ir::interpret(f, args, nullptr);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(data[k], k % 3 == 0) << k;
}

}  // namespace
}  // namespace kiln
