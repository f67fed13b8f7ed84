// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Check mode (Options::check, KILN_CHECK=1): a kernel whose lambda no longer traces to the compiled IR — a
// `[&]`-captured host value changed after the first call — is a TraceError naming the kernel, not a silently
// stale answer.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/test_support/child_tests.hpp"

namespace kiln {
namespace {

using kiln_tests::host_targets;

class CheckMode : public ::testing::TestWithParam<Target> {
 protected:
  Options opts(bool check) const {
    Options o = Options{}.on(GetParam());
    o.check = check;
    return o;
  }
};

TEST_P(CheckMode, AChangedCaptureIsATraceErrorNamingTheKernel) {
  double scale = 2.0;
  auto k = jit("scaled", [&](Array<double> x) { prange(x.shape(0), [&](Int i) { x[i] = x[i] * scale; }); }, opts(true));
  std::vector<double> v(10, 1.0);
  k(v);
  EXPECT_EQ(v[9], 2.0);
  k(v);  // unchanged capture: fine
  EXPECT_EQ(v[9], 4.0);
  scale = 3.0;
  try {
    k(v);
    FAIL() << "no TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'scaled'"), std::string::npos) << m;
    EXPECT_NE(m.find("check mode"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel parameters"), std::string::npos) << m;  // the remedy
    EXPECT_NE(m.find("3"), std::string::npos) << m;                  // the new constant, in the difference shown
  }
  EXPECT_EQ(v[9], 4.0);  // the stale code did not run
}

// Without check mode the first trace is what runs: the documented behaviour that check mode exposes.
TEST_P(CheckMode, WithoutCheckModeTheFirstTraceIsKept) {
  double scale = 2.0;
  auto k = jit("scaled_unchecked", [&](Array<double> x) { prange(x.shape(0), [&](Int i) { x[i] = x[i] * scale; }); },
               opts(false));
  std::vector<double> v(4, 1.0);
  k(v);
  scale = 3.0;
  k(v);
  EXPECT_EQ(v[0], 4.0);
}

// The remedy: a parameter is read at every call, and check mode accepts it.
TEST_P(CheckMode, ValuesPassedAsParametersAreNeverStale) {
  auto k = jit("scaled_param", [](Array<double> x, Double s) { prange(x.shape(0), [&](Int i) { x[i] = x[i] * s; }); },
               opts(true));
  std::vector<double> v(4, 1.0);
  k(v, 2.0);
  k(v, 3.0);
  EXPECT_EQ(v[0], 6.0);
}

// A capture that changes the structure (a loop bound known at trace time) is caught too.
TEST_P(CheckMode, AChangedTraceTimeBoundIsCaught) {
  int terms = 3;
  auto k = jit("series", [&](Array<double> x) {
    prange(x.shape(0), [&](Int i) {
      Double s = 0.0;
      for (int t = 0; t < terms; ++t) s += x[i];
      x[i] = s;
    });
  }, opts(true));
  std::vector<double> v(5, 1.0);
  k(v);
  terms = 4;
  EXPECT_THROW(k(v), TraceError);
}

INSTANTIATE_TEST_SUITE_P(Targets, CheckMode, ::testing::ValuesIn(host_targets()),
                         [](const auto& info) { return std::string(name_of(info.param)); });

// KILN_CHECK=1 turns the mode on for kernels made without explicit options (a child process: the variable is
// read once per process).
TEST(CheckModeChild, StaleCaptureThrows) {
  if (!std::getenv("KILN_CHECK_MODE_CHILD")) GTEST_SKIP() << "started by CheckModeEnvironment.KilnCheckTurnsItOn";
  ASSERT_TRUE(Options{}.check);
  double c = 1.0;
  auto k = jit("env_checked", [&](Array<double> x) { prange(x.shape(0), [&](Int i) { x[i] = c; }); });
  std::vector<double> v(3);
  k(v);
  c = 2.0;
  EXPECT_THROW(k(v), TraceError);
}

TEST(CheckModeEnvironment, KilnCheckTurnsItOn) {
  EXPECT_FALSE(Options{}.check) << "this test expects KILN_CHECK unset";
  const kiln_tests::ChildRun c =
      kiln_tests::run_this_binary("KILN_CHECK_MODE_CHILD=1 KILN_CHECK=1", "CheckModeChild.StaleCaptureThrows");
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("[  PASSED  ] 1 test"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace kiln
