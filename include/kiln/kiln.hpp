// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln: a JIT-compiling kernel DSL for C++. The one header users include; it pulls in no LLVM or CUDA
// header.
//
//   auto pi = kiln::jit("pi", [](kiln::Int n) {
//     kiln::Double sum = 0.0, step = 1.0 / kiln::to_double(n);
//     kiln::prange(n, [&](kiln::Int i) {
//       auto x = (kiln::to_double(i) + 0.5) * step;
//       sum += 4.0 / (1.0 + x * x);          // becomes a parallel reduction
//     });
//     return sum * step;
//   });
//   double v = pi(200'000'000);              // traced, compiled and run on all cores
#pragma once

#include "kiln/abi.hpp"
#include "kiln/array.hpp"
#include "kiln/array_ops.hpp"
#include "kiln/atomic.hpp"
#include "kiln/control.hpp"
#include "kiln/creation.hpp"
#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"
#include "kiln/kernel.hpp"
#include "kiln/math.hpp"
#include "kiln/ndarray.hpp"
#include "kiln/options.hpp"
#include "kiln/random.hpp"
#include "kiln/reduce.hpp"
#include "kiln/scan.hpp"
#include "kiln/sort.hpp"
#include "kiln/runtime.hpp"
#include "kiln/stencil.hpp"
#include "kiln/traced.hpp"
#include "kiln/views.hpp"
#include "kiln/cache.hpp"
#include "kiln/complex.hpp"
