// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compile log: every kernel compilation or load, kept for kiln::compile_history() and printed to
// stderr under KILN_LOG=compile.
#pragma once

#include <string>

#include "kiln/cache.hpp"

namespace kiln::cache {

/// Appends `r` to the history and prints it if KILN_LOG names "compile" (or "all").
void log_compile(const CompileRecord& r);

/// The one-line form printed by KILN_LOG=compile.
std::string format_record(const CompileRecord& r);

}  // namespace kiln::cache
