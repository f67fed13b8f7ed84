// The disk store: a directory of entries, one file per key, shared by any number of processes without locks.
//
// Writers write a private temporary file in the same directory, fsync it and rename it over the entry, so
// a reader sees either no file, the old one or the new one, never a partial one. Readers read through one
// open descriptor, so an entry replaced or evicted meanwhile still reads as the complete file it was.
// Every problem is a warning (once per kind) and a miss, never an error: see warnings.hpp.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string_view>

#include "kiln/cache.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/warnings.hpp"

namespace kiln::cache {

class DiskStore {
 public:
  explicit DiskStore(CacheSettings settings) : settings_(std::move(settings)) {}

  const CacheSettings& settings() const { return settings_; }
  bool readable() const { return settings_.mode != CacheMode::off; }
  bool writable() const { return settings_.mode == CacheMode::on; }

  /// The entry stored under `key` if there is a valid one for exactly `canonical_ir` (so a hash collision
  /// is a miss). A miss is counted; the caller counts the hit once it has loaded the code (or calls
  /// discard). A bad entry is also counted as rejected, warned about and, when writable, deleted so that the
  /// recompiled kernel replaces it. A hit marks the entry as used.
  std::optional<Entry> lookup(const ir::Hash128& key, std::string_view canonical_ir);

  /// Writes `e` atomically, then evicts least-recently-used entries above the size cap. Returns whether it
  /// was stored; failures are counted and warned about. Synchronous: the frontend calls it through
  /// store_in_background (background.hpp).
  bool store(const Entry& e);

  /// Deletes the entry of `key`: lookup returned it but its code could not be loaded. Counted as rejected
  /// and as a miss.
  void discard(const ir::Hash128& key, const std::string& why);

 private:
  void reject(const std::string& path, int fd, Warning kind, const std::string& why);
  void evict_after_store(std::uint64_t bytes);

  const CacheSettings settings_;
  std::atomic<std::int64_t> estimated_bytes_{-1};  ///< directory size as of the last scan plus our stores since
  std::atomic<std::uint32_t> stores_since_scan_{0};
  std::atomic<std::uint64_t> temp_counter_{0};
};

/// The store for the settings in effect (kiln::cache_settings()); replaced by kiln::set_cache_settings.
std::shared_ptr<DiskStore> current_store();

}  // namespace kiln::cache
