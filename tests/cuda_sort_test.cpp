// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::sort and kiln::argsort on the CUDA target (issue #19). Without a GPU: the radix kernels of every key type
// compile through NVRTC without a warning, and a sorting kernel offloads its maps while the sort stays host code
// whose program compiles. With one: the device sort against the interpreter and std::stable_sort for every key
// type, sizes 0, 1, primes, tile edges and a million, NaN, zeros and infinities, duplicates and rows.
#include <gtest/gtest.h>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/sort_kernels.hpp"
#include "cuda_rows.hpp"
#include "frontend/settings.hpp"
#include "ir/printer.hpp"
#include "kiln/kiln.hpp"
#include "tests/sort_test_util.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace kiln::sorttest;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

TEST(CudaSortCodegen, RadixKernelsCompileWithoutWarningsForEveryKeyType) {
  require_nvrtc();
  for (DType t : {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64}) {
    const cu::Binary b = cu::compile_source(cu::sort_source(t), "kiln_sort", "sm_90", {}, false);
    EXPECT_EQ(b.log.find("warning"), std::string::npos) << name_of(t) << ":\n" << b.log;
    for (const std::string& e : cu::sort_entries())
      EXPECT_NE(b.ptx.find(".entry " + e), std::string::npos) << name_of(t) << ": no entry " << e;
  }
}

TEST(CudaSortCodegen, TheSortStaysHostCodeBetweenLaunches) {
  require_nvrtc();
  const ir::Function f = cudatest::rows::lower_for_cuda(
      "sorted", [](Array<double, 2> x) { return std::tuple{kiln::sort(x * 2.0), kiln::argsort(x)}; }, {"x"}, 2);
  const std::string text = ir::to_string(f);
  EXPECT_NE(text.find("sort rows of"), std::string::npos) << text;
  EXPECT_NE(text.find("launch kernel 0"), std::string::npos) << text;
  const cu::Program prog = cu::emit_program(f, kiln::detail::cuda_options().emit);
  const cu::Binary b = cu::compile_source(prog.source(), f.name, "sm_90", {});
  EXPECT_EQ(b.log.find("warning"), std::string::npos) << b.log;
}

bool gpu_present() { return kiln::cuda::available(); }

template <class T, int Rank>
void against_interpreter(const std::vector<std::vector<std::int64_t>>& shapes, const char* type_name) {
  auto body = [](Array<T, Rank> x) { return std::tuple{kiln::sort(x), kiln::argsort(x)}; };
  auto gpu = jit("sort_gpu", body, Options().on(Target::cuda));
  auto ref = jit("sort_ref", body, Options().on(Target::interpreter));
  for (const auto& shape : shapes)
    for (int distinct : {3, 1 << 20}) {
      std::int64_t size = 1;
      for (auto e : shape) size *= e;
      NDArray<T> in(shape);
      const auto v = keys<T>(size, static_cast<std::uint64_t>(size + distinct), distinct);
      std::copy(v.begin(), v.end(), in.data());
      auto [s, p] = gpu(in);
      auto [rs, rp] = ref(in);
      const std::string what = std::string(type_name) + " size " + std::to_string(size);
      expect_sorted(in, s, p, what);
      ASSERT_EQ(std::memcmp(s.data(), rs.data(), static_cast<size_t>(size) * sizeof(T)), 0) << what;
      ASSERT_EQ(std::memcmp(p.data(), rp.data(), static_cast<size_t>(size) * 8), 0) << what;
    }
}

const std::vector<std::vector<std::int64_t>> kSizes1 = {{0}, {1}, {2}, {7}, {255}, {256}, {257}, {4095}, {4096}, {4097},
                                                      {65537}, {1'000'003}};
const std::vector<std::vector<std::int64_t>> kRows = {{0, 7}, {7, 0}, {5, 1}, {3, 13}, {300, 1009}, {2, 70001}};

TEST(CudaSortGpu, EveryKeyTypeMatchesTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  against_interpreter<bool, 1>(kSizes1, "bool");
  against_interpreter<std::int32_t, 1>(kSizes1, "i32");
  against_interpreter<std::int64_t, 1>(kSizes1, "i64");
  against_interpreter<float, 1>(kSizes1, "f32");
  against_interpreter<double, 1>(kSizes1, "f64");
}

TEST(CudaSortGpu, RowsAlongTheLastAxisMatchTheInterpreter) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  against_interpreter<double, 2>(kRows, "f64 rows");
  against_interpreter<std::int32_t, 2>(kRows, "i32 rows");
  against_interpreter<float, 3>({{2, 3, 17}, {4, 1, 5000}}, "f32 rank 3");
}

}  // namespace
}  // namespace kiln
