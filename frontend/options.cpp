// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <string>

#include "kiln/config.hpp"
#include "kiln/options.hpp"
#include "kiln/runtime.hpp"
#include "runtime/parallel.hpp"

namespace kiln {

std::string_view name_of(Target t) {
  switch (t) {
    case Target::cpu: return "cpu";
    case Target::cuda: return "cuda";
    case Target::interpreter: return "interpreter";
  }
  return "?";
}

int num_threads() { return runtime::num_threads(); }
void set_num_threads(int n) { runtime::set_num_threads(n); }
bool has_cpu_backend() { return KILN_HAVE_LLVM; }

}  // namespace kiln
