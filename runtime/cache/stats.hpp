// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The process-wide counters behind kiln::cache_stats().
#pragma once

#include <atomic>
#include <cstdint>

namespace kiln::cache {

struct Counters {
  std::atomic<std::uint64_t> memory_hits{0}, disk_hits{0}, disk_misses{0}, compiles{0}, stores{0}, store_failures{0},
      rejected_entries{0}, evictions{0};
};

Counters& counters();

/// Adds one; relaxed, since the counters order nothing.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

}  // namespace kiln::cache
