// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// expect: kiln::jit: give every kernel parameter a type (kiln::Double x, kiln::Array<float> a), not auto
#include <kiln/kiln.hpp>

auto k = kiln::jit("k", [](auto a, kiln::Array<double> x) { x[0] = a; });
