// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The disk cache inside one process: lookup order (memory, disk, compile), what changes the key and what
// does not, recovery from bad entries, modes and unusable directories, eviction, the compile log, and
// readers racing writers and eviction. Each test uses a fresh directory through kiln::set_cache_settings.
// (Real second processes are in cache_process_test.cpp.)
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cache_kernels.hpp"
#include "codegen/llvm/cpu_backend.hpp"
#include "codegen/target_options.hpp"
#include "frontend/settings.hpp"
#include "kiln/config.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cache/background.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/inspect.hpp"
#include "runtime/cache/key.hpp"
#include "runtime/cache/secret.hpp"
#include "runtime/cache/store.hpp"
#include "runtime/cache/trust.hpp"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using cache_kernels::make_dot;
using cache_kernels::make_pi;
using cache_kernels::make_saxpy;
using cache_kernels::make_scaled;
using cache_kernels::run_and_check;

/// A fresh cache directory in effect for the test's scope; the previous settings come back afterwards.
class CacheScope {
 public:
  explicit CacheScope(CacheMode mode = CacheMode::on, std::uint64_t max_bytes = 1ull << 30) : saved_(cache_settings()) {
    std::string t = (fs::temp_directory_path() / "kiln-cache-test-XXXXXX").string();
    root_ = mkdtemp(t.data());
    dir_ = root_ + "/cache";
    set(mode, max_bytes);
  }
  ~CacheScope() {
    cache_flush();  // no entry may land in the directory after it is removed
    set_cache_settings(saved_);
    chmod(root_.c_str(), 0700);
    fs::remove_all(root_);
  }
  void set(CacheMode mode, std::uint64_t max_bytes = 1ull << 30) { set_cache_settings({mode, dir_, max_bytes}); }
  /// Lets go of the code this process keeps loaded (it does when the settings change), so that the next kernel
  /// object reads the disk, as a new process would.
  void forget_loaded_code() {
    cache_flush();
    set_cache_settings(cache_settings());
  }
  void set_directory(const std::string& d) { set_cache_settings({CacheMode::on, d, 1ull << 30}); }
  const std::string& dir() const { return dir_; }
  const std::string& root() const { return root_; }

  std::vector<cache::DirFile> entries() const {
    cache_flush();
    std::vector<cache::DirFile> out;
    for (auto& f : cache::list_directory(dir_))
      if (!f.temporary) out.push_back(f);
    return out;
  }
  std::uint64_t bytes() const {
    cache_flush();
    std::uint64_t n = 0;
    for (const auto& f : cache::list_directory(dir_)) n += f.bytes;
    return n;
  }

 private:
  CacheSettings saved_;
  std::string root_, dir_;
};

/// The counters once the background writer is done, so that stores and evictions are counted.
CacheStats flushed_stats() {
  cache_flush();
  return cache_stats();
}

CacheStats operator-(const CacheStats& a, const CacheStats& b) {
  return {a.memory_hits - b.memory_hits, a.disk_hits - b.disk_hits, a.disk_misses - b.disk_misses,
          a.compiles - b.compiles,       a.stores - b.stores,       a.store_failures - b.store_failures,
          a.rejected_entries - b.rejected_entries, a.evictions - b.evictions};
}

CompileRecord last_record() {
  const auto h = compile_history();
  return h.empty() ? CompileRecord{} : h.back();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

/// The secret of cache directory `dir` (which must have one).
cache::Secret secret_of(const std::string& dir) {
  cache_flush();  // the first store creates it
  const cache::Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const cache::SecretResult r = cache::read_secret(fd.get());
  EXPECT_TRUE(r.ok) << dir << ": " << r.problem;
  return r.secret;
}

/// The entry file `path` of cache directory `dir`, judged as the loader and `kiln-cache verify` judge it.
cache::Inspection inspect_file(const std::string& dir, const std::string& path) {
  cache::DirFile f;
  f.path = path;
  f.name = fs::path(path).filename().string();
  return cache::Inspector(dir).inspect(f);
}

/// The path of the one entry of kernel `name`, found by its metadata.
std::string entry_of(const CacheScope& c, const std::string& name) {
  cache_flush();  // the first store also writes the secret
  const cache::Inspector inspector(c.dir());
  for (const auto& f : c.entries()) {
    const cache::Inspection i = inspector.inspect(f);
    if (i.ok && i.entry.meta.kernel == name) return f.path;
  }
  return "";
}

// ---- lookup order -----------------------------------------------------------------------------------------

TEST(CacheFlow, CompilesThenSharesLoadedCodeThenLoadsFromDisk) {
  CacheScope c;
  CacheStats s0 = flushed_stats();
  std::string key;
  {
    auto k1 = make_pi();
    EXPECT_NEAR(k1(std::int64_t{1000}), std::numbers::pi, 1e-6);
    const CompileRecord r = last_record();
    EXPECT_EQ(r.cache, CacheSource::miss);
    EXPECT_EQ(r.kernel, "pi");
    EXPECT_EQ(r.target, "cpu");
    EXPECT_EQ(r.signature, "pi(n: i64)");
    EXPECT_EQ(r.key.size(), 32u);
    EXPECT_GT(r.codegen_ms, 0);
    EXPECT_GT(r.passes_us, 0);
    key = r.key;
    const CacheStats d = flushed_stats() - s0;
    EXPECT_EQ(d.compiles, 1u);
    EXPECT_EQ(d.disk_misses, 1u);
    EXPECT_EQ(d.stores, 1u);
    ASSERT_EQ(c.entries().size(), 1u);
    EXPECT_EQ(c.entries()[0].name, key + ".kce");

    // While k1's code is loaded, a second kernel object with the same IR shares it.
    s0 = flushed_stats();
    auto k2 = make_pi();
    EXPECT_NEAR(k2(std::int64_t{5000}), std::numbers::pi, 1e-7);
    EXPECT_EQ(last_record().cache, CacheSource::memory);
    EXPECT_EQ(last_record().key, key);
    EXPECT_EQ((flushed_stats() - s0).memory_hits, 1u);
    EXPECT_EQ((flushed_stats() - s0).compiles, 0u);
  }
  // Code let go: the next kernel object reads the disk, without LLVM.
  c.forget_loaded_code();
  s0 = flushed_stats();
  const std::size_t records = compile_history().size();
  auto k3 = make_pi();
  EXPECT_NEAR(k3(std::int64_t{777}), std::numbers::pi, 1e-5);
  const CompileRecord r = last_record();
  EXPECT_EQ(r.cache, CacheSource::disk);
  EXPECT_EQ(r.key, key);
  EXPECT_EQ(r.codegen_ms, 0);
  EXPECT_EQ(r.passes_us, 0);
  EXPECT_GT(r.load_us, 0);
  const CacheStats d = flushed_stats() - s0;
  EXPECT_EQ(d.disk_hits, 1u);
  EXPECT_EQ(d.compiles, 0u);
  EXPECT_EQ(d.stores, 0u);
  // Further calls are dispatches: no new record.
  k3(std::int64_t{1});
  EXPECT_EQ(compile_history().size(), records + 1);
}

TEST(CacheFlow, DiagnosticsAfterAHitUseTheKernelsOwnNames) {
  CacheScope c;
  {
    auto first = jit("first", [](Int count) {
      Double acc = 0.0;
      prange(count, [&](Int i) { acc += to_double(i); });
      return acc;
    });
    EXPECT_EQ(first(std::int64_t{4}), 6.0);
  }
  c.forget_loaded_code();  // on disk, and `first`'s code let go: `second` must read it
  auto second = jit("second", [](Int n) {
    Double total = 0.0;
    prange(n, [&](Int j) { total += to_double(j); });
    return total;
  });
  EXPECT_EQ(second(std::int64_t{5}), 10.0);
  EXPECT_EQ(last_record().cache, CacheSource::disk);  // same IR up to names: same key
  const std::string ir = second.lowered_ir();
  EXPECT_NE(ir.find("kernel second(n: i64)"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("count"), std::string::npos) << ir;
  const std::string d = second.diagnostics();
  EXPECT_NE(d.find("(cache: disk)"), std::string::npos) << d;
  EXPECT_NE(d.find("reduction: total (add"), std::string::npos) << d;  // this kernel's variable, not acc
  EXPECT_NE(d.find("IR after passes:\n" + ir), std::string::npos) << d;
}

TEST(CacheFlow, WrittenArgumentsAndArrayResultsSurviveTheDisk) {
  CacheScope c;
  auto make_scale = [] {
    return jit("scale_into", [](Array<double> x, Array<double> y) {
      prange(x.shape(0), [&](Int i) { y[i] = 2.0 * x[i]; });
    });
  };
  auto make_doubled = [] {
    return jit("doubled", [](Array<double> x) {
      auto r = empty_like(x);
      prange(x.shape(0), [&](Int i) { r[i] = 2.0 * x[i]; });
      return r;
    });
  };
  std::vector<double> x{1, 2, 3}, y(3);
  make_scale()(x, y);
  (void)make_doubled()(x);
  c.forget_loaded_code();
  auto scale = make_scale();
  const std::vector<double>& frozen = y;
  EXPECT_THROW(scale(x, frozen), TypeError);  // the written-parameter mask came from the entry
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  scale(x, y);
  EXPECT_EQ(y, (std::vector<double>{2, 4, 6}));
  NDArray<double> r = make_doubled()(x);
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  ASSERT_EQ(r.size(), 3);
  EXPECT_EQ(r[0], 2.0);
  EXPECT_EQ(r[2], 6.0);
}

// ---- the key ----------------------------------------------------------------------------------------------

std::string key_of_first_call(auto&& kernel, auto&&... args) {
  kernel(args...);
  return last_record().key;
}

TEST(CacheKey, ChangedBodyHelperAndOptionsMakeNewKeysNamesAndScalarValuesDoNot) {
  CacheScope c;
  auto square = [](Double v) { return v * v; };
  auto cube = [](Double v) { return v * v * v; };
  auto with_helper = [](auto helper, const char* name, Options o = {}) {
    return jit(name, [helper](Double a) { return helper(a) + 1.0; }, o);
  };
  const std::string base = key_of_first_call(with_helper(square, "h1"), 3.0);
  EXPECT_EQ(last_record().cache, CacheSource::miss);
  // A different helper changes the traced IR, hence the key.
  EXPECT_NE(key_of_first_call(with_helper(cube, "h2"), 3.0), base);
  // A changed body.
  EXPECT_NE(key_of_first_call(jit("h3", [square](Double a) { return square(a) + 2.0; }), 3.0), base);
  // Options that change code.
  Options o2;
  o2.opt_level = 2;
  EXPECT_NE(key_of_first_call(with_helper(square, "h4", o2), 3.0), base);
  Options fast;
  fast.fast_math = true;
  EXPECT_NE(key_of_first_call(with_helper(square, "h5", fast), 3.0), base);
  // Another name, another scalar value: the same key, and no compilation.
  const CacheStats s0 = flushed_stats();
  EXPECT_EQ(key_of_first_call(with_helper(square, "renamed"), 4.0), base);
  auto k = with_helper(square, "values");
  EXPECT_EQ(k(5.0), 26.0);
  EXPECT_EQ(last_record().key, base);
  EXPECT_EQ(k(-1.0), 2.0);
  EXPECT_EQ(k.compiled_variants(), 1u);
  EXPECT_EQ((flushed_stats() - s0).compiles, 0u);
}

TEST(CacheKey, ArraySignaturesAreInTheKey) {
  CacheScope c;
  auto make = [] {
    return jit("sum_all", [](Array<double> x) {
      Double s = 0.0;
      prange(x.shape(0), [&](Int i) { s += x[i]; });
      return s;
    });
  };
  std::vector<double> v{1, 2, 3, 4, 5, 6};
  const std::string contiguous = key_of_first_call(make(), v);
  const std::string strided = key_of_first_call(make(), ArrayRef<double>(v.data(), {3}, {2}));
  EXPECT_NE(contiguous, strided);
  EXPECT_EQ(make()(ArrayRef<double>(v.data(), {3}, {2})), 1.0 + 3.0 + 5.0);
  EXPECT_EQ(last_record().key, strided);
}

TEST(CacheKey, TheFrontendKeysByTheTracedIRTheHostDescriptionOptionsAndVersions) {
  CacheScope c;
  Options o;
  o.opt_level = 2;
  o.fast_math = true;
  make_dot(o)(std::vector<double>{1, 2}, std::vector<double>{3, 4});
  const std::string key = last_record().key;
  const cache::Decoded d = cache::decode(read_file(entry_of(c, "dot")), secret_of(c.dir()));
  ASSERT_EQ(d.status, cache::DecodeStatus::ok);
  EXPECT_EQ(d.entry.meta.target_description, codegen::cpu::host_target_description());
  // Recomputed from the parts, the key is the one the frontend used: so a CPU with another feature string
  // (another host description) gets another key (CacheKey.EveryInputChangesTheKey in cache_unit_test).
  const cache::Key expect = cache::make_key({d.entry.canonical_ir, "cpu", codegen::cpu::host_target_description(),
                                             "opt_level=2;fast_math=1", KILN_LLVM_VERSION, ""});
  EXPECT_EQ(expect.hex(), key);
  EXPECT_EQ(d.entry.key.hex(), key);
  EXPECT_EQ(d.entry.canonical_ir.find("dot"), std::string::npos) << "names are not part of the canonical IR";
}

// ---- the backends' part: what the driver asks a target --------------------------------------------------------

TEST(Backends, EachTargetSaysWhatItsCodeDependsOn) {
  const codegen::TargetOptions t = detail::target_options(Options());
  const std::optional<codegen::CacheIdentity> cpu = codegen::backend_for(Target::cpu).cache_identity(t);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->description, codegen::cpu::host_target_description(t.cpu));
  EXPECT_EQ(cpu->llvm_version, KILN_LLVM_VERSION);
  EXPECT_EQ(cpu->nvrtc_version, "");
  EXPECT_FALSE(cpu->code_names_kernel);
  codegen::TargetOptions other = t;
  other.cpu.features = "-prefer-256-bit";  // another code generation, another identity
  EXPECT_NE(codegen::backend_for(Target::cpu).cache_identity(other)->description, cpu->description);
  // The interpreter compiles nothing: nothing to cache, and nothing to load.
  EXPECT_FALSE(codegen::backend_for(Target::interpreter).cache_identity(t).has_value());
  cache::Entry empty;
  EXPECT_THROW(codegen::backend_for(Target::interpreter).load(empty, "k", t), CacheError);
  EXPECT_THROW(codegen::backend_for(Target::cpu).load(empty, "k", t), CacheError);  // no "object"
}

TEST(Settings, DumpsAndTheCudaArchitectureAreReadAtEachCompilation) {
  ::setenv("KILN_DUMP_LLVM", "1", 1);
  EXPECT_TRUE(detail::target_options(Options()).cpu.dump_llvm);
  ::setenv("KILN_DUMP_LLVM", "0", 1);  // "0" means off
  EXPECT_FALSE(detail::target_options(Options()).cpu.dump_llvm);
  ::unsetenv("KILN_DUMP_LLVM");
  Options keep;
  keep.keep_llvm_ir = true;
  keep.opt_level = 1;
  keep.fast_math = true;
  const codegen::TargetOptions t = detail::target_options(keep);
  EXPECT_TRUE(t.cpu.keep_llvm_ir);
  EXPECT_FALSE(t.cpu.dump_llvm);
  EXPECT_EQ(t.common.opt_level, 1);
  EXPECT_TRUE(t.common.fast_math);
  EXPECT_TRUE(detail::wants_compiler_output(keep));
  ::setenv("KILN_CUDA_ARCH", "sm_80", 1);
  EXPECT_EQ(detail::cuda_options().arch, "sm_80");
  ::setenv("KILN_CUDA_ARCH", "ampere", 1);  // not an sm_ name: the device's, as before
  EXPECT_EQ(detail::cuda_options().arch, "");
  ::unsetenv("KILN_CUDA_ARCH");
}

// ---- bad entries -------------------------------------------------------------------------------------------

struct Corruption {
  const char* name;
  void (*apply)(const std::string& path, const std::string& other_entry);
  bool needs_root = false;  ///< gives a file to another uid
};

/// `file` with its seal recomputed as version 1 did, without a key: what anyone could do after changing it.
std::string reseal_unkeyed(std::string file) {
  file.resize(file.size() - cache::kSealSize);
  ir::Blake2b h(cache::kSealSize);
  h.update(file);
  const auto d = h.finish();
  file.append(reinterpret_cast<const char*>(d.data()), cache::kSealSize);
  return file;
}

void PrintTo(const Corruption& c, std::ostream* os) { *os << c.name; }  // test names without addresses

const Corruption kCorruptions[] = {
    {"byte_flip",
     [](const std::string& p, const std::string&) {
       std::string b = read_file(p);
       b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x20);
       write_file(p, b);
     }},
    {"truncation",
     [](const std::string& p, const std::string&) {
       const std::string b = read_file(p);
       write_file(p, b.substr(0, b.size() - 100));
     }},
    {"wrong_version",
     [](const std::string& p, const std::string&) {
       std::string b = read_file(p);
       b[8] = static_cast<char>(cache::kFormatVersion + 1);
       write_file(p, b);
     }},
    {"empty_file", [](const std::string& p, const std::string&) { write_file(p, ""); }},
    {"garbage", [](const std::string& p, const std::string&) { write_file(p, std::string(5000, '\x90')); }},
    {"another_kernels_entry", [](const std::string& p, const std::string& other) { write_file(p, read_file(other)); }},
    // Attacks on the seal and on the file itself: each would be loaded by a reader without the secret or the checks.
    {"resealed_without_the_secret",
     [](const std::string& p, const std::string&) {
       std::string b = read_file(p);
       b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x20);
       write_file(p, reseal_unkeyed(b));
     }},
    {"sealed_with_another_secret",
     [](const std::string& p, const std::string&) {
       cache::Decoded d = cache::decode(read_file(p), secret_of(fs::path(p).parent_path().string()));
       cache::Secret forger;
       forger.bytes.fill(0x42);
       write_file(p, cache::encode(d.entry, forger));
     }},
    {"symlink_to_a_valid_entry",
     [](const std::string& p, const std::string&) {
       const std::string outside = fs::path(p).parent_path().parent_path().string() + "/outside.kce";
       fs::rename(p, outside);
       fs::create_symlink(outside, p);
     }},
    {"writable_by_others", [](const std::string& p, const std::string&) { chmod(p.c_str(), 0666); }},
    {"owned_by_another_user", [](const std::string& p, const std::string&) { ASSERT_EQ(chown(p.c_str(), 65534, 65534), 0); },
     true},
};

class CacheRecovery : public testing::TestWithParam<Corruption> {};

TEST_P(CacheRecovery, BadEntryIsRejectedRecompiledAndRewritten) {
  if (GetParam().needs_root && geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another uid (chown)";
  CacheScope c;
  ASSERT_EQ(run_and_check("dot"), "");
  ASSERT_EQ(run_and_check("pi"), "");
  const std::string dot = entry_of(c, "dot");
  ASSERT_FALSE(dot.empty());
  GetParam().apply(dot, entry_of(c, "pi"));
  c.forget_loaded_code();

  CacheStats s0 = flushed_stats();
  EXPECT_EQ(run_and_check("dot"), "");
  CacheStats d = flushed_stats() - s0;
  EXPECT_EQ(d.rejected_entries, 1u);
  EXPECT_EQ(d.disk_hits, 0u);
  EXPECT_EQ(d.compiles, 1u);
  EXPECT_EQ(d.stores, 1u);
  const cache::Inspection fixed = inspect_file(c.dir(), dot);
  EXPECT_TRUE(fixed.ok) << fixed.problem;

  c.forget_loaded_code();
  s0 = flushed_stats();
  EXPECT_EQ(run_and_check("dot"), "");
  d = flushed_stats() - s0;
  EXPECT_EQ(d.disk_hits, 1u);
  EXPECT_EQ(d.rejected_entries, 0u);
}

INSTANTIATE_TEST_SUITE_P(Corruptions, CacheRecovery, testing::ValuesIn(kCorruptions),
                         [](const testing::TestParamInfo<Corruption>& i) { return std::string(i.param.name); });

TEST(CacheRecovery, PlantedObjectCodeIsNeverRun) {
  // Forge what an attacker who can write the directory would plant: scaled(1)'s entry (its IR, key and
  // variant) carrying scaled(2)'s object code, resealed without the secret, or with a secret of their own.
  // Loaded, it would return the sum times 3.25 instead of 2.25.
  CacheScope c;
  std::vector<double> v{1, 2, 3};
  ASSERT_EQ(make_scaled(1)(v), 2.25 * 6);
  const std::string one = c.entries().at(0).path;
  ASSERT_EQ(make_scaled(2)(v), 3.25 * 6);
  cache_flush();
  std::string two;
  for (const auto& f : c.entries())
    if (f.path != one) two = f.path;
  const cache::Secret secret = secret_of(c.dir());
  cache::Decoded forged = cache::decode(read_file(one), secret);
  const cache::Decoded donor = cache::decode(read_file(two), secret);
  ASSERT_EQ(forged.status, cache::DecodeStatus::ok);
  ASSERT_EQ(donor.status, cache::DecodeStatus::ok);
  // Every part of the object code ("object", and "object.1", ... when it was compiled in parts).
  for (cache::Blob& b : forged.entry.payloads)
    if (b.name == "object" || b.name.rfind("object.", 0) == 0) b = *donor.entry.payload(b.name);
  cache::Secret forger;
  forger.bytes.fill(1);
  for (const std::string& planted : {reseal_unkeyed(cache::encode(forged.entry, forger)), cache::encode(forged.entry, forger)}) {
    write_file(one, planted);
    c.forget_loaded_code();
    const CacheStats s0 = flushed_stats();
    EXPECT_EQ(make_scaled(1)(v), 2.25 * 6);  // its own code, compiled again
    EXPECT_EQ(last_record().cache, CacheSource::miss);
    EXPECT_EQ((flushed_stats() - s0).rejected_entries, 1u);
    EXPECT_TRUE(inspect_file(c.dir(), one).ok);  // rewritten by the compile
  }
  // The real secret makes the forgery load: the seal, not some other check, is what stopped it.
  write_file(one, cache::encode(forged.entry, secret));
  c.forget_loaded_code();
  EXPECT_EQ(make_scaled(1)(v), 3.25 * 6);
  EXPECT_EQ(last_record().cache, CacheSource::disk);
}

TEST(CacheRecovery, AnEntryCopiedFromAnotherCacheIsRejected) {
  CacheScope a, b;
  a.set(CacheMode::on);
  ASSERT_EQ(run_and_check("pi"), "");
  const std::string from = entry_of(a, "pi");
  b.set(CacheMode::on);
  ASSERT_EQ(run_and_check("dot"), "");  // b has a directory and a secret of its own
  cache_flush();
  const std::string to = b.dir() + "/" + fs::path(from).filename().string();
  fs::copy_file(from, to);
  b.forget_loaded_code();
  const CacheStats s0 = flushed_stats();
  ASSERT_EQ(run_and_check("pi"), "");
  EXPECT_EQ(last_record().cache, CacheSource::miss);
  EXPECT_EQ((flushed_stats() - s0).rejected_entries, 1u);
}

/// Bytes this process has read through read(2)/pread(2) so far (/proc/self/io, rchar).
std::uint64_t bytes_read() {
  std::ifstream in("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value)
    if (key == "rchar:") return value;
  return 0;
}

TEST(CacheRecovery, LargeJunkIsRejectedWithoutBeingRead) {
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");
  const std::string pi = entry_of(c, "pi");
  const std::string header = read_file(pi).substr(0, cache::kHeaderSize);
  cache::DiskStore store({CacheMode::read_only, c.dir(), 1ull << 30});
  cache::Key key;
  ASSERT_TRUE(cache::parse_key(fs::path(pi).filename().string().substr(0, 32), key));
  // 200 MB past the size limit, a header followed by 20 MB its body size does not account for, and 20 MB
  // without a header: sparse files, so that only reading them would cost anything.
  const std::pair<std::string, std::uint64_t> junk[] = {{std::string(40, 'j'), 200ull << 20}, {header, 20ull << 20},
                                                        {std::string(40, 'j'), 20ull << 20}};
  for (const auto& [start, size] : junk) {
    write_file(pi, start);
    ASSERT_EQ(truncate(pi.c_str(), static_cast<off_t>(size)), 0);
    const std::uint64_t before = bytes_read();
    const CacheStats s0 = flushed_stats();
    EXPECT_FALSE(store.lookup(key, "").has_value());
    EXPECT_EQ((flushed_stats() - s0).rejected_entries, 1u);
    EXPECT_LT(bytes_read() - before, 1u << 20) << "a " << size << "-byte junk entry was read";
  }
}

TEST(CacheRecovery, AKeyCollisionNeverRunsTheWrongCode) {
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");
  ASSERT_EQ(run_and_check("dot"), "");
  // Forge what a 128-bit collision would look like: pi's code and IR, valid checksum, under dot's key.
  const std::string dot_path = entry_of(c, "dot");
  const cache::Secret secret = secret_of(c.dir());
  cache::Decoded pi = cache::decode(read_file(entry_of(c, "pi")), secret);
  ASSERT_EQ(pi.status, cache::DecodeStatus::ok);
  ASSERT_TRUE(cache::parse_key(fs::path(dot_path).filename().string().substr(0, 32), pi.entry.key));
  write_file(dot_path, cache::encode(pi.entry, secret));
  c.forget_loaded_code();

  const CacheStats s0 = flushed_stats();
  EXPECT_EQ(run_and_check("dot"), "");  // computed by dot's code, not pi's
  EXPECT_EQ((flushed_stats() - s0).rejected_entries, 1u);
  EXPECT_EQ((flushed_stats() - s0).compiles, 1u);
}

// ---- modes and directories ----------------------------------------------------------------------------------

TEST(CacheModes, ReadOnlyUsesEntriesButNeverWritesTouchesOrDeletes) {
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");
  const std::string pi = entry_of(c, "pi");
  timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, pi.c_str(), old, 0), 0);

  c.set(CacheMode::read_only);
  CacheStats s0 = flushed_stats();
  ASSERT_EQ(run_and_check("pi"), "");
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  ASSERT_EQ(run_and_check("saxpy"), "");
  EXPECT_EQ(last_record().cache, CacheSource::miss);
  CacheStats d = flushed_stats() - s0;
  EXPECT_EQ(d.disk_hits, 1u);
  EXPECT_EQ(d.compiles, 1u);
  EXPECT_EQ(d.stores, 0u);
  EXPECT_EQ(c.entries().size(), 1u);
  struct stat st;
  ASSERT_EQ(stat(pi.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);  // not touched

  write_file(pi, "corrupt");
  c.forget_loaded_code();
  s0 = flushed_stats();
  ASSERT_EQ(run_and_check("pi"), "");
  EXPECT_EQ((flushed_stats() - s0).rejected_entries, 1u);
  EXPECT_EQ(read_file(pi), "corrupt");  // not ours to delete
}

TEST(CacheModes, OffNeitherReadsNorWrites) {
  CacheScope c(CacheMode::off);
  const CacheStats s0 = flushed_stats();
  ASSERT_EQ(run_and_check("saxpy"), "");
  EXPECT_EQ(last_record().cache, CacheSource::off);
  EXPECT_EQ(last_record().key, "");
  ASSERT_EQ(run_and_check("saxpy"), "");
  const CacheStats d = flushed_stats() - s0;
  EXPECT_EQ(d.compiles, 2u);
  EXPECT_EQ(d.disk_misses + d.disk_hits + d.memory_hits + d.stores, 0u);
  EXPECT_FALSE(fs::exists(c.dir()));
}

TEST(CacheModes, TheInterpreterIsNotCached) {
  CacheScope c;
  Options o;
  o.target = Target::interpreter;
  EXPECT_NEAR(make_pi(o)(std::int64_t{100}), std::numbers::pi, 1e-4);
  EXPECT_EQ(last_record().cache, CacheSource::off);
  EXPECT_EQ(last_record().target, "interpreter");
  EXPECT_FALSE(fs::exists(c.dir()));
}

TEST(CacheModes, AMissingDirectoryIsCreatedPrivate) {
  CacheScope c;
  const std::string nested = c.root() + "/not/yet/there";
  c.set_directory(nested);
  ASSERT_EQ(run_and_check("dot"), "");
  cache_flush();
  struct stat st;
  ASSERT_EQ(stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(cache::list_directory(nested).size(), 1u);
}

TEST(CacheModes, AnUnusableDirectoryOnlyCostsTheCache) {
  CacheScope c;
  write_file(c.root() + "/a_file", "x");
  c.set_directory(c.root() + "/a_file/kiln");  // cannot exist: its parent is a file
  CacheStats s0 = flushed_stats();
  ASSERT_EQ(run_and_check("pi"), "");
  c.forget_loaded_code();  // the second kernel compiles again
  ASSERT_EQ(run_and_check("pi"), "");
  CacheStats d = flushed_stats() - s0;
  EXPECT_EQ(d.compiles, 2u);
  EXPECT_EQ(d.store_failures, 2u);
  EXPECT_EQ(d.stores, 0u);

  // A directory of the user that exists but cannot be written: permissions, or for root (whom permissions do
  // not stop) this process's directory of /proc (/proc/self is a link, which kiln does not follow).
  std::string readonly = c.root() + "/readonly";
  fs::create_directory(readonly);
  chmod(readonly.c_str(), 0500);
  if (geteuid() == 0) readonly = "/proc/" + std::to_string(getpid());
  c.set_directory(readonly);
  s0 = flushed_stats();
  ASSERT_EQ(run_and_check("saxpy"), "");
  d = flushed_stats() - s0;
  EXPECT_EQ(d.compiles, 1u);
  EXPECT_EQ(d.store_failures, 1u);
}

TEST(CacheModes, ADirectoryOthersCanWriteIsNotUsed) {
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");  // a valid entry: only the directory's mode can keep it from being loaded
  cache_flush();
  const std::size_t files = c.entries().size();
  for (const mode_t mode : {0777, 01777, 0770}) {
    ASSERT_EQ(chmod(c.dir().c_str(), mode), 0);
    c.set(CacheMode::on);  // a fresh store judges the directory again
    const CacheStats s0 = flushed_stats();
    ASSERT_EQ(run_and_check("pi"), "");
    EXPECT_EQ(last_record().cache, CacheSource::off) << std::oct << mode;  // as if the cache were off
    EXPECT_EQ(last_record().key, "");
    const CacheStats d = flushed_stats() - s0;
    EXPECT_EQ(d.compiles, 1u);
    EXPECT_EQ(d.disk_hits + d.disk_misses + d.stores + d.store_failures + d.rejected_entries, 0u);
    EXPECT_EQ(cache_settings().mode, CacheMode::on);  // the settings stand; the directory is what is refused
  }
  ASSERT_EQ(chmod(c.dir().c_str(), 0700), 0);
  c.set(CacheMode::on);
  ASSERT_EQ(run_and_check("pi"), "");
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  EXPECT_EQ(c.entries().size(), files);
}

TEST(CacheModes, ADirectoryOfAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another uid (chown)";
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");
  cache_flush();
  ASSERT_EQ(chown(c.dir().c_str(), 65534, 65534), 0);  // as if that user had created it first
  c.set(CacheMode::on);
  const CacheStats s0 = flushed_stats();
  ASSERT_EQ(run_and_check("pi"), "");
  EXPECT_EQ(last_record().cache, CacheSource::off);
  EXPECT_EQ((flushed_stats() - s0).disk_hits, 0u);
  EXPECT_EQ((flushed_stats() - s0).stores, 0u);
  ASSERT_EQ(chown(c.dir().c_str(), 0, 0), 0);
}

// ---- eviction -----------------------------------------------------------------------------------------------

/// ext4 stamps files with a clock of a few milliseconds' resolution: space out uses that LRU must order.
void next_tick() {
  cache_flush();
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

TEST(CacheEviction, KeepsTheCapAndEvictsTheLeastRecentlyUsed) {
  CacheScope c;
  std::vector<double> v{1, 2, 3};
  make_scaled(1)(v);
  const std::uint64_t one = c.bytes();
  ASSERT_GT(one, 0u);
  const std::uint64_t cap = one * 5 / 2;  // room for two entries
  c.set(CacheMode::on, cap);
  const std::string a = c.entries()[0].path;
  next_tick();
  make_scaled(2)(v);
  next_tick();
  c.forget_loaded_code();
  make_scaled(1)(v);  // a disk hit: entry 1 is now more recent than entry 2
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  next_tick();
  const CacheStats s0 = flushed_stats();
  make_scaled(3)(v);
  EXPECT_EQ((flushed_stats() - s0).evictions, 1u);
  EXPECT_LE(c.bytes(), cap);
  EXPECT_EQ(c.entries().size(), 2u);
  EXPECT_TRUE(fs::exists(a)) << "the recently used entry was evicted";
  c.forget_loaded_code();
  make_scaled(1)(v);
  EXPECT_EQ(last_record().cache, CacheSource::disk);
  make_scaled(2)(v);
  EXPECT_EQ(last_record().cache, CacheSource::miss);  // it was the one evicted
  for (int i = 4; i < 10; ++i) {
    make_scaled(i)(v);
    EXPECT_LE(c.bytes(), cap);
  }
}

// ---- the background writer ---------------------------------------------------------------------------------

TEST(CacheBackground, AForkedChildWritesItsOwnEntriesAtExitAndLeavesTheParentsAlone) {
  CacheScope c;
  ASSERT_EQ(run_and_check("pi"), "");  // the parent's entry may still be queued when it forks
  auto store = std::make_shared<cache::DiskStore>(CacheSettings{CacheMode::on, c.dir(), 1ull << 30});
  cache::Entry e;
  e.key = ir::hash128("written by the child");
  e.canonical_ir = "kernel k() {\n}\n";
  e.payloads = {{"object", "not really an object"}};
  const pid_t pid = fork();
  if (pid == 0) {
    cache::store_in_background(store, e);
    std::exit(0);  // the exit handler writes it; it must neither hang nor touch the parent's queue
  }
  ASSERT_GT(pid, 0);
  int status = -1;
  for (int i = 0; i < 2000 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(10 * 1000);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit within 20 s";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(fs::exists(cache::entry_path(c.dir(), e.key)));
  EXPECT_FALSE(entry_of(c, "pi").empty());  // flushed by entries(): the parent's own writer wrote it
  EXPECT_EQ(c.entries().size(), 2u);
}

// ---- readers racing writers and eviction ---------------------------------------------------------------------

TEST(CacheConcurrency, ReadersSeeWholeEntriesWhileTheyAreReplacedAndEvicted) {
  CacheScope c;
  cache::DiskStore store({CacheMode::on, c.dir(), 1ull << 30});
  cache::Entry e;
  e.key = ir::hash128("concurrency");
  e.canonical_ir = "kernel k() {\n}\n";
  e.payloads = {{"object", std::string(200000, 'o')}};
  e.meta.target = "cpu";
  ASSERT_TRUE(store.store(e));
  const CacheStats s0 = flushed_stats();
  std::atomic<bool> stop{false};
  std::atomic<int> hits{0}, bad{0};
  std::thread writer([&] {
    while (!stop) store.store(e);
  });
  std::thread evicter([&] {
    while (!stop) cache::prune(c.dir(), 0);
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(600);
  while (std::chrono::steady_clock::now() < until) {
    if (auto got = store.lookup(e.key, e.canonical_ir)) {
      ++hits;
      if (got->payload("object") == nullptr || got->payload("object")->data != e.payloads[0].data) ++bad;
    }
  }
  stop = true;
  writer.join();
  evicter.join();
  EXPECT_GT(hits.load(), 0);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ((flushed_stats() - s0).rejected_entries, 0u);
  EXPECT_EQ((flushed_stats() - s0).store_failures, 0u);
}

}  // namespace
}  // namespace kiln
