// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the example programs: options, timing, the pass/fail verdict, and what tools/demo.sh shows of
// pi, saxpy and dot: the first call (compiled, or loaded from the disk cache) and the steady-state speed
// against a serial loop and an OpenMP loop of the same work.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace example {

struct Args {
  long long n;
  kiln::Target target = kiln::default_target();
  int reps = 5;  ///< timed rounds of the steady-state comparison
};

/// `prog [N] [--target cpu|cuda|interpreter] [--reps R]` (cuda exits with 77, "skipped", on a machine
/// without a GPU)
inline Args parse(int argc, char** argv, long long default_n) {
  Args a{default_n};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      const std::string t = argv[++i];
      if (t == "cpu") a.target = kiln::Target::cpu;
      else if (t == "cuda") a.target = kiln::Target::cuda;
      else if (t == "interpreter") a.target = kiln::Target::interpreter;
      else {
        std::fprintf(stderr, "unknown target %s\n", t.c_str());
        std::exit(2);
      }
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      a.reps = std::max(1, std::atoi(argv[++i]));
    } else {
      a.n = std::atoll(argv[i]);
    }
  }
  // Exit code 77 tells CTest the run was skipped: the GPU examples are registered everywhere.
  if (a.target == kiln::Target::cuda && !kiln::cuda::available()) {
    std::printf("skipped: %s\n", kiln::cuda::unavailable_reason().c_str());
    std::exit(77);
  }
  return a;
}

/// Seconds taken by f().
template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Prints kiln's result against the reference; true if |got - want| <= tol * max(1, |want|) (and not NaN).
inline bool check(const char* name, double got, double want, double tol) {
  const double err = std::fabs(got - want) / std::fmax(1.0, std::fabs(want));
  const bool ok = err <= tol && !std::isnan(got);
  std::printf("%-8s kiln %.12g  reference %.12g  rel.err %.2e (tol %.0e)  %s\n", name, got, want, err, tol,
              ok ? "OK" : "MISMATCH");
  return ok;
}

/// Where this process's kernels came from: a second run loads them from the disk cache instead of compiling.
/// tools/demo.sh adds these lines up.
inline void print_cache_stats(const char* name) {
  const kiln::CacheStats cs = kiln::cache_stats();
  std::printf("%-8s cache: %llu compiled, %llu loaded from disk (%s)\n", name, static_cast<unsigned long long>(cs.compiles),
              static_cast<unsigned long long>(cs.disk_hits), kiln::cache_settings().directory.c_str());
}

/// Prints the comparison and returns the process exit code: 0 if |got - want| <= tol * max(1, |want|).
inline int verdict(const char* name, double got, double want, double tol, double first_s, double warm_s,
                   double ref_s) {
  const bool ok = check(name, got, want, tol);
  std::printf("%-8s first call (compile + run) %.2f ms, warm call %.3f ms, plain C++ %.3f ms\n", name, first_s * 1e3,
              warm_s * 1e3, ref_s * 1e3);
  print_cache_stats(name);
  return ok ? 0 : 1;
}

/// The size of the timed first call: small, so that its time is the compile (or the disk-cache load), not
/// the run. A kernel's code depends on its argument types and layouts, never on their sizes, so the later
/// calls at the full size reuse it.
constexpr long long first_call_n = 1000;

/// Times f(), the kernel's first call (on n elements), and says where its code came from, from the compile log: compiled
/// (the trace, the passes, LLVM's optimization and code generation, and loading the object), or loaded from
/// the disk cache that an earlier process filled (the trace and the load only: no LLVM or NVRTC run).
template <class F>
void first_call(const char* name, long long n, F&& f) {
  const std::size_t before = kiln::compile_history().size();
  const double s = seconds(f);
  const std::vector<kiln::CompileRecord> history = kiln::compile_history();
  std::printf("%-8s first call %.2f ms (n = %lld): ", name, s * 1e3, n);
  if (history.size() <= before) {
    std::printf("no compilation (already loaded)\n");
    return;
  }
  kiln::CompileRecord sum = history[before];  // one record per compiled signature; summed if several
  for (std::size_t i = before + 1; i < history.size(); ++i) {
    sum.trace_us += history[i].trace_us;
    sum.passes_us += history[i].passes_us;
    sum.codegen_ms += history[i].codegen_ms;
    sum.load_us += history[i].load_us;
  }
  switch (sum.cache) {
    case kiln::CacheSource::disk:
      std::printf("loaded from the disk cache, no code generation (trace %.2f ms, load %.2f ms)\n", sum.trace_us * 1e-3,
                  sum.load_us * 1e-3);
      return;
    case kiln::CacheSource::memory:
      std::printf("code already loaded in this process (trace %.2f ms)\n", sum.trace_us * 1e-3);
      return;
    case kiln::CacheSource::miss:
    case kiln::CacheSource::off:
      if (sum.target == "interpreter") {  // no code generation: the interpreter runs the IR after the passes
        std::printf("traced for the interpreter (trace %.2f ms, passes %.2f ms)\n", sum.trace_us * 1e-3,
                    sum.passes_us * 1e-3);
        return;
      }
      std::printf("compiled%s (trace %.2f ms, passes %.2f ms, %s %.2f ms, load %.2f ms)\n",
                  sum.cache == kiln::CacheSource::off ? ", disk cache not used" : "", sum.trace_us * 1e-3,
                  sum.passes_us * 1e-3, sum.target == "cuda" ? "NVRTC" : "LLVM", sum.codegen_ms, sum.load_us * 1e-3);
      return;
  }
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// The steady-state speed of the kiln kernel against a plain serial C++ loop and a hand-written OpenMP loop
/// (on kiln's thread count) of the same work. The three run in turn, `reps` rounds after one untimed round
/// (page faults, OpenMP's thread start), so that a slow moment of a shared machine hits all three alike;
/// each one's median is printed.
inline void compare(const char* name, int reps, const std::function<void()>& kiln_call,
                    const std::function<void()>& serial, const std::function<void()>& openmp) {
  const std::function<void()>* runs[3] = {&kiln_call, &serial, &openmp};
  std::vector<double> t[3];
  for (int r = -1; r < reps; ++r) {
    for (int k = 0; k < 3; ++k) {
      const double s = seconds(*runs[k]);
      if (r >= 0) t[k].push_back(s);
    }
  }
  const double kiln_s = median(t[0]), serial_s = median(t[1]), openmp_s = median(t[2]);
  std::printf("%-8s steady state, median of %d interleaved runs (kiln and OpenMP on %d threads):\n", name, reps,
              kiln::num_threads());
  std::printf("%-8s   kiln             %10.3f ms\n", name, kiln_s * 1e3);
  std::printf("%-8s   serial C++ loop  %10.3f ms   kiln is %.2fx as fast\n", name, serial_s * 1e3, serial_s / kiln_s);
  std::printf("%-8s   OpenMP loop      %10.3f ms   kiln is %.2fx as fast\n", name, openmp_s * 1e3, openmp_s / kiln_s);
}

}  // namespace example
