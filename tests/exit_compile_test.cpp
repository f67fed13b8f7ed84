// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernels traced, compiled and called while the process exits: from an atexit handler and from a static
// destructor, with the cache on and off, on the CPU and the interpreter. Each case is a child process (this
// test binary run again with a filter), since only a fresh process has the order of exit-time destruction that
// matters: a handler registered before kiln's first compilation runs after state made by it is destroyed.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <typeinfo>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/error_test_util.hpp"
#include "tools/test_support/child_tests.hpp"

namespace kiln {
namespace {

// ---- the child ------------------------------------------------------------------------------------------------

/// Traces, compiles and calls a new kernel; prints "result <sum>" or "error <class>: <message>".
void compile_and_call(const char* when) {
  try {
    auto k = jit("at_exit_sum", [](Array<double> x) {
      Double s = 0.0;
      prange(x.shape(0), [&](Int i) { s += x[i]; });
      return kiln::sum(kiln::ones<double>(x.shape(0))) + s;  // an array made in the kernel too
    });
    std::vector<double> v(1000, 0.25);
    std::printf("%s: result %g\n", when, k(v));
  } catch (const CompileError& e) {
    std::printf("%s: error CompileError: %s\n", when, e.what());
  } catch (const std::exception& e) {
    std::printf("%s: error %s: %s\n", when, typeid(e).name(), e.what());
  }
  std::fflush(stdout);
}

struct CallsAtDestruction {
  ~CallsAtDestruction() { compile_and_call("static destructor"); }
};

void warm_up() {
  auto k = jit("warm_up", [](Array<double> x) { prange(x.shape(0), [&](Int i) { x[i] = kiln::exp(x[i]) * 2.0; }); });
  std::vector<double> v(64, 0.0);
  k(v);
  std::printf("warm: %g\n", v[63]);
  std::fflush(stdout);
}

// KILN_EXIT_COMPILE_CHILD=<how>[-warm]: "atexit" registers a handler, "static" makes a function-local static with
// a destructor; "-warm" compiles another kernel after that (so exit destroys what that compilation made before
// the handler runs); "warm-then-atexit" compiles first. Returning from main then starts the exit.
TEST(ExitCompileChild, RegistersTheExitTimeCall) {
  const char* mode = std::getenv("KILN_EXIT_COMPILE_CHILD");
  if (!mode) GTEST_SKIP() << "started by ExitCompile tests";
  const std::string m = mode;
  if (m.rfind("atexit", 0) == 0) std::atexit([] { compile_and_call("atexit"); });
  if (m.rfind("static", 0) == 0) static CallsAtDestruction at_destruction;
  if (m.find("-warm") != std::string::npos) warm_up();
  if (m == "warm-then-atexit") {
    warm_up();
    std::atexit([] { compile_and_call("atexit"); });
  }
}

// ---- the parent -----------------------------------------------------------------------------------------------

using Child = kiln_tests::ChildRun;

Child run_child(const std::string& env) { return kiln_tests::run_this_binary(env, "ExitCompileChild.*"); }

class ExitCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    dir_ = (fs::temp_directory_path() / ("kiln-exit-compile-" + std::to_string(getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Runs the child with `mode` under each cache setting (on: a fresh directory, then the same one again, so
  /// that the exit-time kernel is also loaded from an entry), checking its status and output with `check`.
  template <class F>
  void each_cache_setting(const std::string& mode, const std::string& extra_env, F check) {
    const std::string base = "KILN_EXIT_COMPILE_CHILD=" + mode + " " + extra_env + " ";
    const std::string settings[] = {"KILN_CACHE=off", "KILN_CACHE=on KILN_CACHE_DIR=" + dir_ + "/" + mode,
                                    "KILN_CACHE=on KILN_CACHE_DIR=" + dir_ + "/" + mode};
    for (const std::string& cache : settings) {
      SCOPED_TRACE(base + cache);
      const Child c = run_child(base + cache);
      EXPECT_EQ(c.status, 0) << c.out;
      EXPECT_CONTAINS(c.out, "[  PASSED  ] 1 test");
      check(c.out);
    }
  }

  std::string dir_;
};

const char* const kResult = "result 1250";  // 1000 * 0.25 + 1000 ones

TEST_F(ExitCompile, AnAtexitHandlerCompilesAndCallsANewKernel) {
  each_cache_setting("atexit", "", [](const std::string& out) { EXPECT_CONTAINS(out, std::string("atexit: ") + kResult); });
}

TEST_F(ExitCompile, AStaticDestructorCompilesAndCallsANewKernel) {
  each_cache_setting("static", "", [](const std::string& out) {
    EXPECT_CONTAINS(out, std::string("static destructor: ") + kResult);
  });
}

// Registered before another kernel's compilation, the handler runs after exit destroyed state that compilation
// made (kiln's trace state per thread included): the interpreter needs none of LLVM's and computes; the CPU
// target either computes or says why it cannot, but never crashes or prints garbage.
TEST_F(ExitCompile, HandlersRegisteredBeforeAnotherCompilationComputeOrSayWhy) {
  for (const char* how : {"atexit", "static"}) {
    const std::string mode = std::string(how) + "-warm";
    const std::string label = std::string(how) == "atexit" ? "atexit: " : "static destructor: ";
    each_cache_setting(mode, "KILN_TARGET=interpreter", [&](const std::string& out) {
      EXPECT_CONTAINS(out, "warm: 2");
      EXPECT_CONTAINS(out, label + kResult);
    });
    if (!has_cpu_backend()) continue;
    each_cache_setting(mode, "KILN_TARGET=cpu", [&](const std::string& out) {
      EXPECT_CONTAINS(out, "warm: 2");
      if (out.find(label + kResult) != std::string::npos) return;
      EXPECT_CONTAINS(out, label + "error CompileError: kernel 'at_exit_sum': cannot compile or load CPU code while "
                                   "the process exits");
      EXPECT_CONTAINS(out, "kiln::Target::interpreter");
    });
  }
}

TEST_F(ExitCompile, HandlersRegisteredAfterTheLastCompilationCompileForTheCpu) {
  // Everything LLVM made for warm_up's kernel is still there when the handler runs.
  each_cache_setting("warm-then-atexit", "", [](const std::string& out) {
    EXPECT_CONTAINS(out, "warm: 2");
    EXPECT_CONTAINS(out, std::string("atexit: ") + kResult);
  });
}

}  // namespace
}  // namespace kiln
