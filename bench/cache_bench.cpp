// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-cache-bench: what the disk cache buys, per kernel: the examples pi, saxpy and dot, and a kernel of each
// class that takes LLVM longest (issue #15): gemm (array expressions: matrix products, several parfors and
// strategies) and conv5x5 (a stencil: interior and border loops):
//   cold compile     first call of a new kernel with the cache off (trace + passes + LLVM + link + run)
//   miss             the same with the cache on and empty: adds the lookup, not the store (written later)
//   fresh process    first call in a new process whose disk cache holds the kernel (the call only, timed
//                    inside the child; process start-up and kiln::jit are outside the timing)
//   dispatch         a call of an already compiled kernel on empty input
//   re-created       `kiln::jit` plus the first call, inside a function called in a loop (the kernel object is
//                    made anew each time; its code comes from the process's in-memory table)
// All calls use tiny inputs, so the times are kiln's overheads, not the kernels' work. The last lines give the
// median and the maximum over the kernels of the cold compile (its code generation alone, from
// kiln::compile_history, and the whole first call) and of the fresh process's first call.
//   kiln-cache-bench [--json] [--runs N]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>
#include <nlohmann/json.hpp>

#include "measure.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

using bench::median;

auto make_pi() {
  return kiln::jit("pi", [](kiln::Int n) {
    kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
    kiln::prange(n, [&](kiln::Int i) {
      auto x = (kiln::to_double(i) + 0.5) * step;
      sum += 4.0 / (1.0 + x * x);
    });
    return sum * step;
  });
}

auto make_saxpy() {
  return kiln::jit("saxpy", [](kiln::Float a, kiln::Array<float> x, kiln::Array<float> y) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { y[i] = a * x[i] + y[i]; });
  });
}

auto make_dot() {
  return kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double s = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { s += x[i] * y[i]; });
    return s;
  });
}

auto make_gemm() {
  return kiln::jit("gemm", [](kiln::Array<double, 2> c, kiln::Array<double, 2> a, kiln::Array<double, 2> b,
                              kiln::Double alpha, kiln::Double beta) {
    c(kiln::all, kiln::all) = alpha * kiln::dot(a, b) + beta * c;
  });
}

auto make_conv5x5() {
  return kiln::stencil("conv5x5", [](kiln::Window<double, 2> a, kiln::Array<double, 2> w) {
    kiln::Double acc = 0.0;
    kiln::range(-2, 3, [&](kiln::Int di) {
      kiln::range(-2, 3, [&](kiln::Int dj) { acc += w(di + 2, dj + 2) * a(di, dj); });
    });
    return acc;
  }, kiln::neighborhood({-2, 2}, {-2, 2}) | kiln::constant(0.0));
}

/// Creates the kernel `name`, then times its first call (on one element; a 5x5 image for the stencil, the
/// smallest it accepts); returns microseconds.
double first_call_us(const std::string& name) {
  if (name == "gemm") {
    auto k = make_gemm();
    kiln::NDArray<double> c({1, 1}), a({1, 1}), b({1, 1});
    const auto t0 = Clock::now();
    k(c, a, b, 2.0, 0.5);
    return us_since(t0);
  }
  if (name == "conv5x5") {
    auto k = make_conv5x5();
    kiln::NDArray<double> out({5, 5}), img({5, 5}), w({5, 5});
    const auto t0 = Clock::now();
    k.into(out, img, w);
    return us_since(t0);
  }
  if (name == "pi") {
    auto k = make_pi();
    const auto t0 = Clock::now();
    volatile double r = k(1);
    (void)r;
    return us_since(t0);
  }
  if (name == "saxpy") {
    auto k = make_saxpy();
    std::vector<float> x(1, 1.0f), y(1, 1.0f);
    const auto t0 = Clock::now();
    k(2.0f, x, y);
    return us_since(t0);
  }
  auto k = make_dot();
  std::vector<double> x(1, 1.0);
  const auto t0 = Clock::now();
  volatile double r = k(x, x);
  (void)r;
  return us_since(t0);
}

/// Nanoseconds per call of a compiled kernel on empty input (median of 7 batches).
double dispatch_ns(const std::string& name) {
  std::vector<double> batches;
  auto run = [&](auto&& call) {
    for (int i = 0; i < 1000; ++i) call();
    for (int b = 0; b < 7; ++b) {
      const int calls = 50000;
      const auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) call();
      batches.push_back(us_since(t0) * 1e3 / calls);
    }
  };
  if (name == "gemm") {
    auto k = make_gemm();
    kiln::NDArray<double> e({0, 0});
    run([&] { k(e, e, e, 1.0, 1.0); });
  } else if (name == "conv5x5") {
    auto k = make_conv5x5();
    kiln::NDArray<double> out({5, 5}), img({5, 5}), w({5, 5});
    run([&] { k.into(out, img, w); });
  } else if (name == "pi") {
    auto k = make_pi();
    run([&] { (void)k(0); });
  } else if (name == "saxpy") {
    auto k = make_saxpy();
    std::vector<float> e;
    run([&] { k(1.0f, e, e); });
  } else {
    auto k = make_dot();
    std::vector<double> e;
    run([&] { (void)k(e, e); });
  }
  return median(batches);
}

/// Microseconds for making the kernel anew and calling it once (median over 2000 such calls, after a warm-up
/// call that compiled or loaded it).
double recreated_us(const std::string& name) {
  std::vector<double> t;
  first_call_us(name);
  for (int i = 0; i < 2000; ++i) {
    const auto t0 = Clock::now();
    first_call_us(name);
    t.push_back(us_since(t0));
  }
  return median(t);
}

/// The child: first call of `name` with the disk cache of the environment; prints "<call us> <trace us>
/// <load us> <disk hits>".
int child(const std::string& name) {
  const double us = first_call_us(name);
  const auto history = kiln::compile_history();
  const kiln::CompileRecord r = history.empty() ? kiln::CompileRecord{} : history.back();
  std::printf("%.1f %.1f %.1f %llu\n", us, r.trace_us, r.load_us,
              static_cast<unsigned long long>(kiln::cache_stats().disk_hits));
  return 0;
}

struct ChildResult {
  double call_us = 0, trace_us = 0, load_us = 0;
  unsigned long long disk_hits = 0;
};

ChildResult spawn_child(const std::string& self, const std::string& name) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(3);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(self.c_str(), self.c_str(), "--child", name.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ChildResult r;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(out.c_str(), "%lf %lf %lf %llu", &r.call_us, &r.trace_us, &r.load_us, &r.disk_hits) != 4) {
    std::fprintf(stderr, "kiln-cache-bench: the child for %s failed: %s\n", name.c_str(), out.c_str());
    std::exit(1);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child(argv[2]);
  bool json = false;
  int runs = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) json = true;
    else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: kiln-cache-bench [--json] [--runs N]\n");
      return 2;
    }
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  char tmpl[] = "/tmp/kiln-cache-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return 3;
  const std::string dir = tmpl;
  setenv("KILN_CACHE_DIR", dir.c_str(), 1);  // for the children
  setenv("KILN_CACHE", "on", 1);

  if (!json)
    std::printf("%-8s %14s %12s %18s %12s %10s %12s %12s  (median of %d; fresh process = the first call only)\n",
                "kernel", "cold compile", "miss", "fresh process", "of it: load", "trace", "dispatch", "re-created", runs);
  int status = 0;
  std::vector<double> all_codegen, all_cold, all_fresh;  // per kernel, its median
  for (const std::string name : {"pi", "saxpy", "dot", "gemm", "conv5x5"}) {
    kiln::set_cache_settings({kiln::CacheMode::off, dir, 1ull << 30});
    std::vector<double> cold, codegen;
    for (int i = 0; i < runs; ++i) {
      cold.push_back(first_call_us(name));
      const auto history = kiln::compile_history();
      if (!history.empty()) codegen.push_back(history.back().codegen_ms * 1e3);
    }
    all_codegen.push_back(median(codegen));
    all_cold.push_back(median(cold));

    std::vector<double> miss;
    for (int i = 0; i < runs; ++i) {
      kiln::set_cache_settings({kiln::CacheMode::on, dir + "/miss" + std::to_string(i), 1ull << 30});
      miss.push_back(first_call_us(name));
      kiln::cache_flush();  // written: the code is no longer kept loaded for the next run
    }

    kiln::set_cache_settings({kiln::CacheMode::on, dir, 1ull << 30});
    first_call_us(name);  // stores the entry the children load
    kiln::cache_flush();
    std::vector<double> call, load, trace;
    for (int i = 0; i < runs; ++i) {
      const ChildResult r = spawn_child(self, name);
      if (r.disk_hits != 1) {
        std::fprintf(stderr, "kiln-cache-bench: %s: the fresh process did not load from the disk cache\n", name.c_str());
        status = 1;
      }
      call.push_back(r.call_us);
      load.push_back(r.load_us);
      trace.push_back(r.trace_us);
    }
    all_fresh.push_back(median(call));
    const double ns = dispatch_ns(name);
    const double again_us = recreated_us(name);
    if (json)
      std::printf("%s\n", nlohmann::ordered_json{{"name", name}, {"cold_compile_ms", median(cold) / 1e3},
                                                  {"miss_ms", median(miss) / 1e3},
                                                  {"fresh_process_first_call_ms", median(call) / 1e3},
                                                  {"fresh_process_load_ms", median(load) / 1e3},
                                                  {"trace_ms", median(trace) / 1e3}, {"dispatch_ns", ns},
                                                  {"recreated_us", again_us}}.dump().c_str());
    else
      std::printf("%-8s %11.2f ms %9.2f ms %15.3f ms %9.3f ms %7.3f ms %9.1f ns %9.2f us\n", name.c_str(),
                  median(cold) / 1e3, median(miss) / 1e3, median(call) / 1e3, median(load) / 1e3, median(trace) / 1e3,
                  ns, again_us);
    std::fflush(stdout);
  }
  auto summary = [&](const char* what, const char* key, const std::vector<double>& us) {
    const double med = median(us) / 1e3, max = *std::max_element(us.begin(), us.end()) / 1e3;
    if (json)
      std::printf("%s\n", nlohmann::ordered_json{{"summary", key}, {"median_ms", med}, {"max_ms", max}}.dump().c_str());
    else std::printf("%-44s median %8.3f ms   max %8.3f ms\n", what, med, max);
  };
  summary("cold compile, code generation (LLVM) only:", "codegen", all_codegen);
  summary("cold compile, whole first call:", "cold_compile", all_cold);
  summary("fresh process with a warm cache, first call:", "fresh_process_first_call", all_fresh);
  std::filesystem::remove_all(dir);
  return status;
}
