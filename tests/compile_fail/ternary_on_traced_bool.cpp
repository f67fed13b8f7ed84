// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: a traced value is not a C++ bool: branch with kiln::if_
#include <kiln/kiln.hpp>

auto k = kiln::jit("k", [](kiln::Bool b, kiln::Double a) { return b ? a : -a; });
