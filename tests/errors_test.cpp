// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User errors: each must surface as the right kiln::Error subclass, with a message naming the kernel and
// the argument or variable involved, and must leave kiln usable afterwards.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/error_test_util.hpp"

namespace kiln {
namespace {

using kiln_tests::call_erased;
using kiln_tests::exact_error_of;

Options interp() {
  Options o;
  o.target = Target::interpreter;
  return o;
}


int g_line = 0;  // a source line recorded while tracing

// =========================================================================================================
// Argument checking (TypeError)
// =========================================================================================================
// Through Kernel::operator() a wrong count, an array for a scalar (or the reverse) and an array's element type
// are compile errors (tests/compile_fail); call_erased reaches the run-time checks that guard callers building
// their arguments themselves (kiln::dist).

auto make_scale() {
  return jit("scale", [](Array<double> x, Int n) { prange(n, [&](Int i) { x[i] = x[i] * 2.0; }); }, interp());
}

TEST(ArgumentErrors, WrongArgumentCountListsTheParameters) {
  auto k = make_scale();
  std::vector<double> v(3);
  const std::string m = exact_error_of<TypeError>([&] { call_erased(k, v); });
  EXPECT_CONTAINS(m, "kernel 'scale' takes 2 arguments (x: f64 array, n: i64), but was called with 1");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { call_erased(k, v, 1, 2); }), "but was called with 3");
  EXPECT_EQ(k.compiled_variants(), 0u);
}

TEST(ArgumentErrors, WrongElementType) {
  auto k = make_scale();
  std::vector<float> vf(3);
  const std::string m = exact_error_of<TypeError>([&] { call_erased(k, vf, 3); });
  EXPECT_CONTAINS(m, "kernel 'scale': argument 1 of 2 ('x') expects f64 array, got std::vector of f32 with rank 1");
  NDArray<std::int32_t> ni({3});
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { call_erased(k, ni, 3); }), "got kiln::NDArray of i32 with rank 1");
}

TEST(ArgumentErrors, WrongRankForAFixedRankParameter) {
  auto k = jit("mat", [](Array<double, 2> m, Int32 small) { return m(0, 0) + to_double(small); }, interp());
  std::vector<double> v(3);
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { call_erased(k, v, 1); }),
                  "kernel 'mat': argument 1 of 2 ('m') expects f64 array of rank 2, got std::vector of f64 with rank 1");
  NDArray<double> cube({1, 1, 1});
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(cube, 1); }), "expects f64 array of rank 2, got kiln::NDArray of f64 with rank 3");
  NDArray<double> m({1, 1});
  m[0] = 0.5;
  EXPECT_EQ(k(m, 2), 2.5);  // and the right call works
}

TEST(ArgumentErrors, ScalarForArrayAndArrayForScalar) {
  auto k = make_scale();
  std::vector<double> v(3);
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { call_erased(k, 1.0, 3); }),
                  "kernel 'scale': argument 1 of 2 ('x') expects f64 array, got scalar of type f64");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { call_erased(k, v, v); }),
                  "kernel 'scale': argument 2 of 2 ('n') expects i64, got std::vector of f64 with rank 1");
}

TEST(ArgumentErrors, FloatForAnIntegerParameter) {
  auto k = make_scale();
  std::vector<double> v(3);
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(v, 2.5); }),
                  "kernel 'scale': argument 2 of 2 ('n') expects i64: a floating-point value cannot be passed for an "
                  "integer parameter");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(v, 2.0f); }), "('n') expects i64: a floating-point value");
}

TEST(ArgumentErrors, IntegerOutOfRangeForInt32) {
  auto k = jit("narrow", [](Int32 small) { return small + 1; }, interp());
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(std::int64_t{1} << 32); }),
                  "kernel 'narrow': argument 1 of 1 ('small') expects i32: the value 4294967296 does not fit in i32");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(std::int64_t{INT32_MIN} - 1); }), "the value -2147483649 does not fit in i32");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(~std::uint64_t{0}); }), "the value 18446744073709551615 does not fit in i32");
  EXPECT_EQ(k(std::int64_t{INT32_MAX} - 1), INT32_MAX);  // in range: converted
  EXPECT_EQ(k(std::uint32_t{5}), 6);
  auto wide = jit("wide", [](Int n) { return n; }, interp());
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { wide(std::uint64_t{1} << 63); }),
                  "kernel 'wide': argument 1 of 1 ('n') expects i64: the value 9223372036854775808 does not fit in i64");
  EXPECT_EQ(wide(std::uint64_t{1} << 62), std::int64_t{1} << 62);
}

TEST(ArgumentErrors, BoolIsNotANumber) {
  auto k = jit("flag", [](Bool b, Int n) { return select(b, n, Int(0)); }, interp());
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(1, 2); }), "argument 1 of 2 ('b') expects bool: a i32 value cannot be passed for a bool parameter");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(true, false); }), "argument 2 of 2 ('n') expects i64: a bool value cannot be passed");
  EXPECT_EQ(k(true, 7), 7);
}

TEST(ArgumentErrors, WritingToAReadOnlyArgument) {
  auto k = make_scale();
  const std::vector<double> cv = {1, 2, 3};
  const std::string m = exact_error_of<TypeError>([&] { k(cv, 3); });
  EXPECT_CONTAINS(m, "kernel 'scale': argument 1 of 2 ('x') is written by the kernel but was passed read-only (const std::vector)");
  EXPECT_EQ(cv, (std::vector<double>{1, 2, 3}));  // untouched
  // Other read-only views.
  const NDArray<double> cn = NDArray<double>::from({1, 2});
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(cn, 2); }), "read-only (const kiln::NDArray)");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(std::span<const double>(cv), 1); }), "read-only (const std::span)");
  EXPECT_CONTAINS(exact_error_of<TypeError>([&] { k(ArrayRef<const double>(cv.data(), {3}), 1); }), "read-only (const kiln::ArrayRef)");
  // A kernel that only reads accepts them.
  auto sum = jit("sum", [](Array<double> x) {
    Double s = 0.0;
    prange(x.shape(0), [&](Int i) { s += x[i]; });
    return s;
  }, interp());
  EXPECT_EQ(sum(cv), 6.0);
  // And a writable argument still works with the kernel that writes.
  std::vector<double> v = {1, 2, 3};
  k(v, 3);
  EXPECT_EQ(v, (std::vector<double>{2, 4, 6}));
}

// =========================================================================================================
// Tracing errors (TraceError)
// =========================================================================================================

TEST(TraceErrors, TracedValueUsedOutsideItsLoop) {
  auto k = jit("escape", [](Int n) {
    std::optional<Double> keep;
    range(n, [&](Int i) { keep.emplace(to_double(i)); });
    return *keep;
  }, interp());
  const std::string m = exact_error_of<TraceError>([&] { k(3); });
  EXPECT_CONTAINS(m, "kernel 'escape': a traced value is used outside the loop, branch or kernel it was created in");
  // Assigning it is an error too.
  auto k2 = jit("escape_assign", [](Int n) {
    std::optional<Double> keep;
    Double out = 0.0;
    if_(n > 0, [&] { keep.emplace(1.0); });
    *keep = 2.0;
    return out;
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k2(3); }),
                  "kernel 'escape_assign': assignment to a traced value outside the loop or branch it was created in");
}

TEST(TraceErrors, ArrayAllocatedInALoopUsedOutsideIt) {
  auto k = jit("array_escape", [](Int n) {
    std::optional<Array<double, 1>> keep;
    range(n, [&](Int) { keep.emplace(zeros<double>(n)); });
    return (*keep)[0];
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k(2); }),
                  "kernel 'array_escape': element access of array 'filled' outside the loop, branch or kernel it belongs to");
  auto k2 = jit("array_return", [](Int n) {
    std::optional<Array<double, 1>> keep;
    if_(n > 0, [&] { keep.emplace(empty<double>(n)); });
    return *keep;
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k2(2); }), "kernel 'array_return': return of array");
}

TEST(TraceErrors, TracedValuesEscapingTheKernel) {
  std::optional<Double> leaked;
  auto k = jit("leaky", [&leaked](Int n) {
    leaked.emplace(to_double(n) * 2.0);
    return n;
  }, interp());
  EXPECT_EQ(k(4), 4);
  ASSERT_TRUE(leaked.has_value());
  // Outside any kernel.
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { Double copy = *leaked; (void)copy; }),
                  "a traced value is copied outside the kernel it belongs to");
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { (void)(*leaked + 1.0); }), "outside the kernel it belongs to");
  // Inside another kernel.
  auto other = jit("other", [&leaked](Int n) { return to_double(n) + *leaked; }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { other(1); }),
                  "kernel 'other': a traced value is used outside the loop, branch or kernel it was created in");
  // An array handle from another kernel.
  std::optional<Array<double>> handle;
  auto grab = jit("grab", [&handle](Array<double> a) { handle.emplace(a); }, interp());
  std::vector<double> v(2);
  grab(v);
  auto use = jit("use", [&handle](Int i) { return (*handle)[i]; }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { use(0); }), "kernel 'use': element access of array 'a' outside the loop, branch or kernel");
}

TEST(TraceErrors, TracedOperationsOutsideAnyKernel) {
  EXPECT_CONTAINS(exact_error_of<TraceError>([] {
                    Double x = 1.0;
                    x = 2.0;
                  }),
                  "assignment to a traced value used outside a kernel: traced operations only work while kiln::jit traces a lambda");
  EXPECT_CONTAINS(exact_error_of<TraceError>([] { prange(3, [](Int) {}); }), "kiln::prange used outside a kernel");
  EXPECT_CONTAINS(exact_error_of<TraceError>([] { range(3, [](Int) {}); }), "kiln::range used outside a kernel");
  EXPECT_CONTAINS(exact_error_of<TraceError>([] { if_(Bool(true), [] {}); }), "kiln::if_ used outside a kernel");
  EXPECT_CONTAINS(exact_error_of<TraceError>([] { (void)zeros<double>(3); }), "array allocation used outside a kernel");
  // Constants outside a kernel are fine: they are only values.
  EXPECT_NO_THROW({
    Double c = 2.0;
    Double d = c * 3.0;
    (void)d;
  });
}

TEST(TraceErrors, ElifAndElseMustDirectlyFollowTheirIf) {
  auto k = jit("late_elif", [](Double x, Array<double> b) {
    auto chain = if_(x > 0.0, [&] { b[0] = 1.0; });
    b[1] = 2.0;  // a new statement completes the chain
    g_line = __LINE__ + 1;
    chain.elif_(x < 0.0, [&] { b[0] = -1.0; });
  }, interp());
  std::vector<double> v(2);
  const std::string m = exact_error_of<TraceError>([&] { k(1.0, v); });
  EXPECT_CONTAINS(m, "kernel 'late_elif': elif_ must directly follow its if_ (or elif_) in the same statement");
  EXPECT_CONTAINS(m, "(at errors_test.cpp:" + std::to_string(g_line) + ")");

  auto k2 = jit("late_else", [](Double x, Array<double> b) {
    auto chain = if_(x > 0.0, [&] { b[0] = 1.0; });
    range(Int(1), [&](Int) { b[1] = 3.0; });
    chain.else_([&] { b[0] = -1.0; });
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k2(1.0, v); }), "kernel 'late_else': else_ must directly follow its if_");

  auto k3 = jit("double_else", [](Double x, Array<double> b) {
    auto chain = if_(x > 0.0, [&] { b[0] = 1.0; });
    chain.else_([&] { b[0] = -1.0; });
    chain.else_([&] { b[0] = -2.0; });
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k3(1.0, v); }), "else_ must directly follow");

  auto k4 = jit("elif_after_else", [](Double x, Array<double> b) {
    auto chain = if_(x > 0.0, [&] { b[0] = 1.0; });
    chain.else_([&] { b[0] = -1.0; });
    chain.elif_(x < 0.0, [&] { b[0] = -2.0; });
  }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k4(1.0, v); }), "elif_ must directly follow");
}

TEST(TraceErrors, WrongNumberOfIndices) {
  auto k = jit("idx", [](Array<double> a) { return a[0]; }, interp());
  NDArray<double> m({2, 2});
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k(m); }), "kernel 'idx': array 'a' has rank 2 but is indexed with 1 index");
  auto k2 = jit("idx3", [](Array<double> a) { return a(0, 0, 0); }, interp());
  std::vector<double> v(2);
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k2(v); }), "kernel 'idx3': array 'a' has rank 1 but is indexed with 3 indices");
  auto k3 = jit("store_idx", [](Array<double> a) { a(0, 1) = 1.0; }, interp());
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k3(v); }), "array 'a' has rank 1 but is indexed with 2 indices");
  EXPECT_EQ(k(v), 0.0);  // a 1-d argument is a new signature of the same kernel, and it works
}

TEST(TraceErrors, ShapeAxisOutOfRange) {
  auto k = jit("axis", [](Array<double> a) { return a.shape(2); }, interp());
  std::vector<double> v(2);
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k(v); }), "kernel 'axis': axis 2 is out of range for array 'a' of rank 1");
  auto k2 = jit("neg_axis", [](Array<double, 2> a) { return a.shape(-1); }, interp());
  NDArray<double> m({2, 2});
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { k2(m); }), "axis -1 is out of range for array 'a' of rank 2");
}

TEST(TraceErrors, RacyPrangeWrite) {
  auto k = jit("racy", [](Array<double> a) {
    Double last = 0.0;
    prange(a.shape(0), [&](Int i) { last = a[i]; });
    return last;
  }, interp());
  std::vector<double> v = {1, 2};
  const std::string m = exact_error_of<TraceError>([&] { k(v); });
  EXPECT_CONTAINS(m, "kernel 'racy': scalar 'last'");
  EXPECT_CONTAINS(m, "which is not a reduction");
  EXPECT_CONTAINS(m, "would race");
}

// =========================================================================================================
// Run-time errors and options
// =========================================================================================================

TEST(RuntimeErrors, InterpreterIndexErrorOnOutOfBoundsIndex) {
  auto k = make_scale();
  std::vector<double> v = {1, 2, 3};
  const std::string m = exact_error_of<IndexError>([&] { k(v, 4); });
  EXPECT_CONTAINS(m, "kernel 'scale': index 3 out of range on axis 0 of x (shape (3))");
  auto k2 = jit("neighbour", [](Array<double> a) {
    auto out = empty_like(a);
    prange(a.shape(0), [&](Int i) { out[i] = a[i + 1] - a[i]; });
    return out;
  }, interp());
  EXPECT_CONTAINS(exact_error_of<IndexError>([&] { k2(v); }), "kernel 'neighbour': index 3 out of range on axis 0 of a");
  auto k3 = jit("neg_index", [](Array<double, 2> a, Int i) { return a(0, i); }, interp());
  NDArray<double> m2({2, 3});
  EXPECT_CONTAINS(exact_error_of<IndexError>([&] { k3(m2, -1); }), "index -1 out of range on axis 1 of a (shape (2, 3))");
}

TEST(RuntimeErrors, NegativeAllocationIsAShapeError) {
  auto k = jit("neg_alloc", [](Int n) { return empty<double>(n, 2); }, interp());
  const std::string m = exact_error_of<ShapeError>([&] { k(-1); });
  EXPECT_CONTAINS(m, "kernel 'neg_alloc'");
  EXPECT_CONTAINS(m, "negative extent: shape (-1, 2)");
  EXPECT_EQ(k(0).size(), 0);
}

// Like every other run-time error, a negative allocation extent names the kernel.
TEST(RuntimeErrors, NegativeAllocationNamesTheKernel) {
  auto k = jit("neg_alloc", [](Int n) { return empty<double>(n, 2); }, interp());
  EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { k(-1); }), "kernel 'neg_alloc'");
}

TEST(RuntimeErrors, HostArrayShapeErrors) {
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({2, -1}); }), "NDArray extents must be non-negative: shape (2, -1)");
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({1, 1, 1, 1, 1}); }), "NDArray rank must be 1..4");
  double d[4] = {};
  EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { ArrayRef<double> r(d, {2, 2}, {1}); }), "ArrayRef needs one stride per dimension");
  EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { ArrayRef<double> r(d, {-2}); }), "ArrayRef extents must be non-negative");
  EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { ArrayRef<double> r(d, {}); }), "ArrayRef rank must be 1..4");
}

TEST(OptionErrors, BadOptLevel) {
  Options o = interp();
  o.opt_level = 7;
  try {
    auto k = jit("bad_opt", [](Int n) { return n; }, o);
    (void)k;
    FAIL() << "expected kiln::Error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "kernel 'bad_opt': opt_level must be 0..3, got 7");
  }
  auto good = jit("good_opt", [](Int n) { return n; }, interp());
  o.opt_level = -1;
  EXPECT_THROW(good.with(o), Error);
  EXPECT_EQ(good(std::int64_t{3}), 3);
}

// =========================================================================================================
// Recovery
// =========================================================================================================

TEST(Recovery, AFailedTraceLeavesKilnUsable) {
  // An error deep inside nested loops and branches unwinds every open scope.
  auto bad = jit("deep_error", [](Array<double> a, Int n) {
    range(n, [&](Int i) {
      if_(a[i] > 0.0, [&] {
        prange(n, [&](Int j) { a(i, j) = 1.0; });  // wrong number of indices
      });
    });
  }, interp());
  std::vector<double> v(2);
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { bad(v, 2); }), "array 'a' has rank 1 but is indexed with 2 indices");
  EXPECT_EQ(bad.compiled_variants(), 0u);
  // Calling again traces again and fails the same way (nothing half-compiled was kept).
  EXPECT_CONTAINS(exact_error_of<TraceError>([&] { bad(v, 2); }), "indexed with 2 indices");
  // No trace is left active on this thread...
  EXPECT_CONTAINS(exact_error_of<TraceError>([] { prange(1, [](Int) {}); }), "used outside a kernel");
  // ...and other kernels trace and run normally.
  auto good = jit("after_error", [](Array<double> a) {
    range(a.shape(0), [&](Int i) { if_(a[i] == 0.0, [&] { a[i] = 7.0; }); });
  }, interp());
  good(v);
  EXPECT_EQ(v, (std::vector<double>{7, 7}));
  // A user exception thrown while tracing propagates unchanged.
  auto throws = jit("user_throw", [](Int n) {
    range(n, [&](Int) { throw std::runtime_error("user code failed"); });
    return n;
  }, interp());
  try {
    throws(std::int64_t{1});
    FAIL() << "expected the user's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "user code failed");
  }
  EXPECT_EQ(good.compiled_variants(), 1u);
}

TEST(Recovery, ErrorHierarchy) {
  static_assert(std::is_base_of_v<Error, TraceError>);
  static_assert(std::is_base_of_v<Error, TypeError>);
  static_assert(std::is_base_of_v<Error, ShapeError>);
  static_assert(std::is_base_of_v<Error, ValueError>);
  static_assert(std::is_base_of_v<Error, IndexError>);
  static_assert(std::is_base_of_v<Error, CompileError>);
  static_assert(std::is_base_of_v<Error, DeviceError>);
  static_assert(std::is_base_of_v<Error, CacheError>);
  static_assert(std::is_base_of_v<std::runtime_error, Error>);
  const CompileError ce("failed", "the code", "the log");
  EXPECT_STREQ(ce.what(), "failed");
  EXPECT_EQ(ce.code(), "the code");
  EXPECT_EQ(ce.log(), "the log");
}

}  // namespace
}  // namespace kiln
