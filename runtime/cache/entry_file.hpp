// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading one entry file of an open cache directory: the one code path by which both the loader
// (DiskStore::lookup) and `kiln-cache verify` (inspect.hpp) judge an entry, so that verify accepts exactly
// what the loader would load.
#pragma once

#include <string>

#include "runtime/cache/entry.hpp"
#include "runtime/cache/secret.hpp"
#include "runtime/cache/trust.hpp"

namespace kiln::cache {

enum class FileStatus {
  ok,          ///< a regular file of ours whose header, seal and sections are fine (entry filled)
  missing,     ///< no file of that name
  untrusted,   ///< a link, FIFO or other non-regular file, another owner, writable by group or others
  too_large,   ///< larger than kMaxEntryBytes: refused by its size, nothing read
  unreadable,  ///< an I/O error
  bad,         ///< read, but `decoded.status` says why it is no entry of ours
};

struct EntryFile {
  FileStatus status = FileStatus::missing;
  std::string problem;  ///< why not ok, for messages
  Decoded decoded;      ///< the header's verdict (and version) when status is bad; the entry when ok
  Fd fd;                ///< the open file when status is ok (the loader marks it used)
  struct stat st {};    ///< what was found under the name (lstat for a link), when it exists
};

/// Opens `name` in `dirfd` without following links or blocking, checks owner and mode on the open file, then the
/// header against the file's size (the size limit first), and only then reads the rest and checks the seal
/// under `secret`.
EntryFile read_entry_file(int dirfd, const std::string& name, const Secret& secret);

}  // namespace kiln::cache
