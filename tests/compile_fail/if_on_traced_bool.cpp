// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `if` needs a C++ bool; a traced comparison has no value until the kernel runs.
// expect: a traced value is not a C++ bool: branch with kiln::if_(c, [&] {...}).else_([&] {...}) or choose with kiln::select(c, a, b)
#include <kiln/kiln.hpp>

auto k = kiln::jit("k", [](kiln::Double a, kiln::Array<double> x) {
  if (a > 0.0) x[0] = a;
});
