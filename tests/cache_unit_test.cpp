// The cache library on its own: entry format (every corruption is detected), key inputs, settings parsing,
// directory creation and least-recently-used pruning. No kernels are compiled here.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "kiln/config.hpp"
#include "runtime/cache/config.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/inspect.hpp"
#include "runtime/cache/key.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kiln-cache-unit-XXXXXX").string();
    path_ = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Entry sample_entry() {
  Entry e;
  e.key = ir::hash128("sample");
  e.payloads = {{"object", std::string("\x7f" "ELF object bytes \0 with a zero", 31)}, {"kiln.variant", "abc"}};
  e.canonical_ir = "kernel k(v0: i64) -> i64 {\n  return (v0 + 1)\n}\n";
  e.meta = {"sample", "cpu", "x86_64-pc-linux-gnu;znver4;+avx2", "0.1.0+abcd", 1700000000};
  return e;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(CacheEntry, RoundTrips) {
  const Entry e = sample_entry();
  const Decoded d = decode(encode(e));
  ASSERT_EQ(d.status, DecodeStatus::ok);
  EXPECT_EQ(d.version, kFormatVersion);
  EXPECT_EQ(d.entry.key, e.key);
  ASSERT_EQ(d.entry.payloads.size(), 2u);
  EXPECT_EQ(d.entry.payloads[0].name, "object");
  EXPECT_EQ(d.entry.payloads[0].data, e.payloads[0].data);
  ASSERT_NE(d.entry.payload("kiln.variant"), nullptr);
  EXPECT_EQ(d.entry.payload("kiln.variant")->data, "abc");
  EXPECT_EQ(d.entry.payload("cubin"), nullptr);
  EXPECT_EQ(d.entry.canonical_ir, e.canonical_ir);
  EXPECT_EQ(d.entry.meta.kernel, "sample");
  EXPECT_EQ(d.entry.meta.target, "cpu");
  EXPECT_EQ(d.entry.meta.target_description, e.meta.target_description);
  EXPECT_EQ(d.entry.meta.kiln, e.meta.kiln);
  EXPECT_EQ(d.entry.meta.created, 1700000000);
}

TEST(CacheEntry, HeaderLayoutIsAsDocumented) {
  const std::string bytes = encode(sample_entry());
  EXPECT_EQ(bytes.substr(0, 8), kMagic);
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), kFormatVersion);  // little-endian u32 at offset 8
  EXPECT_EQ(static_cast<unsigned char>(bytes[12]), 4);              // 2 payloads + IR + metadata
  std::uint64_t body = 0;
  for (int i = 7; i >= 0; --i) body = (body << 8) | static_cast<unsigned char>(bytes[32 + i]);
  EXPECT_EQ(bytes.size(), kHeaderSize + body + kChecksumSize);
}

TEST(CacheEntry, EveryFlippedByteIsDetected) {
  const std::string good = encode(sample_entry());
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const unsigned char mask : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      const Decoded d = decode(bad);
      EXPECT_NE(d.status, DecodeStatus::ok) << "flipping byte " << i << " with mask " << int(mask) << " went unnoticed";
    }
  }
}

TEST(CacheEntry, EveryTruncationIsDetected) {
  const std::string good = encode(sample_entry());
  for (std::size_t n = 0; n < good.size(); ++n) {
    const Decoded d = decode(std::string_view(good).substr(0, n));
    EXPECT_NE(d.status, DecodeStatus::ok) << "truncated to " << n << " bytes";
  }
  EXPECT_EQ(decode(std::string_view(good).substr(0, good.size() - 1)).status, DecodeStatus::truncated);
  EXPECT_EQ(decode(good + "x").status, DecodeStatus::malformed);
}

TEST(CacheEntry, ForeignVersionAndForeignFilesAreNamed) {
  std::string other = encode(sample_entry());
  other[8] = static_cast<char>(kFormatVersion + 1);
  const Decoded d = decode(other);
  EXPECT_EQ(d.status, DecodeStatus::foreign_version);
  EXPECT_EQ(d.version, kFormatVersion + 1);
  EXPECT_EQ(decode("#!/bin/sh\necho not an entry\n").status, DecodeStatus::not_an_entry);
  EXPECT_EQ(decode("").status, DecodeStatus::truncated);
}

TEST(CacheKey, EveryInputChangesTheKey) {
  const KeyInputs base{"kernel k(v0: f64) -> f64 {\n  return v0\n}\n", "cpu", "x86_64-pc-linux-gnu;znver4;+avx2,+fma",
                       "opt_level=3;fast_math=0", "19.1.7", ""};
  const Key k = make_key(base);
  EXPECT_EQ(make_key(base), k);  // deterministic
  std::set<std::string> keys{k.hex()};
  auto expect_new = [&](KeyInputs in, const char* what) {
    EXPECT_TRUE(keys.insert(make_key(in).hex()).second) << "changing " << what << " kept the key";
  };
  KeyInputs in = base;
  in.canonical_ir = "kernel k(v0: f64) -> f64 {\n  return (v0 * 2.0)\n}\n";
  expect_new(in, "the IR");
  in = base;
  in.target = "cuda";
  expect_new(in, "the target");
  in = base;
  in.target_description = "x86_64-pc-linux-gnu;znver4;+avx2,-fma";  // one CPU feature
  expect_new(in, "a CPU feature");
  in = base;
  in.target_description = "x86_64-pc-linux-gnu;skylake;+avx2,+fma";
  expect_new(in, "the CPU name");
  in = base;
  in.codegen_options = "opt_level=2;fast_math=0";
  expect_new(in, "opt_level");
  in = base;
  in.codegen_options = "opt_level=3;fast_math=1";
  expect_new(in, "fast_math");
  in = base;
  in.llvm_version = "20.1.0";
  expect_new(in, "the LLVM version");
  in = base;
  in.nvrtc_version = "12.4";
  expect_new(in, "the NVRTC version");
  // Fields are length-prefixed: moving a character from one field to the next is a different key.
  in = base;
  in.target = "cpux";
  in.target_description = base.target_description.substr(1);
  expect_new(in, "field boundaries");
}

TEST(CacheKey, HexRoundTripsAndIdentityNamesTheVersion) {
  const Key k = ir::hash128("anything");
  Key back;
  ASSERT_TRUE(parse_key(k.hex(), back));
  EXPECT_EQ(back, k);
  EXPECT_FALSE(parse_key("xyz", back));
  EXPECT_FALSE(parse_key(std::string(32, 'G'), back));
  EXPECT_EQ(kiln_identity().rfind(KILN_VERSION, 0), 0u) << kiln_identity();
}

TEST(CacheSettings, ParsesModesAndSizes) {
  EXPECT_EQ(parse_mode("on"), CacheMode::on);
  EXPECT_EQ(parse_mode("read-only"), CacheMode::read_only);
  EXPECT_EQ(parse_mode("READONLY"), CacheMode::read_only);
  EXPECT_EQ(parse_mode("off"), CacheMode::off);
  EXPECT_EQ(parse_mode("0"), CacheMode::off);
  EXPECT_EQ(parse_mode("sometimes"), std::nullopt);
  EXPECT_EQ(parse_bytes("1048576"), 1048576u);
  EXPECT_EQ(parse_bytes("512K"), 512u << 10);
  EXPECT_EQ(parse_bytes("64MiB"), 64u << 20);
  EXPECT_EQ(parse_bytes("1g"), 1ull << 30);
  EXPECT_EQ(parse_bytes("12 apples"), std::nullopt);
  EXPECT_EQ(parse_bytes(""), std::nullopt);
  EXPECT_EQ(parse_bytes("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_bytes("20000000000G"), std::nullopt);
}

/// Sets environment variables for one scope, restoring the previous values afterwards.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(CacheSettings, DirectoryComesFromKilnCacheDirThenXdgThenHome) {
  ScopedEnv env;
  env.set("KILN_CACHE", nullptr);
  env.set("KILN_CACHE_MAX_BYTES", nullptr);
  env.set("KILN_CACHE_DIR", "/somewhere/kiln-cache");
  env.set("XDG_CACHE_HOME", "/xdg");
  env.set("HOME", "/home/user");
  CacheSettings s = settings_from_environment();
  EXPECT_EQ(s.directory, "/somewhere/kiln-cache");
  EXPECT_EQ(s.mode, CacheMode::on);
  EXPECT_EQ(s.max_bytes, 1ull << 30);
  env.set("KILN_CACHE_DIR", nullptr);
  EXPECT_EQ(settings_from_environment().directory, "/xdg/kiln");
  env.set("XDG_CACHE_HOME", "relative/is/ignored");
  EXPECT_EQ(settings_from_environment().directory, "/home/user/.cache/kiln");
  env.set("KILN_CACHE", "read-only");
  env.set("KILN_CACHE_MAX_BYTES", "10M");
  s = settings_from_environment();
  EXPECT_EQ(s.mode, CacheMode::read_only);
  EXPECT_EQ(s.max_bytes, 10u << 20);
  env.set("KILN_CACHE", "bogus");        // warned about, then the default
  env.set("KILN_CACHE_MAX_BYTES", "lots");
  s = settings_from_environment();
  EXPECT_EQ(s.mode, CacheMode::on);
  EXPECT_EQ(s.max_bytes, 1ull << 30);
}

TEST(CacheDirectory, CreatesMissingParentsPrivately) {
  TempDir t;
  const std::string dir = t.path() + "/a/b/kiln";
  ASSERT_EQ(make_directory(dir), 0);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(make_directory(dir), 0);  // exists: fine
  write_file(t.path() + "/file", "x");
  EXPECT_EQ(make_directory(t.path() + "/file/kiln"), ENOTDIR);
}

/// Makes a fake entry file of `bytes` bytes whose last use was `age` seconds ago.
std::string fake_entry(const std::string& dir, const std::string& seed, std::size_t bytes, int age) {
  const std::string path = entry_path(dir, ir::hash128(seed));
  write_file(path, std::string(bytes, 'x'));
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= age;
  times[1] = times[0];
  utimensat(AT_FDCWD, path.c_str(), times, 0);
  return path;
}

TEST(CacheDirectory, PruneRemovesLeastRecentlyUsedFirstAndKeepsTheCap) {
  TempDir t;
  const std::string d = t.path();
  const std::string oldest = fake_entry(d, "a", 1000, 400);
  const std::string middle = fake_entry(d, "b", 1000, 300);
  const std::string recent = fake_entry(d, "c", 1000, 200);
  const std::string newest = fake_entry(d, "d", 1000, 100);
  write_file(d + "/README", std::string(5000, 'r'));  // not ours: neither counted nor removed
  const std::string young_temp = d + "/." + ir::hash128("e").hex() + ".123.0.tmp";
  write_file(young_temp, std::string(500, 't'));  // a writer at work

  EXPECT_EQ(list_directory(d).size(), 5u);
  PruneResult r = prune(d, 2600);
  EXPECT_EQ(r.entries_removed, 2u);
  EXPECT_EQ(r.bytes_left, 2500u);
  EXPECT_FALSE(fs::exists(oldest));
  EXPECT_FALSE(fs::exists(middle));
  EXPECT_TRUE(fs::exists(recent));
  EXPECT_TRUE(fs::exists(newest));
  EXPECT_TRUE(fs::exists(young_temp));
  EXPECT_TRUE(fs::exists(d + "/README"));

  r = prune(d, 1u << 20);  // under the cap: nothing to do
  EXPECT_EQ(r.entries_removed, 0u);
  EXPECT_EQ(r.bytes_left, 2500u);

  // A temporary left by a crashed writer long ago goes first.
  timespec old[2] = {{std::time(nullptr) - 3600, 0}, {std::time(nullptr) - 3600, 0}};
  utimensat(AT_FDCWD, young_temp.c_str(), old, 0);
  r = prune(d, 1u << 20);
  EXPECT_EQ(r.temporaries_removed, 1u);
  EXPECT_FALSE(fs::exists(young_temp));

  EXPECT_EQ(prune(d, 0).bytes_left, 0u);
  EXPECT_EQ(list_directory(d).size(), 0u);
  EXPECT_TRUE(fs::exists(d + "/README"));
}

TEST(CacheDirectory, ClearRemovesOnlyCacheFiles) {
  TempDir t;
  fake_entry(t.path(), "a", 10, 0);
  fake_entry(t.path(), "b", 10, 0);
  write_file(t.path() + "/notes.txt", "keep me");
  EXPECT_EQ(clear(t.path()), 2u);
  EXPECT_TRUE(fs::exists(t.path() + "/notes.txt"));
  EXPECT_EQ(clear(t.path() + "/missing"), 0u);
}

TEST(CacheInspect, ChecksTheKeyAgainstTheFileName) {
  TempDir t;
  const Entry e = sample_entry();
  write_file(entry_path(t.path(), e.key), encode(e));
  write_file(entry_path(t.path(), ir::hash128("elsewhere")), encode(e));  // renamed: wrong key for its name
  int good = 0, bad = 0;
  for (const DirFile& f : list_directory(t.path())) {
    const Inspection i = inspect(f);
    (i.ok ? good : bad) += 1;
    if (!i.ok) {
      EXPECT_NE(i.problem.find("differs from its file name"), std::string::npos) << i.problem;
    }
  }
  EXPECT_EQ(good, 1);
  EXPECT_EQ(bad, 1);
}

}  // namespace
}  // namespace kiln::cache
