// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A kernel made anew at each call of a user's function (`kiln::jit` inside a loop) reuses the code this
// process already loaded — no disk read, no link — and kiln::compile_history() stays bounded.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

double dot_of(const std::vector<double>& x) {
  auto k = jit("dot_again", [](Array<double> a, Array<double> b) {
    Double s = 0.0;
    prange(a.shape(0), [&](Int i) { s += a[i] * b[i]; });
    return s;
  });
  return k(x, x);
}

class RecreatedKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_cpu_backend()) GTEST_SKIP() << "needs the CPU target (the interpreter caches nothing)";
    saved_ = cache_settings();
    dir_ = std::filesystem::temp_directory_path() / ("kiln-recreated-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    set_cache_settings({CacheMode::on, dir_.string(), 1ull << 30});
  }
  void TearDown() override {
    if (!has_cpu_backend()) return;
    cache_flush();
    set_cache_settings(saved_);
    std::filesystem::remove_all(dir_);
  }
  CacheSettings saved_;
  std::filesystem::path dir_;
};

TEST_F(RecreatedKernel, LaterCreationsAreMemoryHits) {
  const std::vector<double> x(100, 2.0);
  ASSERT_EQ(dot_of(x), 400.0);
  const CacheStats before = cache_stats();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(dot_of(x), 400.0);
  const CacheStats after = cache_stats();
  EXPECT_EQ(after.memory_hits - before.memory_hits, 50u);
  EXPECT_EQ(after.disk_hits, before.disk_hits);
  EXPECT_EQ(after.compiles, before.compiles);
  EXPECT_EQ(compile_history().back().cache, CacheSource::memory);
}

TEST_F(RecreatedKernel, NewCacheSettingsMeanNewCode) {
  const std::vector<double> x(10, 1.0);
  dot_of(x);
  cache_flush();
  set_cache_settings({CacheMode::on, (dir_ / "other").string(), 1ull << 30});
  const CacheStats before = cache_stats();
  dot_of(x);
  EXPECT_EQ(cache_stats().compiles - before.compiles, 1u);
}

TEST_F(RecreatedKernel, HistoryIsBounded) {
  const std::vector<double> x(3, 1.0);
  for (int i = 0; i < 4200; ++i) dot_of(x);
  const std::vector<CompileRecord> h = compile_history();
  EXPECT_EQ(h.size(), 4096u);
  EXPECT_EQ(h.back().kernel, "dot_again");
}

}  // namespace
}  // namespace kiln

// ---- source positions stay out of the cache key ------------------------------------------------------------

namespace kiln {
namespace {

// The same kernel written on two lines (a comment added above a kernel moves it): one cache key, and each
// kernel's errors name its own line.
const int kLineA = __LINE__ + 1;
auto make_max_a() { return jit("max_moved", [](Array<double> x) { return max(x); }); }

const int kLineB = __LINE__ + 1;
auto make_max_b() { return jit("max_moved", [](Array<double> x) { return max(x); }); }

TEST_F(RecreatedKernel, SourcePositionsAreNotInTheKeyButInTheErrors) {
  const std::vector<double> x(4, 2.0), empty;
  auto a = make_max_a();
  auto b = make_max_b();
  ASSERT_EQ(a(x), 2.0);
  const std::string key_a = compile_history().back().key;
  const CacheStats before = cache_stats();
  ASSERT_EQ(b(x), 2.0);
  EXPECT_EQ(compile_history().back().key, key_a);
  EXPECT_EQ(cache_stats().compiles, before.compiles);  // b reused a's code
  auto message_of = [&](auto& k) -> std::string {
    try {
      k(empty);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "no ValueError";
  };
  const std::string ma = message_of(a), mb = message_of(b);
  EXPECT_NE(ma.find("recreated_kernel_test.cpp:" + std::to_string(kLineA)), std::string::npos) << ma;
  EXPECT_NE(mb.find("recreated_kernel_test.cpp:" + std::to_string(kLineB)), std::string::npos) << mb;
  EXPECT_EQ(mb.find("{@"), std::string::npos) << mb;
  EXPECT_NE(b.lowered_ir().find("recreated_kernel_test.cpp:" + std::to_string(kLineB)), std::string::npos);
}

}  // namespace
}  // namespace kiln
