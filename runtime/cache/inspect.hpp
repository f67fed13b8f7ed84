// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checking entries one file at a time, for `kiln-cache verify`/`list`/`stats` and for tests: through the same
// directory rules, secret and entry reader as the loader (entry_file.hpp), so that what is reported good is
// exactly what a kernel would load.
#pragma once

#include <optional>
#include <string>

#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cache/secret.hpp"
#include "runtime/cache/trust.hpp"

namespace kiln::cache {

struct Inspection {
  bool ok = false;
  std::string problem;  ///< why not ok: a link or FIFO, another owner, a DecodeStatus, a key that differs from the file name, ...
  Entry entry;          ///< decoded, when ok
};

/// A cache directory opened as the loader opens it (never created, nothing written).
class Inspector {
 public:
  explicit Inspector(const std::string& dir);

  /// "" if kiln would use the directory; else why not (kiln then uses no entry of it).
  const std::string& problem() const { return problem_; }
  /// The directory is open (it may still have no secret: then no entry is good).
  bool usable() const { return static_cast<bool>(dir_); }
  /// The directory does not exist (yet): no entries, nothing wrong.
  bool missing() const { return missing_; }
  int dirfd() const { return dir_.get(); }

  /// Reads and fully checks the entry file `f` of this directory: owner and mode, header, size limit, seal,
  /// sections, the key against the file name, and that it carries code (at least one payload besides
  /// "kiln.variant") and its canonical IR.
  Inspection inspect(const DirFile& f) const;

 private:
  std::string problem_;
  bool missing_ = false;
  Fd dir_;
  std::optional<Secret> secret_;
  std::string secret_problem_;
};

}  // namespace kiln::cache
