// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/compile_log.hpp"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace kiln {
namespace {

/// The most recent records; older ones are dropped, so that a program creating kernels in a loop for hours
/// does not grow (kiln::compile_history).
constexpr std::size_t kHistoryLimit = 4096;

std::mutex history_mutex;
std::deque<CompileRecord>& history() {
  static auto* h = new std::deque<CompileRecord>();  // never destroyed: kernels may compile during exit
  return *h;
}

/// KILN_LOG is a comma-separated list of topics; "compile" and "all" enable this log.
bool log_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("KILN_LOG");
    if (!v) return false;
    std::stringstream topics(v);
    for (std::string t; std::getline(topics, t, ',');)
      if (t == "compile" || t == "all") return true;
    return false;
  }();
  return enabled;
}

}  // namespace

std::string_view name_of(CacheSource s) {
  switch (s) {
    case CacheSource::memory: return "memory";
    case CacheSource::disk: return "disk";
    case CacheSource::miss: return "miss";
    case CacheSource::off: return "off";
  }
  return "?";
}

std::vector<CompileRecord> compile_history() {
  std::lock_guard lock(history_mutex);
  return {history().begin(), history().end()};
}

std::string cache::format_record(const CompileRecord& r) {
  return fmt::format("kiln: compile {} target={} cache={} trace={:.0f}us passes={:.0f}us codegen={:.2f}ms "
                     "load={:.0f}us{}{} [{}]",
                     r.kernel, r.target, name_of(r.cache), r.trace_us, r.passes_us, r.codegen_ms, r.load_us,
                     r.codegen_cpu_ms > 0 ? fmt::format(" codegen_cpu={:.2f}ms", r.codegen_cpu_ms) +
                                                (r.codegen_cpu_longest_ms > 0
                                                     ? fmt::format(" longest_part_cpu={:.2f}ms", r.codegen_cpu_longest_ms)
                                                     : std::string())
                                          : std::string(),
                     r.key.empty() ? std::string() : " key=" + r.key, r.signature);
}

void cache::log_compile(const CompileRecord& r) {
  {
    std::lock_guard lock(history_mutex);
    if (history().size() == kHistoryLimit) history().pop_front();
    history().push_back(r);
  }
  if (log_enabled()) std::fprintf(stderr, "%s\n", format_record(r).c_str());
}

}  // namespace kiln
