// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array extents at every entry point (kiln::array_size's rule: no negative extent, at most kMaxArrayBytes):
// host arrays, kernel arguments, arrays made inside kernels (also when fusion removes their allocation), on the
// interpreter and the CPU. Impossible sizes are ShapeErrors; sizes memory cannot hold are kiln::Errors naming the
// kernel, the array and its shape.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/test_support/child_tests.hpp"
#include "tests/error_test_util.hpp"

namespace kiln {
namespace {

using kiln_tests::exact_error_of;

constexpr std::int64_t k2_57 = std::int64_t{1} << 57, k2_61 = std::int64_t{1} << 61, k2_62 = std::int64_t{1} << 62;

Options on(Target t) {
  Options o;
  o.target = t;
  return o;
}

std::vector<Target> targets() { return kiln_tests::host_targets(); }

// ---- host arrays and arguments ----------------------------------------------------------------------------------

TEST(Extents, NDArrayRefusesNegativeAndOversizedShapes) {
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({3, -1}); }), "(3, -1)");
  // 2^61 doubles once reported size 2^61 over a 72-byte buffer; (2^62, 4) reported size 0.
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({k2_61}); }), "too large");
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({k2_62, 4}); }), "(4611686018427387904, 4)");
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<float> a({std::int64_t{1} << 31, std::int64_t{1} << 31}); }),
                  "too large");
  // As in NumPy, a zero extent does not excuse an overflowing product of the others.
  EXPECT_CONTAINS(exact_error_of<ShapeError>([] { NDArray<double> a({0, k2_62, 4}); }), "too large");
  EXPECT_THROW((NDArray<float>({kMaxArrayBytes / 4 + 1})), ShapeError);
  // Allowed by the rule, held by no address space: a kiln::Error naming the size, not std::bad_alloc.
  const std::string m = exact_error_of<Error>([] { NDArray<double> a({k2_57}); });
  EXPECT_CONTAINS(m, "out of memory");
  EXPECT_CONTAINS(m, "1152921504606846976 bytes");
  // Empty arrays are fine.
  NDArray<double> empty({0, 5});
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.shape(1), 5);
}

TEST(Extents, ArraySizeIsOneRule) {
  const std::int64_t ok[2] = {3, 5}, negative[3] = {2, -1, -4}, big[2] = {k2_62, 4}, empty_big[3] = {0, k2_62, 4},
                     edge[1] = {kMaxArrayBytes / 8}, past[1] = {kMaxArrayBytes / 8 + 1};
  EXPECT_TRUE(array_size(ok, 2, 8).ok());
  EXPECT_EQ(array_size(ok, 2, 8).bytes, 120);
  EXPECT_EQ(array_size(negative, 3, 8).negative_axis, 1);
  EXPECT_TRUE(array_size(big, 2, 8).too_large);
  EXPECT_TRUE(array_size(big, 2, 1).too_large);
  EXPECT_TRUE(array_size(empty_big, 3, 8).too_large);
  EXPECT_TRUE(array_size(edge, 1, 8).ok());
  EXPECT_TRUE(array_size(past, 1, 8).too_large);
  const std::int64_t zeros[2] = {0, 7};
  EXPECT_TRUE(array_size(zeros, 2, 8).ok());
  EXPECT_EQ(array_size(zeros, 2, 8).bytes, 0);
}

TEST(Extents, ArgumentsOutsideTheRuleAreShapeErrorsAtTheCall) {
  double data[4] = {};
  EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { ArrayRef<double> r(data, {2, -2}); }), "(2, -2)");
  for (Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    auto k = jit("takes_array", [](Array<double> a) { return kiln::sum(kiln::zeros_like(a)) + kiln::sum(a); }, on(t));
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { k(ArrayRef<double>(data, {-4})); }), "negative");
    // A view with zero strides may claim any extent: beyond the size rule it is refused at the call, so arrays
    // shaped like it (zeros_like) are within the rule too.
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { k(ArrayRef<double>(data, {k2_62}, {0})); }),
                    "kiln::ArrayRef argument");
    data[0] = 1.5;
    EXPECT_EQ(k(ArrayRef<double>(data, {1000}, {0})), 1500.0);
  }
}

// ---- arrays made inside kernels ---------------------------------------------------------------------------------

TEST(Extents, ArraysMadeInKernelsRefuseNegativeExtents) {
  for (Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    // Fusion turns the zeros into a scalar: without a check of its own the sum once returned -0.0.
    auto summed = jit("sum_of_zeros", [](Int n, Int m) { return kiln::sum(kiln::zeros<double>(n, m)); }, on(t));
    std::string msg = exact_error_of<ShapeError>([&] { summed(-1, -1); });
    EXPECT_CONTAINS(msg, "kernel 'sum_of_zeros'");
    EXPECT_CONTAINS(msg, "negative extent");
    EXPECT_CONTAINS(msg, "(-1, -1)");
    EXPECT_EQ(summed(3, 0), 0.0);  // an empty array is fine
    EXPECT_EQ(summed(2, 3), 0.0);

    auto literal = jit("literal_extents", [](Array<double> out) { out[0] = kiln::sum(kiln::ones<double>(-1, -1)); }, on(t));
    std::vector<double> out(1, 7.0);
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { literal(out); }), "kernel 'literal_extents'");

    auto made = jit("made", [](Int n) {
      auto buffer = kiln::empty<float>(kiln::shape(n, 2));
      prange(n, [&](Int i) { buffer(i, 0) = 1.0f; buffer(i, 1) = 2.0f; });
      return buffer;
    }, on(t));
    msg = exact_error_of<ShapeError>([&] { made(-5); });
    EXPECT_CONTAINS(msg, "kernel 'made'");
    EXPECT_CONTAINS(msg, "array 'buffer'");
    EXPECT_CONTAINS(msg, "(-5, 2)");
    EXPECT_EQ(made(4).size(), 8);

    auto filled = jit("filled", [](Int n) { return kiln::full<std::int32_t>(n, 3); }, on(t));
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { filled(-2); }), "(-2)");

    // A check runs only where the kernel reaches it: an untaken branch may hold constant negative extents.
    auto branch = jit("branch", [](Int n) {
      Double s = 0.0;
      if_(n < 0, [&] { s = kiln::sum(kiln::zeros<double>(-1)); });
      return s;
    }, on(t));
    EXPECT_EQ(branch(1), 0.0);
    EXPECT_THROW(branch(-1), ShapeError);
  }
}

TEST(Extents, ArraysMadeInKernelsRefuseSizesBeyondTheLimitWithoutLooping) {
  for (Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    const auto start = std::chrono::steady_clock::now();
    // (2^62, 4) once looped (nearly) for ever over a fused space whose size had wrapped.
    auto summed = jit("sum_of_huge", [](Int n, Int m) { return kiln::sum(kiln::zeros<double>(n, m)); }, on(t));
    std::string msg = exact_error_of<ShapeError>([&] { summed(k2_62, 4); });
    EXPECT_CONTAINS(msg, "kernel 'sum_of_huge'");
    EXPECT_CONTAINS(msg, "too large");
    EXPECT_CONTAINS(msg, "(4611686018427387904, 4)");
    EXPECT_THROW(summed(0, k2_61), ShapeError);  // 2^64 bytes in the second axis, and none in all

    auto counted = jit("counted", [](Int n) { return kiln::sum(kiln::arange(n)); }, on(t));
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { counted(k2_62); }), "kernel 'counted'");
    EXPECT_EQ(counted(5), 10);
    auto spaced = jit("spaced", [](Int n) { return kiln::sum(kiln::linspace(0.0, 1.0, n)); }, on(t));
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { spaced(k2_61); }), "kernel 'spaced'");
    auto stepped = jit("stepped", [](Double hi) { return kiln::sum(kiln::arange(0.0, hi, 1e-9)); }, on(t));
    EXPECT_CONTAINS(exact_error_of<ShapeError>([&] { stepped(1e300); }), "kernel 'stepped'");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  }
}

TEST(Extents, AnImpossibleKernelResultIsAKilnErrorNamingKernelArrayAndSize) {
  for (Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    auto result = jit("vast_result", [](Int n) { return kiln::zeros<double>(n); }, on(t));
    const std::string msg = exact_error_of<Error>([&] { result(k2_57); });  // 2^60 bytes
    EXPECT_CONTAINS(msg, "kernel 'vast_result'");
    EXPECT_CONTAINS(msg, "out of memory");
    EXPECT_CONTAINS(msg, "(144115188075855872,)");
    EXPECT_CONTAINS(msg, "1152921504606846976 bytes");
    EXPECT_EQ(result(3).size(), 3);  // and the kernel is fine afterwards
  }
}

}  // namespace
}  // namespace kiln
