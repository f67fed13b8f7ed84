// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/compile_log.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string_view>
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

}  // namespace

/// KILN_LOG is a comma-separated list of topics; "compile" and "all" enable this log. (Split by hand: a
/// stringstream would set up a locale, ~75k instructions of the first kernel's call that the log is timing.)
bool cache::compile_log_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("KILN_LOG");
    if (!v) return false;
    for (std::string_view rest = v; !rest.empty();) {
      const std::size_t comma = rest.find(',');
      const std::string_view topic = rest.substr(0, comma);
      if (topic == "compile" || topic == "all") return true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
  }();
  return enabled;
}

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

std::string cache::format_record(const CompileRecord& r, std::string_view split) {
  return fmt::format("kiln: compile {} target={} cache={} trace={:.0f}us passes={:.0f}us codegen={:.2f}ms "
                     "load={:.0f}us{}{}{} [{}]",
                     r.kernel, r.target, name_of(r.cache), r.trace_us, r.passes_us, r.codegen_ms, r.load_us,
                     r.codegen_cpu_ms > 0 ? fmt::format(" codegen_cpu={:.2f}ms", r.codegen_cpu_ms) +
                                                (r.codegen_cpu_longest_ms > 0
                                                     ? fmt::format(" longest_part_cpu={:.2f}ms", r.codegen_cpu_longest_ms)
                                                     : std::string())
                                          : std::string(),
                     split, r.key.empty() ? std::string() : " key=" + r.key, r.signature);
}

void cache::log_compile(const CompileRecord& r, std::string_view split) {
  {
    std::lock_guard lock(history_mutex);
    if (history().size() == kHistoryLimit) history().pop_front();
    history().push_back(r);
  }
  if (compile_log_enabled()) std::fprintf(stderr, "%s\n", format_record(r, split).c_str());
}

long cache::minor_faults() {
  rusage u{};
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

void cache::log_first_call(std::string_view kernel, double total_us, double compile_us, double run_us,
                           long compile_faults, long run_faults) {
  if (compile_log_enabled())
    std::fprintf(stderr, "%s\n",
                 fmt::format("kiln: first call {} total={:.0f}us compile={:.0f}us run={:.0f}us faults={}/{}", kernel,
                             total_us, compile_us, run_us, compile_faults, run_faults)
                     .c_str());
}

}  // namespace kiln
