// Cache problems are never fatal: each kind is reported once per process, on one line of stderr, and the
// kernel is compiled as if there were no cache.
#pragma once

#include <string>

namespace kiln::cache {

enum class Warning {
  bad_setting,         ///< an environment variable that cannot be parsed
  unusable_directory,  ///< the directory cannot be created or read
  store_failed,        ///< an entry could not be written (read-only or full disk, permissions)
  corrupt_entry,       ///< truncated, bad checksum, malformed
  foreign_version,     ///< written by another entry format version
  mismatch,            ///< key or canonical IR differs from what was asked (a hash collision or a renamed file)
  load_failed,         ///< a valid entry whose code the backend could not load
  count_,
};

/// Prints "kiln: warning: cache: <message>" the first time `kind` occurs in this process.
void warn_once(Warning kind, const std::string& message);

}  // namespace kiln::cache
