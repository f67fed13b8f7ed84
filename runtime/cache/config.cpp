// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/config.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "runtime/cache/warnings.hpp"

namespace kiln::cache {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln (the XDG spec ignores relative values), else ~/.cache/kiln
/// with ~ from $HOME or the password database. Empty if there is no home at all.
std::string default_directory() {
  if (std::string d = env("KILN_CACHE_DIR"); !d.empty()) return d;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty() && x[0] == '/') return x + "/kiln";
  std::string home = env("HOME");
  if (home.empty())
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  return home.empty() ? std::string() : home + "/.cache/kiln";
}

}  // namespace

std::optional<CacheMode> parse_mode(const std::string& text) {
  const std::string t = lower(text);
  if (t == "on" || t == "1" || t == "true" || t == "yes" || t == "read-write") return CacheMode::on;
  if (t == "read-only" || t == "readonly" || t == "ro") return CacheMode::read_only;
  if (t == "off" || t == "0" || t == "false" || t == "no") return CacheMode::off;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_bytes(const std::string& text) {
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string suffix = lower(text.substr(i));
  int shift = 0;
  if (suffix.empty() || suffix == "b") shift = 0;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") shift = 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") shift = 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") shift = 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") shift = 40;
  else return std::nullopt;
  if (shift && v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

CacheSettings settings_from_environment() {
  CacheSettings s;
  if (const std::string m = env("KILN_CACHE"); !m.empty()) {
    if (auto mode = parse_mode(m)) s.mode = *mode;
    else warn_once(Warning::bad_setting, fmt::format("ignoring KILN_CACHE={} (expected on, read-only or off)", m));
  }
  if (const std::string b = env("KILN_CACHE_MAX_BYTES"); !b.empty()) {
    if (auto bytes = parse_bytes(b)) s.max_bytes = *bytes;
    else
      warn_once(Warning::bad_setting,
                fmt::format("ignoring KILN_CACHE_MAX_BYTES={} (expected a byte count such as 512M)", b));
  }
  s.directory = default_directory();
  if (!s.directory.empty() && s.directory[0] != '/') {
    // A relative directory follows the working directory: run in a checkout, it would use entries the checkout
    // carries. It is refused rather than resolved.
    if (s.mode != CacheMode::off)
      warn_once(Warning::untrusted_directory,
                fmt::format("ignoring the cache directory {}: not an absolute path (a checkout could carry its "
                            "entries); set KILN_CACHE_DIR to an absolute path; the disk cache is off",
                            s.directory));
    s.directory.clear();
    s.mode = CacheMode::off;
  } else if (s.directory.empty() && s.mode != CacheMode::off) {
    warn_once(Warning::unusable_directory, "no cache directory (KILN_CACHE_DIR, XDG_CACHE_HOME and HOME are unset); "
                                           "the disk cache is off");
    s.mode = CacheMode::off;
  }
  return s;
}

}  // namespace kiln::cache
