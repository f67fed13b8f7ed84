// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cache settings from the environment, and the process-wide current settings.
#pragma once

#include <optional>
#include <string>

#include "kiln/cache.hpp"

namespace kiln::cache {

/// The settings the environment asks for: KILN_CACHE, KILN_CACHE_DIR / XDG_CACHE_HOME / HOME,
/// KILN_CACHE_MAX_BYTES. Unparseable values are warned about and replaced by defaults. A relative directory is
/// refused with a warning (the cache is then off, with no directory): it would follow the working directory.
CacheSettings settings_from_environment();

/// "on", "read-only" (also "readonly", "ro"), "off" (also "0", "false", "no"); nullopt otherwise.
std::optional<CacheMode> parse_mode(const std::string& text);

/// A byte count with an optional binary suffix: "1048576", "512K", "64M", "1G" (also "KiB", "MB", ...).
std::optional<std::uint64_t> parse_bytes(const std::string& text);

}  // namespace kiln::cache
