// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-bench-gpu's suite rows (suite_rows.cpp): the public kernel suite of bench/suite on the CUDA target.
#pragma once

#include <functional>
#include <string>

namespace benchgpu {

struct SuiteOptions {
  int reps = 20;
  /// Whether a row runs, by the suite's kernel name ("jacobi-1d", ..., as kiln-suite names them).
  std::function<bool(const std::string&)> selected;
  /// Only the timed runs (for ncu): no cold compiles.
  bool profile = false;
  /// The device-to-device copy's GB/s measured in this run: memory-bound rows report a share of it.
  double ceiling_gbps = 0;
  /// Lines "<row> <ms>" from bench/gpu/cupy_suite.py, shown beside each row ("": no CuPy column).
  std::string cupy_file;
  /// Sizes divided so that every row runs in milliseconds (a smoke run on any GPU).
  bool small = false;
};

/// Every selected kernel of the suite (bench/suite/kernels.hpp: the same lambdas as the CPU suite) jitted for
/// CUDA and called asynchronously on device arrays, against hand-written CUDA of the same arithmetic
/// (suite_reference.cpp, NVRTC, --fmad=false) on the same stream: interleaved, medians of CUDA-event times,
/// results compared after each row with the CPU suite's tolerances, the cold compile of a fresh kernel object
/// (disk cache off). Prints the table; returns the number of rows whose results differ.
int suite_rows(const SuiteOptions& opt);

}  // namespace benchgpu
