// Checking entries one file at a time, for `kiln-cache verify`/`list`/`stats` and for tests.
#pragma once

#include <string>

#include "runtime/cache/directory.hpp"
#include "runtime/cache/entry.hpp"

namespace kiln::cache {

struct Inspection {
  bool ok = false;
  std::string problem;  ///< why not ok: unreadable, a DecodeStatus, a key that differs from the file name, ...
  Entry entry;          ///< decoded, when ok
};

/// Reads and fully checks the entry file `f`: header, checksum, sections, the key against the file name, and
/// that it carries code (at least one payload besides "kiln.variant") and its canonical IR.
Inspection inspect(const DirFile& f);

}  // namespace kiln::cache
