// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The newer element types on the CUDA backend: every kernel of element_type_kernels.hpp is emitted and compiled
// by NVRTC for sm_90 without a warning (no GPU needed), and run on a GPU against the interpreter (skipped
// without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/sort_kernels.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "kiln/device.hpp"
#include "kiln/kiln.hpp"
#include "tests/element_type_kernels.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace cudatest;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// Lowers `fn` for CUDA, emits it and compiles it for sm_90: every entry in the PTX, and no NVRTC warning.
template <class F>
void compiles_clean(const std::string& name, const F& fn, std::vector<std::string> names, int rank = 1) {
  SCOPED_TRACE(name);
  const ir::Function f = rows::lower_for_cuda(name, fn, std::move(names), rank);
  const cu::Program prog = cu::emit_program(offloaded(f), kiln::detail::cuda_options().emit);
  const cu::Binary bin = cu::compile_source(prog.source(), f.name, "sm_90", {});
  for (const std::string& entry : prog.entries())
    EXPECT_NE(bin.ptx.find(".entry " + entry), std::string::npos) << "no entry " << entry;
  EXPECT_EQ(bin.log, "") << "NVRTC warnings for\n" << prog.source();
}

TEST(ElementTypesCuda, EveryKernelCompilesWithoutWarnings) {
  require_nvrtc();
  compiles_clean("int_ops_u8", elemtest::int_ops<std::uint8_t>, {"a", "b", "out", "cmp"});
  compiles_clean("int_ops_u16", elemtest::int_ops<std::uint16_t>, {"a", "b", "out", "cmp"});
  compiles_clean("int_ops_u32", elemtest::int_ops<std::uint32_t>, {"a", "b", "out", "cmp"});
  compiles_clean("int_ops_u64", elemtest::int_ops<std::uint64_t>, {"a", "b", "out", "cmp"});
  compiles_clean("int_ops_i8", elemtest::int_ops<std::int8_t>, {"a", "b", "out", "cmp"});
  compiles_clean("int_ops_i16", elemtest::int_ops<std::int16_t>, {"a", "b", "out", "cmp"});
  compiles_clean("mixed_compare", elemtest::mixed_compare, {"u", "s", "w", "t", "out"});
  compiles_clean("half_ops", elemtest::half_ops<half>, {"a", "b", "out", "wide", "bytes"});
  compiles_clean("bfloat16_ops", elemtest::half_ops<bfloat16>, {"a", "b", "out", "wide", "bytes"});
  compiles_clean("hist_u8", elemtest::byte_histogram<std::uint8_t>, {"x", "hist"});
  compiles_clean("hist_i16", elemtest::byte_histogram<std::int16_t>, {"x", "hist"});
  compiles_clean("hist_u32", elemtest::byte_histogram<std::uint32_t>, {"x", "hist"});
  compiles_clean("hist_u64", elemtest::byte_histogram<std::uint64_t>, {"x", "hist"});
  compiles_clean("small_reductions", elemtest::small_reductions, {"a", "b", "h"}, 2);
}

TEST(ElementTypesCuda, SortKernelsOfEveryNewTypeCompileWithoutWarnings) {
  require_nvrtc();
  for (DType t : {DType::U8, DType::U16, DType::U32, DType::U64, DType::I8, DType::I16, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(name_of(t)));
    const cu::Binary b = cu::compile_source(cu::sort_source(t), "kiln_sort", "sm_90", {}, false);
    for (const std::string& entry : cu::sort_entries()) EXPECT_NE(b.ptx.find(".entry " + entry), std::string::npos) << entry;
    EXPECT_EQ(b.log, "");
  }
}

// ---- on a GPU: the same kernels against the interpreter ------------------------------------------------------

class ElementTypesGpu : public kiln::cudatest::GpuTest {};

const std::int64_t kSizes[] = {0, 1, 7, 13, 1021, 1000003};

template <class T>
void gpu_int_ops() {
  auto gpu = jit("int_ops", elemtest::int_ops<T>, Options().on(Target::cuda));
  auto ref = jit("int_ops", elemtest::int_ops<T>, Options().on(Target::interpreter));
  std::mt19937_64 rng(3);
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << name_of(dtype_of<T>()) << " n=" << n);
    std::vector<T> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<T>(i % 5 == 0 ? std::numeric_limits<T>::min() : rng());
      b[i] = static_cast<T>(i % 3 == 0 ? static_cast<T>(-1) : i % 4 == 0 ? T(0) : static_cast<T>(rng()));
    }
    NDArray<T> o1({16, n}), o2({16, n});
    NDArray<bool> c1({6, n}), c2({6, n});
    gpu(a, b, o1, c1);
    ref(a, b, o2, c2);
    for (std::int64_t k = 0; k < 16; ++k)
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(o1(k, i), o2(k, i)) << "row " << k << " at " << i;
    for (std::int64_t k = 0; k < 6; ++k)
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c1(k, i), c2(k, i)) << "comparison " << k << " at " << i;
  }
}

TEST_F(ElementTypesGpu, IntegerOperatorsMatchTheInterpreter) {
  gpu_int_ops<std::uint8_t>();
  gpu_int_ops<std::uint16_t>();
  gpu_int_ops<std::uint32_t>();
  gpu_int_ops<std::uint64_t>();
  gpu_int_ops<std::int8_t>();
  gpu_int_ops<std::int16_t>();
}

template <class H>
void gpu_half_ops() {
  auto gpu = jit("half_ops", elemtest::half_ops<H>, Options().on(Target::cuda));
  auto ref = jit("half_ops", elemtest::half_ops<H>, Options().on(Target::interpreter));
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << name_of(dtype_of<H>()) << " n=" << n);
    const auto [a, b] = elemtest::half_inputs<H>(n, 4);
    NDArray<H> o1({8, n}), o2({8, n});
    NDArray<float> w1({n}), w2({n});
    NDArray<std::uint8_t> u1({n}), u2({n});
    gpu(a, b, o1, w1, u1);
    ref(a, b, o2, w2, u2);
    for (std::int64_t k = 0; k < 8; ++k)
      for (std::int64_t i = 0; i < n; ++i) {
        const bool nan = std::isnan(static_cast<float>(o2(k, i)));
        ASSERT_TRUE(nan ? std::isnan(static_cast<float>(o1(k, i))) : o1(k, i).bits == o2(k, i).bits)
            << "row " << k << " at " << i;  // sqrt and division are correctly rounded in f32 on both
      }
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE((std::isnan(w1(i)) && std::isnan(w2(i))) || w1(i) == w2(i)) << i;
      ASSERT_EQ(u1(i), u2(i)) << i;
    }
  }
}

TEST_F(ElementTypesGpu, HalfAndBFloat16MatchTheInterpreterBitwise) {
  gpu_half_ops<half>();
  gpu_half_ops<bfloat16>();
}

TEST_F(ElementTypesGpu, HistogramsAndReductionsOfSmallTypes) {
  std::mt19937 rng(5);
  std::vector<std::uint8_t> x(1000003);
  for (auto& v : x) v = static_cast<std::uint8_t>(rng());
  auto hist = [&](auto counter) {
    using C = decltype(counter);
    std::vector<C> g(256, C(0)), r(256, C(0));
    jit("byte_histogram", elemtest::byte_histogram<C>, Options().on(Target::cuda))(x, g);
    jit("byte_histogram", elemtest::byte_histogram<C>, Options().on(Target::interpreter))(x, r);
    EXPECT_EQ(g, r) << name_of(dtype_of<C>());
  };
  hist(std::uint8_t{});
  hist(std::int16_t{});
  hist(std::uint32_t{});
  hist(std::uint64_t{});
  NDArray<std::uint8_t> a({257, 1031});
  NDArray<std::int16_t> b({257, 1031});
  NDArray<half> h({257, 1031});
  for (std::int64_t r = 0; r < 257; ++r)
    for (std::int64_t c = 0; c < 1031; ++c) {
      a(r, c) = static_cast<std::uint8_t>(rng());
      b(r, c) = static_cast<std::int16_t>(rng());
      h(r, c) = half(static_cast<float>(rng() % 2001) / 100.0f - 10.0f);
    }
  const auto [s1, m1, hs1, rs1, cm1, hm1] = jit("small_reductions", elemtest::small_reductions, Options().on(Target::cuda))(a, b, h);
  const auto [s2, m2, hs2, rs2, cm2, hm2] =
      jit("small_reductions", elemtest::small_reductions, Options().on(Target::interpreter))(a, b, h);
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(m1, m2);
  EXPECT_NEAR(hs1, hs2, 1.0);
  for (std::int64_t r = 0; r < 257; ++r) {
    EXPECT_EQ(rs1(r), rs2(r));
    EXPECT_NEAR(hm1(r), hm2(r), 1e-4);
  }
  for (std::int64_t c = 0; c < 1031; ++c) EXPECT_EQ(cm1(c), cm2(c));
}

template <class T>
void gpu_sort(const std::vector<T>& x) {
  auto fn = [](Array<T> a) { return std::pair{kiln::sort(a), kiln::argsort(a)}; };
  const auto [s1, p1] = jit("sort_types", fn, Options().on(Target::cuda))(x);
  const auto [s2, p2] = jit("sort_types", fn, Options().on(Target::interpreter))(x);
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(x.size()); ++i) {
    ASSERT_EQ(p1(i), p2(i)) << name_of(dtype_of<T>()) << " at " << i;
    ASSERT_EQ(std::memcmp(&s1(i), &s2(i), sizeof(T)), 0) << name_of(dtype_of<T>()) << " at " << i;
  }
}

TEST_F(ElementTypesGpu, SortsOfEveryNewTypeMatchTheInterpreter) {
  std::mt19937_64 rng(6);
  std::vector<std::uint8_t> u8(1000003);
  std::vector<std::int16_t> i16(1000003);
  for (std::size_t i = 0; i < u8.size(); ++i) {
    u8[i] = static_cast<std::uint8_t>(rng());
    i16[i] = static_cast<std::int16_t>(rng() % 100);
  }
  gpu_sort(u8);
  gpu_sort(i16);
  gpu_sort(elemtest::half_inputs<half>(100003, 7).first);
  gpu_sort(elemtest::half_inputs<bfloat16>(100003, 8).first);
}

}  // namespace
}  // namespace kiln
