// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cuda_test_support.hpp"

#include <random>

#include "frontend/settings.hpp"
#include "kiln/device.hpp"
#include "passes/offload.hpp"

namespace kiln::cudatest {
namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g(20250611);
  return g;
}

std::int32_t code_of(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return kShapeMismatch;
  if (dynamic_cast<const IndexError*>(&e)) return kIndexOutOfRange;
  if (dynamic_cast<const ValueError*>(&e)) return kValueError;
  return kOutOfMemory;
}

}  // namespace

ir::Function offloaded(const ir::Function& f) {
  passes::PassContext ctx;
  return passes::offload(f, ctx);
}

codegen::cuda::Binary compile_for_sm90(const ir::Function& lowered, const codegen::CodegenOptions& opts,
                                       codegen::cuda::Program* program) {
  namespace cu = codegen::cuda;
  cu::Program prog = cu::emit_program(offloaded(lowered), kiln::detail::cuda_options().emit);
  cu::Binary bin = cu::compile_source(prog.source(), lowered.name, "sm_90", opts);
  for (const std::string& entry : prog.entries())
    EXPECT_NE(bin.ptx.find(".entry " + entry), std::string::npos) << lowered.name << ": no entry " << entry;
  EXPECT_EQ(bin.log, "") << lowered.name << ": NVRTC warned";
  EXPECT_EQ(bin.cubin.substr(0, 4), std::string("\x7f" "ELF")) << lowered.name;
  if (program) *program = std::move(prog);
  return bin;
}

double uniform(double lo, double hi) { return test_support::uniform(rng(), lo, hi); }
std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) { return test_support::uniform_int(rng(), lo, hi); }
TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout, double lo, double hi) {
  return test_support::random_array(rng(), t, std::move(shape), layout, lo, hi);
}

std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs) {
  Run run = start_run(f, inputs);
  try {
    ir::interpret(f, run.argv.data(), run.result);
  } catch (const Error& e) {
    run.outcome->status = code_of(e);
    run.outcome->message = e.what();
  }
  return std::move(run.outcome);
}

void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol) {
  EXPECT_EQ(got.status, ref.status) << "interpreter: " << ref.message << "\nkernel: " << got.message;
  if (ref.status != 0) return;  // after a failure the arguments' contents are unspecified
  expect_same_values(f, ref, got, tol);
}

void GpuTest::SetUp() {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
}

}  // namespace kiln::cudatest
