// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array arguments that share memory: every call gets the answer distinct arrays give, or an AliasError
// naming the kernel and both arguments (frontend/argument_overlap.hpp, ir/argument_access.hpp). Each case
// runs on the interpreter and, where kiln has it, the CPU target, against a plain C++ computation.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/test_support/child_tests.hpp"

namespace kiln {
namespace {

using kiln_tests::host_targets;

std::vector<double> ramp(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 97) * 0.5 - 7.0;
  return v;
}

bool copied(const std::string& diagnostics) { return diagnostics.find("argument overlap:") != std::string::npos; }

class Aliasing : public ::testing::TestWithParam<Target> {
 protected:
  Options opts() const { return Options{}.on(GetParam()); }
};

// y[i] = x[i-1] with one buffer as both: ~1/8 of a million elements were wrong on the CPU before.
TEST_P(Aliasing, ShiftWithOneBufferAsInputAndOutput) {
  auto shift = jit("shift", [](Array<double> x, Array<double> y) {
    prange(1, x.shape(0), [&](Int i) { y[i] = x[i - 1]; });
  }, opts());
  for (std::size_t n : {0u, 1u, 2u, 7u, 1000003u}) {
    std::vector<double> buf = ramp(n), want = buf;
    for (std::size_t i = 1; i < n; ++i) want[i] = buf[i - 1];
    shift(buf, buf);
    ASSERT_EQ(buf, want) << "n=" << n;
  }
  EXPECT_TRUE(copied(shift.diagnostics())) << shift.diagnostics();
}

// The passes treat parameters as distinct arrays: here x[i] = y[i + 1] + y[0] through a temporary fuses into
// one loop reading y where x is written. One buffer as both still gets the distinct-array answer, because the
// call-time check judges the fused code and copies y.
TEST_P(Aliasing, FusionAcrossParametersKeepsTheDistinctArrayAnswer) {
  auto shift = jit("shift_fused", [](Array<double> x, Array<double> y) {
    const Int n = x.shape(0) - 1;
    auto b = empty<double>(n);
    prange(n, [&](Int i) { b[i] = y[i + 1] + y[0]; });
    prange(n, [&](Int i) { x[i] = b[i]; });
  }, opts());
  for (std::size_t n : {1u, 2u, 7u, 100003u}) {
    std::vector<double> buf = ramp(n), want = buf;
    for (std::size_t i = 0; i + 1 < n; ++i) want[i] = buf[i + 1] + buf[0];
    shift(buf, buf);
    ASSERT_EQ(buf, want) << "n=" << n;
  }
  EXPECT_TRUE(copied(shift.diagnostics())) << shift.diagnostics();
  EXPECT_NE(shift.diagnostics().find("fused"), std::string::npos) << shift.diagnostics();
}

// Views of one buffer offset by one element, written pointwise: the overlap is not the same view.
TEST_P(Aliasing, ViewsOffsetByOneElement) {
  auto twice = jit("twice", [](Array<double> x, Array<double> y) {
    prange(x.shape(0), [&](Int i) { y[i] = 2.0 * x[i]; });
  }, opts());
  const std::int64_t n = 4097;
  std::vector<double> buf = ramp(n + 1), want = buf;
  for (std::int64_t i = 0; i < n; ++i) want[i + 1] = 2.0 * buf[i];
  twice(ArrayRef<const double>(buf.data(), {n}), ArrayRef<double>(buf.data() + 1, {n}));
  EXPECT_EQ(buf, want);
}

// Interleaved views (even and odd elements): the byte ranges overlap, the elements do not.
TEST_P(Aliasing, InterleavedViewsStayCorrect) {
  auto twice = jit("twice_strided", [](Array<double> x, Array<double> y) {
    prange(x.shape(0), [&](Int i) { y[i] = 2.0 * x[i]; });
  }, opts());
  const std::int64_t n = 513;
  std::vector<double> buf = ramp(2 * n), want = buf;
  for (std::int64_t i = 0; i < n; ++i) want[2 * i + 1] = 2.0 * buf[2 * i];
  twice(ArrayRef<const double>(buf.data(), {n}, {2}), ArrayRef<double>(buf.data() + 1, {n}, {2}));
  EXPECT_EQ(buf, want);
}

// The host-level stencil call with its input as output (425 of 4096 elements wrong on the CPU before).
TEST_P(Aliasing, StencilIntoItsOwnInput) {
  StencilOptions so = border(Border::nearest);
  so.kernel = opts();
  auto smooth = stencil("smooth3", [](Window<double, 1> a) { return (a(-1) + a(0) + a(1)) / 3.0; }, so);
  std::vector<double> x = ramp(4096);
  std::vector<double> want(x.size());
  smooth.into(want, x);  // distinct arrays: the reference
  smooth.into(x, x);
  EXPECT_EQ(x, want);
}

// y[i] = f(y[i], x[i]) with x and y the same view: legal, and no copy is made.
TEST_P(Aliasing, PointwiseInPlaceUpdateNeedsNoCopy) {
  auto axpy = jit("axpy_inplace", [](Double a, Array<double> x, Array<double> y) {
    prange(x.shape(0), [&](Int i) { y[i] = a * x[i] + y[i]; });
  }, opts());
  std::vector<double> y = ramp(1009), want = y;
  for (double& v : want) v = 3.0 * v + v;
  axpy(3.0, y, y);
  EXPECT_EQ(y, want);
  EXPECT_FALSE(copied(axpy.diagnostics())) << axpy.diagnostics();
}

// Reads that end before the first write can overlap in any way.
TEST_P(Aliasing, ReadsFinishedBeforeTheWritesNeedNoCopy) {
  auto fill_mean = jit("fill_mean", [](Array<double> x, Array<double> y) {
    Double s = 0.0;
    prange(x.shape(0), [&](Int i) { s += x[i]; });
    const auto mean = s / to_double(x.shape(0));
    prange(y.shape(0), [&](Int i) { y[i] = mean; });
  }, opts());
  std::vector<double> buf(64);
  std::iota(buf.begin(), buf.end(), 0.0);
  fill_mean(ArrayRef<const double>(buf.data(), {64}), ArrayRef<double>(buf.data() + 1, {63}));
  EXPECT_EQ(buf[0], 0.0);
  for (std::size_t i = 1; i < buf.size(); ++i) ASSERT_EQ(buf[i], 31.5) << i;
  EXPECT_FALSE(copied(fill_mean.diagnostics())) << fill_mean.diagnostics();
}

// The same view read and written pointwise, but inside a time loop: each step must read the input, not the
// last step's output, so the input is copied.
TEST_P(Aliasing, PointwiseUpdateRepeatedByALoopIsCopied) {
  auto steps = jit("steps", [](Array<double> x, Array<double> y, Int n) {
    range(n, [&](Int) { prange(x.shape(0), [&](Int i) { y[i] = x[i] + 1.0; }); });
  }, opts());
  std::vector<double> buf = ramp(100), want = buf;
  for (double& v : want) v += 1.0;
  steps(buf, buf, 5);
  EXPECT_EQ(buf, want);
  EXPECT_TRUE(copied(steps.diagnostics()));
}

// A read after a write of the same element in one iteration sees the new value only if aliased.
TEST_P(Aliasing, ReadAfterWriteInOneIterationIsCopied) {
  auto k = jit("write_then_read", [](Array<double> x, Array<double> y, Array<double> z) {
    prange(x.shape(0), [&](Int i) {
      y[i] = 10.0;
      z[i] = x[i];
    });
  }, opts());
  std::vector<double> buf = ramp(33), z(33), want = buf;
  k(buf, buf, z);
  EXPECT_EQ(z, want);
  for (double v : buf) ASSERT_EQ(v, 10.0);
}

TEST_P(Aliasing, TwoWrittenArgumentsSharingMemoryAreAnError) {
  auto k = jit("two_outputs", [](Array<double> a, Array<double> b) {
    prange(a.shape(0), [&](Int i) {
      a[i] = 1.0;
      b[i] = 2.0;
    });
  }, opts());
  std::vector<double> buf(16);
  try {
    k(buf, buf);
    FAIL() << "no AliasError";
  } catch (const AliasError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'two_outputs'"), std::string::npos) << m;
    EXPECT_NE(m.find("argument 1"), std::string::npos) << m;
    EXPECT_NE(m.find("argument 2"), std::string::npos) << m;
    EXPECT_NE(m.find("pass distinct arrays"), std::string::npos) << m;
  }
  std::vector<double> a(16), b(16);
  k(a, b);  // still usable
  EXPECT_EQ(a[3], 1.0);
  EXPECT_EQ(b[3], 2.0);
}

// Disjoint arguments never pay for a copy.
TEST_P(Aliasing, DisjointArgumentsAreNotCopied) {
  auto shift = jit("shift_disjoint", [](Array<double> x, Array<double> y) {
    prange(1, x.shape(0), [&](Int i) { y[i] = x[i - 1]; });
  }, opts());
  std::vector<double> buf = ramp(64);
  shift(ArrayRef<const double>(buf.data(), {32}), ArrayRef<double>(buf.data() + 32, {32}));
  EXPECT_EQ(buf[33], buf[0]);
  EXPECT_FALSE(copied(shift.diagnostics()));
}

INSTANTIATE_TEST_SUITE_P(Targets, Aliasing, ::testing::ValuesIn(host_targets()),
                         [](const auto& info) { return std::string(name_of(info.param)); });

}  // namespace
}  // namespace kiln
