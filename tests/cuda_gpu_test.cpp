// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend on a GPU: every test kernel against the interpreter (the differential suite), device
// memory and streams, argument checking, determinism, and the errors a GPU can cause. Every test is skipped
// without a driver and device.
#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <numbers>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>
#include <unistd.h>

#include "codegen/cuda/arg_memory.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "frontend/settings.hpp"
#include "cuda_kernels.hpp"
#include "cuda_rows.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "tests/error_test_util.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using namespace cudatest;

bool gpu_present() { return kiln::cuda::available(); }

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  }
};

// ---- the differential suite ---------------------------------------------------------------------------------

class Differential : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  }
};

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const KernelCase& c : kernel_catalogue()) names.push_back(c.name);
  return names;
}

TEST_P(Differential, MatchesTheInterpreter) {
  for (const KernelCase& c : kernel_catalogue()) {
    if (c.name != GetParam()) continue;
    const cu::Compiled compiled = cu::compile(c.f, {}, kiln::detail::cuda_options());
    int set = 0;
    for (const Args& in : c.inputs()) {
      SCOPED_TRACE(c.name + " input set " + std::to_string(set++));
      auto ref = run_interpreter(c.f, in);
      auto got = run_kernel(compiled.kernel, c.f, in);
      expect_same(c.f, *ref, *got, c.tol);
      if (ref->status != 0 && c.name == "checks") {  // the device formats the same message
        EXPECT_NE(ref->message.find(got->message), std::string::npos) << ref->message << " vs " << got->message;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cuda, Differential, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ---- stencils in every form --------------------------------------------------------------------------------

TEST_F(Gpu, StencilFormsMatchTheInterpreter) {
  // The differential suite runs the default form (shared-memory tiles, 4 rows, 4 rounds); these are the
  // others (warp shuffles, rows and rounds that divide nothing evenly, one round, plain loads), bit for bit
  // against the interpreter.
  if (kiln::detail::cuda_options().emit.unroll == 1) GTEST_SKIP() << "KILN_CUDA_UNROLL=1 turns the stencil form off";
  using M = cu::StencilMode;
  for (const cu::StencilSettings form : {cu::StencilSettings{M::Shuffle, 4, 4}, cu::StencilSettings{M::Shuffle, 3, 1},
                                         cu::StencilSettings{M::Shuffle, 5, 8}, cu::StencilSettings{M::Shared, 1, 3},
                                         cu::StencilSettings{M::Shared, 2, 8}, cu::StencilSettings{M::Off, 4, 4}}) {
    cu::CudaOptions opts = kiln::detail::cuda_options();
    opts.emit.stencil = form;
    for (const KernelCase& c : kernel_catalogue()) {
      if (c.name.rfind("stencil_", 0) != 0 && c.name != "time_steps" && c.name != "bindings") continue;
      const cu::Compiled compiled = cu::compile(c.f, {}, opts);
      int set = 0;
      for (const Args& in : c.inputs()) {
        SCOPED_TRACE(c.name + " in form " + cu::emission_settings(opts.emit) + ", input set " + std::to_string(set++));
        expect_same(c.f, *run_interpreter(c.f, in), *run_kernel(compiled.kernel, c.f, in), c.tol);
      }
    }
  }
}

// ---- the disk cache across processes ------------------------------------------------------------------------

/// One kernel call in a fresh process (this binary re-run with a filter): prints where the code came from
/// and what loading it cost, and exits 0 when the result is right.
int run_child(const std::string& dir, const std::string& tag, const std::string& env = "") {
  const std::string self = "/proc/" + std::to_string(getpid()) + "/exe";
  const std::string cmd = env + " KILN_TEST_CACHE_CHILD=1 KILN_CACHE_DIR='" + dir + "' '" + self +
                          "' --gtest_filter=GpuCacheChild.OneCall --gtest_brief=1 > '" + dir + "/" + tag + ".log' 2>&1";
  return std::system(cmd.c_str());
}

TEST(GpuCacheChild, OneCall) {
  if (!std::getenv("KILN_TEST_CACHE_CHILD")) GTEST_SKIP() << "run by GpuCache.FreshProcessLoadsPtxAndCubin";
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  auto k = kiln::jit("cached_saxpy", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, kiln::Options().on(kiln::Target::cuda));
  std::vector<float> x(1000, 2.0f), y(1000, 1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  k(3.0f, x, y);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<kiln::CompileRecord> h = kiln::compile_history();
  ASSERT_EQ(h.size(), 1u);
  const kiln::CacheStats st = kiln::cache_stats();
  std::printf("[ cache    ] cache=%s first call %.2f ms (passes %.0f us, load %.0f us, codegen %.2f ms), compiles=%llu disk_hits=%llu key=%s\n",
              std::string(kiln::name_of(h[0].cache)).c_str(), ms, h[0].passes_us, h[0].load_us, h[0].codegen_ms,
              static_cast<unsigned long long>(st.compiles), static_cast<unsigned long long>(st.disk_hits), h[0].key.c_str());
  EXPECT_EQ(y[999], 7.0f);
  kiln::cache_flush();
}

TEST_F(Gpu, FreshProcessLoadsPtxAndCubinFromTheCache) {
  char tmpl[] = "/tmp/kiln-cuda-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(run_child(dir, "first"), 0);
  ASSERT_EQ(run_child(dir, "second"), 0);
  auto slurp = [&](const std::string& tag) {
    std::ifstream in(dir + "/" + tag + ".log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string first = slurp("first"), second = slurp("second");
  EXPECT_NE(first.find("cache=miss"), std::string::npos) << first;
  EXPECT_NE(first.find("compiles=1 "), std::string::npos) << first;
  // The second process compiles nothing: no pass (the host function is in the entry), no NVRTC, the module
  // comes from the stored CUBIN.
  EXPECT_NE(second.find("cache=disk"), std::string::npos) << second;
  EXPECT_NE(second.find("(passes 0 us,"), std::string::npos) << second;
  EXPECT_NE(second.find("compiles=0 disk_hits=1"), std::string::npos) << second;
  for (const std::string* log : {&first, &second})
    if (auto at = log->find("[ cache    ]"); at != std::string::npos) std::printf("%s", log->substr(at, log->find('\n', at) + 1 - at).c_str());
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_F(Gpu, CacheKeysFollowTheEmissionSettings) {
  // The emission settings are read once per process (KILN_CUDA_STENCIL), so each setting is a process of its
  // own: a second process with the same settings loads the first one's entry, one with another emission
  // compiles under another key.
  char tmpl[] = "/tmp/kiln-cuda-keys-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ASSERT_EQ(run_child(dir, "first"), 0);
  ASSERT_EQ(run_child(dir, "same"), 0);
  ASSERT_EQ(run_child(dir, "off", "KILN_CUDA_STENCIL=off"), 0);
  auto log = [&](const std::string& tag) {
    std::ifstream in(dir + "/" + tag + ".log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  auto key = [](const std::string& log) {
    const std::size_t at = log.find("key=");
    return at == std::string::npos ? std::string() : log.substr(at + 4, log.find_first_of(" \n", at) - at - 4);
  };
  const std::string first = log("first"), same = log("same"), off = log("off");
  EXPECT_NE(first.find("cache=miss"), std::string::npos) << first;
  EXPECT_NE(same.find("cache=disk"), std::string::npos) << same;  // same kernel, same settings
  EXPECT_EQ(key(same), key(first));
  EXPECT_NE(off.find("cache=miss"), std::string::npos) << off;  // another emission: another key
  EXPECT_FALSE(key(first).empty()) << first;
  EXPECT_NE(key(off), key(first));
  std::system(("rm -rf '" + dir + "'").c_str());
}

// ---- through kiln::jit: device arrays, results, argument checking -----------------------------------------

auto saxpy_kernel() {
  return kiln::jit("saxpy", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, kiln::Options().on(kiln::Target::cuda));
}

TEST_F(Gpu, DeviceArraysRoundTrip) {
  std::vector<float> v(1000003);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  const kiln::DeviceArray<float> d = kiln::to_device(v);
  EXPECT_EQ(d.size(), 1000003);
  EXPECT_EQ(d.device(), kiln::cuda::current_device());
  EXPECT_EQ(d.to_vector(), v);
  kiln::NDArray<double> h({3, 5});
  for (int i = 0; i < 15; ++i) h[i] = i * 1.25;
  const kiln::DeviceArray<double> d2 = kiln::to_device(h);
  EXPECT_EQ(d2.shape(), (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(d2.stride(0), 5);
  const kiln::NDArray<double> back = d2.clone().to_host();
  EXPECT_EQ(back.to_vector(), h.to_vector());
  const kiln::DeviceArray<std::int32_t> empty({0});
  EXPECT_TRUE(empty.to_vector().empty());
  EXPECT_THROW(kiln::DeviceArray<float>({2}).copy_from(std::span<const float>(v)), ShapeError);
}

TEST_F(Gpu, KernelsRunOnDeviceArraysWithoutCopies) {
  auto saxpy = saxpy_kernel();
  std::vector<float> x(1 << 20), y(1 << 20);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97), y[i] = static_cast<float>(i % 13);
  kiln::DeviceArray<float> dx = kiln::to_device(x), dy = kiln::to_device(y);
  saxpy(2.0f, dx, dy);
  saxpy(2.0f, dx, dy);
  const std::vector<float> got = dy.to_vector();
  for (std::size_t i = 0; i < x.size(); i += 4099) ASSERT_EQ(got[i], y[i] + 4.0f * x[i]) << i;
  // Mixed: a host array and a device array in one call (the host one is copied in and, written, back).
  saxpy(1.0f, dx, y);
  for (std::size_t i = 0; i < x.size(); i += 4099) ASSERT_EQ(y[i], static_cast<float>(i % 13) + x[i]) << i;
}

TEST_F(Gpu, OverlappingArgumentsGetTheDistinctArrayMeaning) {
  // One buffer passed as y and x: the kernel reads x after writing y in the same iteration, so aliasing would
  // be observable. Host memory is copied first (out = 2, as with distinct arrays); GPU memory is an AliasError.
  auto k = kiln::jit("overlap", [](kiln::Array<float> y, kiln::Array<float> x, kiln::Array<float> out) {
    kiln::prange(y.shape(0), [&](kiln::Int i) {
      y[i] = 7.0f;
      out[i] = x[i] * 2.0f;
    });
  }, kiln::Options().on(kiln::Target::cuda));
  std::vector<float> init(1 << 20, 1.0f);
  kiln::DeviceArray<float> a = kiln::to_device(init), b = kiln::to_device(init), out({1 << 20});
  EXPECT_THROW(k(a, a, out), kiln::AliasError);
  k(a, b, out);  // distinct: out = 2
  for (float v : out.to_vector()) ASSERT_EQ(v, 2.0f);
  std::vector<float> h = init, o(1 << 20);
  k(h, h, o);
  for (float v : o) ASSERT_EQ(v, 2.0f);
  for (float v : h) ASSERT_EQ(v, 7.0f);
  // The same view read and written pointwise is legal and runs the kernel variant without __restrict__.
  auto saxpy = saxpy_kernel();
  kiln::DeviceArray<float> x = kiln::to_device(init);
  saxpy(2.0f, x, x);  // y = 2 x + x
  for (float v : x.to_vector()) ASSERT_EQ(v, 3.0f);
}

TEST_F(Gpu, ScalarAndArrayResultsComeBackToTheHost) {
  auto dot = kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  }, kiln::Options().on(kiln::Target::cuda));
  std::vector<double> x(100000, 0.5), y(100000, 4.0);
  EXPECT_EQ(dot(x, y), 200000.0);
  EXPECT_EQ(dot(kiln::to_device(x), kiln::to_device(y)), 200000.0);
  auto scaled = kiln::jit("scaled", [](kiln::Array<float, 2> a, kiln::Float f) {
    auto out = kiln::empty<float>(a.shape(0), a.shape(1));
    kiln::prange(kiln::shape(a.shape(0), a.shape(1)), [&](kiln::Int i, kiln::Int j) { out(i, j) = a(i, j) * f; });
    return out;
  }, kiln::Options().on(kiln::Target::cuda));
  kiln::NDArray<float> a({300, 7});
  for (int i = 0; i < 2100; ++i) a[i] = static_cast<float>(i);
  for (const kiln::NDArray<float>& r : {scaled(a, 2.0f), scaled(kiln::to_device(a), 2.0f)}) {
    ASSERT_EQ(r.shape(), (std::vector<std::int64_t>{300, 7}));
    for (int i = 0; i < 2100; ++i) ASSERT_EQ(r[i], 2.0f * static_cast<float>(i));
  }
}

TEST_F(Gpu, TupleResultsComeBackToTheHost) {
  auto stats = [](kiln::Array<double, 1> x) {
    auto m = kiln::mean(x);
    return std::tuple{m, kiln::sum(x * x) / x.size() - m * m, x - m, kiln::argmax(x), x > m};
  };
  auto gpu = kiln::jit("tuple_stats", stats, kiln::Options().on(kiln::Target::cuda));
  auto ref = kiln::jit("tuple_stats", stats, kiln::Options().on(kiln::Target::interpreter));
  std::vector<double> x(100003);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7919) % 1009) * 0.25;
  const auto [rm, rvar, rcentred, rat, rabove] = ref(x);
  auto check = [&](const auto& got) {
    const auto& [m, var, centred, at, above] = got;
    EXPECT_NEAR(m, rm, 1e-9);
    EXPECT_NEAR(var, rvar, 1e-6);
    EXPECT_EQ(at, rat);
    EXPECT_EQ(centred.to_vector(), rcentred.to_vector());
    EXPECT_EQ(above.to_vector(), rabove.to_vector());
  };
  check(gpu(x));
  check(gpu(kiln::to_device(x)));
  auto range = kiln::jit("tuple_range", [](kiln::Array<float, 1> y) { return std::pair{kiln::min(y), kiln::max(y)}; },
                         kiln::Options().on(kiln::Target::cuda));
  const auto [lo, hi] = range(std::vector<float>{3.0f, -1.5f, 8.0f, 2.0f});
  EXPECT_EQ(lo, -1.5f);
  EXPECT_EQ(hi, 8.0f);
}

TEST_F(Gpu, DeviceArraysAreTypeChecked) {
  auto saxpy = saxpy_kernel();
  kiln::DeviceArray<double> wrong({10});
  kiln::DeviceArray<float> right({10});
  try {
    // A compile error through saxpy(...) (tests/compile_fail); the run-time check guards erased callers.
    kiln_tests::call_erased(saxpy, 1.0f, wrong, right);
    FAIL() << "a DeviceArray<double> was accepted for an Array<float>";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("kiln::DeviceArray of f64"), std::string::npos) << e.what();
  }
  for (kiln::Target t : {kiln::Target::cpu, kiln::Target::interpreter}) {
    if (t == kiln::Target::cpu && !kiln::has_cpu_backend()) continue;
    try {
      saxpy.on(t)(1.0f, right, right);
      FAIL() << "a DeviceArray was passed to the " << name_of(t) << " target";
    } catch (const TypeError& e) {
      EXPECT_NE(std::string(e.what()).find("GPU memory"), std::string::npos) << e.what();
    }
  }
}

TEST_F(Gpu, AsyncCopiesOnAStream) {
  kiln::cuda::Stream stream;
  kiln::cuda::PinnedBuffer<double> host(1 << 20);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>(i) * 3;
  kiln::DeviceArray<double> d({1 << 20});
  d.copy_from(host.span(), &stream);
  kiln::cuda::PinnedBuffer<double> back(1 << 20);
  d.copy_to(back.span(), &stream);
  stream.synchronize();
  for (std::size_t i = 0; i < back.size(); i += 1021) ASSERT_EQ(back[i], static_cast<double>(i) * 3);
}

TEST_F(Gpu, DeviceSelection) {
  const int n = kiln::cuda::device_count();
  ASSERT_GE(n, 1);
  kiln::cuda::set_device(0);
  EXPECT_EQ(kiln::cuda::current_device(), 0);
  EXPECT_THROW(kiln::cuda::set_device(n), DeviceError);
  const kiln::cuda::DeviceProperties p = kiln::cuda::properties(0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.compute_major, 7);
  EXPECT_GT(p.multiprocessors, 0);
  std::printf("[ device   ] %s, compute %d.%d, %d SMs, %.1f GiB\n", p.name.c_str(), p.compute_major, p.compute_minor,
              p.multiprocessors, static_cast<double>(p.memory_bytes) / (1 << 30));
}

// ---- cooperative rows -------------------------------------------------------------------------------------------

/// Runs `f` (compiled with `threads` per row: 0 lets the launch choose) on each input set against the
/// interpreter within `tol` (a group's sums reassociate), and twice more: the runs must agree bit for bit.
void expect_rows_match(const ir::Function& f, const std::vector<Args>& inputs, const Tolerance& tol, std::vector<int> threads = {0}) {
  std::vector<std::unique_ptr<Outcome>> refs;
  for (const Args& in : inputs) refs.push_back(run_interpreter(f, in));
  for (const int t : threads) {
    cu::CudaOptions opts = kiln::detail::cuda_options();
    opts.row_threads = t;
    const cu::Compiled compiled = cu::compile(f, {}, opts);
    ASSERT_EQ(compiled.program->gpu_kernels.at(0).strategy, cu::Strategy::Cooperative) << f.name;
    int set = 0;
    for (const Args& in : inputs) {
      const auto& ref = refs[static_cast<std::size_t>(set)];
      std::string shape;
      for (const Arg& a : in)
        if (a.array) shape += "(" + std::to_string(a.array->shape()[0]) + (a.array->shape().size() > 1 ? "x" + std::to_string(a.array->shape()[1]) : "") + ")";
      SCOPED_TRACE(f.name + " with " + std::to_string(t) + " threads per row (0: chosen at launch), input set " + std::to_string(set++) + " " + shape);
      const auto first = run_kernel(compiled.kernel, f, in);
      expect_same(f, *ref, *first, tol);
      expect_same(f, *first, *run_kernel(compiled.kernel, f, in), Tolerance{});  // run to run: the same bits
    }
  }
}

/// Row shapes: 1 row and many, rows of 0, 1, 31, 32, 33 and 1000 elements, one long row pair (a block per
/// row at launch), and a layout with gaps after each row.
std::vector<std::pair<std::int64_t, std::int64_t>> row_shapes() {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t rows : {1, 1000})
    for (std::int64_t n : {0, 1, 31, 32, 33, 1000}) out.emplace_back(rows, n);
  out.emplace_back(2, 100003);
  out.emplace_back(37, 4099);
  return out;
}

/// x with NaN and ±Inf in a few rows (rows 1, 2 and 3 when there are that many), values in [lo, hi).
TestArray rows_input(DType t, std::int64_t rows, std::int64_t n, double lo, double hi, bool specials, Layout layout = Layout::RowMajor) {
  TestArray x = random_array(t, {rows, n}, layout, lo, hi);
  if (specials && n > 0 && rows > 3) {
    x.set_number(1 * n + n / 2, std::numeric_limits<double>::quiet_NaN());
    x.set_number(2 * n + n - 1, std::numeric_limits<double>::infinity());
    x.set_number(3 * n, -std::numeric_limits<double>::infinity());
    x.set_number(3 * n + n / 3, std::numeric_limits<double>::infinity());  // +Inf and -Inf in one row: NaN
  }
  return x;
}

TEST_F(Gpu, RowStatisticsMatchTheInterpreterAndRepeatBitwise) {
  for (const DType t : {DType::F32, DType::F64}) {
    const ir::Function f = t == DType::F32 ? rows::lower_for_cuda("row_stats_f32", rows::row_stats<float>, {"x", "m", "v", "s"})
                                           : rows::lower_for_cuda("row_stats_f64", rows::row_stats<double>, {"x", "m", "v", "s"});
    std::vector<Args> inputs;
    for (const auto& [r, n] : row_shapes()) {
      inputs.push_back({array_arg(rows_input(t, r, n, 0, 1, true, r == 37 ? Layout::RowGaps : Layout::RowMajor)), array_arg(random_array(t, {r})),
                        array_arg(random_array(t, {r})), array_arg(random_array(t, {r}))});
    }
    // Sums of up to 10^5 values in [0, 1): the interpreter adds in order, a group in a tree.
    expect_rows_match(f, inputs, Tolerance{t == DType::F32 ? 4096.0 : 1 << 20, 0}, {0, 32, 64, 1024});
  }
}

TEST_F(Gpu, RowSumsOfEveryTypeMatchTheInterpreter) {
  const ir::Function f32 = rows::lower_for_cuda("row_sum_f32", rows::row_sum<float>, {"x"}, 2);
  const ir::Function f64 = rows::lower_for_cuda("row_sum_f64", rows::row_sum<double>, {"x"}, 2);
  const ir::Function i32 = rows::lower_for_cuda("row_sum_i32", rows::row_sum<std::int32_t>, {"x"}, 2);
  for (const auto& [f, t] : {std::pair{&f32, DType::F32}, std::pair{&f64, DType::F64}, std::pair{&i32, DType::I32}}) {
    std::vector<Args> inputs;
    for (const auto& [r, n] : row_shapes()) {
      // Integers wrap identically in any order; floats of both signs.
      inputs.push_back({array_arg(t == DType::I32 ? random_array(t, {r, n}, Layout::RowMajor, -2e9, 2e9) : rows_input(t, r, n, -1, 1, true))});
    }
    // Values of both signs cancel: near-zero sums are compared within an absolute bound.
    expect_rows_match(*f, inputs, Tolerance{4096, t == DType::F32 ? 2e-3 : 1e-10}, t == DType::F32 ? std::vector<int>{0, 32, 256} : std::vector<int>{0});
  }
}

TEST_F(Gpu, SeveralReductionsAndResultsPerRow) {
  const ir::Function moments = rows::lower_for_cuda("row_moments", rows::row_moments, {"x", "out"});
  const ir::Function softmax = rows::lower_for_cuda("row_softmax", rows::row_softmax, {"x", "y", "check"});
  const ir::Function scaled = rows::lower_for_cuda("row_scaled", rows::row_scaled, {"x", "scaled", "out"});
  const ir::Function triangle = rows::lower_for_cuda("triangle_sums", rows::triangle_sums, {"x", "out"});
  std::vector<Args> m, sm, sc, tr;
  for (const auto& [r, n] : row_shapes()) {
    m.push_back({array_arg(rows_input(DType::F64, r, n, -1, 1, true)), array_arg(random_array(DType::F64, {r, 5}))});
    sm.push_back({array_arg(rows_input(DType::F32, r, n, -5, 5, false)), array_arg(random_array(DType::F32, {r, n})),
                  array_arg(random_array(DType::F32, {r}))});
    sc.push_back({array_arg(rows_input(DType::F32, r, std::max<std::int64_t>(n, 1), 0, 1, false)),
                  array_arg(random_array(DType::F32, {r, std::max<std::int64_t>(n, 1)})), array_arg(random_array(DType::F32, {r}))});
    tr.push_back({array_arg(rows_input(DType::F64, r, n, 0, 1, false)), array_arg(random_array(DType::F64, {r}))});
  }
  // min and max are exact; sums of [-1, 1) near zero within an absolute bound.
  expect_rows_match(moments, m, Tolerance{1 << 20, 1e-9}, {0, 32, 128});
  // exp differs from glibc's by a few ulps; the sum's order by more.
  expect_rows_match(softmax, sm, Tolerance{4096, 1e-6}, {0, 32, 512});
  expect_rows_match(scaled, sc, Tolerance{4096, 0}, {0, 64});
  expect_rows_match(triangle, tr, Tolerance{1 << 20, 0});
}

// ---- determinism, concurrency ---------------------------------------------------------------------------------

TEST_F(Gpu, FloatReductionsAreBitwiseIdenticalRunToRun) {
  auto sum = kiln::jit("sum", [](kiln::Array<float> x) {
    kiln::Float s = 0.0f;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * 1.000001f; });
    return s;
  }, kiln::Options().on(kiln::Target::cuda));
  std::vector<float> x(10'000'019);
  double exact = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(uniform(-1, 1));
    exact += static_cast<double>(x[i] * 1.000001f);
  }
  const kiln::DeviceArray<float> d = kiln::to_device(x);
  const float first = sum(d);
  EXPECT_NEAR(first, exact, 0.5);
  for (int r = 0; r < 5; ++r) EXPECT_EQ(std::bit_cast<std::uint32_t>(sum(d)), std::bit_cast<std::uint32_t>(first));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(sum(x)), std::bit_cast<std::uint32_t>(first));  // host arrays: the same tree
}

TEST_F(Gpu, ConcurrentCallsFromHostThreads) {
  auto pi = kiln::jit("pi", [](kiln::Int n) {
    kiln::Double s = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      s += 4.0 / (1.0 + x * x);
    });
    return s * step;
  }, kiln::Options().on(kiln::Target::cuda));
  std::atomic<int> good{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      for (int r = 0; r < 10; ++r)
        if (std::fabs(pi(1'000'000 + w * 1000 + r) - std::numbers::pi) < 1e-9) good++;
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(good.load(), 40);
}

// ---- errors -----------------------------------------------------------------------------------------------------

TEST_F(Gpu, OutOfDeviceMemoryIsADeviceErrorAndLeaksNothing) {
  EXPECT_THROW(kiln::DeviceArray<float>({std::int64_t{1} << 42}), DeviceError);
  auto huge = kiln::jit("huge", [](kiln::Int n) {
    auto a = kiln::empty<float>(n);
    kiln::prange(n, [&](kiln::Int i) { a[i] = 1.0f; });
    return a;
  }, kiln::Options().on(kiln::Target::cuda));
  gpu::Device& dev = gpu::device(kiln::cuda::current_device());
  dev.bind();
  std::size_t free_before = 0, free_after = 0, total = 0;
  EXPECT_EQ(huge(1000).size(), 1000);
  kiln::cuda::synchronize(kiln::cuda::current_device());
  gpu::check(gpu::driver().cuMemGetInfo(&free_before, &total), "cuMemGetInfo");
  for (int r = 0; r < 5; ++r) {
    try {
      huge(std::int64_t{1} << 42);
      FAIL() << "a 16 TiB array was allocated";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
    }
  }
  kiln::cuda::synchronize(kiln::cuda::current_device());
  gpu::check(gpu::driver().cuMemGetInfo(&free_after, &total), "cuMemGetInfo");
  EXPECT_LE(free_before - std::min(free_before, free_after), std::size_t{64} << 20);  // stream-ordered pool slack only
  EXPECT_EQ(huge(1000).size(), 1000);  // the device is fine afterwards
}

TEST_F(Gpu, ArraysMadeInKernelsCheckTheirExtents) {
  // Fusion turns the zeros into a scalar, so only the kernel's own check can refuse the shape.
  auto summed = kiln::jit("gpu_sum_of_zeros", [](kiln::Int n, kiln::Int m) { return kiln::sum(kiln::zeros<double>(n, m)); },
                          kiln::Options().on(kiln::Target::cuda));
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const ShapeError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("wrong error: ") + e.what();
    }
    return "no error";
  };
  std::string m = message([&] { summed(-1, -1); });
  EXPECT_NE(m.find("kernel 'gpu_sum_of_zeros'"), std::string::npos) << m;
  EXPECT_NE(m.find("negative extent: shape (-1, -1)"), std::string::npos) << m;
  m = message([&] { summed(std::int64_t{1} << 62, 4); });
  EXPECT_NE(m.find("too large: shape (4611686018427387904, 4)"), std::string::npos) << m;
  EXPECT_EQ(summed(3, 4), 0.0);
  auto made = kiln::jit("gpu_made", [](kiln::Int n) {
    auto buffer = kiln::empty<float>(n);
    kiln::prange(n, [&](kiln::Int i) { buffer[i] = 1.0f; });
    return buffer;
  }, kiln::Options().on(kiln::Target::cuda));
  m = message([&] { made(-5); });
  EXPECT_NE(m.find("array 'buffer' has a negative extent"), std::string::npos) << m;
  m = message([&] { made(std::int64_t{1} << 61); });
  EXPECT_NE(m.find("array 'buffer' is too large"), std::string::npos) << m;
  EXPECT_EQ(made(7).size(), 7);
}

TEST_F(Gpu, IllegalAddressIsADeviceErrorNamingTheKernel) {
  // An illegal address poisons the CUDA context for the rest of the process, so it happens in a child.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Var x = array_param("x", DType::F32, 1, true);
        Var i = index("i");
        const ir::Function f = offloaded(function("wild", {x}, {parfor({i}, {dim(x)}, store(x, {val(i) * i64c(std::int64_t{1} << 40)}, num(DType::F32, 1)))}));
        const cu::Compiled c = cu::compile(f, {}, kiln::detail::cuda_options());
        TestArray a(DType::F32, {1000});
        Args in = {array_arg(a)};
        try {
          run_kernel(c.kernel, f, in);
        } catch (const DeviceError& e) {
          const std::string m = e.what();
          std::fprintf(stderr, "%s\n", m.c_str());
          std::exit(m.find("wild_k0") != std::string::npos && m.find("ILLEGAL_ADDRESS") != std::string::npos ? 0 : 3);
        }
        std::exit(2);
      },
      ::testing::ExitedWithCode(0), "wild");
}

TEST_F(Gpu, DumpPrintsTheCudaSource) {
  setenv("KILN_DUMP_CUDA", "1", 1);
  ::testing::internal::CaptureStderr();
  auto k = kiln::jit("dumped", [](kiln::Array<float> x) { kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] + 1.0f; }); },
                     kiln::Options().on(kiln::Target::cuda));
  std::vector<float> v(10, 1.0f);
  k(v);
  const std::string err = ::testing::internal::GetCapturedStderr();
  unsetenv("KILN_DUMP_CUDA");
  EXPECT_NE(err.find("extern \"C\" __global__ void dumped_k0("), std::string::npos) << err;
  EXPECT_EQ(v[9], 2.0f);
}

TEST_F(Gpu, BoundsCheckedModeThrowsIndexErrorAndKeepsResults) {
  kiln::Options checked = kiln::Options().on(kiln::Target::cuda), plain = checked;
  checked.boundscheck = true;
  plain.boundscheck = false;
  auto shifted = [](const kiln::Options& o) {
    return kiln::jit("shifted", [](kiln::Array<double> x, kiln::Array<double> y, kiln::Int n) {
      kiln::prange(n, [&](kiln::Int i) { y[i] = x[i] + 1.0; });
    }, o);
  };
  auto histogram = [](const kiln::Options& o) {
    return kiln::jit("histogram", [](kiln::Array<std::int64_t> bins, kiln::Array<std::int64_t> hist) {
      kiln::prange(bins.shape(0), [&](kiln::Int i) { hist[bins[i]] += 1; });
    }, o);
  };
  std::vector<double> x(1000, 1.0), y(2000, 0.0);
  try {
    shifted(checked)(x, y, 1001);
    ADD_FAILURE() << "no IndexError";
  } catch (const kiln::IndexError& e) {
    EXPECT_STREQ(e.what(), "kernel 'shifted': index 1000 out of range for axis 0 of array 'x' with extent 1000");
  }
  // Inside the GPU kernel: a data-dependent index, in a parfor of 100 000 iterations.
  std::vector<std::int64_t> bins(100000), hist(16, 0), hist_plain(16, 0);
  for (std::size_t i = 0; i < bins.size(); ++i) bins[i] = static_cast<std::int64_t>((i * 7) % 16);
  histogram(checked)(bins, hist);
  histogram(plain)(bins, hist_plain);
  EXPECT_EQ(hist, hist_plain);
  bins[77777] = 16;
  try {
    histogram(checked)(bins, hist);
    ADD_FAILURE() << "no IndexError";
  } catch (const kiln::IndexError& e) {
    EXPECT_STREQ(e.what(), "kernel 'histogram': index 16 out of range for axis 0 of array 'hist' with extent 16");
  }
  // In range, the same answer with and without the mode, and the context is still usable.
  std::vector<double> y2(2000, 0.0);
  shifted(checked)(x, y, 1000);
  shifted(plain)(x, y2, 1000);
  EXPECT_EQ(y, y2);
}

TEST_F(Gpu, CompileTimeAndCallOverhead) {
  // Reported, and bounded loosely so that a pathological path shows up as a failure.
  // Cold: the disk cache off (each kernel object traces, lowers, emits, runs NVRTC and loads the module).
  const kiln::CacheSettings before = kiln::cache_settings();
  kiln::set_cache_settings({kiln::CacheMode::off, before.directory, before.max_bytes});
  std::vector<double> compile_ms;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto k = saxpy_kernel();
    kiln::DeviceArray<float> x({1}), y({1});
    k(1.0f, x, y);
    compile_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  // A disk hit in this process: stored by one kernel object, loaded by another once the first is gone.
  char tmpl[] = "/tmp/kiln-cuda-hit-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  kiln::set_cache_settings({kiln::CacheMode::on, tmpl, 1ull << 30});
  {
    auto k = saxpy_kernel();
    kiln::DeviceArray<float> x({1}), y({1});
    k(1.0f, x, y);
    kiln::cache_flush();
  }
  kiln::set_cache_settings(kiln::cache_settings());  // lets go of the loaded code: the next kernel reads the disk
  double hit_ms = 0;
  {
    auto t0 = std::chrono::steady_clock::now();
    auto k = saxpy_kernel();
    kiln::DeviceArray<float> x({1}), y({1});
    k(1.0f, x, y);
    hit_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(kiln::compile_history().back().cache, kiln::CacheSource::disk);
    EXPECT_EQ(kiln::compile_history().back().passes_us, 0);  // the entry holds the offloaded host function
  }
  kiln::set_cache_settings(before);
  std::system(("rm -rf '" + std::string(tmpl) + "'").c_str());
  auto k = saxpy_kernel();
  kiln::DeviceArray<float> x({1}), y({1});
  k(1.0f, x, y);
  const int calls = 2000;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < calls; ++r) k(1.0f, x, y);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  std::printf("[ compile  ] saxpy: %.1f / %.1f / %.1f ms cold, %.2f ms from the disk cache; call (launch + synchronize) %.1f us\n",
              compile_ms[0], compile_ms[1], compile_ms[2], hit_ms, us);
  EXPECT_LT(compile_ms[2], 5000.0);
  EXPECT_LT(us, 1000.0);
}


// ---- overlapping arguments and check mode on the CUDA target (docs/aliasing.md) ----------------------------

TEST_F(Gpu, OverlappingHostArgumentsGetTheDistinctArrayAnswer) {
  auto shift = kiln::jit("gpu_shift", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(1, x.shape(0), [&](kiln::Int i) { y[i] = x[i - 1]; });
  }, kiln::Options{}.on(kiln::Target::cuda));
  std::vector<double> buf(100003), want(buf.size());
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<double>(i % 89);
  want = buf;
  for (std::size_t i = 1; i < buf.size(); ++i) want[i] = buf[i - 1];
  shift(buf, buf);
  EXPECT_EQ(buf, want);
}

TEST_F(Gpu, OverlappingDeviceArraysAreAnAliasErrorUnlessPointwise) {
  auto shift = kiln::jit("gpu_shift_dev", [](kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(1, x.shape(0), [&](kiln::Int i) { y[i] = x[i - 1]; });
  }, kiln::Options{}.on(kiln::Target::cuda));
  kiln::DeviceArray<float> d({1000});
  EXPECT_THROW(shift(d, d), kiln::AliasError);
  auto axpy = kiln::jit("gpu_axpy_inplace", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  }, kiln::Options{}.on(kiln::Target::cuda));
  std::vector<float> h(1000, 1.0f);
  d.copy_from(h);
  axpy(2.0f, d, d);  // the same view, pointwise: legal
  d.copy_to(h);
  EXPECT_EQ(h[999], 3.0f);
  std::vector<float> host(1000, 1.0f);
  axpy(2.0f, host, host);  // host memory passed twice: copied to the device per argument, written back once
  EXPECT_EQ(host[0], 3.0f);
  EXPECT_EQ(host[999], 3.0f);
}

TEST_F(Gpu, CheckModeCatchesAChangedCapture) {
  float c = 1.0f;
  kiln::Options o = kiln::Options{}.on(kiln::Target::cuda);
  o.check = true;
  auto k = kiln::jit("gpu_checked", [&](kiln::Array<float> x) { kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = c; }); }, o);
  std::vector<float> v(64);
  k(v);
  EXPECT_EQ(v[63], 1.0f);
  c = 2.0f;
  EXPECT_THROW(k(v), kiln::TraceError);
}

}  // namespace
}  // namespace kiln
