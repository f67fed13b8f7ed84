// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-fuzz: random-program differential testing of the interpreter, the pass pipeline and the CPU JIT.
//
//   kiln-fuzz [--seed S] [--count N] [--jobs J] [--progress K] [--print] [--every-pass] [--[no-]shrink]
//             [--shrink-tries T] [--no-libm] [--no-array-ops] [--small] [--out-of-bounds]
//
// --out-of-bounds passes each program one array argument one element short and checks the bounds-checked
// mode against the interpreter (runner.hpp, check_out_of_bounds); it turns array operations off.
//
// Checks the programs of seeds S .. S+N-1 (defaults 1 and 1000). Every failure prints its seed, stage, the
// differences, the IR and the command that reproduces it; a crash or a hang (over 120 s) prints the same from a
// signal handler. A failure is shrunk (statements removed, ifs replaced by a branch, expressions by an operand or
// zero while it fails at the same stage; each candidate checked up to T times for failures that depend on thread
// timing) when a single seed is checked, or with --shrink. With --jobs J, J worker processes take every J-th
// seed, and a worker that dies is replaced from the next seed on. Exits 0 when every program passed.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ir/printer.hpp"
#include "tools/kiln_fuzz/runner.hpp"
#include "tools/kiln_fuzz/shrink.hpp"

namespace {

struct Config {
  std::uint64_t seed = 1;
  std::uint64_t count = 1000;
  int jobs = 1;
  std::uint64_t progress = 0;
  bool print = false;
  bool every_pass = false;
  bool out_of_bounds = false;  ///< check_out_of_bounds instead of check
  int shrink_tries = 1;  ///< checks of each shrinking candidate (a failure that depends on thread timing needs several)
  int shrink = -1;  ///< -1: only when checking a single seed
  kiln::fuzz::GeneratorOptions gen;
};

/// Shared between the workers and the parent (an anonymous shared mapping).
struct Shared {
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> current[64];  ///< per worker: the seed it is running
};

Shared* g_shared = nullptr;
int g_worker = 0;
volatile std::uint64_t g_seed = 0;
char g_flags[64] = "";

std::string repro(std::uint64_t seed) { return "kiln-fuzz --seed " + std::to_string(seed) + " --count 1" + g_flags; }

/// Async-signal-safe: formats with no allocation and writes with write(2).
void on_fatal_signal(int sig) {
  char buf[256];
  char num[24];
  auto append = [&](std::size_t& n, const char* s) {
    while (*s && n < sizeof buf - 1) buf[n++] = *s++;
  };
  auto number = [&](std::uint64_t v) {
    int k = 0;
    char tmp[24];
    do tmp[k++] = static_cast<char>('0' + v % 10), v /= 10;
    while (v);
    for (int i = 0; i < k; ++i) num[i] = tmp[k - 1 - i];
    num[k] = 0;
    return num;
  };
  std::size_t n = 0;
  append(n, "kiln-fuzz: FAILURE seed ");
  append(n, number(g_seed));
  append(n, sig == SIGALRM ? ": hang (over 120 s)" : ": crash, signal ");
  if (sig != SIGALRM) append(n, number(static_cast<std::uint64_t>(sig)));
  append(n, "\n  reproduce: kiln-fuzz --seed ");
  append(n, number(g_seed));
  append(n, " --count 1");
  append(n, g_flags);
  append(n, "\n");
  if (write(STDOUT_FILENO, buf, n) < 0) _exit(128 + sig);
  signal(sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGKILL : sig);
}

void install_signal_handlers() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) signal(sig, on_fatal_signal);
}

/// Checks one seed; prints and counts a failure.
void run_seed(const Config& cfg, std::uint64_t seed) {
  g_seed = seed;
  if (g_shared) g_shared->current[g_worker] = seed;
  alarm(120);
  const kiln::fuzz::Program p = kiln::fuzz::generate(seed, cfg.gen);
  if (cfg.print) std::printf("seed %llu (O%d, %d threads):\n%s", static_cast<unsigned long long>(seed), p.opt_level, p.threads,
                             kiln::ir::to_string(p.function).c_str());
  auto checked = [&](const kiln::fuzz::Program& q) {
    return cfg.out_of_bounds ? kiln::fuzz::check_out_of_bounds(q, seed) : kiln::fuzz::check(q, seed, cfg.every_pass);
  };
  if (auto f = checked(p)) {
    std::string text = "kiln-fuzz: FAILURE seed " + std::to_string(seed) + " at " + f->stage + "\n" + f->message +
                       "--- IR as generated ---\n" + f->ir;
    if (!f->ir_at_fault.empty()) text += "--- IR at the failing stage ---\n" + f->ir_at_fault;
    if (cfg.shrink == 1 || (cfg.shrink < 0 && cfg.count == 1)) {
      // The same kind of failure: the same pass, or the JIT at any level and thread count.
      auto kind = [](const std::string& stage) { return stage.rfind("jit", 0) == 0 ? std::string("jit") : stage; };
      alarm(0);
      const kiln::fuzz::Program small = kiln::fuzz::shrink(p, [&](const kiln::fuzz::Program& c) {
        for (int k = 0; k < cfg.shrink_tries; ++k)
          if (auto g = checked(c); g && kind(g->stage) == kind(f->stage)) return true;
        return false;
      }, 4000);
      text += "--- shrunk (still fails at " + kind(f->stage) + "; the arguments are the seed's) ---\n" +
              kiln::ir::to_string(small.function);
    }
    text += "  reproduce: " + repro(seed) + "\n";
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (g_shared) ++g_shared->failures;
  }
  alarm(0);
  if (g_shared) ++g_shared->done;
}

/// A worker: seeds first, first + step, ... below end.
[[noreturn]] void worker(const Config& cfg, std::uint64_t first, std::uint64_t step, std::uint64_t end) {
  for (std::uint64_t s = first; s < end; s += step) run_seed(cfg, s);
  std::fflush(stdout);
  _exit(0);
}

bool parse(int argc, char** argv, Config& cfg) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--seed" || a == "--count" || a == "--jobs" || a == "--progress" || a == "--shrink-tries") {
      const char* v = value();
      char* endp = nullptr;
      if (!v) return false;
      const unsigned long long x = std::strtoull(v, &endp, 10);
      if (*endp || endp == v) return false;
      if (a == "--seed") cfg.seed = x;
      else if (a == "--count") cfg.count = x;
      else if (a == "--jobs") cfg.jobs = static_cast<int>(x < 1 ? 1 : x > 64 ? 64 : x);
      else if (a == "--shrink-tries") cfg.shrink_tries = static_cast<int>(x < 1 ? 1 : x > 100 ? 100 : x);
      else cfg.progress = x;
    } else if (a == "--shrink" || a == "--no-shrink") {
      cfg.shrink = a == "--shrink";
    } else if (a == "--every-pass") {
      cfg.every_pass = true;
      std::strcat(g_flags, " --every-pass");
    } else if (a == "--out-of-bounds") {
      cfg.out_of_bounds = true;
      cfg.gen.array_operations = false;
      std::strcat(g_flags, " --out-of-bounds");
    } else if (a == "--print") {
      cfg.print = true;
    } else if (a == "--no-libm") {
      cfg.gen.approximate_functions = false;
      std::strcat(g_flags, " --no-libm");
    } else if (a == "--no-array-ops") {
      cfg.gen.array_operations = false;
      std::strcat(g_flags, " --no-array-ops");
    } else if (a == "--small") {
      cfg.gen.large_sizes = false;
      std::strcat(g_flags, " --small");
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  if (!parse(argc, argv, cfg)) {
    std::fprintf(stderr, "usage: kiln-fuzz [--seed S] [--count N] [--jobs J] [--progress K] [--print] [--every-pass]\n"
                         "                 [--[no-]shrink] [--shrink-tries T] [--no-libm] [--no-array-ops] [--small]\n"
                         "                 [--out-of-bounds]\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  install_signal_handlers();
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t end = cfg.seed + cfg.count;
  // Workers are forked before any kiln code runs in the parent, so none inherits a JIT or an OpenMP team.
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 2;
  g_shared = new (mem) Shared;
  std::vector<pid_t> pids(static_cast<std::size_t>(cfg.jobs));
  auto start = [&](int w, std::uint64_t first) {
    const pid_t pid = fork();
    if (pid == 0) {
      g_worker = w;
      worker(cfg, first, static_cast<std::uint64_t>(cfg.jobs), end);
    }
    pids[static_cast<std::size_t>(w)] = pid;
  };
  for (int w = 0; w < cfg.jobs; ++w) start(w, cfg.seed + static_cast<std::uint64_t>(w));
  int running = cfg.jobs;
  std::uint64_t reported = 0;
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) {
      usleep(200000);
      const std::uint64_t done = g_shared->done.load();
      if (cfg.progress && done / cfg.progress > reported / cfg.progress) {
        reported = done;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("kiln-fuzz: %llu/%llu programs, %llu failures, %.0f s\n", static_cast<unsigned long long>(done),
                    static_cast<unsigned long long>(cfg.count), static_cast<unsigned long long>(g_shared->failures.load()), s);
      }
      continue;
    }
    if (pid < 0) break;
    int w = 0;
    while (w < cfg.jobs && pids[static_cast<std::size_t>(w)] != pid) ++w;
    --running;
    if (WIFSIGNALED(status)) {  // its handler printed the seed; go on from the next one
      ++g_shared->failures;
      ++g_shared->done;
      const std::uint64_t next = g_shared->current[w] + static_cast<std::uint64_t>(cfg.jobs);
      if (next < end) {
        start(w, next);
        ++running;
      }
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::uint64_t failures = g_shared->failures.load();
  std::printf("kiln-fuzz: %llu programs (seeds %llu..%llu), %llu failures, %.1f s\n",
              static_cast<unsigned long long>(g_shared->done.load()), static_cast<unsigned long long>(cfg.seed),
              static_cast<unsigned long long>(end - 1), static_cast<unsigned long long>(failures), s);
  return failures ? 1 : 0;
}
