// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/status.hpp"

#include <fmt/format.h>

#include "kiln/abi.hpp"
#include "kiln/error.hpp"

namespace kiln::ir {

std::string format_message(std::string_view message, const std::int64_t* values, std::size_t n) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '{' && i + 1 < message.size() && message[i + 1] == '}' && next < n) {
      out += std::to_string(values[next++]);
      ++i;
    } else {
      out += message[i];
    }
  }
  return out;
}

std::string resolve_locations(std::string_view message, const std::vector<std::string>& locations) {
  std::string out;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (message[i] == '{' && i + 2 < message.size() && message[i + 1] == '@') {
      std::size_t end = i + 2, k = 0;
      while (end < message.size() && message[end] >= '0' && message[end] <= '9') k = 10 * k + (message[end++] - '0');
      if (end > i + 2 && end < message.size() && message[end] == '}' && k < locations.size()) {
        out += locations[k];
        i = end;
        continue;
      }
    }
    out += message[i];
  }
  return out;
}

void throw_status(std::int32_t code, const std::string& message) {
  switch (code) {
    case kShapeMismatch: throw ShapeError(message);
    case kIndexOutOfRange: throw IndexError(message);
    case kValueError: throw ValueError(message);
    case kOutOfMemory: throw Error(message);
    default: throw Error(fmt::format("{} (status {})", message, code));
  }
}

}  // namespace kiln::ir
