// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cache directory's files: naming, listing, and the least-recently-used pruning shared by the store
// (after writes) and the kiln-cache tool.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "ir/hash.hpp"

namespace kiln::cache {

/// "<32 hex digits>.kce"
std::string entry_name(const ir::Hash128& key);

/// "<dir>/<32 hex digits>.kce"
std::string entry_path(const std::string& dir, const ir::Hash128& key);

/// What a file of an entry's or temporary's name is. Only regular files can be entries; anything else in such a
/// name (a link, a FIFO, a directory) is listed so that the tools show it, and never followed or opened.
enum class FileKind { regular, symlink, other };

/// A file of the cache directory. Entries are named by key; temporaries are ".<key>.<pid>.<n>.tmp" files
/// that writers rename into place. The directory's "secret" and "lock" are not listed.
struct DirFile {
  std::string path;
  std::string name;
  bool temporary = false;
  FileKind kind = FileKind::regular;
  std::uint64_t bytes = 0;    ///< regular files only
  std::timespec last_used{};  ///< mtime: set when written and on every hit
  uid_t owner = 0;
  mode_t mode = 0;            ///< st_mode, type bits included
};

/// Entries and temporaries of `dir`, in no particular order; other names are ignored. Empty if the directory
/// does not exist; sets *error (if given) to errno when it cannot be read. Links are not followed, `dir`'s own
/// included.
std::vector<DirFile> list_directory(const std::string& dir, int* error = nullptr);

/// The same for the directory open as `dirfd` (`dir` names it in the paths).
std::vector<DirFile> list_directory_at(int dirfd, const std::string& dir, int* error = nullptr);

struct PruneResult {
  std::uint64_t entries_removed = 0;
  std::uint64_t temporaries_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::uint64_t bytes_left = 0;     ///< entries and temporaries still there
};

/// Removes least-recently-used entries until the directory's entries and temporaries take at most
/// `max_bytes`. Temporaries older than ten minutes (left by a crashed writer) are removed first; younger
/// ones belong to writers at work and are only counted. Runs under the directory's lock ("<dir>/lock", a POSIX
/// record lock), so that processes pruning at once each see the others' removals.
PruneResult prune(const std::string& dir, std::uint64_t max_bytes);
PruneResult prune_at(int dirfd, const std::string& dir, std::uint64_t max_bytes);

/// Removes every entry and temporary name (and nothing else: not the secret, not other files) from `dir`; a
/// link in such a name is removed, never followed. Returns how many.
std::uint64_t clear(const std::string& dir);

/// Creates `dir` and missing parents with mode 0700. Returns 0 or an errno value.
int make_directory(const std::string& dir);

}  // namespace kiln::cache
