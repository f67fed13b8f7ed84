// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/stats.hpp"

#include "kiln/cache.hpp"

namespace kiln {

cache::Counters& cache::counters() {
  static Counters c;
  return c;
}

CacheStats cache_stats() {
  const cache::Counters& c = cache::counters();
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  CacheStats s;
  s.memory_hits = get(c.memory_hits);
  s.disk_hits = get(c.disk_hits);
  s.disk_misses = get(c.disk_misses);
  s.compiles = get(c.compiles);
  s.stores = get(c.stores);
  s.store_failures = get(c.store_failures);
  s.rejected_entries = get(c.rejected_entries);
  s.evictions = get(c.evictions);
  return s;
}

}  // namespace kiln
