// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/warnings.hpp"

#include <array>
#include <atomic>
#include <cstdio>

namespace kiln::cache {

void warn_once(Warning kind, const std::string& message) {
  static std::array<std::atomic<bool>, static_cast<std::size_t>(Warning::count_)> warned{};
  if (warned[static_cast<std::size_t>(kind)].exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "kiln: warning: cache: %s\n", message.c_str());
}

}  // namespace kiln::cache
