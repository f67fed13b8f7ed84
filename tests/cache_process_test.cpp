// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The disk cache across real processes: tests/cache_helper.cpp runs kernels in a child process and reports
// its cache statistics; tools/kiln-cache checks the directory afterwards.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cache_kernels.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/inspect.hpp"
#include "runtime/cache/secret.hpp"
#include "runtime/cache/trust.hpp"

extern char** environ;

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct Child {
  pid_t pid = -1;
  std::string out_path, err_path;
};

struct Result {
  int exit_code = -1;
  std::string out, err;
  std::map<std::string, unsigned long long> stats;  ///< from the helper's "stats k=v ..." line
  bool timed_out = false;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

/// A temporary directory holding the cache (`dir`) and the children's output files.
class Workspace {
 public:
  Workspace() {
    std::string t = (fs::temp_directory_path() / "kiln-cache-proc-XXXXXX").string();
    root_ = mkdtemp(t.data());
    dir_ = root_ + "/cache";
  }
  ~Workspace() {
    cache_flush();  // the parent's own background stores, before the directory goes
    fs::remove_all(root_);
  }
  const std::string& root() const { return root_; }
  const std::string& dir() const { return dir_; }

  /// Starts `argv` with the environment of this process plus `env` (NAME=value), stdout and stderr to files,
  /// in the working directory `cwd` (this process's if empty).
  Child start(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& cwd = "") {
    Child c;
    const int n = counter_++;
    c.out_path = root_ + "/out." + std::to_string(n);
    c.err_path = root_ + "/err." + std::to_string(n);
    // Everything exec needs is built before fork: the parent may have other threads.
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) {
      const std::string s = *e;
      bool replaced = false;
      for (const std::string& o : env) replaced = replaced || s.compare(0, o.find('=') + 1, o, 0, o.find('=') + 1) == 0;
      if (!replaced) envs.push_back(s);
    }
    envs.insert(envs.end(), env.begin(), env.end());
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    const int out = open(c.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err = open(c.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    c.pid = fork();
    if (c.pid == 0) {
      dup2(out, 1);
      dup2(err, 2);
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
      execve(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    close(out);
    close(err);
    return c;
  }

  /// Waits for `c`, at most `timeout_s` seconds: a child still running then is killed (exit_code stays -1, and
  /// timed_out is set).
  Result wait(const Child& c, int timeout_s = 300) {
    Result r;
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < timeout_s * 100 && (done = waitpid(c.pid, &status, WNOHANG)) == 0; ++i) usleep(10 * 1000);
    if (done == 0) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      r.timed_out = true;
    } else if (done == c.pid && WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
    }
    r.out = read_file(c.out_path);
    r.err = read_file(c.err_path);
    const auto at = r.out.find("stats ");
    if (at != std::string::npos) {
      std::istringstream line(r.out.substr(at + 6));
      for (std::string kv; line >> kv;) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos) r.stats[kv.substr(0, eq)] = std::stoull(kv.substr(eq + 1));
      }
    }
    return r;
  }

  /// Runs the helper on `kernels` with this workspace's cache directory.
  Result helper(const std::vector<std::string>& kernels, std::vector<std::string> env = {}) {
    return wait(start_helper(kernels, std::move(env)));
  }
  Child start_helper(const std::vector<std::string>& kernels, std::vector<std::string> env = {}) {
    std::vector<std::string> argv{KILN_CACHE_HELPER};
    argv.insert(argv.end(), kernels.begin(), kernels.end());
    // After `env`: the first of two values of a variable is the one getenv finds, so `env` overrides these.
    env.insert(env.end(), {"KILN_CACHE_DIR=" + dir_, "KILN_CACHE=on", "KILN_CACHE_MAX_BYTES=1G"});
    return start(argv, env);
  }

  Result tool(const std::vector<std::string>& args) {
    std::vector<std::string> argv{KILN_CACHE_TOOL, "--dir", dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    return wait(start(argv, {}));
  }

  std::vector<cache::DirFile> files() const { return cache::list_directory(dir_); }

 private:
  std::string root_, dir_;
  int counter_ = 0;
};

int count_lines_containing(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

const std::vector<std::string> kAll{"pi", "saxpy", "dot"};

TEST(CacheProcess, AChildProcessLoadsWhatTheParentStored) {
  Workspace w;
  const CacheSettings saved = cache_settings();
  set_cache_settings({CacheMode::on, w.dir(), 1ull << 30});
  for (const auto& k : kAll) ASSERT_EQ(cache_kernels::run_and_check(k), "") << k;
  cache_flush();
  set_cache_settings(saved);
  ASSERT_EQ(w.files().size(), 3u);

  const Result r = w.helper(kAll, {"KILN_LOG=compile"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.stats.at("disk_hits"), 3u) << r.out;
  EXPECT_EQ(r.stats.at("compiles"), 0u);
  EXPECT_EQ(r.stats.at("disk_misses"), 0u);
  EXPECT_EQ(r.stats.at("stores"), 0u);
  // KILN_LOG=compile: one line per kernel load, naming kernel, target, source and times.
  EXPECT_EQ(count_lines_containing(r.err, "kiln: compile "), 3) << r.err;
  EXPECT_EQ(count_lines_containing(r.err, "target=cpu cache=disk trace="), 3) << r.err;
  EXPECT_EQ(count_lines_containing(r.err, "kiln: compile saxpy "), 1) << r.err;
  EXPECT_NE(r.err.find("codegen=0.00ms load="), std::string::npos) << r.err;
}

// A process whose kernels come from the disk cache loads glibc's vector math library only when a kernel's
// object calls it (0.12-0.16 ms of a first call otherwise): not for pi, saxpy and dot, and for a vectorized
// exp, which then links and computes from the entry alone (codegen/llvm/jit.cpp, LoadLibmvecOnDemand).
TEST(CacheProcess, VectorMathIsLoadedOnlyForAKernelThatCallsIt) {
  if (!dlopen("libmvec.so.1", RTLD_LAZY)) GTEST_SKIP() << "no libmvec on this host";  // (this process's own)
  Workspace w;
  const CacheSettings saved = cache_settings();
  set_cache_settings({CacheMode::on, w.dir(), 1ull << 30});
  for (const std::string k : {"pi", "saxpy", "dot", "vexp"}) ASSERT_EQ(cache_kernels::run_and_check(k), "") << k;
  cache_flush();
  set_cache_settings(saved);

  const Result plain = w.helper(kAll);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_EQ(plain.stats.at("disk_hits"), 3u) << plain.out;
  EXPECT_EQ(plain.stats.at("libmvec"), 0u) << plain.out;

  const Result vexp = w.helper({"vexp"});
  ASSERT_EQ(vexp.exit_code, 0) << vexp.out << vexp.err;
  EXPECT_EQ(vexp.stats.at("disk_hits"), 1u) << vexp.out;
  EXPECT_EQ(vexp.stats.at("compiles"), 0u) << vexp.out;
  EXPECT_EQ(vexp.stats.at("libmvec"), 1u) << vexp.out;
}

TEST(CacheProcess, BadEntriesAreWarnedAboutOnceRecompiledAndRewritten) {
  Workspace w;
  Result r = w.helper(kAll);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("compiles"), 3u);
  EXPECT_EQ(r.stats.at("stores"), 3u);
  for (const auto& f : w.files()) {
    std::string b = read_file(f.path);
    b[b.size() / 3] = static_cast<char>(b[b.size() / 3] ^ 1);
    write_file(f.path, b);
  }
  r = w.helper(kAll);
  ASSERT_EQ(r.exit_code, 0) << r.err;  // results unchanged
  EXPECT_EQ(r.stats.at("rejected"), 3u);
  EXPECT_EQ(r.stats.at("compiles"), 3u);
  EXPECT_EQ(r.stats.at("stores"), 3u);
  EXPECT_EQ(count_lines_containing(r.err, "kiln: warning: cache:"), 1) << r.err;  // once per kind
  EXPECT_NE(r.err.find("its seal does not match this cache's secret"), std::string::npos) << r.err;

  r = w.helper(kAll);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("disk_hits"), 3u);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(w.tool({"verify"}).exit_code, 0);
}

TEST(CacheProcess, EightRacingProcessesAllSucceedAndLeaveOneValidEntryPerKernel) {
  Workspace w;
  const std::string go = w.root() + "/go";
  std::vector<Child> children;
  for (int i = 0; i < 8; ++i) children.push_back(w.start_helper(kAll, {"KILN_TEST_START_FILE=" + go}));
  usleep(300 * 1000);  // let all eight load and wait
  write_file(go, "");
  for (const Child& c : children) {
    const Result r = w.wait(c);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.stats.at("rejected"), 0u) << r.out;
    EXPECT_EQ(r.stats.at("store_failures"), 0u) << r.out << r.err;
  }
  int entries = 0, temporaries = 0;
  const cache::Inspector inspector(w.dir());
  for (const auto& f : w.files()) {
    (f.temporary ? temporaries : entries) += 1;
    if (!f.temporary) {
      EXPECT_TRUE(inspector.inspect(f).ok) << f.path;
    }
  }
  EXPECT_EQ(entries, 3);
  EXPECT_EQ(temporaries, 0);
  const Result verify = w.tool({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("3 entries ok, 0 bad"), std::string::npos) << verify.out;

  const Result after = w.helper(kAll);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.stats.at("disk_hits"), 3u);
}

TEST(CacheProcess, AnUnwritableDirectoryWarnsOnceAndChangesNoResult) {
  Workspace w;
  fs::create_directories(w.root());
  write_file(w.root() + "/file", "x");
  const Child c = w.start({KILN_CACHE_HELPER, "pi", "saxpy", "dot"},
                          {"KILN_CACHE_DIR=" + w.root() + "/file/cache", "KILN_CACHE=on"});
  const Result r = w.wait(c);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("compiles"), 3u);
  EXPECT_EQ(r.stats.at("store_failures"), 3u);
  EXPECT_EQ(count_lines_containing(r.err, "kiln: warning: cache:"), 1) << r.err;
  EXPECT_NE(r.err.find("not cached"), std::string::npos) << r.err;
}

TEST(CacheProcess, TheToolListsVerifiesPrunesAndClears) {
  Workspace w;
  // No directory yet: nothing to list, nothing wrong.
  for (const char* command : {"stats", "list", "verify", "clear"}) {
    const Result r = w.tool({command});
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.out << r.err;
  }
  EXPECT_NE(w.tool({"verify"}).out.find("0 entries ok, 0 bad"), std::string::npos);
  EXPECT_FALSE(fs::exists(w.dir()));
  ASSERT_EQ(w.helper(kAll).exit_code, 0);
  Result r = w.tool({"list"});
  EXPECT_EQ(r.exit_code, 0);
  for (const auto& k : kAll) EXPECT_EQ(count_lines_containing(r.out, " " + k + " "), 1) << r.out;
  r = w.tool({"stats"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("entries      3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cpu        3"), std::string::npos) << r.out;
  EXPECT_EQ(w.tool({"verify"}).exit_code, 0);

  const std::string victim = w.files().at(0).path;
  std::string b = read_file(victim);
  write_file(victim, b.substr(0, b.size() / 2));
  r = w.tool({"verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("BAD " + victim + ": truncated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 entries ok, 1 bad"), std::string::npos) << r.out;

  r = w.tool({"prune", "--max-bytes", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(w.files().empty());
  ASSERT_EQ(w.helper({"pi"}).exit_code, 0);
  write_file(w.dir() + "/unrelated.txt", "not a cache file");
  r = w.tool({"clear"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(w.files().empty());
  EXPECT_TRUE(fs::exists(w.dir() + "/unrelated.txt"));
  EXPECT_EQ(w.tool({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(w.tool({"prune"}).exit_code, 2);  // needs --max-bytes
}

// ---- trust: entries another user could have planted are never loaded --------------------------------------------

TEST(CacheTrust, ADirectoryGroupOrOthersCanWriteIsNotUsed) {
  Workspace w;
  ASSERT_EQ(w.helper(kAll).exit_code, 0);  // valid entries: only the directory's mode keeps them from being loaded
  for (const mode_t mode : {0777, 01777, 0770}) {
    ASSERT_EQ(chmod(w.dir().c_str(), mode), 0);
    const Result r = w.helper(kAll);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.stats.at("compiles"), 3u) << std::oct << mode;
    EXPECT_EQ(r.stats.at("disk_hits"), 0u);
    EXPECT_EQ(r.stats.at("stores"), 0u);
    EXPECT_EQ(count_lines_containing(r.err, "kiln: warning: cache:"), 1) << r.err;
    EXPECT_NE(r.err.find("not using the cache directory " + w.dir() + ": it is writable by"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("chmod go-w " + w.dir()), std::string::npos) << r.err;
  }
  ASSERT_EQ(chmod(w.dir().c_str(), 0700), 0);
  const Result r = w.helper(kAll);
  EXPECT_EQ(r.stats.at("disk_hits"), 3u) << r.err;
}

TEST(CacheTrust, ADirectoryOfAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another uid (chown)";
  Workspace w;
  ASSERT_EQ(w.helper(kAll).exit_code, 0);
  ASSERT_EQ(chown(w.dir().c_str(), 65534, 65534), 0);  // as if that user had created it, entries and all
  const Result r = w.helper(kAll);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("compiles"), 3u);
  EXPECT_EQ(r.stats.at("disk_hits"), 0u);
  EXPECT_EQ(r.stats.at("stores"), 0u);
  EXPECT_NE(r.err.find(w.dir() + ": it is owned by uid 65534"), std::string::npos) << r.err;
  const Result verify = w.tool({"verify"});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.err.find("kiln does not use " + w.dir()), std::string::npos) << verify.out << verify.err;
}

TEST(CacheTrust, ARelativeCacheDirectoryIsRefused) {
  Workspace w;
  ASSERT_EQ(w.helper(kAll).exit_code, 0);
  // Run from the workspace, "cache" names the directory with valid entries: a checkout carrying a cache.
  const Result r = w.wait(w.start({KILN_CACHE_HELPER, "pi", "saxpy", "dot"}, {"KILN_CACHE_DIR=cache", "KILN_CACHE=on"}, w.root()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("compiles"), 3u);
  EXPECT_EQ(r.stats.at("disk_hits"), 0u);
  EXPECT_EQ(r.stats.at("stores"), 0u);
  EXPECT_EQ(count_lines_containing(r.err, "kiln: warning: cache:"), 1) << r.err;
  EXPECT_NE(r.err.find("not an absolute path"), std::string::npos) << r.err;
}

TEST(CacheTrust, AFifoInAnEntrysPlaceNeitherBlocksNorIsRead) {
  Workspace w;
  ASSERT_EQ(w.helper({"pi"}).exit_code, 0);
  const std::string entry = w.files().at(0).path;
  ASSERT_EQ(unlink(entry.c_str()), 0);
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);  // no writer ever opens it: a blocking open would wait for ever
  const Result r = w.wait(w.start_helper({"pi"}), 60);
  ASSERT_FALSE(r.timed_out) << "the kernel's lookup blocked on a FIFO";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("rejected"), 1u);
  EXPECT_EQ(r.stats.at("compiles"), 1u);
  EXPECT_NE(r.err.find("it is a FIFO"), std::string::npos) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(entry.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // replaced by the recompiled entry
}

TEST(CacheTrust, AnEntryOfAnotherUserInAPrivateDirectoryIsNotLoaded) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give an entry to another uid (chown)";
  Workspace w;
  ASSERT_EQ(w.helper({"pi"}).exit_code, 0);
  const std::string entry = w.files().at(0).path;
  ASSERT_EQ(chown(entry.c_str(), 65534, 65534), 0);
  const Result r = w.helper({"pi"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("disk_hits"), 0u);
  EXPECT_EQ(r.stats.at("rejected"), 1u);
  EXPECT_NE(r.err.find("owned by uid 65534"), std::string::npos) << r.err;
}

TEST(CacheTrust, ReadOnlyModeIgnoresBadEntriesAndSaysSo) {
  Workspace w;
  ASSERT_EQ(w.helper({"pi"}).exit_code, 0);
  const std::string entry = w.files().at(0).path;
  write_file(entry, "corrupt");
  const Result r = w.helper({"pi"}, {"KILN_CACHE=read-only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.stats.at("rejected"), 1u);
  EXPECT_NE(r.err.find("ignoring " + entry), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("discarding"), std::string::npos) << r.err;  // nothing is deleted
  EXPECT_EQ(read_file(entry), "corrupt");
}

TEST(CacheTrust, VerifyJudgesWhatTheLoaderWouldLoad) {
  Workspace w;
  ASSERT_EQ(w.helper(kAll).exit_code, 0);
  auto files = w.files();
  ASSERT_EQ(files.size(), 3u);
  // A forged entry: one byte of code changed, sealed with a key of the forger's own.
  const cache::Fd dir(open(w.dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const cache::SecretResult secret = cache::read_secret(dir.get());
  ASSERT_TRUE(secret.ok);
  cache::Decoded d = cache::decode(read_file(files[0].path), secret.secret);
  ASSERT_EQ(d.status, cache::DecodeStatus::ok);
  for (cache::Blob& b : d.entry.payloads)
    if (b.name == "object") b.data[b.data.size() / 2] ^= 1;
  cache::Secret forger;
  forger.bytes.fill(9);
  write_file(files[0].path, cache::encode(d.entry, forger));
  // A link to a valid entry kept outside, and a 3 GB sparse file: neither is followed or read.
  const std::string outside = w.root() + "/outside.kce";
  ASSERT_EQ(rename(files[1].path.c_str(), outside.c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), files[1].path.c_str()), 0);
  ASSERT_EQ(truncate(files[2].path.c_str(), 3ll << 30), 0);

  Result r = w.tool({"verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("BAD " + files[0].path + ": its seal does not match"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BAD " + files[1].path + ": it is a symbolic link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BAD " + files[2].path + ": 3221225472 bytes, more than any entry"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 entries ok, 3 bad"), std::string::npos) << r.out;
  r = w.tool({"list"});
  EXPECT_EQ(count_lines_containing(r.out, "BAD: "), 3) << r.out;
  r = w.tool({"stats"});
  EXPECT_NE(r.out.find("not files    1"), std::string::npos) << r.out;
  // What verify rejects, the loader rejects: all three kernels are compiled again. (A cap above the 3 GB file,
  // so that the first store's eviction does not remove it before its kernel looks it up.)
  const Result run = w.helper(kAll, {"KILN_CACHE_MAX_BYTES=8G"});
  EXPECT_EQ(run.stats.at("rejected"), 3u) << run.err;
  EXPECT_EQ(run.stats.at("compiles"), 3u);
  EXPECT_EQ(w.tool({"verify"}).exit_code, 0);
  // clear removes a link in an entry's place, never what it points to.
  ASSERT_EQ(unlink(files[1].path.c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), files[1].path.c_str()), 0);
  EXPECT_EQ(w.tool({"clear"}).exit_code, 0);
  EXPECT_TRUE(w.files().empty());
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE(fs::exists(w.dir() + "/secret"));
  // A directory others can write: verify says kiln would not use it.
  ASSERT_EQ(chmod(w.dir().c_str(), 0777), 0);
  r = w.tool({"verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE((r.out + r.err).find("kiln does not use " + w.dir() + ": it is writable by"), std::string::npos) << r.out << r.err;
}

// ---- the size cap under racing writers --------------------------------------------------------------------------

TEST(CacheProcess, SixteenRacingProcessesStayUnderTheCap) {
  Workspace w;
  constexpr std::uint64_t kCap = 256 << 10;
  constexpr int kProcesses = 16, kKernelsEach = 8;
  const std::string go = w.root() + "/go";
  std::vector<Child> children;
  for (int p = 0; p < kProcesses; ++p) {
    std::vector<std::string> kernels;
    for (int k = 0; k < kKernelsEach; ++k) kernels.push_back("scaled:" + std::to_string(p * kKernelsEach + k));
    children.push_back(w.start_helper(kernels, {"KILN_TEST_START_FILE=" + go, "KILN_CACHE_MAX_BYTES=" + std::to_string(kCap)}));
  }
  usleep(300 * 1000);
  write_file(go, "");
  std::uint64_t stores = 0;
  for (const Child& c : children) {
    const Result r = w.wait(c);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    stores += r.stats.count("stores") ? r.stats.at("stores") : 0;
  }
  EXPECT_EQ(stores, static_cast<std::uint64_t>(kProcesses * kKernelsEach));
  std::uint64_t bytes = 0, largest = 0;
  int temporaries = 0;
  for (const auto& f : w.files()) {
    bytes += f.bytes;
    temporaries += f.temporary;
    largest = std::max(largest, f.bytes);
  }
  // Every store rescans the directory after its rename, so once the last writer is done the cap holds
  // exactly: no slack for processes that end normally (docs/cache.md).
  EXPECT_LE(bytes, kCap);
  EXPECT_EQ(temporaries, 0);
  EXPECT_GT(largest * kProcesses * kKernelsEach, 3 * kCap / 2) << "the kernels must overflow the cap for the test to mean anything";
  EXPECT_EQ(w.tool({"verify"}).exit_code, 0);
}

}  // namespace
}  // namespace kiln
