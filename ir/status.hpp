// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernel failures: the status codes of kiln/abi.hpp as exceptions, and check-message formatting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

/// Replaces each `{}` in `message` by the next value.
std::string format_message(std::string_view message, const std::int64_t* values, std::size_t n);

/// Replaces each `{@k}` in `message` by locations[k] (see Function::locations).
std::string resolve_locations(std::string_view message, const std::vector<std::string>& locations);

/// Throws the kiln::Error subclass for a KernelStatus code (ShapeError, IndexError, ValueError, Error).
[[noreturn]] void throw_status(std::int32_t code, const std::string& message);

}  // namespace kiln::ir
