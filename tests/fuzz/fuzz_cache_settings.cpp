// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target: the parsers of the cache's environment variables (runtime/cache/config.cpp), KILN_CACHE
// (parse_mode) and KILN_CACHE_MAX_BYTES (parse_bytes, also kiln-cache --max-bytes), and of entry file names in the
// cache directory (parse_key). Any text must be accepted or rejected without crashing; an accepted byte count must
// be what its digits and suffix say (no silent overflow), and an accepted file name must be the key's own spelling.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/cache/config.hpp"
#include "runtime/cache/key.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)kiln::cache::parse_mode(text);
  if (kiln::cache::Key key; kiln::cache::parse_key(text, key) && key.hex() != text) std::abort();
  const auto bytes = kiln::cache::parse_bytes(text);
  if (!bytes) return 0;
  // An accepted value starts with its decimal digits, and the suffix only multiplies: so the digits alone, when
  // accepted, give a divisor of the whole (unless the whole is the digits).
  std::size_t n = 0;
  while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
  if (n == 0) std::abort();  // accepted something that is not a number
  const auto digits = kiln::cache::parse_bytes(text.substr(0, n));
  if (digits && *digits != 0 && *bytes % *digits != 0) std::abort();
  if (digits && *bytes < *digits) std::abort();  // a suffix that shrank the value: overflow
  return 0;
}
