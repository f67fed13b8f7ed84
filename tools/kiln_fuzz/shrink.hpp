// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reduces a failing program: removes statements, replaces ifs by one of their branches and expressions by an
// operand or a zero, as long as the program still fails at the same stage.
#pragma once

#include <cstdint>
#include <functional>

#include "tools/kiln_fuzz/program.hpp"

namespace kiln::fuzz {

/// The smallest program reachable by single edits for which `still_fails` holds (it holds for `p`), trying at
/// most `budget` candidates. Parameters are never removed, so the seed's arguments still fit.
Program shrink(const Program& p, const std::function<bool(const Program&)>& still_fails, int budget);

}  // namespace kiln::fuzz
