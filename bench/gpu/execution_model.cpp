// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu-async: what kiln's CUDA execution model costs against hand-written CUDA on one stream, in one
// process, interleaved (each round in a shuffled order), medians of --reps rounds; the hand pipeline is timed twice
// a round, and "hand A/A" (its second timing over its first) is the band the ratios vary by with nothing changed:
//  - pipeline: ten kernels (five array expressions, each twice) on device-resident data. kiln: each call is
//    kernel.async(stream) and returns a new DeviceArray from the stream-ordered pool; hand: the same five
//    formulas as CUDA C (NVRTC) writing into two preallocated buffers. Host transfers are counted during kiln's
//    pipeline (kiln::cuda::memory_stats().host_transfers), and the device memory peak is reported.
//  - time loop: a 3-point smoothing step on 4096 doubles, 200 steps: kiln synchronous calls, kiln asynchronous
//    calls, one kiln graph of the 200 steps replayed, and hand plain launches; per-step microseconds.
//   kiln-bench-gpu-async [--reps R]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/measure.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/module.hpp"

namespace {

namespace gpu = kiln::gpu;

const char* kHand = R"(
extern "C" __global__ void h_affine(const float* x, float* y, float a, float b, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i] * a + b;
}
extern "C" __global__ void h_square(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i] * x[i];
}
extern "C" __global__ void h_softsign(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i] / (1.0f + fabsf(x[i]));
}
extern "C" __global__ void h_clip(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = fminf(fmaxf(x[i], -1.0f), 1.0f);
}
extern "C" __global__ void h_mix(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i] * 0.75f + sqrtf(fabsf(x[i])) * 0.25f;
}
extern "C" __global__ void h_step(const double* u, double* v, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x + 1;
  if (i < n - 1) v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
}
)";
const std::vector<std::string> kNames = {"h_affine", "h_square", "h_softsign", "h_clip", "h_mix", "h_step"};

using bench::median;

double wall_us(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

struct Hand {
  explicit Hand(gpu::Device& dev) {
    // kiln's float rules (no contraction): both sides round alike, so their results can be compared exactly.
    const auto bin = kiln::codegen::cuda::compile_source(kHand, "execution_model", dev.info().arch(), {}, true);
    module = std::make_unique<gpu::Module>(dev, bin.arch, bin.cubin, bin.ptx, kNames);
  }
  /// As a hand-written program launches: the parameters' addresses in an array on the stack.
  void launch(CUstream s, int k, long long n, std::initializer_list<void*> params) const {
    const unsigned block = 256;
    const auto grid = static_cast<unsigned>(std::min<long long>((n + block - 1) / block, 132LL * 16));
    std::array<void*, 8> p{};
    std::copy(params.begin(), params.end(), p.begin());
    gpu::launch(s, module->function(static_cast<std::size_t>(k)), {std::max(grid, 1u), 1, 1}, {block, 1, 1}, p.data());
  }
  std::unique_ptr<gpu::Module> module;
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
  if (!kiln::cuda::available()) {
    std::printf("skipped: %s\n", kiln::cuda::unavailable_reason().c_str());
    return 77;
  }
  gpu::Device& dev = gpu::device(kiln::cuda::current_device());
  const Hand hand(dev);
  kiln::cuda::Stream s;
  const auto cs = static_cast<CUstream>(s.handle());
  const kiln::Options on_gpu = kiln::Options().on(kiln::Target::cuda);
  std::mt19937 rng(18);  // the rows' order in each round: the same sequence in every process

  auto affine = kiln::jit("affine", [](kiln::Array<float> x, kiln::Float a, kiln::Float b) { return x * a + b; }, on_gpu);
  auto square = kiln::jit("square", [](kiln::Array<float> x) { return x * x; }, on_gpu);
  auto softsign = kiln::jit("softsign", [](kiln::Array<float> x) { return x / (1.0f + kiln::abs(x)); }, on_gpu);
  auto clip = kiln::jit("clip_unit", [](kiln::Array<float> x) { return kiln::clip(x, -1.0f, 1.0f); }, on_gpu);
  auto mix = kiln::jit("mix", [](kiln::Array<float> x) { return x * 0.75f + kiln::sqrt(kiln::abs(x)) * 0.25f; }, on_gpu);
  // The same five, writing into an output argument as the hand kernels do (no allocation per call).
  auto affine_into = kiln::jit("affine_into", [](kiln::Array<float> x, kiln::Array<float> y, kiln::Float a, kiln::Float b) {
    y(kiln::all) = x * a + b;
  }, on_gpu);
  auto square_into = kiln::jit("square_into", [](kiln::Array<float> x, kiln::Array<float> y) { y(kiln::all) = x * x; }, on_gpu);
  auto softsign_into = kiln::jit("softsign_into", [](kiln::Array<float> x, kiln::Array<float> y) {
    y(kiln::all) = x / (1.0f + kiln::abs(x));
  }, on_gpu);
  auto clip_into = kiln::jit("clip_into", [](kiln::Array<float> x, kiln::Array<float> y) { y(kiln::all) = kiln::clip(x, -1.0f, 1.0f); }, on_gpu);
  auto mix_into = kiln::jit("mix_into", [](kiln::Array<float> x, kiln::Array<float> y) {
    y(kiln::all) = x * 0.75f + kiln::sqrt(kiln::abs(x)) * 0.25f;
  }, on_gpu);

  std::printf("device: %s\n", dev.info().name.c_str());
  std::printf("pipeline of 10 kernels on device-resident float arrays, median of %d rounds (wall time incl. the final synchronization)\n", reps);
  std::printf("%-10s %10s %10s %8s %14s %8s %16s %14s %14s %8s %10s\n", "n", "kiln us", "hand us", "ratio", "hand+alloc us", "ratio",
              "host transfers", "kiln peak MiB", "kiln into us", "ratio", "hand A/A");
  for (long long n : {1LL << 16, 1LL << 20, 1LL << 24}) {
    std::vector<float> init(static_cast<std::size_t>(n));
    for (long long i = 0; i < n; ++i) init[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 1009) * 0.01f - 5.0f;
    const kiln::DeviceArray<float> x = kiln::to_device(init);
    kiln::DeviceArray<float> a({n}), b({n});
    auto kiln_pipeline = [&] {
      kiln::DeviceArray<float> y = affine.async(s)(x, 0.5f, 0.25f);
      for (int round = 0; round < 2; ++round) {
        y = square.async(s)(y);
        y = softsign.async(s)(y);
        y = clip.async(s)(y);
        y = mix.async(s)(y);
        if (round == 0) y = affine.async(s)(y, 2.0f, -0.5f);
      }
      s.synchronize();
      return y;
    };
    float *pa = a.data(), *pb = b.data();
    const float* px = x.data();
    float h1 = 0.5f, h2 = 0.25f, h3 = 2.0f, h4 = -0.5f;
    // kiln writing into two arrays in turn, as the hand pipeline does.
    kiln::DeviceArray<float> ka({n}), kb({n});
    const auto a_affine = affine_into.async(s);
    const auto a_square = square_into.async(s);
    const auto a_softsign = softsign_into.async(s);
    const auto a_clip = clip_into.async(s);
    const auto a_mix = mix_into.async(s);
    auto kiln_into_pipeline = [&] {
      a_affine(x, ka, 0.5f, 0.25f);
      for (int round = 0; round < 2; ++round) {
        a_square(ka, kb);
        a_softsign(kb, ka);
        a_clip(ka, kb);
        a_mix(kb, ka);
        if (round == 0) a_affine(ka, kb, 2.0f, -0.5f), std::swap(ka, kb);
      }
      s.synchronize();
      return ka;
    };
    auto hand_pipeline = [&] {
      hand.launch(cs, 0, n, {&px, &pa, &h1, &h2, &n});
      for (int round = 0; round < 2; ++round) {
        hand.launch(cs, 1, n, {&pa, &pb, &n});
        hand.launch(cs, 2, n, {&pb, &pa, &n});
        hand.launch(cs, 3, n, {&pa, &pb, &n});
        hand.launch(cs, 4, n, {&pb, &pa, &n});
        if (round == 0) hand.launch(cs, 0, n, {&pa, &pb, &h3, &h4, &n}), std::swap(pa, pb);
      }
      s.synchronize();
    };
    // The same, each result in new stream-ordered memory (cuMemAllocAsync) and the previous one freed, as
    // kiln's array expressions do: the allocation's share of kiln's per-call cost.
    auto hand_alloc_pipeline = [&] {
      const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
      CUdeviceptr prev = 0;
      const float* in = px;
      float* out = nullptr;
      const auto next = [&](int k, float* a, float* b) {
        CUdeviceptr p = 0;
        gpu::check(gpu::driver().cuMemAllocAsync(&p, bytes, cs), "cuMemAllocAsync");
        out = reinterpret_cast<float*>(p);
        if (a) hand.launch(cs, k, n, {&in, &out, a, b, &n});
        else hand.launch(cs, k, n, {&in, &out, &n});
        if (prev) gpu::check(gpu::driver().cuMemFreeAsync(prev, cs), "cuMemFreeAsync");
        prev = p;
        in = out;
      };
      next(0, &h1, &h2);
      for (int round = 0; round < 2; ++round) {
        for (int k = 1; k <= 4; ++k) next(k, nullptr, nullptr);
        if (round == 0) next(0, &h3, &h4);
      }
      gpu::check(gpu::driver().cuMemFreeAsync(prev, cs), "cuMemFreeAsync");
      s.synchronize();
    };
    // Warm: compile, fill the pool; and check that both compute the same.
    const std::vector<float> got = kiln_pipeline().to_vector();
    hand_pipeline();
    const std::vector<float> want = kiln::DeviceArray<float>(pa == a.data() ? a : b).to_vector();
    if (got != want || kiln_into_pipeline().to_vector() != want) {
      std::printf("MISMATCH between kiln and the hand pipeline at n=%lld\n", n);
      return 1;
    }
    kiln::cuda::reset_memory_peak();
    const std::uint64_t transfers0 = kiln::cuda::memory_stats().host_transfers;
    hand_alloc_pipeline();
    // Five rows a round, the hand pipeline twice (its second row against its first is the A/A band: what the
    // ratios vary by when nothing differs), in a new order each round (a shuffle from a fixed seed): a row's
    // time depends on the row before it (what that one left in the driver, the pool and the caches), and an
    // order that only rotates keeps every row after the same one (the into row always after hand+alloc).
    std::vector<double> tk, th, ta, ti, th2;
    const std::array<std::pair<std::vector<double>*, std::function<void()>>, 5> rows = {{
        {&tk, [&] { kiln_pipeline(); }},
        {&th, hand_pipeline},
        {&ta, hand_alloc_pipeline},
        {&ti, [&] { kiln_into_pipeline(); }},
        {&th2, hand_pipeline},
    }};
    std::array<std::size_t, 5> order{};
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (int r = 0; r < reps; ++r) {
      std::shuffle(order.begin(), order.end(), rng);
      for (const std::size_t k : order) rows[k].first->push_back(wall_us(rows[k].second));
    }
    const kiln::cuda::MemoryStats m = kiln::cuda::memory_stats();
    std::printf("%-10lld %10.1f %10.1f %8.3f %14.1f %8.3f %16llu %14.1f %14.1f %8.3f %10.3f\n", n, median(tk), median(th),
                median(tk) / median(th), median(ta), median(tk) / median(ta),
                static_cast<unsigned long long>(m.host_transfers - transfers0), static_cast<double>(m.peak_bytes) / (1 << 20),
                median(ti), median(ti) / median(th), median(th2) / median(th));
    // The geometry kiln chose, against the hand kernels' min(n / 256, 2112) blocks of 256.
    const std::string d = square_into.diagnostics();
    const std::size_t at = d.find("last launch:");
    if (at != std::string::npos) std::printf("           kiln square_into %s\n", d.substr(at, d.find('\n', at) - at).c_str());
  }

  // ---- time loop ------------------------------------------------------------------------------------------
  constexpr int kSteps = 200;
  constexpr long long kN = 4096;
  auto step = kiln::jit("smooth_step", [](kiln::Array<double> u, kiln::Array<double> v) {
    kiln::prange(1, u.shape(0) - 1, [&](kiln::Int i) { v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]; });
  }, on_gpu);
  std::vector<double> init(kN);
  for (long long i = 0; i < kN; ++i) init[static_cast<std::size_t>(i)] = static_cast<double>(i % 17);
  // Each variant has its own pair of arrays and runs the same number of steps: all must end equal.
  struct Pair {
    kiln::DeviceArray<double> u, v;
  };
  const auto fresh = [&] { return Pair{kiln::to_device(init), kiln::to_device(init)}; };
  Pair ks = fresh(), ka = fresh(), kg = fresh(), hp = fresh();
  const auto async_step = step.async(s);
  auto kiln_sync = [&] {
    for (int t = 0; t < kSteps / 2; ++t) step(ks.u, ks.v), step(ks.v, ks.u);
  };
  auto kiln_async = [&] {
    for (int t = 0; t < kSteps / 2; ++t) async_step(ka.u, ka.v), async_step(ka.v, ka.u);
    s.synchronize();
  };
  kiln_sync();
  kiln_async();
  const kiln::cuda::Graph graph = kiln::cuda::capture(s, [&] {
    for (int t = 0; t < kSteps / 2; ++t) async_step(kg.u, kg.v), async_step(kg.v, kg.u);
  });
  auto kiln_graph = [&] {
    graph.launch(s);
    s.synchronize();
  };
  double *pu = hp.u.data(), *pv = hp.v.data();
  long long n = kN;
  auto hand_plain = [&] {
    for (int t = 0; t < kSteps / 2; ++t) {
      hand.launch(cs, 5, n, {&pu, &pv, &n});
      hand.launch(cs, 5, n, {&pv, &pu, &n});
    }
    s.synchronize();
  };
  kiln_graph();
  hand_plain();
  std::vector<double> ts, ta, tg, th;
  const std::array<std::pair<std::vector<double>*, std::function<void()>>, 4> steps = {{
      {&ts, kiln_sync}, {&ta, kiln_async}, {&tg, kiln_graph}, {&th, hand_plain}}};
  std::array<std::size_t, 4> step_order{};
  std::iota(step_order.begin(), step_order.end(), std::size_t{0});
  for (int r = 0; r < reps; ++r) {
    std::shuffle(step_order.begin(), step_order.end(), rng);  // as the pipeline's rows
    for (const std::size_t k : step_order) steps[k].first->push_back(wall_us(steps[k].second) / kSteps);
  }
  const std::vector<double> want = hp.u.to_vector();
  const bool same = ks.u.to_vector() == want && ka.u.to_vector() == want && kg.u.to_vector() == want;
  std::printf("\ntime loop: %d steps of a 3-point smoothing of %lld doubles, per-step microseconds (median of %d; graph: %zu nodes)\n",
              kSteps, kN, reps, graph.nodes());
  std::printf("  kiln synchronous calls  %7.2f\n  kiln async calls        %7.2f\n  kiln graph replay       %7.2f\n"
              "  hand plain launches     %7.2f\n  graph / hand           %7.3f   results %s\n",
              median(ts), median(ta), median(tg), median(th), median(tg) / median(th), same ? "identical" : "DIFFER");
  return same ? 0 : 1;
}
