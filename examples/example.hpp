// Shared by the example programs: options, timing and the pass/fail verdict.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <kiln/kiln.hpp>

namespace example {

struct Args {
  long long n;
  kiln::Target target = kiln::default_target();
};

/// `prog [N] [--target cpu|cuda|interpreter]` (cuda exits with 77, "skipped", on a machine without a GPU)
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

/// Prints the comparison and returns the process exit code: 0 if |got - want| <= tol * max(1, |want|).
inline int verdict(const char* name, double got, double want, double tol, double first_s, double warm_s,
                   double ref_s) {
  const double err = std::fabs(got - want) / std::fmax(1.0, std::fabs(want));
  const bool ok = err <= tol && !std::isnan(got);
  std::printf("%-8s kiln %.12g  reference %.12g  rel.err %.2e (tol %.0e)  %s\n", name, got, want, err, tol,
              ok ? "OK" : "MISMATCH");
  std::printf("%-8s first call (compile + run) %.2f ms, warm call %.3f ms, plain C++ %.3f ms\n", name, first_s * 1e3,
              warm_s * 1e3, ref_s * 1e3);
  // Where this process's kernels came from: a second run loads them from the disk cache instead of compiling.
  const kiln::CacheStats cs = kiln::cache_stats();
  std::printf("%-8s cache: %llu compiled, %llu loaded from disk (%s)\n", name, static_cast<unsigned long long>(cs.compiles),
              static_cast<unsigned long long>(cs.disk_hits), kiln::cache_settings().directory.c_str());
  return ok ? 0 : 1;
}

}  // namespace example
