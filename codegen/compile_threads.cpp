// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/compile_threads.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <time.h>

namespace kiln::codegen {

namespace {

/// Threads of this process in state R (running or runnable), from /proc/self/task/*/stat; at least 1 (the
/// caller).
int runnable_threads_of_this_process() {
  int runnable = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::FILE* f = std::fopen((task.path() / "stat").c_str(), "r");
    if (!f) continue;
    char buf[512];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "tid (comm) S ...": the state follows the last ')' (comm may hold parentheses and spaces).
    const char* close = std::strrchr(buf, ')');
    if (close && close[1] == ' ' && close[2] == 'R') ++runnable;
  }
  return std::max(runnable, 1);
}

}  // namespace

int idle_hardware_threads() {
  int all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__linux__)
  // The CPUs this process may run on (taskset, cgroup cpusets), which the count of all CPUs ignores.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) all = std::clamp(CPU_COUNT(&allowed), 1, all);
#endif
  // The least competition seen in a few samples 0.4 ms apart: procs_running is an instant, and on a
  // machine of two hardware threads one transient runnable thread (a kernel thread, a shell) decides.
  int others = all;
  for (int sample = 0; sample < 4 && others > 0; ++sample) {
    if (sample) std::this_thread::sleep_for(std::chrono::microseconds(400));
    // Our own threads first: one that stops spinning between the two reads is then left out of both, where
    // the other order would count it as another process's.
    const int ours = runnable_threads_of_this_process();
    std::FILE* stat = std::fopen("/proc/stat", "r");
    if (!stat) return all;
    int running = 0;
    char line[256];
    while (std::fgets(line, sizeof line, stat))
      if (std::sscanf(line, "procs_running %d", &running) == 1) break;
    std::fclose(stat);
    if (running <= 0) return all;
    // This process's own runnable threads (this one included) are not competition: they are mostly OpenMP
    // workers still spinning after the last parallel region (libgomp spins before it sleeps), which give
    // way to the compile. Counted, they made a kernel compiled right after a kernel ran see no idle core
    // (kiln-suite --smoke: row_stats 83 ms whole against 49 ms in two parts on an idle 2-core VM).
    others = std::min(others, std::max(running - ours, 0));
  }
  return std::clamp(all - others, 1, all);
}

double thread_cpu_ms() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
#endif
  return 0;
}

std::vector<std::exception_ptr> run_parts(std::size_t parts, const std::function<void(std::size_t)>& part) {
  std::vector<std::exception_ptr> failed(parts);
  auto run = [&](std::size_t p) {
    try {
      part(p);
    } catch (...) {
      failed[p] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t p = 1; p < parts; ++p) {
    try {
      workers.emplace_back(run, p);
    } catch (const std::system_error&) {
      run(p);  // no thread to be had: run it here
    }
  }
  if (parts > 0) run(0);
  for (std::thread& w : workers) w.join();
  return failed;
}

}  // namespace kiln::codegen
