// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A test's thread count for the parallel runtime, set for one scope and restored after it, so that a test which
// checks results at 1, 2 or 3 threads leaves the next test the count it found.
#pragma once

#include <algorithm>

#include "kiln/kiln.hpp"

namespace kiln::test_support {

class Threads {
 public:
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(std::max(1, before_)); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int before_ = num_threads();
};

}  // namespace kiln::test_support
