// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Names for traced variables and kernel parameters, read from the user's source file (best effort).
// C++ has no reflection of local variable names, but std::source_location tells where a value was
// declared; reading that line lets error messages say `sum` instead of `t17`. The names are read while the
// kernel is traced and kept in its IR; a source file modified after the program was built is not read at
// all (its positions would name other text). The test is the files' modification times, so a source that
// was edited and then given an older time (copies that keep times) can still mislead it.
#pragma once

#include <string>
#include <vector>

#include "kiln/traced.hpp"

namespace kiln::detail {

/// The lines of `file` (a std::source_location file name), read once per process and kept for its lifetime,
/// if they can be the source the binary holding `code` was built from: null when the file cannot be read or
/// was modified after that binary was written (edited since the build: its line numbers and columns would
/// name other text). `code` is an address in that binary; null means the kernel being traced on this
/// thread (TraceContext::code), or the executable outside a trace. `why_not`, if given, receives the reason
/// for a null result ("" otherwise).
const std::vector<std::string>* source_lines(const char* file, const void* code = nullptr, std::string* why_not = nullptr);

/// The variable declared at `where` (`kiln::Double sum = 0.0;` -> "sum"), or "" if it cannot be told.
std::string declared_name(const Where& where);

/// The parameter names of the lambda passed at `where` (the kiln::jit call), if exactly `arity` are found;
/// `code` as for source_lines.
std::vector<std::string> lambda_param_names(const Where& where, size_t arity, const void* code = nullptr);

}  // namespace kiln::detail
