// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cache problems are never fatal: each kind is reported once per process, on one line of stderr, and the
// kernel is compiled as if there were no cache.
#pragma once

#include <string>

namespace kiln::cache {

enum class Warning {
  bad_setting,         ///< an environment variable that cannot be parsed
  unusable_directory,  ///< the directory cannot be created or read
  untrusted_directory, ///< the directory or its secret fails the ownership and mode rules (trust.hpp): not used
  untrusted_entry,     ///< a link, FIFO or other non-regular file, or another user's file, in an entry's place
  unsealed_entry,      ///< an entry whose seal does not match this cache's secret (changed or foreign)
  store_failed,        ///< an entry could not be written (read-only or full disk, permissions)
  corrupt_entry,       ///< truncated, malformed, too large
  foreign_version,     ///< written by another entry format version
  mismatch,            ///< key or canonical IR differs from what was asked (a hash collision or a renamed file)
  load_failed,         ///< a valid entry whose code the backend could not load
  count_,
};

/// Prints "kiln: warning: cache: <message>" the first time `kind` occurs in this process.
void warn_once(Warning kind, const std::string& message);

}  // namespace kiln::cache
