// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cache library on its own: entry format (every corruption is detected), key inputs, settings parsing,
// directory creation and least-recently-used pruning. No kernels are compiled here.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "kiln/config.hpp"
#include "runtime/cache/config.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/inspect.hpp"
#include "runtime/cache/key.hpp"
#include "runtime/cache/secret.hpp"
#include "runtime/cache/trust.hpp"

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

/// A fixed secret: entries are sealed with it unless a test says otherwise.
Secret test_secret(unsigned char fill = 7) {
  Secret s;
  s.bytes.fill(fill);
  return s;
}

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

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CacheEntry, RoundTrips) {
  const Entry e = sample_entry();
  const Decoded d = decode(encode(e, test_secret()), test_secret());
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
  const std::string bytes = encode(sample_entry(), test_secret());
  EXPECT_EQ(bytes.substr(0, 8), kMagic);
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), kFormatVersion);  // little-endian u32 at offset 8
  EXPECT_EQ(static_cast<unsigned char>(bytes[12]), 4);              // 2 payloads + IR + metadata
  std::uint64_t body = 0;
  for (int i = 7; i >= 0; --i) body = (body << 8) | static_cast<unsigned char>(bytes[32 + i]);
  EXPECT_EQ(bytes.size(), kHeaderSize + body + kSealSize);
}

TEST(CacheEntry, EveryFlippedByteIsDetected) {
  const std::string good = encode(sample_entry(), test_secret());
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const unsigned char mask : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      const Decoded d = decode(bad, test_secret());
      EXPECT_NE(d.status, DecodeStatus::ok) << "flipping byte " << i << " with mask " << int(mask) << " went unnoticed";
    }
  }
}

TEST(CacheEntry, EveryTruncationIsDetected) {
  const std::string good = encode(sample_entry(), test_secret());
  for (std::size_t n = 0; n < good.size(); ++n) {
    const Decoded d = decode(std::string_view(good).substr(0, n), test_secret());
    EXPECT_NE(d.status, DecodeStatus::ok) << "truncated to " << n << " bytes";
  }
  EXPECT_EQ(decode(std::string_view(good).substr(0, good.size() - 1), test_secret()).status, DecodeStatus::truncated);
  EXPECT_EQ(decode(good + "x", test_secret()).status, DecodeStatus::malformed);
}

TEST(CacheEntry, ForeignVersionAndForeignFilesAreNamed) {
  std::string other = encode(sample_entry(), test_secret());
  other[8] = static_cast<char>(kFormatVersion + 1);
  const Decoded d = decode(other, test_secret());
  EXPECT_EQ(d.status, DecodeStatus::foreign_version);
  EXPECT_EQ(d.version, kFormatVersion + 1);
  EXPECT_EQ(decode("#!/bin/sh\necho not an entry\n", test_secret()).status, DecodeStatus::not_an_entry);
  EXPECT_EQ(decode("", test_secret()).status, DecodeStatus::truncated);
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

TEST(CacheSettings, ARelativeDirectoryIsRefused) {
  ScopedEnv env;
  env.set("KILN_CACHE", nullptr);
  env.set("KILN_CACHE_DIR", "checkout/.kiln-cache");  // a checkout would carry its entries
  const CacheSettings s = settings_from_environment();
  EXPECT_EQ(s.mode, CacheMode::off);
  EXPECT_EQ(s.directory, "");
  env.set("KILN_CACHE_DIR", nullptr);
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("HOME", ".");
  EXPECT_EQ(settings_from_environment().mode, CacheMode::off);
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

/// The secret of directory `dir`, created if it has none.
Secret secret_of(const std::string& dir) {
  const Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const SecretResult r = read_or_create_secret(fd.get());
  EXPECT_TRUE(r.ok) << r.problem << r.error;
  return r.secret;
}

TEST(CacheInspect, ChecksTheKeyAgainstTheFileName) {
  TempDir t;
  const Entry e = sample_entry();
  const Secret secret = secret_of(t.path());
  write_file(entry_path(t.path(), e.key), encode(e, secret));
  write_file(entry_path(t.path(), ir::hash128("elsewhere")), encode(e, secret));  // renamed: wrong key for its name
  const Inspector inspector(t.path());
  ASSERT_EQ(inspector.problem(), "");
  int good = 0, bad = 0;
  for (const DirFile& f : list_directory(t.path())) {
    const Inspection i = inspector.inspect(f);
    (i.ok ? good : bad) += 1;
    if (!i.ok) {
      EXPECT_NE(i.problem.find("differs from its file name"), std::string::npos) << i.problem;
    }
  }
  EXPECT_EQ(good, 1);
  EXPECT_EQ(bad, 1);
}

// ---- the seal ---------------------------------------------------------------------------------------------------

/// Version 1's seal: an unkeyed BLAKE2b over the entry, which anyone can recompute after changing the bytes.
std::string reseal_unkeyed(std::string file) {
  file.resize(file.size() - kSealSize);
  ir::Blake2b h(kSealSize);
  h.update(file);
  const auto d = h.finish();
  file.append(reinterpret_cast<const char*>(d.data()), kSealSize);
  return file;
}

TEST(CacheSeal, AChangedEntryResealedWithoutTheSecretIsRejected) {
  const std::string good = encode(sample_entry(), test_secret());
  std::string changed = good;
  const std::size_t at = changed.find("ELF object bytes");
  ASSERT_NE(at, std::string::npos);
  changed[at] = 'X';  // "planted code"
  EXPECT_EQ(decode(reseal_unkeyed(changed), test_secret()).status, DecodeStatus::bad_seal);
  // Sealed properly, but under another secret: a forger's own key, or another user's cache.
  Entry e = sample_entry();
  e.payloads[0].data[1] = 'X';
  EXPECT_EQ(decode(encode(e, test_secret(8)), test_secret()).status, DecodeStatus::bad_seal);
  EXPECT_EQ(decode(encode(sample_entry(), test_secret(8)), test_secret()).status, DecodeStatus::bad_seal);
  EXPECT_EQ(decode(good, test_secret()).status, DecodeStatus::ok);
}

TEST(CacheSeal, TheHeaderIsJudgedAgainstTheFileSizeBeforeAnythingElseIsRead) {
  const std::string good = encode(sample_entry(), test_secret());
  const std::string_view header = std::string_view(good).substr(0, kHeaderSize);
  EXPECT_EQ(check_header(header, good.size()).status, DecodeStatus::ok);
  EXPECT_EQ(check_header(header, 200ull << 20).status, DecodeStatus::malformed);  // a body of junk after the header
  EXPECT_EQ(check_header(header, good.size() - 1).status, DecodeStatus::truncated);
  EXPECT_EQ(check_header(std::string(kHeaderSize, 'j'), 200ull << 20).status, DecodeStatus::not_an_entry);
  EXPECT_EQ(check_header(header.substr(0, 20), 20).status, DecodeStatus::truncated);
}

TEST(CacheSecret, IsCreatedOncePrivateAndChecked) {
  TempDir t;
  const Fd dir(open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  EXPECT_TRUE(read_secret(dir.get()).missing);
  const SecretResult first = read_or_create_secret(dir.get());
  ASSERT_TRUE(first.ok) << first.problem;
  const SecretResult again = read_or_create_secret(dir.get());
  ASSERT_TRUE(again.ok);
  EXPECT_EQ(first.secret.bytes, again.secret.bytes);  // created once
  EXPECT_NE(first.secret.bytes, Secret{}.bytes);
  const std::string path = t.path() + "/secret";
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  EXPECT_EQ(list_directory(t.path()).size(), 0u);  // no temporary left behind, and not listed as an entry

  // Readable by others: anyone who reads it can seal entries. Refused.
  chmod(path.c_str(), 0640);
  EXPECT_NE(read_secret(dir.get()).problem.find("mode 0640"), std::string::npos);
  chmod(path.c_str(), 0600);
  // A link in its place is not followed, even to a good secret.
  ASSERT_EQ(rename(path.c_str(), (t.path() + "/real").c_str()), 0);
  ASSERT_EQ(symlink((t.path() + "/real").c_str(), path.c_str()), 0);
  EXPECT_NE(read_secret(dir.get()).problem.find("symbolic link"), std::string::npos);
  unlink(path.c_str());
  write_file(path, "short");
  chmod(path.c_str(), 0600);
  EXPECT_NE(read_secret(dir.get()).problem.find("5 bytes"), std::string::npos);
}

// ---- ownership and mode rules -----------------------------------------------------------------------------------

TEST(CacheTrust, OnlyAPrivateDirectoryOfTheUserIsUsed) {
  TempDir t;
  const std::string d = t.path() + "/cache";
  Opened o = open_cache_directory(d, /*create=*/false);
  EXPECT_EQ(o.error, ENOENT);
  o = open_cache_directory(d, /*create=*/true);
  ASSERT_TRUE(o.fd) << o.problem;
  EXPECT_EQ(o.st.st_mode & 07777, 0700u);
  for (const mode_t bad : {0777, 01777, 0770, 0720, 0702}) {
    chmod(d.c_str(), bad);
    o = open_cache_directory(d, false);
    EXPECT_FALSE(o.fd) << std::oct << bad;
    EXPECT_NE(o.problem.find("writable by"), std::string::npos) << o.problem;
    EXPECT_NE(o.problem.find("chmod go-w " + d), std::string::npos) << o.problem;
  }
  for (const mode_t fine : {0700, 0755, 0500}) {
    chmod(d.c_str(), fine);
    EXPECT_TRUE(open_cache_directory(d, false).fd) << std::oct << fine;
  }
  chmod(d.c_str(), 0700);
  ASSERT_EQ(symlink(d.c_str(), (t.path() + "/link").c_str()), 0);
  o = open_cache_directory(t.path() + "/link", true);
  EXPECT_FALSE(o.fd);
  EXPECT_NE(o.problem.find("symbolic link"), std::string::npos) << o.problem;
  write_file(t.path() + "/file", "x");
  EXPECT_NE(open_cache_directory(t.path() + "/file", true).problem.find("not a directory"), std::string::npos);
  o = open_cache_directory("relative/cache", true);
  EXPECT_FALSE(o.fd);
  EXPECT_NE(o.problem.find("not an absolute path"), std::string::npos) << o.problem;
  EXPECT_FALSE(fs::exists("relative"));
}

TEST(CacheTrust, ADirectoryOfAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another uid (chown)";
  TempDir t;
  const std::string d = t.path() + "/cache";
  ASSERT_EQ(mkdir(d.c_str(), 0700), 0);
  ASSERT_EQ(chown(d.c_str(), 65534, 65534), 0);
  const Opened o = open_cache_directory(d, true);
  EXPECT_FALSE(o.fd);
  EXPECT_NE(o.problem.find("owned by uid 65534"), std::string::npos) << o.problem;
}

TEST(CacheTrust, FilesAreOpenedWithoutFollowingLinksOrBlocking) {
  TempDir t;
  const Fd dir(open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  write_file(t.path() + "/plain", "x");
  EXPECT_TRUE(open_cache_file(dir.get(), "plain", false).fd);
  ASSERT_EQ(symlink((t.path() + "/plain").c_str(), (t.path() + "/link").c_str()), 0);
  Opened o = open_cache_file(dir.get(), "link", false);
  EXPECT_FALSE(o.fd);
  EXPECT_NE(o.problem.find("symbolic link"), std::string::npos) << o.problem;
  ASSERT_EQ(mkfifo((t.path() + "/fifo").c_str(), 0600), 0);
  o = open_cache_file(dir.get(), "fifo", false);  // O_NONBLOCK: returns at once although no writer exists
  EXPECT_FALSE(o.fd);
  EXPECT_NE(o.problem.find("FIFO"), std::string::npos) << o.problem;
  chmod((t.path() + "/plain").c_str(), 0666);
  EXPECT_NE(open_cache_file(dir.get(), "plain", false).problem.find("writable by group or others"), std::string::npos);
  chmod((t.path() + "/plain").c_str(), 0644);
  EXPECT_TRUE(open_cache_file(dir.get(), "plain", false).fd);
  EXPECT_NE(open_cache_file(dir.get(), "plain", /*secret=*/true).problem.find("accessible"), std::string::npos);
  if (geteuid() == 0) {
    ASSERT_EQ(chown((t.path() + "/plain").c_str(), 65534, 65534), 0);
    EXPECT_NE(open_cache_file(dir.get(), "plain", false).problem.find("owned by uid 65534"), std::string::npos);
  }
}

TEST(CacheDirectory, ListingShowsLinksAndOddFilesAndClearRemovesThemWithoutFollowing) {
  TempDir t;
  const std::string target = t.path() + "/outside";
  write_file(target, "must survive");
  const std::string link = entry_path(t.path(), ir::hash128("link"));
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_EQ(mkfifo(entry_path(t.path(), ir::hash128("fifo")).c_str(), 0600), 0);
  write_file(t.path() + "/secret", std::string(32, 's'));
  int links = 0, others = 0;
  for (const DirFile& f : list_directory(t.path())) {
    links += f.kind == FileKind::symlink;
    others += f.kind == FileKind::other;
  }
  EXPECT_EQ(links, 1);
  EXPECT_EQ(others, 1);
  EXPECT_EQ(prune(t.path(), 0).bytes_left, 0u);  // links and FIFOs have no bytes of ours
  EXPECT_EQ(clear(t.path()), 2u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_EQ(read_file_text(target), "must survive");
  EXPECT_TRUE(fs::exists(t.path() + "/secret"));  // clear removes entries, not the secret
}

}  // namespace
}  // namespace kiln::cache
