// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu-calls: kiln's host cost per CUDA call against a hand-written cuLaunchKernel of the same work.
//
// Each row queues --calls back-to-back calls of a tiny kernel (y = x * a on --n floats) on one stream without
// waiting, and reports the host time per call (the loop alone: what the CPU spends to queue a call) and the
// wall time per call (until the stream is idle). Rows, interleaved, median of --reps rounds:
//   hand launch          cuLaunchKernel of a hand-written kernel (NVRTC), writing into a preallocated array
//   kiln async into      kernel.async(stream)(x, y, a): the same work written as y(kiln::all) = x * a
//   hand launch+alloc    the hand launch into new stream-ordered memory (cuMemAllocAsync), the previous freed
//   kiln async new       kernel.async(stream)(x, a) returning a new DeviceArray, the previous one dropped
//   hand launch+sync     the hand launch followed by cuStreamSynchronize
//   kiln sync            the synchronous call kernel(x, y, a) on DeviceArrays (it waits for its kernel)
//   hand ctx+launch      cuCtxGetCurrent, then the hand launch (what kiln's launch asks the driver besides it),
//                        against the hand launch row
// With KILN_CUDA_DRIVER naming a stand-in driver that runs nothing (tests/fake_cuda_driver.cpp), the host
// columns measure kiln's own work per call against the bare driver call, on any machine. The last column
// counts the C++ heap allocations per call (this program replaces operator new to count them). Under
// `valgrind --tool=callgrind` each row's timed loop is also dumped on its own (named by the row), so that the
// instructions per call are counted without timing anything (tools/call_instructions.sh).
//   kiln-bench-gpu-calls [--n N] [--calls C] [--reps R]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>  // no-ops unless run under callgrind
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

#include "bench/measure.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/module.hpp"

// Every C++ heap allocation of the process, counted: the benchmark reports them per call.
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace gpu = kiln::gpu;
using Clock = std::chrono::steady_clock;

const char* kHand = R"(
extern "C" __global__ void h_scale(const float* x, float* y, float a, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i] * a;
}
)";

using bench::median;

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

struct Row {
  const char* name;
  std::function<void()> call;  ///< one call
  std::vector<double> host, wall;
  std::uint64_t allocations = 0;  ///< C++ heap allocations in the timed loops
};

}  // namespace

int main(int argc, char** argv) {
  long long n = 4096;
  int calls = 200, reps = 21;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0) n = std::max(1LL, std::atoll(argv[++i]));
    else if (std::strcmp(argv[i], "--calls") == 0) calls = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[++i]));
  }
  if (!kiln::cuda::available()) {
    std::printf("skipped: %s\n", kiln::cuda::unavailable_reason().c_str());
    return 77;
  }
  gpu::Device& dev = gpu::device(kiln::cuda::current_device());
  // The stand-in driver runs no kernel: the hand kernel is compiled only for a real one (NVRTC under callgrind
  // takes minutes).
  const bool real = dev.info().name.find("fake") == std::string::npos;
  kiln::codegen::cuda::Binary bin;
  if (real) bin = kiln::codegen::cuda::compile_source(kHand, "call_overhead", dev.info().arch(), {}, true);
  else bin.ptx = kHand;
  const gpu::Module hand(dev, bin.arch, bin.cubin, bin.ptx, {"h_scale"});
  kiln::cuda::Stream s;
  const auto cs = static_cast<CUstream>(s.handle());
  const gpu::DriverApi& d = gpu::driver();

  const kiln::Options on_gpu = kiln::Options().on(kiln::Target::cuda);
  auto scale_into = kiln::jit("scale_into", [](kiln::Array<float> x, kiln::Array<float> y, kiln::Float a) { y(kiln::all) = x * a; }, on_gpu);
  auto scale = kiln::jit("scale", [](kiln::Array<float> x, kiln::Float a) { return x * a; }, on_gpu);

  std::vector<float> init(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) init[static_cast<std::size_t>(i)] = static_cast<float>(i % 101) * 0.5f;
  const kiln::DeviceArray<float> x = kiln::to_device(init);
  kiln::DeviceArray<float> y({n}), hy({n});
  kiln::DeviceArray<float> fresh;
  const float* px = x.data();
  float* py = hy.data();
  float a = 1.5f;
  const auto into = scale_into.async(s);
  const auto make = scale.async(s);
  const unsigned block = 256;
  const unsigned grid = static_cast<unsigned>(std::min<long long>((n + block - 1) / block, 132LL * 16));
  const auto hand_launch = [&](float* out) {
    void* params[] = {&px, &out, &a, &n};
    gpu::check(d.cuLaunchKernel(hand.function(0).fn, grid, 1, 1, block, 1, 1, 0, cs, params, nullptr), "cuLaunchKernel");
  };
  CUdeviceptr prev = 0;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);

  std::vector<Row> rows;
  rows.push_back({"hand launch", [&] { hand_launch(py); }, {}, {}});
  rows.push_back({"kiln async into", [&] { into(x, y, a); }, {}, {}});
  rows.push_back({"hand launch+alloc", [&] {
                    CUdeviceptr p = 0;
                    gpu::check(d.cuMemAllocAsync(&p, bytes, cs), "cuMemAllocAsync");
                    hand_launch(reinterpret_cast<float*>(p));
                    if (prev) gpu::check(d.cuMemFreeAsync(prev, cs), "cuMemFreeAsync");
                    prev = p;
                  }, {}, {}});
  rows.push_back({"kiln async new", [&] { fresh = make(x, a); }, {}, {}});
  rows.push_back({"hand launch+sync", [&] {
                    hand_launch(py);
                    gpu::check(d.cuStreamSynchronize(cs), "cuStreamSynchronize");
                  }, {}, {}});
  rows.push_back({"kiln sync", [&] { scale_into(x, y, a); }, {}, {}});
  // What kiln's launch does besides the hand one: ask which context is current (a launch plan binds its
  // device's context when it is not). Against the hand launch row: the driver's share of kiln's cost.
  rows.push_back({"hand ctx+launch", [&] {
                    CUcontext cur = nullptr;
                    gpu::check(d.cuCtxGetCurrent(&cur), "cuCtxGetCurrent");
                    hand_launch(py);
                  }, {}, {}});

  // Warm: compile, load, fill the pool; and check that kiln and the hand kernel agree (on a real GPU).
  for (Row& r : rows) r.call();
  s.synchronize();
  kiln::cuda::synchronize();
  if (real && (y.to_vector() != hy.to_vector() || fresh.to_vector() != hy.to_vector())) {
    std::printf("MISMATCH between kiln and the hand kernel\n");
    return 1;
  }
  const std::uint64_t transfers0 = kiln::cuda::memory_stats().host_transfers;
  for (int r = 0; r < reps; ++r) {
    for (Row& row : rows) {
      const std::uint64_t a0 = g_allocations.load(std::memory_order_relaxed);
      CALLGRIND_ZERO_STATS;
      const auto t0 = Clock::now();
      for (int c = 0; c < calls; ++c) row.call();
      const auto t1 = Clock::now();
      CALLGRIND_DUMP_STATS_AT(row.name);
      row.allocations += g_allocations.load(std::memory_order_relaxed) - a0;
      s.synchronize();
      kiln::cuda::synchronize();
      const auto t2 = Clock::now();
      row.host.push_back(us(t0, t1) / calls);
      row.wall.push_back(us(t0, t2) / calls);
    }
  }
  if (prev) gpu::check(d.cuMemFreeAsync(prev, cs), "cuMemFreeAsync");
  const std::uint64_t transfers = kiln::cuda::memory_stats().host_transfers - transfers0;

  std::printf("device: %s\n", dev.info().name.c_str());
  std::printf("%d back-to-back calls of y = x * a on %lld floats, one stream; per call, median of %d rounds\n", calls, n, reps);
  std::printf("%-20s %10s %10s %12s %12s %12s\n", "row", "host us", "wall us", "host/hand", "wall/hand", "allocs/call");
  const double hand_host[3] = {median(rows[0].host), median(rows[2].host), median(rows[4].host)};
  const double hand_wall[3] = {median(rows[0].wall), median(rows[2].wall), median(rows[4].wall)};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // Each kiln row against the hand row before it; the last row (a hand one) against the bare launch.
    const std::size_t pair = i < 6 ? i / 2 : 0;
    std::printf("%-20s %10.3f %10.3f %12.3f %12.3f %12.2f\n", rows[i].name, median(rows[i].host), median(rows[i].wall),
                median(rows[i].host) / hand_host[pair], median(rows[i].wall) / hand_wall[pair],
                static_cast<double>(rows[i].allocations) / (static_cast<double>(reps) * calls));
  }
  std::printf("kiln host transfers while timed: %llu (the synchronous row waits, but copies nothing)\n",
              static_cast<unsigned long long>(transfers));
  return 0;
}
