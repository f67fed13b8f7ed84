// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::atomic_* on the CUDA target. Without a GPU: every operation on every element type is offloaded,
// emitted as CUDA C and compiled by NVRTC for sm_90 without a warning, each one an atomic instruction of the
// PTX (float min/max a compare-and-swap loop). On a GPU (skipped without one): histograms with colliding bins,
// counters handing out slots, compare-exchange claims and min/max with NaN, +-0 and +-inf against the
// interpreter (exactly where the result does not depend on the order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "ir/atomics.hpp"
#include "tests/atomics_test_util.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"

namespace kiln {
namespace {

using atomics_test::random_bins;
using atomics_test::same_bits;

namespace cu = codegen::cuda;
using cudatest::offloaded;
namespace rows = cudatest::rows;

template <class T>
const auto every_op = [](Array<std::int64_t> bin, Array<T> x, Array<T> h, Array<T> olds) {
  prange(bin.shape(0), [&](Int i) {
    const Int b = bin[i];
    olds(i * 6 + 0) = atomic_add(h[b], x[i]);
    olds(i * 6 + 1) = atomic_sub(h[b], x[i]);
    olds(i * 6 + 2) = atomic_min(h[b], x[i]);
    olds(i * 6 + 3) = atomic_max(h[b], x[i]);
    olds(i * 6 + 4) = atomic_exchange(h[b], x[i]);
    olds(i * 6 + 5) = atomic_compare_exchange(h[b], x[i], x[i] + 1);
  });
};

/// An atomic in host code (outside every prange) next to one in a launch.
const auto host_atomic = [](Array<std::int64_t> c, Array<std::int64_t> h) {
  const Int old = atomic_add(c[0], 5);
  c[1] = old;
  prange(1000, [&](Int i) { atomic_max(h[i % 3], i); });
};

cu::Binary compile(const ir::Function& lowered, std::string* source = nullptr) {
  const cu::Program prog = cu::emit_program(offloaded(lowered), kiln::detail::cuda_options().emit);
  cu::Binary bin = cu::compile_source(prog.source(), lowered.name, "sm_90", {});
  for (const std::string& entry : prog.entries())
    EXPECT_NE(bin.ptx.find(".entry " + entry), std::string::npos) << lowered.name << ": no entry " << entry;
  EXPECT_EQ(bin.log, "") << lowered.name << ": NVRTC warned";
  EXPECT_EQ(bin.cubin.substr(0, 4), std::string("\x7f" "ELF")) << lowered.name;
  if (source) *source = prog.source();
  return bin;
}

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// An atomic instruction `atom[.global][.sem][.scope].<op>.<type>` in the PTX.
bool has_atom(const std::string& ptx, const std::string& op, const std::string& type) {
  return std::regex_search(ptx, std::regex("atom(\\.global)?(\\.relaxed)?(\\.gpu)?\\." + op + "\\." + type + "\\b"));
}

template <class T>
void every_op_compiles(const char* bits, bool is_float) {
  std::string source;
  const cu::Binary bin = compile(rows::lower_for_cuda(std::string("every_op_") + bits, every_op<T>, {"bin", "x", "h", "olds"}), &source);
  for (const char* fn : {"kiln_fetch_add(", "kiln_fetch_sub(", "kiln_fetch_min(", "kiln_fetch_max(",
                         "kiln_fetch_exchange(", "kiln_fetch_cas("})
    EXPECT_NE(source.find(std::string("= ") + fn), std::string::npos) << fn << " in\n" << source;
  const std::string b(bits);
  EXPECT_TRUE(has_atom(bin.ptx, "add", (is_float ? "f" : "u") + b)) << bin.ptx;
  EXPECT_TRUE(has_atom(bin.ptx, "cas", "b" + b)) << bin.ptx;  // compare-exchange, and float min/max's loops
  EXPECT_TRUE(has_atom(bin.ptx, "exch", "b" + b)) << bin.ptx;
  if (!is_float) {
    EXPECT_TRUE(has_atom(bin.ptx, "min", "s" + b)) << bin.ptx;
  }
}

TEST(AtomicsCudaCodegen, EveryOperationOnEveryTypeCompilesWithoutWarnings) {
  require_nvrtc();
  every_op_compiles<std::int32_t>("32", false);
  every_op_compiles<std::int64_t>("64", false);
  every_op_compiles<float>("32", true);
  every_op_compiles<double>("64", true);
}

TEST(AtomicsCudaCodegen, BoundsCheckedAndHostCodeAtomicsCompile) {
  require_nvrtc();
  compile(rows::lower_for_cuda("every_op_checked", every_op<double>, {"bin", "x", "h", "olds"}, 1, /*boundscheck=*/true));
  compile(rows::lower_for_cuda("host_atomic", host_atomic, {"c", "h"}));
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

class AtomicsGpu : public kiln::cudatest::GpuTest {};

const std::int64_t kSizes[] = {0, 1, 7, 1009, 1000003};

template <class T>
void histogram_on_gpu() {
  auto k = jit("gpu_hist", [](Array<std::int64_t> bin, Array<T> x, Array<T> h) {
    prange(bin.shape(0), [&](Int i) { atomic_add(h[bin[i]], x[i]); });
  });
  for (std::int64_t n : kSizes) {
    for (std::int64_t bins : {std::int64_t{1}, std::int64_t{7}, std::int64_t{4096}}) {
      const auto bin = random_bins(n, bins, static_cast<unsigned>(n + bins));
      std::vector<T> x(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(static_cast<int>(i % 5) - 1);  // exact sums
      std::vector<T> want(static_cast<std::size_t>(bins), T(2)), got = want;
      if (n <= 1009) k.on(Target::interpreter)(bin, x, want);
      else
        for (std::size_t i = 0; i < x.size(); ++i) want[static_cast<std::size_t>(bin[i])] += x[i];
      k.on(Target::cuda)(bin, x, got);
      EXPECT_TRUE(same_bits(got, want)) << "n " << n << " bins " << bins;
    }
  }
}

TEST_F(AtomicsGpu, HistogramsWithCollidingBins) {
  histogram_on_gpu<std::int32_t>();
  histogram_on_gpu<std::int64_t>();
  histogram_on_gpu<float>();
  histogram_on_gpu<double>();
}

TEST_F(AtomicsGpu, CounterAndClaims) {
  auto k = jit("gpu_claims", [](Array<std::int64_t> key, Array<std::int64_t> count, Array<std::int64_t> owner,
                                Array<std::int64_t> out) {
    prange(key.shape(0), [&](Int i) {
      const Int slot = atomic_add(count[0], 1);
      out[slot] = i;
      atomic_compare_exchange(owner[key[i]], -1, i);
    });
  });
  for (std::int64_t n : kSizes) {
    const std::int64_t bins = 97;
    const auto key = random_bins(n, bins, 5);
    std::vector<std::int64_t> count{0}, owner(bins, -1), out(static_cast<std::size_t>(n), -1);
    k.on(Target::cuda)(key, count, owner, out);
    EXPECT_EQ(count[0], n);
    std::sort(out.begin(), out.end());
    std::vector<std::int64_t> all(static_cast<std::size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(out, all) << "every iteration got a slot of its own, n " << n;
    std::vector<bool> used(bins, false);
    for (auto b : key) used[static_cast<std::size_t>(b)] = true;
    for (std::int64_t b = 0; b < bins; ++b) {
      const auto o = owner[static_cast<std::size_t>(b)];
      EXPECT_EQ(o != -1, used[static_cast<std::size_t>(b)]) << "bin " << b;
      if (o != -1) {
        EXPECT_EQ(key[static_cast<std::size_t>(o)], b) << "bin " << b;
      }
    }
  }
}

// An atomic outside every prange is host code: the host executor updates the element in device memory.
TEST_F(AtomicsGpu, HostCodeAtomicsUpdateDeviceMemory) {
  auto k = jit("host_atomic", host_atomic);
  std::vector<std::int64_t> c{1, 0}, h(3, -1);
  k.on(Target::cuda)(c, h);
  EXPECT_EQ(c, (std::vector<std::int64_t>{6, 1}));
  EXPECT_EQ(h, (std::vector<std::int64_t>{999, 997, 998}));
}

template <class T>
void min_max_on_gpu() {
  auto k = jit("gpu_extremes", atomics_test::bin_extremes<T>);
  const T inf = std::numeric_limits<T>::infinity();
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1009}, std::int64_t{100003}}) {
    const auto bin = random_bins(n, 11, static_cast<unsigned>(n) + 3);
    const std::vector<T> x = atomics_test::values_with_specials<T>(bin, static_cast<unsigned>(n));
    std::vector<T> lo0(11, inf), hi0(11, -inf);
    std::vector<T> want_lo = lo0, want_hi = hi0, lo = lo0, hi = hi0;
    k.on(Target::interpreter)(bin, x, want_lo, want_hi);
    k.on(Target::cuda)(bin, x, lo, hi);
    EXPECT_TRUE(same_bits(lo, want_lo)) << "min, n " << n;
    EXPECT_TRUE(same_bits(hi, want_hi)) << "max, n " << n;
  }
}

TEST_F(AtomicsGpu, MinMaxPropagateNanAndOrderZeros) {
  min_max_on_gpu<float>();
  min_max_on_gpu<double>();
  min_max_on_gpu<std::int32_t>();
}

}  // namespace
}  // namespace kiln
