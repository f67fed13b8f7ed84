// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The disk store: a directory of entries, one file per key, shared by any number of processes of one user.
//
// The directory is used only if it passes the ownership and mode rules of trust.hpp (else one warning, and
// kernels compile as if the cache were off); it is opened once and then used through that descriptor, so a
// path swapped afterwards changes nothing. Entries are sealed with the directory's secret (secret.hpp).
//
// Writers write a private temporary file in the same directory, fsync it and rename it over the entry, so
// a reader sees either no file, the old one or the new one, never a partial one. Readers read through one
// open descriptor, so an entry replaced or evicted meanwhile still reads as the complete file it was.
// Every problem is a warning (once per kind) and a miss, never an error: see warnings.hpp.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "kiln/cache.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/entry_file.hpp"
#include "runtime/cache/trust.hpp"
#include "runtime/cache/warnings.hpp"

namespace kiln::cache {

class DiskStore {
 public:
  explicit DiskStore(CacheSettings settings) : settings_(std::move(settings)) {}

  const CacheSettings& settings() const { return settings_; }
  /// Whether kernels consult the cache: not off, and the directory (if it exists yet) passed the rules.
  bool readable() const;
  /// Whether compiled kernels are stored: mode on, and the directory not refused.
  bool writable() const;

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
  /// The open directory and its secret, as far as they exist.
  struct Access {
    int dirfd = -1;                ///< -1: no usable directory (refused, missing or an error: see error)
    std::optional<Secret> secret;  ///< none yet, or none usable
    int error = 0;                 ///< errno of a failed creation or open
  };
  /// Opens the directory on first use (creating it and the secret when `create`); refuses it for good, with
  /// one warning, if it or its secret breaks the rules.
  Access access(bool create) const;

  void reject(int dirfd, const std::string& name, const struct stat& seen, Warning kind, const std::string& why);

  const CacheSettings settings_;
  mutable std::mutex mutex_;
  mutable bool refused_ = false;
  mutable Fd dir_;  ///< once open, open until the store is destroyed (callers hold its number without the lock)
  mutable std::optional<Secret> secret_;
};

/// The store for the settings in effect (kiln::cache_settings()); replaced by kiln::set_cache_settings.
std::shared_ptr<DiskStore> current_store();

}  // namespace kiln::cache
