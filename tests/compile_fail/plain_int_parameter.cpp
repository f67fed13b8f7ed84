// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln::jit: declare a number parameter as kiln::Double, kiln::Float, kiln::Int
#include <kiln/kiln.hpp>

auto k = kiln::jit("k", [](kiln::Array<double> x, int n) { x[0] = kiln::to_double(kiln::Int(n)); });
