// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Misuses named in the README and docs that tests/errors_test.cpp and the array DSL tests do not already cover:
// each must surface as the documented kiln::Error subclass with a message naming the kernel or the construct, and
// bad environment values must be reported and ignored (checked in child processes, since kiln reads the
// environment once per process).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/error_test_util.hpp"
#include "tools/test_support/child_tests.hpp"

namespace kiln {
namespace {

using kiln_tests::exact_error_of;

Options on(Target t) {
  Options o;
  o.target = t;
  return o;
}

std::vector<Target> targets() {
  std::vector<Target> t{Target::interpreter};
  if (default_target() == Target::cpu) t.push_back(Target::cpu);  // a build with LLVM
  return t;
}


// ---- run time: reductions without an identity ------------------------------------------------------------

TEST(ErrorPaths, EmptyArrayReductionsWithoutAnIdentityAreValueErrorsNamingTheKernel) {
  for (Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    auto lowest = jit("lowest", [](Array<double> a) { return kiln::min(a); }, on(t));
    auto where = jit("where_max", [](Array<float> a) { return kiln::argmax(a); }, on(t));
    std::vector<double> none;
    std::vector<float> none_f;
    const std::string m1 = exact_error_of<ValueError>([&] { lowest(none); });
    EXPECT_CONTAINS(m1, "lowest");
    EXPECT_CONTAINS(m1, "empty array");
    const std::string m2 = exact_error_of<ValueError>([&] { where(none_f); });
    EXPECT_CONTAINS(m2, "where_max");
    EXPECT_CONTAINS(m2, "empty array");
    // The same kernels are fine on data afterwards.
    std::vector<double> some{3, -1, 2};
    EXPECT_EQ(lowest(some), -1.0);
  }
}

// ---- tracing -----------------------------------------------------------------------------------------------

TEST(ErrorPaths, AssigningALoopIndexIsATraceError) {
  auto k = jit("index_write", [](Array<double> a) {
    prange(a.shape(0), [&](Int i) {
      i = i + 1;
      a[i] = 0.0;
    });
  }, on(Target::interpreter));
  std::vector<double> v(4);
  const std::string m = exact_error_of<TraceError>([&] { k(v); });
  EXPECT_CONTAINS(m, "index_write");
  EXPECT_CONTAINS(m, "loop index is read-only");
}

TEST(ErrorPaths, AssigningAValueCreatedOutsideTheKernelIsATraceError) {
  Double outside = 2.0;  // a constant made on the host: readable in a kernel, not assignable there
  auto k = jit("host_value", [&](Array<double> a) {
    a[0] = outside;
    outside = a[0] * 2.0;
  }, on(Target::interpreter));
  std::vector<double> v(1);
  const std::string m = exact_error_of<TraceError>([&] { k(v); });
  EXPECT_CONTAINS(m, "host_value");
  EXPECT_CONTAINS(m, "created outside the kernel");
}

TEST(ErrorPaths, NegativeLinspaceCountIsATraceError) {
  auto k = jit("negative_samples", [](Array<double> a) { a[0] = kiln::sum(kiln::linspace(0.0, 1.0, Int(-3))); },
               on(Target::interpreter));
  std::vector<double> v(1);
  const std::string m = exact_error_of<TraceError>([&] { k(v); });
  EXPECT_CONTAINS(m, "negative_samples");
  EXPECT_CONTAINS(m, "linspace of a negative number of samples");
}

TEST(ErrorPaths, ViewWithMoreSlicesThanAxesIsATraceError) {
  auto k = jit("too_many_slices", [](Array<double> a) { a[0] = kiln::sum(a(kiln::slice(0, 1), kiln::slice(0, 1))); },
               on(Target::interpreter));
  std::vector<double> v(3);
  const std::string m = exact_error_of<TraceError>([&] { k(v); });
  EXPECT_CONTAINS(m, "too_many_slices");
  EXPECT_CONTAINS(m, "is viewed with 2");
}

TEST(ErrorPaths, AssigningAHigherRankValueIntoASliceIsATraceError) {
  auto k = jit("rank_down", [](Array<double, 1> a, Array<double, 2> b) { a[kiln::slice(0, 2)] = b; },
               on(Target::interpreter));
  std::vector<double> v(4);
  kiln::NDArray<double> m2({2, 2});
  const std::string m = exact_error_of<TraceError>([&] { k(v, m2); });
  EXPECT_CONTAINS(m, "rank_down");
  EXPECT_CONTAINS(m, "the value has rank 2");
}

// ---- targets --------------------------------------------------------------------------------------------------

TEST(ErrorPaths, AnUnavailableGpuTargetIsADeviceErrorAndLeavesTheCpuUsable) {
  if (cuda::available()) GTEST_SKIP() << "this machine has a GPU";
  auto k = jit("on_gpu", [](Array<float> x) { prange(x.shape(0), [&](Int i) { x[i] = x[i] + 1.0f; }); },
               on(Target::cuda));
  std::vector<float> v(8, 1.0f);
  EXPECT_CONTAINS(exact_error_of<DeviceError>([&] { k(v); }), "no CUDA driver/GPU");
  auto same = jit("on_gpu", [](Array<float> x) { prange(x.shape(0), [&](Int i) { x[i] = x[i] + 1.0f; }); });
  same(v);
  EXPECT_EQ(v[7], 2.0f);
}

// ---- the environment (child processes) -----------------------------------------------------------------------

// The child: runs one kernel and checks its answer. Only active when the parent test starts it.
TEST(ErrorPathsChild, RunsAKernel) {
  if (!std::getenv("KILN_ERROR_PATHS_CHILD")) GTEST_SKIP() << "started by ErrorPaths.BadEnvironmentValues...";
  auto k = jit("child_kernel", [](Array<double> x) {
    Double s = 0.0;
    prange(x.shape(0), [&](Int i) { s += x[i]; });
    return s;
  });
  std::vector<double> v(100, 0.5);
  ASSERT_EQ(k(v), 50.0);
  // Asked for explicitly: a build without the CPU backend runs the kernel on the interpreter, which never
  // needs the thread count, and the setting is read (and a bad value reported) when first needed.
  EXPECT_GE(kiln::num_threads(), 1);
}

TEST(ErrorPaths, BadEnvironmentValuesAreReportedAndIgnored) {
  namespace fs = std::filesystem;
  const std::string file = (fs::temp_directory_path() / ("kiln-error-paths-" + std::to_string(getpid()))).string();
  std::FILE* f = std::fopen(file.c_str(), "w");  // a regular file where the cache directory should be
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  const struct {
    std::string env, warning;
    bool compiles = false;  ///< shown only where the kernel is compiled (the interpreter writes no cache entry)
  } cases[] = {
      {"KILN_NUM_THREADS=lots", "ignoring KILN_NUM_THREADS=\"lots\""},
      {"KILN_NUM_THREADS=0", "ignoring KILN_NUM_THREADS=\"0\""},
      {"KILN_TARGET=gpu", "ignoring KILN_TARGET=gpu"},
      {"KILN_CACHE=sometimes", "ignoring KILN_CACHE=sometimes"},
      {"KILN_CACHE_MAX_BYTES=12Q", "ignoring KILN_CACHE_MAX_BYTES=12Q"},
      {"KILN_CACHE_MAX_BYTES=99999999999999999999", "ignoring KILN_CACHE_MAX_BYTES=99999999999999999999"},
      {"KILN_CACHE_DIR=" + file + "/cache", file, true},  // cannot be created: the kernel is compiled instead
      // The options are applied when LLVM first compiles: with the cache off, so that a kernel loaded from an
      // earlier run's cache entry cannot skip that.
      {"KILN_CACHE=off KILN_LLVM_OPTIONS=-no-such-kiln-option=3", "ignoring what LLVM rejected in KILN_LLVM_OPTIONS", true},
      // Options with which LLVM prints and ends the process (status 0, before the kernel computes) are refused;
      // the others still apply.
      {"KILN_CACHE=off KILN_LLVM_OPTIONS=-help", "ignoring -help in KILN_LLVM_OPTIONS", true},
      {"KILN_CACHE=off 'KILN_LLVM_OPTIONS=-force-vector-width=2 --version -help-list-hidden=true'",
       "ignoring --version -help-list-hidden=true in KILN_LLVM_OPTIONS", true},
      {"KILN_CACHE=off 'KILN_LLVM_OPTIONS=-print-all-options -h -no-such-kiln-option'",
       "ignoring -print-all-options -h in KILN_LLVM_OPTIONS", true},
  };
  for (const auto& c : cases) {
    if (c.compiles && !kiln::has_cpu_backend()) continue;
    SCOPED_TRACE(c.env);
    const auto [status, out] = kiln_tests::run_this_binary("KILN_ERROR_PATHS_CHILD=1 " + c.env, "ErrorPathsChild.RunsAKernel");
    EXPECT_EQ(status, 0) << out;
    EXPECT_CONTAINS(out, c.warning);
    EXPECT_CONTAINS(out, "[  PASSED  ] 1 test");  // the child computed its kernel's answer
  }
  fs::remove(file);
}

}  // namespace
}  // namespace kiln
