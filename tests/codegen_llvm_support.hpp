// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the CPU backend's tests: running a function through the interpreter and a compiled kernel with each
// thread count, and comparing the outcomes with tolerances. The IR shorthands, host arrays and comparisons come
// from tools/test_support (shared with the GPU tests and kiln-fuzz).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm/cpu_backend.hpp"
#include "ir/interpreter.hpp"
#include "runtime/parallel.hpp"
#include "tools/test_support/buffers.hpp"
#include "tools/test_support/compare.hpp"
#include "tools/test_support/gtest_checks.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln::llvm_test {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary
namespace cpu = codegen::cpu;

inline const std::vector<std::int64_t> kSizes = {0, 1, 2, 3, 7, 1023, 1000000};

/// The interpreter's run on copies of `inputs`; an error it throws reaches the test.
inline std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs) {
  Run run = start_run(f, inputs);
  ir::interpret(f, run.argv.data(), run.result);
  return std::move(run.outcome);
}

class ThreadCount {
 public:
  explicit ThreadCount(int n) { runtime::set_num_threads(n); }
  ~ThreadCount() { runtime::set_num_threads(0); }
};

/// The kernel must succeed and leave what the interpreter left.
inline void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol) {
  EXPECT_EQ(got.status, 0) << got.message;
  expect_same_values(f, ref, got, tol);
}

/// Checks the compiled `k` (of `f`) against the interpreter on `inputs` with each thread count.
inline void check_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs, Tolerance tol = {},
                         const std::vector<int>& threads = {1, 2, 3, 8}) {
  SCOPED_TRACE("kernel " + f.name);
  auto ref = run_interpreter(f, inputs);
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    ThreadCount tc(t);
    auto got = run_kernel(k, f, inputs);
    expect_same(f, *ref, *got, tol);
  }
}

/// Compiles `f` once and checks it against the interpreter on `inputs` with each thread count.
inline void check(const ir::Function& f, const Args& inputs, Tolerance tol = {}, std::vector<int> threads = {1, 2, 3, 8},
                  codegen::CodegenOptions opts = {}) {
  check_kernel(cpu::compile(f, opts), f, inputs, tol, threads);
}

// ---- input generators (from this binary's own seed) ----------------------------------------------------

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(20240611);
  return g;
}
inline double uniform(double lo, double hi) { return test_support::uniform(rng(), lo, hi); }
inline std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) { return test_support::uniform_int(rng(), lo, hi); }
inline TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor, double lo = -10,
                              double hi = 10) {
  return test_support::random_array(rng(), t, std::move(shape), layout, lo, hi);
}

/// Sets element i to v converted to the array's element type.
inline void set_number(TestArray& a, std::int64_t i, double v) { a.set_number(i, v); }

// ---- the optimized LLVM IR (CpuOptions::keep_llvm_ir) --------------------------------------------------

/// The text of the LLVM function whose name contains `name`.
inline std::string llvm_function(const std::string& module, const std::string& name) {
  std::istringstream in(module);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line.rfind("define ", 0) == 0 && line.find(name) != std::string::npos) inside = true;
    if (inside) {
      out += line + "\n";
      if (line == "}") break;
    }
  }
  return out;
}

/// How many matches of `re` `text` holds (vector loop headers, atomic updates, ...).
inline std::ptrdiff_t count_matches(const std::string& text, const std::regex& re) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

}  // namespace kiln::llvm_test
