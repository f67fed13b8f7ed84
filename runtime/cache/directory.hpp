// The cache directory's files: naming, listing, and the least-recently-used pruning shared by the store
// (after writes) and the kiln-cache tool.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "ir/hash.hpp"

namespace kiln::cache {

/// "<dir>/<32 hex digits>.kce"
std::string entry_path(const std::string& dir, const ir::Hash128& key);

/// A file of the cache directory. Entries are named by key; temporaries are ".<key>.<pid>.<n>.tmp" files
/// that writers rename into place.
struct DirFile {
  std::string path;
  std::string name;
  bool temporary = false;
  std::uint64_t bytes = 0;
  std::timespec last_used{};  ///< mtime: set when written and on every hit
};

/// Entries and temporaries of `dir`, in no particular order; other files are ignored. Empty if the
/// directory does not exist; sets *error (if given) to errno when it cannot be read.
std::vector<DirFile> list_directory(const std::string& dir, int* error = nullptr);

struct PruneResult {
  std::uint64_t entries_removed = 0;
  std::uint64_t temporaries_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::uint64_t bytes_left = 0;     ///< entries and temporaries still there
};

/// Removes least-recently-used entries until the directory's entries and temporaries take at most
/// `max_bytes`. Temporaries older than ten minutes (left by a crashed writer) are removed first; younger
/// ones belong to writers at work and are only counted.
PruneResult prune(const std::string& dir, std::uint64_t max_bytes);

/// Removes every entry and temporary (and nothing else) from `dir`; returns how many.
std::uint64_t clear(const std::string& dir);

/// Creates `dir` and missing parents with mode 0700. Returns 0 or an errno value.
int make_directory(const std::string& dir);

}  // namespace kiln::cache
