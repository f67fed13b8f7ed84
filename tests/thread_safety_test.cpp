// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host threads using kiln at once: one kernel called from many threads, first calls of new signatures racing,
// different kernels compiled concurrently through the in-memory table and a fresh disk cache, and readers of a
// kernel's diagnostics while it compiles. tools/tsan.sh runs this under ThreadSanitizer (with
// KILN_NUM_THREADS=1, so parfors run on the calling threads: libgomp itself is not instrumented).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kThreads = 4;

/// A fresh cache directory for the test's scope.
class FreshCache {
 public:
  FreshCache() : saved_(kiln::cache_settings()) {
    std::string t = (fs::temp_directory_path() / "kiln-thread-test-XXXXXX").string();
    root_ = mkdtemp(t.data());
    kiln::set_cache_settings({kiln::CacheMode::on, root_ + "/cache", 1ull << 30});
  }
  ~FreshCache() {
    kiln::cache_flush();  // background stores must land before the directory goes
    kiln::set_cache_settings(saved_);
    fs::remove_all(root_);
  }
  std::size_t entries() const {
    std::size_t n = 0;
    if (fs::exists(root_ + "/cache"))
      for (const auto& e : fs::recursive_directory_iterator(root_ + "/cache")) n += e.is_regular_file() && e.path().extension() == ".kce";
    return n;
  }

 private:
  kiln::CacheSettings saved_;
  std::string root_;
};

/// Runs `body(t)` on kThreads threads that start together (so first calls really race).
template <class F>
void together(F body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      body(t);
    });
  for (auto& th : threads) th.join();
}

auto make_scaled_sum(kiln::Options o = {}) {
  return kiln::jit("scaled_sum", [](kiln::Array<double> x, kiln::Array<double> y, kiln::Double a) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) {
      y[i] = a * x[i];
      s += x[i];
    });
    return s;
  }, o);
}

TEST(ThreadSafety, OneKernelCalledFromManyThreadsCompilesOnceAndGivesEachItsAnswer) {
  FreshCache cache;
  auto k = make_scaled_sum();
  const auto before = kiln::cache_stats();
  std::atomic<int> wrong{0};
  together([&](int t) {
    for (int call = 0; call < 20; ++call) {
      // At least 2 elements: an extent of 1 is a signature of its own (kernels specialize on unit extents).
      const std::size_t n = 2 + static_cast<std::size_t>((t * 977 + call * 131) % 3001);
      std::vector<double> x(n), y(n, -1.0);
      double want = 0;
      for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>((i * 7 + static_cast<std::size_t>(t)) % 100), want += x[i];
      const double a = t + 1.0;
      const double got = k(x, y, a);  // small integers: the sum is exact in any order
      bool ok = got == want;
      for (std::size_t i = 0; i < n; ++i) ok = ok && y[i] == a * x[i];
      wrong += !ok;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(k.compiled_variants(), 1u);
  EXPECT_LE(kiln::cache_stats().compiles - before.compiles, 1u);  // 0 if an identical kernel ran before
}

TEST(ThreadSafety, FirstCallsOfDifferentSignaturesRaceOnOneKernel) {
  FreshCache cache;
  auto k = kiln::jit("total", [](kiln::Array<double> a) {
    kiln::Double s = 0.0;
    kiln::prange(a.size(), [&](kiln::Int i) { s += kiln::to_double(i); });
    return s + static_cast<double>(a.rank());
  });
  // Rank 1, 2 and 3, and a strided rank-1 view: four signatures, one per thread.
  std::vector<double> storage(64, 0.0);
  std::atomic<int> wrong{0};
  together([&](int t) {
    for (int round = 0; round < 5; ++round) {
      double got = 0, want = 0;
      if (t == 0) got = k(kiln::ArrayRef<double>(storage.data(), {8})), want = 28 + 1;
      if (t == 1) got = k(kiln::ArrayRef<double>(storage.data(), {2, 4})), want = 28 + 2;
      if (t == 2) got = k(kiln::ArrayRef<double>(storage.data(), {2, 2, 2})), want = 28 + 3;
      if (t == 3) got = k(kiln::ArrayRef<double>(storage.data(), {8}, {2})), want = 28 + 1;
      wrong += got != want;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(k.compiled_variants(), 4u);
}

TEST(ThreadSafety, DifferentKernelsCompileAtOnceThroughTheDiskCacheThenReuseTheLoadedCode) {
  FreshCache cache;
  // Each thread's kernel captures its own constant, so the traced IR (the cache key) differs per thread.
  auto run = [](int t) {
    const double c = 1000.0 + t;
    auto k = kiln::jit("captured", [c](kiln::Array<double> x) {
      kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] * 2.0 + c; });
    });
    std::vector<double> x(257, 1.0);
    k(x);
    for (double v : x)
      if (v != 2.0 + c) return false;
    return true;
  };
  std::atomic<int> wrong{0};
  const auto first = kiln::cache_stats();
  together([&](int t) { wrong += !run(t); });
  kiln::cache_flush();
  const auto second = kiln::cache_stats();
  EXPECT_EQ(second.compiles - first.compiles, static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(second.stores - first.stores, static_cast<std::uint64_t>(kThreads));
  EXPECT_EQ(cache.entries(), static_cast<std::size_t>(kThreads));
  // New kernel objects with the same bodies: every thread finds its code in the cache (on disk, or still loaded
  // in this process) and nothing compiles again.
  together([&](int t) { wrong += !run(t); });
  const auto third = kiln::cache_stats();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(third.compiles - second.compiles, 0u);
  EXPECT_EQ(third.memory_hits + third.disk_hits - second.memory_hits - second.disk_hits, static_cast<std::uint64_t>(kThreads));
}

TEST(ThreadSafety, DiagnosticsAreReadableWhileTheKernelCompilesNewSignatures) {
  auto k = kiln::jit("watched", [](kiln::Array<float> x) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] + 1.0f; });
  });
  std::atomic<bool> done{false};
  std::atomic<int> empty{0};
  std::thread reader([&] {
    while (!done.load()) {
      // Before the first compile there is nothing to report; once one finished there must always be a report.
      const bool compiled = k.compiled_variants() > 0;
      const std::string d = k.diagnostics(), ir = k.lowered_ir();
      if (compiled && (d.empty() || ir.empty())) ++empty;
    }
  });
  std::vector<float> storage(32, 0.0f);
  together([&](int t) {
    // Thread t compiles a signature of its own: contiguous, or strided with stride t + 1.
    for (int round = 0; round < 3; ++round)
      k(t == 0 ? kiln::ArrayRef<float>(storage.data(), {8}) : kiln::ArrayRef<float>(storage.data() + t, {4}, {t + 1}));
  });
  done = true;
  reader.join();
  EXPECT_EQ(empty.load(), 0);
  EXPECT_EQ(k.compiled_variants(), 2u);  // the strided views share one signature (inner stride not 1)
}

TEST(ThreadSafety, InterpretedKernelsRunConcurrently) {
  kiln::Options o;
  o.target = kiln::Target::interpreter;
  auto k = make_scaled_sum(o);
  std::atomic<int> wrong{0};
  together([&](int t) {
    std::vector<double> x(100 + static_cast<std::size_t>(t), 2.0), y(x.size());
    wrong += k(x, y, 3.0) != 2.0 * static_cast<double>(x.size()) || y.back() != 6.0;
  });
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
