// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The clock and the median every benchmark executable reports with (kiln-bench, kiln-suite, kiln-bench-gpu and
// the others): one definition, so that every table's "median" is the same statistic.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace bench {

/// Seconds on the steady clock.
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The median of the samples: the middle one, or the mean of the two middle ones for an even count; 0 for none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

}  // namespace bench
