// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the CUDA tests: runs against the interpreter (the definition of kiln's semantics), including runs that
// fail. The IR shorthands, host arrays and comparisons come from tools/test_support (shared with the CPU tests and
// kiln-fuzz).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "codegen/backend.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "ir/interpreter.hpp"
#include "ir/status.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "tools/test_support/buffers.hpp"
#include "tools/test_support/compare.hpp"
#include "tools/test_support/gtest_checks.hpp"
#include "tools/test_support/ir_shorthands.hpp"

namespace kiln::cudatest {

using namespace test_support;  // NOLINT(google-build-using-namespace): the shared test vocabulary

/// A test that needs a GPU: skipped, saying why, where the driver or a device is missing.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

/// Inputs drawn from this binary's own seed.
/// What the CUDA backend receives: `f` after the CUDA pipeline's last pass, which makes its parfors launches.
ir::Function offloaded(const ir::Function& f);

/// `lowered` (after the CUDA pipeline) offloaded, emitted with this process's emission settings and compiled by
/// NVRTC for sm_90; expects an entry in the PTX per kernel, no NVRTC warning and an ELF CUBIN. The program
/// goes to *program when given.
codegen::cuda::Binary compile_for_sm90(const ir::Function& lowered, const codegen::CodegenOptions& opts = {},
                                       codegen::cuda::Program* program = nullptr);

double uniform(double lo, double hi);
std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor, double lo = -10, double hi = 10);

/// The interpreter's run; an error it throws becomes status (via the code of its class) and message.
std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs);

/// Compares the status and, after a successful run, every array argument (elements and untouched gaps) and the result.
void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol);

}  // namespace kiln::cudatest
