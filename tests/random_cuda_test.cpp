// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counter-based random numbers (kiln/random.hpp) on the CUDA target. Without a GPU: kernels drawing every kind
// in a prange and as arrays are emitted as CUDA C and compiled by NVRTC for sm_90 without a warning, with
// Philox's products as mul.hi.u32 and no contracted or approximate floating point in the numbers, also
// under fast_math. On a GPU (skipped without one): the same bits as the definition (ir/random.hpp), the
// interpreter and the CPU backend, for sizes 0, 1, primes and large. The packed stream's draws and fills
// likewise, and a fill's PTX computes one Philox block per iteration.
#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <string>
#include <tuple>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "ir/random.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "tests/random_test_util.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace rnd = ir::random;
using cudatest::compile_for_sm90;
namespace rows = cudatest::rows;

using random_test::draws;
using random_test::kKey;
using random_test::packed_draws;

const auto arrays = [](Int n, Int m, Int key, Double mean, Double sd) {
  return std::tuple{random::uniform<float>(shape(n, m), key), random::normal<double>(shape(n, m), key, mean, sd, 11),
                    kiln::sum(random::normal<float>(shape(n), key))};
};
const auto normal_only = [](Array<double, 1> w, Int key) {
  prange(w.shape(0), [&](Int i) { w[i] = random::normal<double>(key, i); });
};

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

TEST(RandomCudaCodegen, EveryFormCompilesWithoutWarnings) {
  require_nvrtc();
  const cu::Binary bin = compile_for_sm90(rows::lower_for_cuda("random_draws", draws, {"u", "v", "z", "w", "b", "key", "first"}));
  EXPECT_NE(bin.ptx.find("mul.hi.u32"), std::string::npos) << "Philox's products";
  compile_for_sm90(rows::lower_for_cuda("random_arrays", arrays, {"n", "m", "key", "mean", "sd"}));
  compile_for_sm90(rows::lower_for_cuda("random_draws_checked", draws, {"u", "v", "z", "w", "b", "key", "first"}, 1, true));
}

TEST(RandomCudaCodegen, NumbersAreNotContractedEvenUnderFastMath) {
  require_nvrtc();
  const ir::Function f = rows::lower_for_cuda("random_normal", normal_only, {"w", "key"});
  for (bool fast : {false, true}) {
    codegen::CodegenOptions o;
    o.fast_math = fast;
    const cu::Binary bin = compile_for_sm90(f, o);
    SCOPED_TRACE(fast ? "fast_math" : "default");
    EXPECT_EQ(bin.ptx.find("fma.rn.f64"), std::string::npos) << "a contracted product in the polynomials";
    EXPECT_EQ(bin.ptx.find(".approx"), std::string::npos) << "an approximate operation";
    EXPECT_NE(bin.ptx.find("sqrt.rn.f64"), std::string::npos);
    EXPECT_NE(bin.ptx.find("div.rn.f64"), std::string::npos);
  }
}

const auto fill_uniform = [](Array<float, 1> x, Int key, Int first) { random::packed::fill_uniform(x, key, first); };
const auto fill_normal = [](Array<double, 1> x, Int key, Int first) { random::packed::fill_normal(x, key, first); };

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RandomCudaCodegen, PackedFillsComputeOneBlockPerIteration) {
  require_nvrtc();
  compile_for_sm90(rows::lower_for_cuda("random_packed", packed_draws, {"u", "v", "z", "w", "b", "fu", "fv", "fz", "fw", "key", "first"}));
  // Philox-4x32-10 has two 32 x 32 -> 64-bit products a round, 20 mul.hi.u32 a block (19 where a constant word
  // folds one). However far the prange is unrolled, each block of a fill stores its values from one Philox
  // (fewer than two blocks' products per block), and a normal pair from one logarithm (its division) and one
  // square root: a block is counted by its four float conversions, or by its division.
  const cu::Binary u = compile_for_sm90(rows::lower_for_cuda("random_fill_uniform", fill_uniform, {"x", "key", "first"}));
  const std::size_t ub = count(u.ptx, "cvt.rn.f32.u32") / 4;
  EXPECT_GE(ub, 1u);
  EXPECT_EQ(count(u.ptx, "cvt.rn.f32.u32"), 4 * ub);
  EXPECT_EQ(count(u.ptx, "st.global.f32"), 4 * ub);
  EXPECT_LT(count(u.ptx, "mul.hi.u32"), 2 * 19 * ub) << u.ptx;
  const cu::Binary z = compile_for_sm90(rows::lower_for_cuda("random_fill_normal", fill_normal, {"x", "key", "first"}));
  const std::size_t zb = count(z.ptx, "div.rn.f64");
  EXPECT_GE(zb, 1u);
  EXPECT_EQ(count(z.ptx, "sqrt.rn.f64"), zb);
  EXPECT_EQ(count(z.ptx, "st.global.f64"), 2 * zb);
  EXPECT_LT(count(z.ptx, "mul.hi.u32"), 2 * 19 * zb) << z.ptx;
  EXPECT_EQ(z.ptx.find("fma.rn.f64"), std::string::npos);
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

class RandomGpu : public kiln::cudatest::GpuTest {};

TEST_F(RandomGpu, EveryKindIsTheDefinitionsBits) {
  auto g = jit("random_draws", draws, Options().on(Target::cuda));
  for (std::int64_t n : {0, 1, 2, 7, 13, 1009, 100003, (1 << 22) + 3}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    EXPECT_EQ(random_test::draws_mismatches(g, n, n * 1000003 - 5), 0u);
  }
}

TEST_F(RandomGpu, PackedDrawsAndFillsAreTheDefinitionsBits) {
  auto g = jit("random_packed", packed_draws, Options().on(Target::cuda));
  for (std::int64_t n : {0, 1, 2, 3, 5, 7, 13, 1009, 100003, (1 << 22) + 3}) {
    for (std::int64_t first : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, n * 1000003 - 5}) {
      if (n > 100003 && first != 3) continue;  // the large size once (the host's check is the slow part)
      SCOPED_TRACE("n=" + std::to_string(n) + " first=" + std::to_string(first));
      EXPECT_EQ(random_test::packed_mismatches(g, n, first), 0u);
    }
  }
}

TEST_F(RandomGpu, ArraysMatchTheInterpreter) {
  auto g = jit("random_arrays", arrays, Options().on(Target::cuda));
  auto i = jit("random_arrays", arrays, Options().on(Target::interpreter));
  for (auto [n, m] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {1, 1}, {101, 37}, {1031, 1021}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    auto [ga, gb, gs] = g(n, m, kKey, 2.5, 0.75);
    auto [ia, ib, is] = i(n, m, kKey, 2.5, 0.75);
    EXPECT_EQ(std::memcmp(ga.data(), ia.data(), sizeof(float) * static_cast<std::size_t>(n * m)), 0);
    EXPECT_EQ(std::memcmp(gb.data(), ib.data(), sizeof(double) * static_cast<std::size_t>(n * m)), 0);
    EXPECT_NEAR(gs, is, 1e-3 * static_cast<double>(n) + 1e-6);  // the GPU's reduction tree is its own
  }
}

}  // namespace
}  // namespace kiln
