// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-block private copies of array reductions on the CUDA target (codegen/cuda/private_copies.hpp,
// emit_private.cpp, the launch model's private clause). Without a GPU: which reductions may be copied and why
// not, every operation on every element type emitted and compiled by NVRTC warning-free with shared-memory
// atomics in the PTX, and each clause of the launch rule on an H100's shape. On a GPU (skipped without one):
// histograms of every operation and type against the interpreter at sizes 0, 1, primes and sizes large enough
// that the launch copies (the diagnostics say which), integer results exact, float min/max with NaN, +-0 and
// +-inf bit for bit, float sums of exactly representable values exact, out-of-range bins an IndexError in
// bounds-checked mode as in the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "bench/suite/kernels.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/launch_model.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"
#include "tests/atomics_test_util.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace rows = cudatest::rows;
using atomics_test::random_bins;
using atomics_test::same_bits;

/// h[bin] op= x for the array-reduction updates the frontend writes (sub as an add of -x).
template <class T>
const auto every_update = [](Array<std::int64_t> bin, Array<T> x, Array<T> add, Array<T> sub, Array<T> mul) {
  prange(bin.shape(0), [&](Int i) {
    const Int b = bin[i];
    add[b] += x[i];
    sub[b] -= x[i];
    mul[b] *= x[i];
  });
};
const std::vector<std::string> kEveryNames = {"bin", "x", "add", "sub", "mul"};

/// Five histograms in one prange: one more than a kernel copies.
const auto five = [](Array<std::int64_t> bin, Array<double> x, Array<double> a, Array<double> b, Array<double> c, Array<double> d,
                     Array<double> e) {
  prange(bin.shape(0), [&](Int i) {
    a[bin[i]] += x[i];
    b[bin[i]] += x[i];
    c[bin[i]] += x[i];
    d[bin[i]] += x[i];
    e[bin[i]] += x[i];
  });
};

/// Counts: the shape of the suite's hist2d (a constant added once per iteration: 32-bit counts per block).
const auto counts = [](Array<std::int64_t> bin, Array<std::int64_t> h) { prange(bin.shape(0), [&](Int i) { h[bin[i]] += 1; }); };

/// kiln::atomic_add whose old value nothing reads (the kiln-bench-gpu histogram row's form), and one that reads it.
const auto atomic_counts = [](Array<float> x, Array<std::int32_t> h) {
  const auto bins = kiln::to_float(h.shape(0));
  prange(x.shape(0), [&](Int i) { atomic_add(h[kiln::to_int(x[i] * bins)], 1); });
};
const auto slots = [](Array<std::int64_t> bin, Array<std::int64_t> count, Array<std::int64_t> out) {
  prange(bin.shape(0), [&](Int i) { out[i] = atomic_add(count[bin[i]], 1); });
};

std::vector<cu::GpuKernel> kernels(const ir::Function& f) { return cu::emit_program(cudatest::offloaded(f), cu::EmitOptions{}).gpu_kernels; }

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

// ---- without a GPU: the plan, the emission, NVRTC --------------------------------------------------------------

TEST(PrivateCopiesPlan, CandidatesAndTheirCountWidth) {
  const auto every = kernels(rows::lower_for_cuda("every_update", every_update<std::int64_t>, kEveryNames));
  ASSERT_EQ(every.size(), 1u);
  ASSERT_EQ(every[0].privates.size(), 3u) << every[0].plan;
  for (const cu::PrivateCandidate& c : every[0].privates) EXPECT_EQ(c.narrow_bound, 0) << c.array->name << ": the operand is no constant";
  const auto f = kernels(rows::lower_for_cuda("five", five, {"bin", "x", "a", "b", "c", "d", "e"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].privates.size(), 4u) << "at most kMaxPrivateArrays: " << f[0].plan;
  EXPECT_NE(f[0].plan.find("e: no private copies: a kernel copies at most 4 arrays"), std::string::npos) << f[0].plan;
  const auto c = kernels(rows::lower_for_cuda("counts", counts, {"bin", "h"}));
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(c[0].privates.size(), 1u);
  EXPECT_EQ(c[0].privates[0].narrow_bound, 1);
  EXPECT_NE(c[0].plan.find("array reduction(s) h: per-block copies in shared memory"), std::string::npos) << c[0].plan;
  const auto h2 = kernels(rows::lower_for_cuda("hist2d", suite::kiln_kernels::hist2d, {"hist", "x", "y"}));
  ASSERT_EQ(h2.size(), 1u);
  ASSERT_EQ(h2[0].privates.size(), 1u);
  EXPECT_EQ(h2[0].privates[0].narrow_bound, 1);
  // Explicit atomics whose old values nothing reads; not when one is read (it depends on the order).
  const auto a = kernels(rows::lower_for_cuda("atomic_counts", atomic_counts, {"x", "h"}));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].privates.size(), 1u);
  EXPECT_TRUE(a[0].privates[0].atomics);
  EXPECT_EQ(a[0].privates[0].op, ReduceOp::Add);
  const auto ex = kernels(rows::lower_for_cuda("extremes", atomics_test::bin_extremes<double>, {"bin", "x", "lo", "hi"}));
  ASSERT_EQ(ex.size(), 1u);
  ASSERT_EQ(ex[0].privates.size(), 2u);
  EXPECT_EQ(ex[0].privates[0].op, ReduceOp::Min);
  EXPECT_EQ(ex[0].privates[1].op, ReduceOp::Max);
  const auto s = kernels(rows::lower_for_cuda("slots", slots, {"bin", "count", "out"}));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].privates.empty());
  EXPECT_NE(s[0].plan.find("count: no private copies: the body reads the old value"), std::string::npos) << s[0].plan;
  // An update inside a loop of the body may run any number of times an iteration: 8-byte counts.
  const auto looped = [](Array<std::int64_t> bin, Array<std::int64_t> h) {
    prange(bin.shape(0), [&](Int i) { range(3, [&](Int) { h[bin[i]] += 2; }); });
  };
  const auto l = kernels(rows::lower_for_cuda("looped", looped, {"bin", "h"}));
  ASSERT_EQ(l.size(), 1u);
  ASSERT_EQ(l[0].privates.size(), 1u);
  EXPECT_EQ(l[0].privates[0].narrow_bound, 0);
}

TEST(PrivateCopiesCodegen, EveryOperationOnEveryTypeCompilesWithSharedAtomics) {
  require_nvrtc();
  auto check = [](const ir::Function& f, const char* shared_atom) {
    cu::Program prog;
    const cu::Binary bin = cudatest::compile_for_sm90(f, {}, &prog);
    EXPECT_NE(prog.source().find("extern __shared__ unsigned long long kiln_copies[]"), std::string::npos) << f.name;
    EXPECT_TRUE(std::regex_search(bin.ptx, std::regex(shared_atom))) << f.name << ": no " << shared_atom;
  };
  check(rows::lower_for_cuda("every_i32", every_update<std::int32_t>, kEveryNames), R"(atom\.shared\.add\.u32)");
  check(rows::lower_for_cuda("every_i64", every_update<std::int64_t>, kEveryNames), R"(atom\.shared\.(add\.u64|cas\.b64))");
  check(rows::lower_for_cuda("every_f32", every_update<float>, kEveryNames), R"(atom\.shared\.(add\.f32|cas\.b32))");
  check(rows::lower_for_cuda("every_f64", every_update<double>, kEveryNames), R"(atom\.shared\.(add\.f64|cas\.b64))");
  check(rows::lower_for_cuda("counts", counts, {"bin", "h"}), R"(atom\.shared\.add\.u32)");
  check(rows::lower_for_cuda("counts_checked", counts, {"bin", "h"}, 1, /*boundscheck=*/true), R"(atom\.shared\.add\.u32)");
  check(rows::lower_for_cuda("hist2d", suite::kiln_kernels::hist2d, {"hist", "x", "y"}), R"(atom\.shared\.add\.u32)");
  check(rows::lower_for_cuda("atomic_counts", atomic_counts, {"x", "h"}), R"(atom\.shared\.add\.u32)");
  check(rows::lower_for_cuda("extremes_f64", atomics_test::bin_extremes<double>, {"bin", "x", "lo", "hi"}), R"(atom\.shared\.cas\.b64)");
  check(rows::lower_for_cuda("extremes_i32", atomics_test::bin_extremes<std::int32_t>, {"bin", "x", "lo", "hi"}), R"(atom\.shared\.min\.s32)");
}

// ---- the launch rule on an H100's shape ------------------------------------------------------------------------

const cu::DeviceShape kH100{132, 2048, 2147483647u};  // 48 KiB a block, 228 KiB an SM, 1 KiB reserved a block
const cu::KernelOccupancy kOcc{1024, 128, 2048, 0};

cu::GpuKernel histogram_kernel(int candidates, std::int64_t narrow_bound, cu::Strategy s = cu::Strategy::Elementwise) {
  cu::GpuKernel k;
  k.strategy = s;
  k.unroll = s == cu::Strategy::Elementwise ? 4 : 1;
  k.rank = 1;
  for (int a = 0; a < candidates; ++a) k.privates.push_back({nullptr, ReduceOp::Add, DType::I64, narrow_bound});
  return k;
}

TEST(PrivateCopiesLaunch, CopiesWhenEachBlockRunsManyIterationsPerElement) {
  const std::uint64_t points[] = {std::uint64_t{1} << 26};
  const cu::PrivateInput bins[] = {{4096, 8, 1}};
  const cu::LaunchChoice c = cu::choose_launch(histogram_kernel(1, 1), points, kOcc, kH100, {}, -1, bins);
  EXPECT_EQ(c.private_reason, cu::PrivateReason::Copied);
  EXPECT_EQ(c.private_mask, 3u) << "copied, in 32-bit counts";
  EXPECT_EQ(c.shared_bytes, 4096u * 4);
  // 17 KiB a block: 13 fit an SM, 8 of 256 threads fill its 2048; the smallest block with the most threads.
  EXPECT_EQ(c.geometry.block.x, 256u);
  EXPECT_EQ(c.geometry.grid.count(), 132u * 8);
  EXPECT_GE(c.block_iterations, cu::kPrivateUpdatesPerElement * 4096);
  // A kernel whose registers allow at most 96 threads a block gets blocks it can be launched with.
  const cu::LaunchChoice heavy = cu::choose_launch(histogram_kernel(1, 1), points, {96, 96, 672, 0}, kH100, {}, -1, bins);
  EXPECT_LE(heavy.geometry.block.x, 96u);
  EXPECT_EQ(heavy.private_reason, cu::PrivateReason::Copied);
  // The same launch without candidates' inputs: the plain choice.
  const cu::LaunchChoice plain = cu::choose_launch(histogram_kernel(1, 1), points, kOcc, kH100, {});
  EXPECT_EQ(plain.private_mask, 0u);
  EXPECT_EQ(plain.shared_bytes, 0u);
  EXPECT_GT(plain.geometry.grid.count(), c.geometry.grid.count());
}

TEST(PrivateCopiesLaunch, FewIterationsOrNoRoomKeepThePlainLaunch) {
  const std::uint64_t few[] = {100000};
  const cu::PrivateInput bins[] = {{4096, 8, 1}};
  const cu::LaunchChoice f = cu::choose_launch(histogram_kernel(1, 1), few, kOcc, kH100, {}, -1, bins);
  EXPECT_EQ(f.private_reason, cu::PrivateReason::FewUpdates);
  EXPECT_EQ(f.private_mask, 0u);
  const cu::LaunchChoice plain = cu::choose_launch(histogram_kernel(1, 1), few, kOcc, kH100, {});
  EXPECT_EQ(f.geometry.grid.count(), plain.geometry.grid.count());
  EXPECT_EQ(f.geometry.block.x, plain.geometry.block.x);
  const std::uint64_t many[] = {std::uint64_t{1} << 30};
  const cu::PrivateInput huge[] = {{std::uint64_t{1} << 20, 8, 1}};
  EXPECT_EQ(cu::choose_launch(histogram_kernel(1, 1), many, kOcc, kH100, {}, -1, huge).private_reason, cu::PrivateReason::NoRoom);
  const cu::PrivateInput empty[] = {{0, 8, 1}};
  EXPECT_EQ(cu::choose_launch(histogram_kernel(1, 1), many, kOcc, kH100, {}, -1, empty).private_mask, 0u);
}

TEST(PrivateCopiesLaunch, WideCountsWhenABlockCouldOverflow32Bits) {
  const std::uint64_t points[] = {std::uint64_t{1} << 26};
  // Each iteration adds up to 2^20: a block's 2^16 iterations could reach 2^36, so the copy holds 8-byte counts.
  const cu::PrivateInput big_steps[] = {{4096, 8, std::int64_t{1} << 20}};
  const cu::LaunchChoice c = cu::choose_launch(histogram_kernel(1, std::int64_t{1} << 20), points, kOcc, kH100, {}, -1, big_steps);
  EXPECT_EQ(c.private_mask, 1u);
  EXPECT_EQ(c.shared_bytes, 4096u * 8);
}

TEST(PrivateCopiesLaunch, CopiesFillTheBlocksSharedMemoryInOrder) {
  const std::uint64_t points[] = {std::uint64_t{1} << 28};
  const cu::PrivateInput two[] = {{5000, 8, 0}, {2048, 8, 0}, {512, 8, 0}};
  const cu::LaunchChoice c = cu::choose_launch(histogram_kernel(3, 0), points, kOcc, kH100, {}, -1, two);
  EXPECT_EQ(c.private_mask, (1u << 0) | (1u << 4)) << "the second does not fit beside the first; the third does";
  EXPECT_EQ(c.shared_bytes, 5000u * 8 + 512 * 8);
}

TEST(PrivateCopiesLaunch, ReductionsKeepTheirFixedGeometry) {
  const std::uint64_t points[] = {std::uint64_t{1} << 26};
  const cu::PrivateInput bins[] = {{64, 8, 0}};
  const cu::GpuKernel k = histogram_kernel(1, 0, cu::Strategy::Reduce);
  const cu::LaunchChoice c = cu::choose_launch(k, points, kOcc, kH100, {}, -1, bins);
  const cu::LaunchChoice plain = cu::choose_launch(k, points, kOcc, kH100, {});
  EXPECT_EQ(c.private_reason, cu::PrivateReason::Copied);
  EXPECT_EQ(c.geometry.grid.count(), plain.geometry.grid.count());
  EXPECT_EQ(c.geometry.block.x, plain.geometry.block.x);
  for (cu::PrivateReason r : {cu::PrivateReason::None, cu::PrivateReason::Copied, cu::PrivateReason::NoRoom, cu::PrivateReason::FewUpdates})
    EXPECT_GT(cu::reason_text(r).size(), 20u);
}

// ---- on a GPU: against the interpreter ------------------------------------------------------------------------

class PrivateCopiesGpu : public cudatest::GpuTest {};

/// n and bins: the small ones run without copies (too few iterations per block), the large ones with them (on
/// an H100, small copies take 2112 blocks of 128 threads: 1000003 points are 473 a block, 4000037 are 1894).
struct Case {
  std::int64_t n, bins;
};
const Case kCases[] = {{0, 7}, {1, 7}, {7, 7}, {1009, 64}, {1000003, 1}, {1000003, 7}, {1000003, 61}, {4000037, 251}, {4000037, 4093}};

template <class T>
std::vector<T> exact_values(std::int64_t n, unsigned seed, bool factors) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  // Factors of +-1 (and 2 for integers, whose products wrap exactly); small integers for sums: every order
  // gives the same float result.
  for (auto& v : x) {
    if (factors) v = std::is_floating_point_v<T> ? T(rng() % 2 ? 1 : -1) : T(rng() % 7 == 0 ? 2 : rng() % 2 ? 1 : -1);
    else v = static_cast<T>(static_cast<int>(rng() % 200) - 100);
  }
  return x;
}

template <class T>
void every_update_on_gpu() {
  auto k = jit("private_every", every_update<T>);
  for (const Case& c : kCases) {
    const auto bin = random_bins(c.n, c.bins, static_cast<unsigned>(c.n + c.bins));
    const std::vector<T> x = exact_values<T>(c.n, static_cast<unsigned>(c.n) + 1, false);
    const std::vector<T> f = exact_values<T>(c.n, static_cast<unsigned>(c.n) + 2, true);
    const std::size_t nb = static_cast<std::size_t>(c.bins);
    // add and sub into -0 (an untouched bin keeps it), mul from 1, min/max from the extremes.
    const T z = std::is_floating_point_v<T> ? T(-0.0) : T(3);
    std::vector<T> add(nb, z), sub(nb, z), mul(nb, T(1));
    std::vector<T> wadd = add, wsub = sub, wmul = mul;
    // The sums and products on the host, the interpreter's arithmetic (exact for these values in any order).
    for (std::size_t i = 0; i < bin.size(); ++i) {
      const auto b = static_cast<std::size_t>(bin[i]);
      wadd[b] = ir::sem::binary(BinaryOp::Add, wadd[b], x[i]);
      wsub[b] = ir::sem::binary(BinaryOp::Sub, wsub[b], x[i]);
      wmul[b] = ir::sem::binary(BinaryOp::Mul, wmul[b], f[i]);
    }
    if (c.n <= 1009) {  // the interpreter itself where it is quick
      std::vector<T> iadd = add, isub = sub, imul = mul, jadd = add, jsub = sub;
      k.on(Target::interpreter)(bin, x, iadd, isub, std::vector<T>(nb, T(1)));
      k.on(Target::interpreter)(bin, f, jadd, jsub, imul);
      EXPECT_TRUE(same_bits(iadd, wadd) && same_bits(isub, wsub) && same_bits(imul, wmul)) << "the host reference, n " << c.n;
    }
    // mul takes the factors f: a second call, whose other outputs are not looked at.
    std::vector<T> other_add = add, other_sub = sub;
    k.on(Target::cuda)(bin, x, add, sub, std::vector<T>(nb, T(1)));
    k.on(Target::cuda)(bin, f, other_add, other_sub, mul);
    EXPECT_TRUE(same_bits(add, wadd)) << "add, n " << c.n << " bins " << c.bins;
    EXPECT_TRUE(same_bits(sub, wsub)) << "sub, n " << c.n << " bins " << c.bins;
    EXPECT_TRUE(same_bits(mul, wmul)) << "mul, n " << c.n << " bins " << c.bins;
    if constexpr (std::is_floating_point_v<T>) {
      // NaN, +-inf and +-0 summed (bins 9 and up only +-0: -0 stays -0 unless some +0 arrives; bins nothing
      // reaches keep their -0): the same in any order, but for the bits of a NaN.
      const std::vector<T> s = atomics_test::values_with_specials<T>(bin, static_cast<unsigned>(c.n) + 3);
      std::vector<T> got(nb, T(-0.0)), want = got, unused_sub = got, unused_mul(nb, T(1));
      if (c.n <= 1009) {
        std::vector<T> ws = got, wm = unused_mul;
        k.on(Target::interpreter)(bin, s, want, ws, wm);
      } else {
        for (std::size_t i = 0; i < bin.size(); ++i) {
          const auto b = static_cast<std::size_t>(bin[i]);
          want[b] = ir::sem::binary(BinaryOp::Add, want[b], s[i]);
        }
      }
      k.on(Target::cuda)(bin, s, got, unused_sub, unused_mul);
      for (std::size_t b = 0; b < nb; ++b)
        EXPECT_TRUE((std::isnan(got[b]) && std::isnan(want[b])) || ir::sem::same_bits(got[b], want[b]))
            << "sum with specials, bin " << b << ": " << got[b] << " against " << want[b] << ", n " << c.n;
    }
  }
}

TEST_F(PrivateCopiesGpu, EveryOperationOnEveryTypeMatchesTheInterpreter) {
  every_update_on_gpu<std::int32_t>();
  every_update_on_gpu<std::int64_t>();
  every_update_on_gpu<float>();
  every_update_on_gpu<double>();
}

TEST_F(PrivateCopiesGpu, CountsAreExactAndTheDiagnosticsSayWhichLaunchCopied) {
  auto k = jit("private_counts", counts, Options().on(Target::cuda));
  for (const Case& c : kCases) {
    const auto bin = random_bins(c.n, c.bins, static_cast<unsigned>(c.n) + 9);
    std::vector<std::int64_t> h(static_cast<std::size_t>(c.bins), 5), want = h;
    if (c.n <= 1009) k.on(Target::interpreter)(bin, want);
    else
      for (auto b : bin) ++want[static_cast<std::size_t>(b)];
    k(bin, h);
    EXPECT_EQ(h, want) << "n " << c.n << " bins " << c.bins;
  }
  // 2^25 points into 2^12 bins, half of them into one bin: the copies, counted in 32 bits (on an H100, 1056
  // blocks of about 31 800 points, >= 4 per element; 2^24 points are too few: the diagnostics said so).
  const std::int64_t n = std::int64_t{1} << 25, bins = 4096;
  std::vector<std::int64_t> bin = random_bins(n, bins, 17);
  for (std::size_t i = 0; i < bin.size(); i += 2) bin[i] = 77;
  std::vector<std::int64_t> h(bins, 0), want(bins, 0);
  for (auto b : bin) ++want[static_cast<std::size_t>(b)];
  k(bin, h);
  EXPECT_EQ(h, want);
  const std::string d = k.diagnostics();
  // (The array's name is the lambda's parameter name where kiln can read the source, else arg1.)
  EXPECT_NE(d.find(" (4096 elements, counted in 32 bits per block): " +
                   std::string(cu::reason_text(cu::PrivateReason::Copied))),
            std::string::npos)
      << d;
  std::vector<std::int64_t> few(100), hf(bins, 0);
  k(few, hf);
  EXPECT_NE(k.diagnostics().find(std::string(cu::reason_text(cu::PrivateReason::FewUpdates))), std::string::npos) << k.diagnostics();
}

template <class T>
void extremes_on_gpu() {
  auto k = jit("private_extremes", atomics_test::bin_extremes<T>);
  const T hi0 = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  const T lo0 = std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  for (const Case& c : kCases) {
    const auto bin = random_bins(c.n, c.bins, static_cast<unsigned>(c.n) + 5);
    const std::vector<T> x = atomics_test::values_with_specials<T>(bin, static_cast<unsigned>(c.n) + 6);
    const std::size_t nb = static_cast<std::size_t>(c.bins);
    std::vector<T> lo(nb, lo0), hi(nb, hi0), want_lo = lo, want_hi = hi;
    if (c.n <= 1009) {
      k.on(Target::interpreter)(bin, x, want_lo, want_hi);
    } else {
      for (std::size_t i = 0; i < bin.size(); ++i) {
        const auto b = static_cast<std::size_t>(bin[i]);
        want_lo[b] = ir::sem::atomic_update(AtomicOp::Min, want_lo[b], x[i], T());
        want_hi[b] = ir::sem::atomic_update(AtomicOp::Max, want_hi[b], x[i], T());
      }
    }
    k.on(Target::cuda)(bin, x, lo, hi);
    EXPECT_TRUE(same_bits(lo, want_lo)) << "atomic_min, n " << c.n << " bins " << c.bins;
    EXPECT_TRUE(same_bits(hi, want_hi)) << "atomic_max, n " << c.n << " bins " << c.bins;
  }
}

TEST_F(PrivateCopiesGpu, AtomicsWhoseOldValuesNothingReadsMatchTheInterpreter) {
  // min/max with NaN, +-0 and +-inf bit for bit (kiln's NaN-propagating order, -0 below +0).
  extremes_on_gpu<float>();
  extremes_on_gpu<double>();
  extremes_on_gpu<std::int32_t>();
  extremes_on_gpu<std::int64_t>();
  // The histogram row's counts (2^24 floats into 256 int32 bins, copied) exact, and the slots kernel (its old
  // values read: plain global atomics) still hands every iteration a slot of its own.
  auto counts_k = jit("private_atomic_counts", atomic_counts, Options().on(Target::cuda));
  std::vector<float> x(std::size_t{1} << 24);
  std::mt19937_64 rng(8);
  for (auto& v : x) v = static_cast<float>(rng() % 1000) / 1000.0f;
  std::vector<std::int32_t> h(256, 1), want = h;
  for (float v : x) ++want[static_cast<std::size_t>(v * 256.0f)];
  counts_k(x, h);
  EXPECT_EQ(h, want);
  EXPECT_NE(counts_k.diagnostics().find(" (256 elements): " + std::string(cu::reason_text(cu::PrivateReason::Copied))),
            std::string::npos)
      << counts_k.diagnostics();
  auto s = jit("private_slots", slots, Options().on(Target::cuda));
  const std::int64_t n = 1000003;
  const auto bin = random_bins(n, 3, 2);
  std::vector<std::int64_t> count(3, 0), out(static_cast<std::size_t>(n), -1);
  s(bin, count, out);
  std::vector<std::vector<bool>> seen(3);
  for (std::int64_t b = 0; b < 3; ++b) seen[static_cast<std::size_t>(b)].assign(static_cast<std::size_t>(count[static_cast<std::size_t>(b)]), false);
  bool unique = true;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& used = seen[static_cast<std::size_t>(bin[i])];
    const auto o = out[i];
    if (o < 0 || o >= static_cast<std::int64_t>(used.size()) || used[static_cast<std::size_t>(o)]) unique = false;
    else used[static_cast<std::size_t>(o)] = true;
  }
  EXPECT_TRUE(unique);
  EXPECT_EQ(count[0] + count[1] + count[2], n);
}

TEST_F(PrivateCopiesGpu, ImageHistogramsOverTwoDimensionalSpaces) {
  // A 2-d parfor (its grid capped along y, then x) counting pixel values, small and large.
  auto k = jit("private_image", [](Array<std::int32_t, 2> img, Array<std::int64_t> h) {
    prange(shape(img.shape(0), img.shape(1)), [&](Int i, Int j) { h[img(i, j)] += 1; });
  });
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {7, 13}, {3001, 2999}, {1, 4000037}}) {
    NDArray<std::int32_t> img({rows, cols});
    std::mt19937_64 rng(static_cast<unsigned>(rows + cols));
    for (std::int64_t i = 0; i < img.size(); ++i) img.data()[i] = static_cast<std::int32_t>(rng() % 100 < 50 ? 7 : rng() % 100);
    std::vector<std::int64_t> h(100, 0), want(100, 0);
    if (img.size() <= 1000) k.on(Target::interpreter)(img, want);
    else
      for (std::int64_t i = 0; i < img.size(); ++i) ++want[static_cast<std::size_t>(img.data()[i])];
    k.on(Target::cuda)(img, h);
    EXPECT_EQ(h, want) << rows << " x " << cols;
  }
}

TEST_F(PrivateCopiesGpu, TheSuiteHist2dMatchesOnAStridedView) {
  // The suite's 2-d histogram into a column-strided view of a wider array (copies laid out by the extents,
  // merged through the strides), against the interpreter.
  auto k = jit("hist2d_view", [](Array<std::int64_t, 2> wide, Array<double, 1> x, Array<double, 1> y) {
    suite::kiln_kernels::hist2d(wide(kiln::all, kiln::slice(0, kiln::none, 2)), x, y);
  });
  const std::int64_t n = 8000009, bins = 32;  // about 7600 points a block: copies
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size());
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = u(rng), y[i] = std::min(0.999, u(rng) * u(rng));
  NDArray<std::int64_t> h({bins, 2 * bins}), want({bins, 2 * bins});
  for (std::int64_t i = 0; i < h.size(); ++i) h.data()[i] = want.data()[i] = i % 3;
  for (std::size_t i = 0; i < x.size(); ++i)
    ++want.data()[static_cast<std::int64_t>(x[i] * bins) * 2 * bins + 2 * static_cast<std::int64_t>(y[i] * bins)];
  k.on(Target::cuda)(h, x, y);
  EXPECT_TRUE(std::equal(h.data(), h.data() + h.size(), want.data()));
}

TEST_F(PrivateCopiesGpu, OutOfRangeBinsAreAnIndexErrorInBoundsCheckedMode) {
  Options o;
  o.boundscheck = true;
  auto k = jit("private_checked", counts, Options(o).on(Target::cuda));
  auto ref = jit("private_checked", counts, Options(o).on(Target::interpreter));
  std::vector<std::int64_t> bin = random_bins(1000003, 61, 4);
  bin[777777] = 61;
  std::vector<std::int64_t> h(61, 0), hr(61, 0);
  std::string want, got;
  try {
    ref(bin, hr);
  } catch (const IndexError& e) {
    want = e.what();
  }
  try {
    k(bin, h);
  } catch (const IndexError& e) {
    got = e.what();
  }
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace kiln
