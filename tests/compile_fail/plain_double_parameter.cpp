// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plain C++ number as a kernel parameter would be read once, at trace time.
// expect: kiln::jit: declare a number parameter as kiln::Double, kiln::Float, kiln::Int
#include <kiln/kiln.hpp>

auto k = kiln::jit("k", [](double a, kiln::Array<double> x) { x[0] = a; });
