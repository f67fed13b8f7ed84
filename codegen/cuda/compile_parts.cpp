// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/compile_parts.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "codegen/compile_threads.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cuda {
namespace {

std::size_t text_bytes(const Program& program, std::size_t f) {
  const auto& [begin, end] = program.functions[f];
  return end - begin;
}

/// Largest function first into the part that costs least so far (the lowest index on a tie): deterministic.
std::vector<std::vector<std::size_t>> deal(const Program& program, std::size_t parts, std::size_t* longest) {
  std::vector<std::size_t> order(program.functions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return text_bytes(program, a) > text_bytes(program, b); });
  std::vector<std::vector<std::size_t>> out(parts);
  std::vector<std::size_t> cost(parts, kPartFixedBytes);
  for (std::size_t f : order) {
    const std::size_t p = static_cast<std::size_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
    out[p].push_back(f);
    cost[p] += text_bytes(program, f);
  }
  for (auto& part : out) std::sort(part.begin(), part.end());  // the program's order within a part
  *longest = *std::max_element(cost.begin(), cost.end());
  return out;
}

}  // namespace

PartPlan plan_parts(const Program& program, int threads) {
  PartPlan plan;
  const std::size_t n = program.functions.size();
  plan.whole = kPartFixedBytes;
  for (std::size_t f = 0; f < n; ++f) plan.whole += text_bytes(program, f);
  plan.longest = plan.whole;
  plan.parts.assign(1, {});
  for (std::size_t f = 0; f < n; ++f) plan.parts[0].push_back(f);
  const std::size_t most = std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), n);
  if (most < 2) return plan;
  std::vector<std::size_t> longest(most + 1, plan.whole);
  for (std::size_t p = 2; p <= most; ++p) deal(program, p, &longest[p]);
  const std::size_t best = *std::min_element(longest.begin() + 1, longest.end());
  if (static_cast<double>(best) > kWorthSplitting * static_cast<double>(plan.whole)) return plan;
  for (std::size_t p = 1; p <= most; ++p) {
    if (longest[p] * 10 <= best * 11) {
      if (p > 1) plan.parts = deal(program, p, &plan.longest);
      return plan;
    }
  }
  return plan;
}

std::string part_source(const Program& program, const PartPlan& plan, std::size_t p) {
  if (plan.parts.size() == 1) return program.source();
  std::string out = program.prelude;
  out += fmt::format("\n// ---- kiln kernel '{}': part {} of {} of its __global__ functions ----\n", program.function->name, p + 1,
                     plan.parts.size());
  for (std::size_t f : plan.parts.at(p)) {
    const auto& [begin, end] = program.functions[f];
    out.append(program.kernels, begin, end - begin);
  }
  return out;
}

int ptxas_threads(std::size_t functions, int threads, std::size_t parts) {
  const std::size_t share = static_cast<std::size_t>(std::max(threads, 1)) / std::max<std::size_t>(parts, 1);
  return static_cast<int>(std::clamp<std::size_t>(std::min(share, functions), 1, 1024));
}

namespace {

/// NVRTC's name of a -Ofast-compile level (CudaOptions::fast_compile), or "" for none.
std::string fast_compile_level(int fast_compile) {
  return fast_compile == 1 ? "min" : fast_compile == 2 ? "mid" : fast_compile == 3 ? "max" : "";
}

}  // namespace

std::vector<std::string> program_flags(int ptxas_threads, bool minimal, int fast_compile) {
  std::vector<std::string> out;
  if (ptxas_threads > 1) out.push_back("--ptxas-options=--split-compile=" + std::to_string(ptxas_threads));
  if (minimal) out.push_back("--minimal");
  if (const std::string level = fast_compile_level(fast_compile); !level.empty()) out.push_back("--Ofast-compile=" + level);
  return out;
}

namespace {

/// One part: with `--minimal` first; CUDA C that needs what it leaves out compiles without it (and `*full` is set).
Binary compile_part(const std::string& source, const std::string& kernel, const std::string& arch, const CodegenOptions& opts, bool lineinfo,
                    int ptxas_threads, int fast_compile, bool* full) {
  try {
    return compile_source(source, kernel, arch, opts, true, lineinfo, program_flags(ptxas_threads, true, fast_compile));
  } catch (const CompileError&) {
    *full = true;
    return compile_source(source, kernel, arch, opts, true, lineinfo, program_flags(ptxas_threads, false, fast_compile));
  }
}

}  // namespace

Binary compile_program(const Program& program, const std::string& kernel, const std::string& arch, const CodegenOptions& opts,
                       bool lineinfo, int threads, int fast_compile) {
  const auto start = std::chrono::steady_clock::now();
  // The idle threads are counted (about 1.2 ms) only where there is more than one function to spread over them
  // (in parts, or by ptxas within a part).
  int use = threads;
  int idle = -1;
  if (use <= 0) {
    use = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (program.functions.size() > 1) use = idle = idle_hardware_threads();
  }
  const PartPlan plan = plan_parts(program, use);
  const std::size_t parts = plan.parts.size();
  std::vector<Binary> done(parts);
  std::vector<double> cpu(parts, 0);
  std::vector<int> ptxas(parts, 1);
  for (std::size_t p = 0; p < parts; ++p) ptxas[p] = ptxas_threads(plan.parts[p].size(), use, parts);
  std::vector<char> full(parts, 0);  // parts compiled without --minimal
  const std::vector<std::exception_ptr> failed = run_parts(parts, [&](std::size_t p) {
    const double t0 = thread_cpu_ms();
    bool f = false;
    done[p] = compile_part(part_source(program, plan, p), kernel, arch, opts, lineinfo, ptxas[p], fast_compile, &f);
    full[p] = f;
    cpu[p] = thread_cpu_ms() - t0;  // this thread's only: ptxas's own threads are not counted
  });
  for (const std::exception_ptr& e : failed) {
    if (!e) continue;
    if (parts == 1) std::rethrow_exception(e);
    // A part that does not compile alone (a function that used something of another's) is no reason to fail:
    // the whole program compiles as before, and its error, if any, is the kernel's.
    std::string why;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = x.what();
    }
    bool f = false;
    Binary whole = compile_part(program.source(), kernel, arch, opts, lineinfo, ptxas_threads(program.functions.size(), use, 1), fast_compile, &f);
    whole.cpu_ms = whole.cpu_longest_ms = 0;
    whole.notes = fmt::format("NVRTC: {} __global__ function(s) in one program: a part did not compile alone ({})\n", program.functions.size(),
                              why.substr(0, why.find('\n')));
    whole.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return whole;
  }

  Binary out = std::move(done[0]);
  for (std::size_t p = 1; p < parts; ++p) {
    out.more.push_back({std::move(done[p].ptx), std::move(done[p].cubin)});
    if (!done[p].log.empty()) out.log += (out.log.empty() ? "" : "\n") + done[p].log;
  }
  out.cpu_ms = std::accumulate(cpu.begin(), cpu.end(), 0.0);
  out.cpu_longest_ms = *std::max_element(cpu.begin(), cpu.end());
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::string threads_text = threads > 0 ? fmt::format("KILN_COMPILE_THREADS={}", threads)
                                   : idle >= 0  ? fmt::format("{} hardware thread(s) idle", idle)
                                                : fmt::format("{} hardware thread(s)", use);
  const std::size_t without_minimal = static_cast<std::size_t>(std::count(full.begin(), full.end(), 1));
  const std::string level = fast_compile_level(fast_compile);
  const std::string also = std::string(without_minimal ? fmt::format("; {} part(s) compiled again without --minimal", without_minimal) : "") +
                           (level.empty() ? "" : "; -Ofast-compile=" + level + " (KILN_CUDA_FAST_COMPILE)");
  if (parts == 1) {
    out.notes = fmt::format("NVRTC: {} __global__ function(s) in one program, ptxas on {} thread(s) ({:.1f} ms of CPU before ptxas's threads; {}: {}{})\n",
                            program.functions.size(), ptxas[0], out.cpu_ms, threads_text,
                            program.functions.size() < 2 ? "nothing to split" : "more parts would not shorten the longest by a fifth", also);
  } else {
    std::string sizes;
    for (std::size_t p = 0; p < parts; ++p) sizes += fmt::format("{}{} on {} ptxas thread(s) ({:.1f} ms)", p ? ", " : "", plan.parts[p].size(), ptxas[p], cpu[p]);
    out.notes = fmt::format("NVRTC: {} __global__ functions in {} programs compiled at the same time ({}; functions (CPU ms) per part: {}; "
                            "{:.1f} ms of CPU in all, the longest part {:.1f} ms; estimated {} of {} bytes of CUDA C for the longest part{})\n",
                            program.functions.size(), parts, threads_text, sizes, out.cpu_ms, out.cpu_longest_ms, plan.longest, plan.whole, also);
  }
  return out;
}

}  // namespace kiln::codegen::cuda
