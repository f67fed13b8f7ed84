// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-call-bench: what a user pays per call, each cost next to its hand-written baseline (Google Benchmark).
//   call/N             a compiled kernel y = a*x + y on N = 0, 1, 1000 elements: dispatch on the signature,
//                      argument checks, the overlap check of x and y, the loop
//   plain/N            the same loop as a plain C++ function (not inlined): what the call costs without kiln
//   scalar_result      a kernel of three scalars returning one (a*b + c), against the plain function
//   first_call/disk    a fresh kiln::jit object's first call whose kernel is in the disk cache (a temporary
//                      directory): trace, key, read the entry, link, run
//   first_call/cold    the same with the cache off: trace, passes, LLVM, link, run
// The first-call rows time one kernel object per iteration (manual timing: making the object and destroying it
// are outside); between iterations the cache settings are set anew, which lets go of the code the process
// keeps for re-created kernels, so each iteration really reads the disk (the row fails if it did not).
// Medians over repetitions are what docs/performance.md reports:
//   kiln-call-bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <kiln/kiln.hpp>

namespace {

auto make_axpy() {
  return kiln::jit("axpy", [](kiln::Double a, kiln::Array<double> x, kiln::Array<double> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  });
}

auto make_fma() {
  return kiln::jit("fma", [](kiln::Double a, kiln::Double b, kiln::Double c) { return a * b + c; });
}

[[gnu::noinline]] void plain_axpy(double a, const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

[[gnu::noinline]] double plain_fma(double a, double b, double c) { return a * b + c; }

void call(benchmark::State& state) {
  auto k = make_axpy();
  std::vector<double> x(static_cast<std::size_t>(state.range(0)), 1.0), y(x.size(), 0.0);
  k(0.5, x, y);  // compiled here, outside the timing
  for (auto _ : state) {
    k(0.5, x, y);
    benchmark::ClobberMemory();
  }
}

void plain(benchmark::State& state) {
  std::vector<double> x(static_cast<std::size_t>(state.range(0)), 1.0), y(x.size(), 0.0);
  for (auto _ : state) {
    plain_axpy(0.5, x.data(), y.data(), x.size());
    benchmark::ClobberMemory();
  }
}

void scalar_result(benchmark::State& state) {
  auto k = make_fma();
  double a = 1.5, b = 2.0, c = 0.25;
  benchmark::DoNotOptimize(k(a, b, c));
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(k(a, b, c));
  }
}

void scalar_result_plain(benchmark::State& state) {
  double a = 1.5, b = 2.0, c = 0.25;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(plain_fma(a, b, c));
  }
}

/// A cache directory of this process, removed at exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-call-bench.XXXXXX").string();
    if (mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TempDir& cache_dir() {
  static TempDir dir;
  return dir;
}

/// The settings every row runs under: a private cache directory, so that the benchmark neither reads nor fills
/// the user's cache.
kiln::CacheSettings private_cache() {
  if (cache_dir().path().empty()) return kiln::CacheSettings{kiln::CacheMode::off, {}, 0};
  return kiln::CacheSettings{kiln::CacheMode::on, cache_dir().path(), 1ull << 30};
}

/// One fresh kernel object's first call per iteration, under `settings`.
void first_call(benchmark::State& state, const kiln::CacheSettings& settings, bool expect_disk_hit) {
  std::vector<double> x(1, 1.0), y(1, 0.0);
  kiln::set_cache_settings(settings);
  make_axpy()(0.5, x, y);  // a disk cache now holds the entry (once written: flushed below)
  kiln::cache_flush();
  const std::uint64_t hits_before = kiln::cache_stats().disk_hits;
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    kiln::set_cache_settings(settings);  // a new store: the process lets go of the code it kept
    std::optional<decltype(make_axpy())> k;
    const auto t0 = Clock::now();
    k.emplace(make_axpy());
    (*k)(0.5, x, y);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const std::uint64_t hits = kiln::cache_stats().disk_hits - hits_before;
  if (expect_disk_hit && hits != static_cast<std::uint64_t>(state.iterations()))
    state.SkipWithError("a first call did not load the kernel from the disk cache");
  if (!expect_disk_hit && hits != 0) state.SkipWithError("a cold first call loaded the kernel from the disk cache");
  kiln::set_cache_settings(private_cache());
}

void first_call_disk(benchmark::State& state) {
  if (cache_dir().path().empty()) {
    state.SkipWithError("cannot make a temporary cache directory");
    return;
  }
  first_call(state, private_cache(), true);
}

void first_call_cold(benchmark::State& state) {
  first_call(state, kiln::CacheSettings{kiln::CacheMode::off, {}, 0}, false);
}

BENCHMARK(call)->Name("call")->Arg(0)->Arg(1)->Arg(1000);
BENCHMARK(plain)->Name("plain")->Arg(0)->Arg(1)->Arg(1000);
BENCHMARK(scalar_result)->Name("scalar_result");
BENCHMARK(scalar_result_plain)->Name("scalar_result/plain");
BENCHMARK(first_call_disk)->Name("first_call/disk")->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(200);
BENCHMARK(first_call_cold)->Name("first_call/cold")->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  kiln::set_cache_settings(private_cache());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  kiln::cache_flush();  // the background store is done before the directory is removed
  return 0;
}
