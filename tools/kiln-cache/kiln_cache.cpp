// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln-cache: the on-disk kernel cache from the command line.
//   kiln-cache [--dir D] stats | list | verify | prune --max-bytes N | clear
// The directory is D, else the one kiln would use (KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln).
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "runtime/cache/config.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/inspect.hpp"

namespace {

namespace kc = kiln::cache;

int usage(FILE* out) {
  fmt::print(out,
             "usage: kiln-cache [--dir D] COMMAND\n"
             "  stats                 entries, bytes and entries per target\n"
             "  list                  one line per entry: key, kernel, target, bytes, created, last used\n"
             "  verify                check every entry as kiln would load it (directory and file owner and mode,\n"
             "                        header, seal under the directory's secret, key); exit 1 if any is bad\n"
             "  prune --max-bytes N   remove least-recently-used entries until at most N bytes (K/M/G ok)\n"
             "  clear                 remove every entry and temporary (links are removed, never followed)\n"
             "The directory is D, else KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.\n");
  return out == stdout ? 0 : 2;
}

std::string time_text(std::time_t t) {
  if (t <= 0) return "-";
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::localtime(t));
}

/// What a non-regular file or another user's file in an entry's name is, for the listings; "" for a plain file.
std::string odd_text(const kc::DirFile& f) {
  if (f.kind == kc::FileKind::symlink) return "a symbolic link (never followed)";
  if (f.kind == kc::FileKind::other) return S_ISFIFO(f.mode) ? "a FIFO" : S_ISDIR(f.mode) ? "a directory" : "not a regular file";
  if (f.owner != geteuid()) return fmt::format("owned by uid {}", f.owner);
  return "";
}

/// The directory's files, read as the loader reads them; fails (printing why) if kiln would not use it.
struct Listing {
  std::vector<kc::DirFile> files;
  bool failed = false;
};

Listing files_or_fail(const std::string& dir, const kc::Inspector& inspector) {
  Listing out;
  if (inspector.missing()) return out;  // no directory yet: no entries
  if (!inspector.usable()) {
    fmt::print(stderr, "kiln-cache: {}\n", inspector.problem());
    out.failed = true;
    return out;
  }
  int err = 0;
  out.files = kc::list_directory_at(inspector.dirfd(), dir, &err);
  out.failed = err != 0;
  if (out.failed) fmt::print(stderr, "kiln-cache: cannot read {}: {}\n", dir, std::strerror(err));
  return out;
}

int stats(const std::string& dir) {
  const kc::Inspector inspector(dir);
  const Listing l = files_or_fail(dir, inspector);
  if (l.failed) return 1;
  struct Sum {
    std::uint64_t entries = 0, bytes = 0;
  };
  std::map<std::string, Sum> per_target;
  Sum all, bad, temporaries, odd;
  for (const kc::DirFile& f : l.files) {
    if (f.kind != kc::FileKind::regular) {
      ++odd.entries;
      continue;
    }
    if (f.temporary) {
      ++temporaries.entries;
      temporaries.bytes += f.bytes;
      continue;
    }
    ++all.entries;
    all.bytes += f.bytes;
    const kc::Inspection i = inspector.inspect(f);
    Sum& s = i.ok ? per_target[i.entry.meta.target] : bad;
    ++s.entries;
    s.bytes += f.bytes;
  }
  fmt::print("directory    {}\n", dir);
  if (!inspector.problem().empty()) fmt::print("NOT USED     {}\n", inspector.problem());
  fmt::print("entries      {} ({} bytes)\n", all.entries, all.bytes);
  for (const auto& [target, s] : per_target) fmt::print("  {:<10} {} ({} bytes)\n", target, s.entries, s.bytes);
  if (bad.entries) fmt::print("  {:<10} {} ({} bytes; `kiln-cache verify` names them)\n", "bad", bad.entries, bad.bytes);
  if (temporaries.entries)
    fmt::print("temporaries  {} ({} bytes; being written, or left by a crashed writer)\n", temporaries.entries,
               temporaries.bytes);
  if (odd.entries)
    fmt::print("not files    {} (links, FIFOs or directories under cache names; `kiln-cache verify` names them, "
               "`kiln-cache clear` removes them)\n",
               odd.entries);
  return 0;
}

int list(const std::string& dir) {
  const kc::Inspector inspector(dir);
  const Listing l = files_or_fail(dir, inspector);
  if (l.failed) return 1;
  fmt::print("{:<32}  {:<20} {:<6} {:>10}  {:<19}  {:<19}\n", "key", "kernel", "target", "bytes", "created", "last used");
  for (const kc::DirFile& f : l.files) {
    if (f.temporary && f.kind == kc::FileKind::regular) continue;
    const std::string key = f.temporary ? f.name : f.name.substr(0, 32);
    const kc::Inspection i = f.temporary ? kc::Inspection{false, odd_text(f), {}} : inspector.inspect(f);
    if (!i.ok) {
      fmt::print("{:<32}  BAD: {}\n", key, i.problem);
      continue;
    }
    fmt::print("{:<32}  {:<20} {:<6} {:>10}  {:<19}  {:<19}\n", key, i.entry.meta.kernel, i.entry.meta.target, f.bytes,
               time_text(static_cast<std::time_t>(i.entry.meta.created)), time_text(f.last_used.tv_sec));
  }
  return 0;
}

int verify(const std::string& dir) {
  const kc::Inspector inspector(dir);
  const Listing l = files_or_fail(dir, inspector);
  if (l.failed) return 1;
  if (!inspector.problem().empty()) fmt::print("NOT USED {}\n", inspector.problem());
  std::uint64_t good = 0, bad = 0;
  for (const kc::DirFile& f : l.files) {
    if (f.temporary && f.kind == kc::FileKind::regular) continue;
    const kc::Inspection i = f.temporary ? kc::Inspection{false, odd_text(f), {}} : inspector.inspect(f);
    if (i.ok) {
      ++good;
    } else {
      ++bad;
      fmt::print("BAD {}: {}\n", f.path, i.problem);
    }
  }
  fmt::print("{} entries ok, {} bad\n", good, bad);
  return bad || !inspector.problem().empty() ? 1 : 0;
}

/// clear and prune change only a directory kiln would use (a missing one has nothing to change).
bool usable_or_fail(const std::string& dir) {
  const kc::Inspector inspector(dir);
  if (inspector.missing() || (inspector.usable() && inspector.problem().empty())) return true;
  fmt::print(stderr, "kiln-cache: {}\n", inspector.problem());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, command;
  std::string max_bytes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(stdout);
    // A relative --dir is the user's explicit choice on the command line: made absolute here (kiln itself refuses a
    // relative KILN_CACHE_DIR, which a checkout could steer).
    if (a == "--dir" && i + 1 < argc) dir = std::filesystem::absolute(argv[++i]).string();
    else if (a == "--max-bytes" && i + 1 < argc) max_bytes = argv[++i];
    else if (command.empty() && a[0] != '-') command = a;
    else return usage(stderr);
  }
  if (command.empty()) return usage(stderr);
  if (dir.empty()) dir = kc::settings_from_environment().directory;
  if (dir.empty()) {
    fmt::print(stderr, "kiln-cache: no cache directory (set KILN_CACHE_DIR or use --dir)\n");
    return 2;
  }
  if (command == "stats") return stats(dir);
  if (command == "list") return list(dir);
  if (command == "verify") return verify(dir);
  if ((command == "clear" || command == "prune") && !usable_or_fail(dir)) return 1;
  if (command == "clear") {
    fmt::print("removed {} files from {}\n", kc::clear(dir), dir);
    return 0;
  }
  if (command == "prune") {
    const auto bytes = kc::parse_bytes(max_bytes);
    if (!bytes) {
      fmt::print(stderr, "kiln-cache: prune needs --max-bytes N (bytes, or with a K/M/G suffix)\n");
      return 2;
    }
    const kc::PruneResult r = kc::prune(dir, *bytes);
    fmt::print("removed {} entries and {} stale temporaries ({} bytes); {} bytes left\n", r.entries_removed,
               r.temporaries_removed, r.bytes_removed, r.bytes_left);
    return 0;
  }
  return usage(stderr);
}
