// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host side of a CUDA call, on a stand-in driver that runs no kernel (tests/fake_cuda_driver.cpp, loaded
// through KILN_CUDA_DRIVER before anything opens a driver): which driver calls a steady-state call makes, that
// stream-ordered results are recycled on their stream without the driver and given back to it when needed,
// that what a call reuses follows its arguments' shapes, devices and streams, and that the argument checks
// still fire. What the kernels compute is cuda_async_test's and cuda_gpu_test's (on a GPU).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "kiln/kiln.hpp"
#include "runtime/cuda/stream_blocks.hpp"

namespace {

// Before main: the driver is opened on first use, by the first test that asks for a device.
const bool g_fake = [] {
  setenv("KILN_CUDA_DRIVER", KILN_FAKE_CUDA_DRIVER, 1);
  return true;
}();

/// The stand-in's counters (its exported functions, found in the library kiln opened).
struct Fake {
  Fake() {
    void* lib = dlopen(KILN_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen(KILN_FAKE_CUDA_DRIVER, RTLD_NOW);
    calls_ = reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(lib, "kiln_fake_cuda_calls"));
    all_ = reinterpret_cast<unsigned long long (*)()>(dlsym(lib, "kiln_fake_cuda_all_calls"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(lib, "kiln_fake_cuda_reset"));
    live_ = reinterpret_cast<long long (*)()>(dlsym(lib, "kiln_fake_cuda_live_allocations"));
    last_ = reinterpret_cast<void (*)(unsigned*, unsigned*, void**)>(dlsym(lib, "kiln_fake_cuda_last_launch"));
    fail_ = reinterpret_cast<void (*)(int)>(dlsym(lib, "kiln_fake_cuda_fail_allocations"));
    capture_ = reinterpret_cast<void (*)(int)>(dlsym(lib, "kiln_fake_cuda_capture_params"));
    params_ = reinterpret_cast<void (*)(unsigned long long*, int)>(dlsym(lib, "kiln_fake_cuda_last_params"));
  }
  unsigned long long calls(const char* fn) const { return calls_(fn); }
  unsigned long long all() const { return all_(); }
  void reset() const { reset_(); }
  /// The next n device allocations run out of memory.
  void fail_allocations(int n) const { fail_(n); }
  long long live() const { return live_(); }
  /// The 8 bytes of each of the first n parameters of every launch from now on (0: none).
  void capture_params(int n) const { capture_(n); }
  std::vector<unsigned long long> last_params(int n) const {
    std::vector<unsigned long long> p(static_cast<std::size_t>(n));
    params_(p.data(), n);
    return p;
  }
  /// The first 5 parameters (a kernel's bounds, two pointers and a scalar at least) of the launch `call` makes.
  template <class Call>
  std::vector<unsigned long long> params_of(Call&& call) const {
    capture_params(5);
    call();
    std::vector<unsigned long long> p = last_params(5);
    capture_params(0);
    return p;
  }
  struct Launch {
    unsigned grid[3], block[3];
    void* stream;
  };
  Launch last() const {
    Launch l{};
    last_(l.grid, l.block, &l.stream);
    return l;
  }

 private:
  unsigned long long (*calls_)(const char*);
  unsigned long long (*all_)();
  void (*reset_)();
  long long (*live_)();
  void (*last_)(unsigned*, unsigned*, void**);
  void (*fail_)(int);
  void (*capture_)(int);
  void (*params_)(unsigned long long*, int);
};

class CallPath : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(g_fake);
    ASSERT_TRUE(kiln::cuda::available()) << kiln::cuda::unavailable_reason();
    ASSERT_NE(kiln::cuda::properties(0).name.find("fake"), std::string::npos) << "the stand-in driver was not loaded";
  }
  const Fake fake;
};

kiln::Options on_gpu() { return kiln::Options().on(kiln::Target::cuda); }

/// Runs `call`, whose allocation fails twice on the stand-in: it must throw a DeviceError that says so and names
/// the array it was making (`what`, "of shape (5000,)": described when it failed).
template <class F>
void expect_out_of_memory(F&& call, const std::string& what) {
  try {
    call();
    FAIL() << "an allocation that failed twice was not reported";
  } catch (const kiln::DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of device memory"), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

// Kernels of the same name and body share their compiled code (and its launch plans): the tests that count plans
// name their own.
auto scale_into(const char* name = "scale_into") {
  return kiln::jit(name, [](kiln::Array<float> x, kiln::Array<float> y, kiln::Float a) { y(kiln::all) = x * a; }, on_gpu());
}
auto scale(const char* name = "scale") {
  return kiln::jit(name, [](kiln::Array<float> x, kiln::Float a) { return x * a; }, on_gpu());
}

TEST_F(CallPath, AnAsynchronousCallIntoAnArgumentIsOneLaunch) {
  auto k = scale_into();
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  const auto call = k.async(s);
  call(x, y, 2.0f);  // compiles, loads
  fake.reset();
  for (int i = 0; i < 10; ++i) call(x, y, 2.0f);
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 10u);
  // Besides the launch, at most asking which context is current, once a call: no allocation, copy, event,
  // context switch or query.
  EXPECT_LE(fake.calls("cuCtxGetCurrent"), 10u);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
  // So does the same call made the way the documentation writes it (kernel.async(s) at every call).
  fake.reset();
  for (int i = 0; i < 10; ++i) k.async(s)(x, y, 2.0f);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
  s.synchronize();
}

TEST_F(CallPath, ANewResultTakesTheMemoryItsStreamFreed) {
  auto k = scale();
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s);
  kiln::DeviceArray<float> y = k.async(s)(x, 2.0f);
  y = k.async(s)(x, 2.0f);  // the first result is freed here, after the second was made: two blocks circulate
  const kiln::cuda::MemoryStats before = kiln::cuda::memory_stats();
  fake.reset();
  for (int i = 0; i < 10; ++i) y = k.async(s)(x, 2.0f);
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 10u);
  EXPECT_EQ(fake.calls("cuMemAllocAsync"), 0u);
  EXPECT_EQ(fake.calls("cuMemFreeAsync"), 0u);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
  // Each reuse is an allocation and a free in kiln's statistics: what is in use is what is alive.
  const kiln::cuda::MemoryStats after = kiln::cuda::memory_stats();
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(after.allocations, before.allocations + 10);
  EXPECT_EQ(y.shape(), (std::vector<std::int64_t>{1000}));
  s.synchronize();
}

TEST_F(CallPath, KeptMemoryFollowsSizesAndStreams) {
  auto k = scale();
  kiln::cuda::Stream s1, s2;
  const kiln::DeviceArray<float> small({1000}, s1), large({3000}, s1);
  { auto y = k.async(s1)(small, 2.0f); }  // s1 keeps a block of 4000 bytes
  fake.reset();
  { auto y = k.async(s1)(large, 2.0f); }  // another size: from the pool
  EXPECT_EQ(fake.calls("cuMemAllocAsync"), 1u);
  fake.reset();
  s1.synchronize();
  s2.wait([&] {
    kiln::cuda::Event e;
    e.record(s1);
    return e;
  }());
  { auto y = k.async(s2)(small, 2.0f); }  // another stream: s1's block stays s1's
  EXPECT_EQ(fake.calls("cuMemAllocAsync"), 1u);
  fake.reset();
  { auto y = k.async(s1)(small, 2.0f); }  // s1's own block again
  { auto y = k.async(s1)(large, 2.0f); }
  EXPECT_EQ(fake.calls("cuMemAllocAsync"), 0u);
  // Every launch went to the stream it was queued on.
  (void)k.async(s2)(small, 2.0f);
  EXPECT_EQ(fake.last().stream, s2.handle());
  (void)k.async(s1)(small, 2.0f);
  EXPECT_EQ(fake.last().stream, s1.handle());
}

TEST_F(CallPath, KeptMemoryGoesBackWithItsStream) {
  const long long live = fake.live();
  {
    auto k = scale();
    kiln::cuda::Stream s;
    const kiln::DeviceArray<float> x({1000}, s);
    for (int i = 0; i < 2 * static_cast<int>(kiln::gpu::StreamBlocks::kKept); ++i) {
      // More arrays alive at once than a stream keeps: the rest go back to the pool when they die.
      std::vector<kiln::DeviceArray<float>> ys;
      for (int j = 0; j <= i; ++j) ys.push_back(k.async(s)(x, 2.0f));
    }
    s.synchronize();
  }
  EXPECT_EQ(fake.live(), live) << "device memory outlived its stream";
}

TEST_F(CallPath, AnAllocationThatRunsOutTakesTheKeptBlocksBack) {
  auto k = scale();
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s), big({5000}, s);
  { auto y = k.async(s)(x, 2.0f); }  // kept
  fake.reset();
  fake.fail_allocations(1);
  auto y = k.async(s)(big, 2.0f);  // out of memory once: the kept block goes back, and the retry succeeds
  EXPECT_EQ(fake.calls("cuMemAllocAsync"), 2u);
  EXPECT_EQ(fake.calls("cuMemFreeAsync"), 1u);
  EXPECT_EQ(y.shape(), (std::vector<std::int64_t>{5000}));
  fake.fail_allocations(2);
  expect_out_of_memory([&] { (void)k.async(s)(big, 2.0f); }, "of shape (5000,)");
  fake.fail_allocations(0);
}

TEST_F(CallPath, WhatACallReusesFollowsItsArguments) {
  auto k = scale_into();
  kiln::cuda::Stream s;
  const auto call = k.async(s);
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), bx({1 << 20}, s), by({1 << 20}, s);
  call(x, y, 2.0f);
  const Fake::Launch small = fake.last();
  call(bx, by, 2.0f);
  const Fake::Launch large = fake.last();
  EXPECT_GT(large.grid[0], small.grid[0]) << "the grid of the first extents was reused";
  call(x, y, 2.0f);
  EXPECT_EQ(fake.last().grid[0], small.grid[0]);
  // A new result's shape is its argument's, call by call.
  auto r = scale();
  EXPECT_EQ(r.async(s)(x, 1.0f).shape(), (std::vector<std::int64_t>{1000}));
  EXPECT_EQ(r.async(s)(bx, 1.0f).shape(), (std::vector<std::int64_t>{1 << 20}));
  // Shapes that disagree are still refused, after calls with shapes that agree.
  EXPECT_THROW(call(x, by, 2.0f), kiln::ShapeError);
  s.synchronize();
}

TEST_F(CallPath, TheLatestLaunchIsTheOneReportedAndReused) {
  auto k = scale_into();
  kiln::cuda::Stream s;
  const auto call = k.async(s);
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), bx({1 << 20}, s), by({1 << 20}, s);
  const auto reported = [&](const Fake::Launch& l, long long n) {
    const auto dims = [](const unsigned* d) {
      return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
    };
    return k.diagnostics().find("last launch: " + std::to_string(n) + " iterations, grid " + dims(l.grid) + ", blocks of " +
                                dims(l.block)) != std::string::npos;
  };
  for (int round = 0; round < 2; ++round) {  // the second round reuses each extents' recorded choice
    call(x, y, 2.0f);
    EXPECT_TRUE(reported(fake.last(), 1000)) << k.diagnostics();
    call(bx, by, 2.0f);
    EXPECT_TRUE(reported(fake.last(), 1 << 20)) << k.diagnostics();
  }
  // Launches from several threads at once keep one whole record: the diagnostics name one of the two.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      kiln::cuda::Stream own;
      kiln::DeviceArray<float> a(t % 2 ? std::vector<std::int64_t>{1000} : std::vector<std::int64_t>{1 << 20}, own),
          b(a.shape(), own);
      const auto mine = k.async(own);
      for (int i = 0; i < 200; ++i) mine(a, b, 2.0f);
      own.synchronize();
    });
  for (auto& t : threads) t.join();
  const std::string d = k.diagnostics();
  EXPECT_TRUE(d.find("last launch: 1000 iterations, grid 8 x 1 x 1") != std::string::npos ||
              d.find("last launch: 1048576 iterations, grid 2048 x 1 x 1") != std::string::npos)
      << d;
  s.synchronize();
}

TEST_F(CallPath, OneArrayPassedTwiceRunsTheKernelWithoutRestrict) {
  // The call's overlap check tells the launch which arguments share memory: the others are not compared again,
  // and one array passed as input and output still gets the __restrict__-free kernel.
  auto k = scale_into();
  kiln::cuda::Stream s;
  const auto call = k.async(s);
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  const auto variant = [&] {
    const std::string d = k.diagnostics();
    const std::size_t at = d.find("last launch:");
    return at == std::string::npos ? std::string() : d.substr(d.find('[', at), d.find(']', at) - d.find('[', at) + 1);
  };
  call(x, y, 2.0f);
  EXPECT_EQ(variant(), "[scale_into_k0]");
  call(x, x, 2.0f);
  EXPECT_EQ(variant(), "[scale_into_k0_alias]");
  call(x, y, 2.0f);
  EXPECT_EQ(variant(), "[scale_into_k0]");
  k(y, y, 2.0f);  // synchronous: its own overlap check, the same answer
  EXPECT_EQ(variant(), "[scale_into_k0_alias]");
  s.synchronize();
}

TEST_F(CallPath, DevicesAreCheckedOnEveryCall) {
  ASSERT_GE(kiln::cuda::device_count(), 2);
  auto k = scale_into();
  kiln::cuda::Stream s0(0), s1(1);
  kiln::DeviceArray<float> x0({1000}, s0), y0({1000}, s0), x1({1000}, s1), y1({1000}, s1);
  k.async(s0)(x0, y0, 2.0f);
  EXPECT_EQ(fake.last().stream, s0.handle());
  k.async(s1)(x1, y1, 2.0f);  // the same variant, the other device: its own module and stream
  EXPECT_EQ(fake.last().stream, s1.handle());
  EXPECT_THROW(k.async(s1)(x0, y0, 2.0f), kiln::TypeError);  // arrays of device 0 on a stream of device 1
  EXPECT_THROW(k.async(s0)(x0, y1, 2.0f), kiln::TypeError);  // arrays of two devices
  EXPECT_THROW(k(x0, y1, 2.0f), kiln::TypeError);
  // A compiled CUDA variant does not make a CPU kernel take GPU memory.
  EXPECT_THROW(k.on(kiln::Target::interpreter)(x0, y0, 2.0f), kiln::TypeError);
  s0.synchronize();
  s1.synchronize();
}

TEST_F(CallPath, OverlappingArgumentsAreStillRefused) {
  auto shift = kiln::jit("shift_left", [](kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0) - 1, [&](kiln::Int i) { y[i] = x[i + 1]; });
  }, on_gpu());
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  shift.async(s)(x, y);
  EXPECT_THROW(shift.async(s)(x, x), kiln::AliasError);
  s.synchronize();
}

TEST_F(CallPath, ARecordedGraphTakesNoKeptMemoryAndKeepsNone) {
  auto k = scale_into();
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  { kiln::DeviceArray<float> gone({1000}, s); }  // kept by s
  fake.reset();
  {
    const kiln::cuda::Graph g = kiln::cuda::capture(s, [&] {
      kiln::DeviceArray<float> t({1000}, s);  // the graph's allocation: a kept block would be replayed into
      k.async(s)(x, t, 2.0f);
      k.async(s)(t, y, 2.0f);
    });
    EXPECT_EQ(fake.calls("cuMemAllocAsync"), 1u);
    g.launch(s);
    s.synchronize();
  }
  // The graph kept its array until it went; then the array went back to the driver, not to the kept blocks.
  EXPECT_EQ(fake.calls("cuMemFreeAsync"), 1u);
  fake.reset();
  {
    kiln::DeviceArray<float> a({1000}, s), b({1000}, s);  // one kept block: one of them from the pool
    EXPECT_EQ(fake.calls("cuMemAllocAsync"), 1u);
  }
  s.synchronize();
}

TEST_F(CallPath, AFutureAsksItsOwnDeviceWhetherItIsReady) {
  auto total = kiln::jit("total", [](kiln::Array<float> x) { return kiln::sum(x); }, on_gpu());
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s);
  const kiln::cuda::Future<float> f = total.async(s)(x);
  fake.reset();
  std::thread([&] { EXPECT_TRUE(f.ready()); }).join();  // a thread with no context current
  EXPECT_GE(fake.calls("cuCtxSetCurrent"), 1u) << "the event was queried without its device's context";
  EXPECT_EQ(fake.calls("cuEventQuery"), 1u);
  s.synchronize();
}

TEST_F(CallPath, ASynchronousCallOnDeviceArraysLaunchesAndWaits) {
  auto k = scale_into();
  kiln::DeviceArray<float> x({1000}), y({1000});
  k(x, y, 2.0f);
  fake.reset();
  for (int i = 0; i < 10; ++i) k(x, y, 2.0f);
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 10u);
  EXPECT_EQ(fake.calls("cuStreamSynchronize"), 10u);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuStreamSynchronize") - fake.calls("cuCtxGetCurrent"), 0u);
}

/// A kernel's launch plans as its diagnostics count them (codegen/cuda/launch_plan.hpp): {recorded, calls run by
/// them}; {-1, -1} when the kernel has none.
std::pair<int, long long> plans(const std::string& diagnostics) {
  const std::string head = "launch plans (codegen/cuda/launch_plan.hpp), ";
  const std::size_t at = diagnostics.find(head);
  if (at == std::string::npos) return {-1, -1};
  int recorded = -1;
  long long runs = -1;
  std::sscanf(diagnostics.c_str() + at + head.size(), "%d recorded (of %*d kept), %lld call", &recorded, &runs);
  return {recorded, runs};
}

std::uint64_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

/// A float parameter's 8 bytes as the stand-in driver captures them.
unsigned long long bits_of(float a) {
  unsigned long long bits = 0;
  std::memcpy(&bits, &a, sizeof a);
  return bits;
}

/// Of the calls a kernel's launch plans ran, those the typed path made (kiln/device.hpp's AsyncKernel); -1: none said.
long long typed_runs(const std::string& diagnostics) {
  const std::string head = "call(s) run by them, ";
  const std::size_t at = diagnostics.find(head);
  if (at == std::string::npos) return -1;
  long long typed = -1;
  std::sscanf(diagnostics.c_str() + at + head.size(), "%lld of those by the typed path", &typed);
  return typed;
}

TEST_F(CallPath, ARepeatedCallIsRunByItsLaunchPlan) {
  auto k = scale_into("plan1_scale_into");
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), x2({1000}, s), y2({1000}, s);
  const auto call = k.async(s);
  call(x, y, 2.0f);  // compiles; the executor runs the host function and the call records its plan
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 0})) << k.diagnostics();
  const Fake::Launch first = fake.last();
  fake.reset();
  const std::vector<unsigned long long> p = fake.params_of([&] { call(x2, y2, 3.0f); });
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1})) << k.diagnostics();
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 1u);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
  // This call's own arrays and scalar, in the geometry the launch model chose for these extents.
  const auto has = [&](unsigned long long v) { return std::find(p.begin(), p.end(), v) != p.end(); };
  EXPECT_TRUE(has(address(x2.data())));
  EXPECT_TRUE(has(address(y2.data())));
  EXPECT_FALSE(has(address(x.data())));
  EXPECT_TRUE(has(bits_of(3.0f)));
  EXPECT_TRUE(has(1000));
  EXPECT_EQ(fake.last().grid[0], first.grid[0]);
  EXPECT_EQ(fake.last().block[0], first.block[0]);
  EXPECT_NE(k.diagnostics().find("last launch: 1000 iterations"), std::string::npos) << k.diagnostics();
  s.synchronize();
}

TEST_F(CallPath, ShapesAndRanksSelectTheirOwnPlans) {
  auto k = scale("plan2_scale");
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s), big({1 << 20}, s);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(k.async(s)(x, 2.0f).shape(), (std::vector<std::int64_t>{1000}));
    const unsigned small = fake.last().grid[0];
    EXPECT_EQ(k.async(s)(big, 2.0f).shape(), (std::vector<std::int64_t>{1 << 20}));
    EXPECT_GT(fake.last().grid[0], small) << "the grid of the first extents was reused";
  }
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{2, 4})) << k.diagnostics();
  // A parameter of any rank: the same leading extent in another rank is another signature and another plan.
  auto any = kiln::jit("plan_scale_any", [](kiln::Array<float> x, kiln::Float a) { return x * a; }, on_gpu());
  const kiln::DeviceArray<float> flat({1000}, s), rows({1000, 3}, s);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(any.async(s)(flat, 2.0f).shape(), (std::vector<std::int64_t>{1000}));
    EXPECT_EQ(any.async(s)(rows, 2.0f).shape(), (std::vector<std::int64_t>{1000, 3}));
  }
  // Extents that disagree are still refused by the host function's check, after plans for extents that agree.
  auto into = scale_into("plan3_scale_into");
  const auto call = into.async(s);
  kiln::DeviceArray<float> y({1000}, s), by({1 << 20}, s);
  call(x, y, 2.0f);
  call(x, y, 2.0f);
  EXPECT_THROW(call(x, by, 2.0f), kiln::ShapeError);
  EXPECT_EQ(plans(into.diagnostics()).first, 1);
  s.synchronize();
}

TEST_F(CallPath, APlanRunsOnTheCallsStreamAndDevice) {
  ASSERT_GE(kiln::cuda::device_count(), 2);
  auto k = scale_into("plan4_scale_into");
  kiln::cuda::Stream s0(0), t0(0), s1(1);
  kiln::DeviceArray<float> x0({1000}, s0), y0({1000}, s0), x1({1000}, s1), y1({1000}, s1);
  k.async(s0)(x0, y0, 2.0f);
  k.async(t0)(x0, y0, 2.0f);  // the plan, on another stream of the device
  EXPECT_EQ(fake.last().stream, t0.handle());
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1})) << k.diagnostics();
  k.async(s1)(x1, y1, 2.0f);  // the other device: its own module, so its own plan
  EXPECT_EQ(fake.last().stream, s1.handle());
  k.async(s1)(x1, y1, 2.0f);
  EXPECT_EQ(fake.last().stream, s1.handle());
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{2, 2})) << k.diagnostics();
  EXPECT_THROW(k.async(s1)(x0, y0, 2.0f), kiln::TypeError);  // arrays of device 0 on a stream of device 1
  EXPECT_THROW(k.async(s0)(x0, y1, 2.0f), kiln::TypeError);  // arrays of two devices
  EXPECT_EQ(plans(k.diagnostics()).second, 2);
  s0.synchronize();
  t0.synchronize();
  s1.synchronize();
}

TEST_F(CallPath, SharedMemoryAndOtherArgumentsLeaveThePlanToTheExecutor) {
  auto k = scale_into("plan5_scale_into");
  kiln::cuda::Stream s;
  const auto call = k.async(s);
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  const kiln::DeviceArray<float> frozen({1000}, s);
  call(x, y, 2.0f);
  call(x, y, 2.0f);
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1}));
  call(x, x, 2.0f);  // one array in and out: the __restrict__-free kernel, as before plans
  EXPECT_NE(k.diagnostics().find("_k0_alias]"), std::string::npos) << k.diagnostics();
  call(x, y, 2.0);  // a double for a Float parameter: converted by the general path
  call(x, y, 2);
  EXPECT_THROW(call(x, frozen, 2.0f), kiln::TypeError);  // written but read-only
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1})) << k.diagnostics();
  call(x, y, 2.0f);
  EXPECT_NE(k.diagnostics().find("_k0]"), std::string::npos) << k.diagnostics();
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 2}));
  // Overlaps the kernel could observe are still refused after a plan was recorded for distinct arrays.
  auto shift = kiln::jit("plan_shift_left", [](kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0) - 1, [&](kiln::Int i) { y[i] = x[i + 1]; });
  }, on_gpu());
  shift.async(s)(x, y);
  shift.async(s)(x, y);
  EXPECT_EQ(plans(shift.diagnostics()), (std::pair<int, long long>{1, 1})) << shift.diagnostics();
  EXPECT_THROW(shift.async(s)(x, x), kiln::AliasError);
  s.synchronize();
}

TEST_F(CallPath, APlanThatRunsOutOfMemoryReportsIt) {
  auto k = scale("plan6_scale");
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> big({5000}, s);
  { auto y = k.async(s)(big, 2.0f); }  // recorded; its block is kept by s
  const long long live = fake.live();
  auto held = k.async(s)(big, 2.0f);   // the plan takes the kept block
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1}));
  fake.fail_allocations(2);
  expect_out_of_memory([&] { (void)k.async(s)(big, 2.0f); }, "of shape (5000,)");
  fake.fail_allocations(0);
  EXPECT_EQ(fake.live(), live);
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1}));
  s.synchronize();
}

TEST_F(CallPath, AGraphRecordsPlannedLaunchesButMakesNoArrays) {
  auto into = scale_into("plan7_scale_into");
  auto make = scale("plan8_scale");
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  into.async(s)(x, y, 2.0f);
  (void)make.async(s)(x, 2.0f);
  (void)make.async(s)(x, 2.0f);
  const long long runs = plans(make.diagnostics()).second;
  fake.reset();
  const kiln::cuda::Graph g = kiln::cuda::capture(s, [&] {
    into.async(s)(x, y, 2.0f);  // by the plan
    into.async(s)(y, x, 2.0f);
    EXPECT_THROW((void)make.async(s)(x, 2.0f), kiln::DeviceError);  // a new array in a graph: refused, as before
  });
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 2u);
  EXPECT_EQ(plans(into.diagnostics()), (std::pair<int, long long>{1, 2})) << into.diagnostics();
  EXPECT_EQ(plans(make.diagnostics()).second, runs);
  g.launch(s);
  s.synchronize();
}

TEST_F(CallPath, WhatAPlanCannotRunIsSaid) {
  auto total = kiln::jit("plan_total", [](kiln::Array<float> x) { return kiln::sum(x); }, on_gpu());
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s);
  (void)total.async(s)(x);
  EXPECT_NE(total.diagnostics().find("repeated asynchronous calls: through the host executor (it returns a scalar)"),
            std::string::npos)
      << total.diagnostics();
  // Check mode traces every call again: such a call never takes a plan.
  kiln::Options checked = on_gpu();
  checked.check = true;
  auto k = kiln::jit("scale_checked", [](kiln::Array<float> x, kiln::Array<float> y, kiln::Float a) { y(kiln::all) = x * a; },
                     checked);
  kiln::DeviceArray<float> y({1000}, s);
  for (int i = 0; i < 3; ++i) k.async(s)(x, y, 2.0f);
  EXPECT_EQ(plans(k.diagnostics()).second, 0) << k.diagnostics();
  s.synchronize();
}


// ---- the typed path (AsyncKernel with DeviceArrays and numbers of the parameters' own types) ----------------

TEST_F(CallPath, ARepeatedTypedCallIsTheLaunchAlone) {
  auto k = scale_into("typed1_scale_into");
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), x2({1000}, s), y2({1000}, s);
  const auto call = k.async(s);
  call(x, y, 2.0f);  // the general path: compiles, records the plan
  EXPECT_EQ(typed_runs(k.diagnostics()), 0) << k.diagnostics();
  fake.reset();
  const std::vector<unsigned long long> p = fake.params_of([&] { call(x2, y2, 3.0f); });
  EXPECT_EQ(plans(k.diagnostics()), (std::pair<int, long long>{1, 1})) << k.diagnostics();
  EXPECT_EQ(typed_runs(k.diagnostics()), 1) << k.diagnostics();
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 1u);
  EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
  const auto has = [&](unsigned long long v) { return std::find(p.begin(), p.end(), v) != p.end(); };
  EXPECT_TRUE(has(address(x2.data())));
  EXPECT_TRUE(has(address(y2.data())));
  EXPECT_FALSE(has(address(x.data())));
  EXPECT_FALSE(has(address(y.data())));
  EXPECT_TRUE(has(bits_of(3.0f)));
  // The form the documentation writes (kernel.async(s) at every call) takes it too.
  k.async(s)(x, y, 2.0f);
  EXPECT_EQ(typed_runs(k.diagnostics()), 2) << k.diagnostics();
  // A number of another type is converted by the general path, as C++ would: 2 becomes 2.0f.
  const std::vector<unsigned long long> q = fake.params_of([&] { call(x, y, 2); });
  EXPECT_NE(std::find(q.begin(), q.end(), bits_of(2.0f)), q.end());
  EXPECT_EQ(typed_runs(k.diagnostics()), 2) << k.diagnostics();
  s.synchronize();
}

TEST_F(CallPath, TheTypedPathComparesRanksNotOnlyExtents) {
  // (1000,) and (1000, 1) have the same first extent and stride: only the rank tells them apart.
  auto any = kiln::jit("typed2_scale_any", [](kiln::Array<float> x, kiln::Float a) { return x * a; }, on_gpu());
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> flat({1000}, s), column({1000, 1}, s);
  const auto call = any.async(s);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(call(flat, 2.0f).shape(), (std::vector<std::int64_t>{1000}));
    EXPECT_EQ(call(column, 2.0f).shape(), (std::vector<std::int64_t>{1000, 1}));
  }
  // A kernel of rank-1 parameters refuses the column, after typed calls with vectors.
  auto k = kiln::jit("typed3_scale_into", [](kiln::Array<float, 1> x, kiln::Array<float, 1> y, kiln::Float a) {
    y(kiln::all) = x * a;
  }, on_gpu());
  kiln::DeviceArray<float> y({1000}, s);
  const auto into = k.async(s);
  const kiln::DeviceArray<float> x({1000}, s);
  into(x, y, 2.0f);
  into(x, y, 2.0f);
  EXPECT_EQ(typed_runs(k.diagnostics()), 1) << k.diagnostics();
  kiln::DeviceArray<float> wide({1000, 1}, s);
  try {
    into(x, wide, 2.0f);
    ADD_FAILURE() << "a rank-2 array was taken for a rank-1 parameter";
  } catch (const kiln::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 2 of 3 ('y') expects f32 array of rank 1"), std::string::npos) << e.what();
  }
  // An array that was moved from has no memory to run on: the call is not the plan's.
  kiln::DeviceArray<float> gone({1000}, s);
  const kiln::DeviceArray<float> taken = std::move(gone);
  EXPECT_EQ(gone.head().desc.data, nullptr);  // NOLINT(bugprone-use-after-move): what a call would read
  EXPECT_EQ(taken.head().desc.data, static_cast<void*>(taken.data()));
  s.synchronize();
}

TEST_F(CallPath, TheTypedPathLeavesEveryRefusalToTheGeneralPath) {
  auto k = scale_into("typed4_scale_into");
  kiln::cuda::Stream s;
  const auto call = k.async(s);
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), by({1 << 20}, s);
  const kiln::DeviceArray<float> frozen({1000}, s);
  call(x, y, 2.0f);
  call(x, y, 2.0f);
  ASSERT_EQ(typed_runs(k.diagnostics()), 1) << k.diagnostics();
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // Extents that disagree: the host function's check, naming the kernel.
  std::string m = message([&] { call(x, by, 2.0f); });
  EXPECT_NE(m.find("typed4_scale_into"), std::string::npos) << m;
  // Written but const: the argument and the fix.
  m = message([&] { call(x, frozen, 2.0f); });
  EXPECT_NE(m.find("kernel 'typed4_scale_into': argument 2 of 3 ('y')"), std::string::npos) << m;
  EXPECT_NE(m.find("read-only"), std::string::npos) << m;
  // One array in and out: the __restrict__-free kernel (the executor), then the plan again.
  call(x, x, 2.0f);
  EXPECT_NE(k.diagnostics().find("_k0_alias]"), std::string::npos) << k.diagnostics();
  call(x, y, 2.0f);
  EXPECT_NE(k.diagnostics().find("_k0]"), std::string::npos) << k.diagnostics();
  EXPECT_EQ(typed_runs(k.diagnostics()), 2) << k.diagnostics();
  // An array on another device than the stream: the argument and the fix.
  if (kiln::cuda::device_count() >= 2) {
    kiln::cuda::Stream s1(1);
    kiln::DeviceArray<float> x1({1000}, s1), y1({1000}, s1);
    k.async(s1)(x1, y1, 2.0f);
    k.async(s1)(x1, y1, 2.0f);  // the plan of device 1
    EXPECT_EQ(fake.last().stream, s1.handle());
    m = message([&] { k.async(s1)(x, y, 2.0f); });
    EXPECT_NE(m.find("argument 1 of 3 ('x') is on CUDA device 0, but the call's stream is on device 1"), std::string::npos) << m;
    m = message([&] { call(x, y1, 2.0f); });
    EXPECT_NE(m.find("('y') is on CUDA device 1"), std::string::npos) << m;
    s1.synchronize();
  }
  // A kernel that shifts refuses one array in and out, typed or not.
  auto shift = kiln::jit("typed_shift_left", [](kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0) - 1, [&](kiln::Int i) { y[i] = x[i + 1]; });
  }, on_gpu());
  const auto shifted = shift.async(s);
  shifted(x, y);
  shifted(x, y);
  EXPECT_EQ(typed_runs(shift.diagnostics()), 1) << shift.diagnostics();
  EXPECT_THROW(shifted(x, x), kiln::AliasError);
  s.synchronize();
}

TEST_F(CallPath, TheTypedPathRunsOnlyItsOwnOptionsPlans) {
  // Two option sets of one kernel share its core: a call with the other options never runs this one's plan.
  float factor = 2.0f;
  auto k = kiln::jit("typed5_scale", [&](kiln::Array<float> x, kiln::Array<float> y) { y(kiln::all) = x * factor; }, on_gpu());
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  k.async(s)(x, y);
  k.async(s)(x, y);
  EXPECT_EQ(typed_runs(k.diagnostics()), 1) << k.diagnostics();
  // Check mode traces every call again: after the captured factor changed, the call is refused, not run by the
  // plan the unchecked options recorded for the same arrays.
  kiln::Options checked = on_gpu();
  checked.check = true;
  const auto kc = k.with(checked);
  k.async(s)(x, y);  // typed again: 2
  kc.async(s)(x, y);
  factor = 3.0f;
  EXPECT_THROW(kc.async(s)(x, y), kiln::TraceError);
  k.async(s)(x, y);  // the unchecked options: their plan, as compiled (the captured value is baked in)
  EXPECT_EQ(typed_runs(k.diagnostics()), 3) << k.diagnostics();
  s.synchronize();
}

TEST_F(CallPath, ATypedCallOfAKernelWithoutPlansTakesTheGeneralPath) {
  // The host reads the total back to divide by it: no plan, so every typed call runs on the executor.
  auto normalize = kiln::jit("typed_normalize", [](kiln::Array<float> x, kiln::Array<float> y) { y(kiln::all) = x / kiln::sum(x); },
                             on_gpu());
  kiln::cuda::Stream s;
  const kiln::DeviceArray<float> x({1000}, s);
  kiln::DeviceArray<float> y({1000}, s);
  const auto call = normalize.async(s);
  for (int i = 0; i < 3; ++i) call(x, y);
  const std::string d = normalize.diagnostics();
  EXPECT_NE(d.find("repeated asynchronous calls: through the host executor"), std::string::npos) << d;
  EXPECT_EQ(typed_runs(d), -1) << d;
  s.synchronize();
}

TEST_F(CallPath, AGraphKeepsTheArraysOfTypedCalls) {
  auto k = scale_into("typed6_scale_into");
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s);
  const auto call = k.async(s);
  call(x, y, 2.0f);
  call(x, y, 2.0f);  // typed, by the plan
  ASSERT_EQ(typed_runs(k.diagnostics()), 1) << k.diagnostics();
  std::optional<kiln::DeviceArray<float>> t(std::in_place, std::vector<std::int64_t>{1000});  // cuMemAlloc'd, cuMemFree'd
  fake.reset();
  std::optional<kiln::cuda::Graph> g(kiln::cuda::capture(s, [&] { call(x, *t, 2.0f); }));
  EXPECT_EQ(fake.calls("cuLaunchKernel"), 1u);
  EXPECT_EQ(typed_runs(k.diagnostics()), 1) << "a graph was recorded by the typed path, which keeps no array";
  t.reset();  // the graph replays into it: it keeps it
  EXPECT_EQ(fake.calls("cuMemFree"), 0u);
  g->launch(s);
  s.synchronize();
  g.reset();
  EXPECT_EQ(fake.calls("cuMemFree"), 1u);
}

TEST_F(CallPath, EachAsyncKernelKeepsThePlanItsLatestCallRan) {
  // Two objects of one kernel, called in turn with arrays of two sizes: each keeps its own plan (no lookup), and
  // every call after the two that recorded the plans is the typed path's launch with that call's own arrays.
  auto k = scale_into("typed7_scale_into");
  kiln::cuda::Stream s;
  kiln::DeviceArray<float> x({1000}, s), y({1000}, s), bx({4000}, s), by({4000}, s);
  const auto small = k.async(s);
  const auto large = k.async(s);
  small(x, y, 2.0f);
  large(bx, by, 2.0f);
  EXPECT_EQ(typed_runs(k.diagnostics()), 0) << k.diagnostics();
  const auto launched = [&](auto&& call, const auto& in, auto& out, float a) {  // `out` written: not const
    fake.reset();
    const std::vector<unsigned long long> p = fake.params_of([&] { call(in, out, a); });
    EXPECT_EQ(fake.all() - fake.calls("cuLaunchKernel") - fake.calls("cuCtxGetCurrent"), 0u);
    for (unsigned long long v : {address(in.data()), address(out.data()), static_cast<std::uint64_t>(bits_of(a))})
      EXPECT_NE(std::find(p.begin(), p.end(), v), p.end()) << "a parameter of this call is missing";
    return fake.last().grid[0];
  };
  for (int round = 0; round < 3; ++round) {
    const unsigned g_small = launched(small, x, y, 3.0f + static_cast<float>(round));
    const unsigned g_large = launched(large, bx, by, 5.0f + static_cast<float>(round));
    EXPECT_LT(g_small, g_large) << "each call ran its own size's plan";
  }
  EXPECT_EQ(typed_runs(k.diagnostics()), 6) << k.diagnostics();
  // A copy keeps its plan; assigned another kernel's object (the same C++ type), it runs that kernel's plans only.
  auto other = scale_into("typed8_scale_into");
  auto c = small;
  c(x, y, 2.0f);
  EXPECT_EQ(typed_runs(k.diagnostics()), 7) << k.diagnostics();
  c = other.async(s);
  c(x, y, 2.0f);  // the other kernel's first call: compiled, its plan recorded
  c(x, y, 2.0f);
  EXPECT_EQ(typed_runs(other.diagnostics()), 1) << other.diagnostics();
  EXPECT_EQ(typed_runs(k.diagnostics()), 7) << k.diagnostics();
  s.synchronize();
}

}  // namespace
