// Names for traced variables and kernel parameters, read from the user's source file (best effort).
// C++ has no reflection of local variable names, but std::source_location tells where a value was
// declared; reading that line lets error messages say `sum` instead of `t17`.
#pragma once

#include <string>
#include <vector>

#include "kiln/traced.hpp"

namespace kiln::detail {

/// The lines of the source file `file` (a std::source_location file name), read once per process and kept
/// for its lifetime; null if the file cannot be read or cannot be trusted to be the source the program was
/// built from.
const std::vector<std::string>* source_lines(const char* file);

/// The variable declared at `where` (`kiln::Double sum = 0.0;` -> "sum"), or "" if it cannot be told.
std::string declared_name(const Where& where);

/// The parameter names of the lambda passed at `where` (the kiln::jit call), if exactly `arity` are found.
std::vector<std::string> lambda_param_names(const Where& where, size_t arity);

}  // namespace kiln::detail
