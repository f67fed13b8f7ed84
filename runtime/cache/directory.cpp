#include "runtime/cache/directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace kiln::cache {
namespace {

constexpr std::string_view kEntrySuffix = ".kce";
constexpr std::string_view kTempSuffix = ".tmp";

bool is_hex_key(std::string_view s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_entry_name(std::string_view n) {
  return n.size() == 32 + kEntrySuffix.size() && n.ends_with(kEntrySuffix) && is_hex_key(n.substr(0, 32));
}

bool is_temp_name(std::string_view n) {
  return n.size() > 34 + kTempSuffix.size() && n[0] == '.' && n.ends_with(kTempSuffix) && is_hex_key(n.substr(1, 32)) &&
         n[33] == '.';
}

bool older(const DirFile& a, const DirFile& b) {
  if (a.last_used.tv_sec != b.last_used.tv_sec) return a.last_used.tv_sec < b.last_used.tv_sec;
  if (a.last_used.tv_nsec != b.last_used.tv_nsec) return a.last_used.tv_nsec < b.last_used.tv_nsec;
  return a.name < b.name;
}

}  // namespace

std::string entry_path(const std::string& dir, const ir::Hash128& key) {
  return dir + "/" + key.hex() + std::string(kEntrySuffix);
}

std::vector<DirFile> list_directory(const std::string& dir, int* error) {
  std::vector<DirFile> out;
  if (error) *error = 0;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    if (error && errno != ENOENT) *error = errno;
    return out;
  }
  while (const dirent* e = readdir(d)) {
    const std::string_view name = e->d_name;
    const bool entry = is_entry_name(name);
    if (!entry && !is_temp_name(name)) continue;
    DirFile f;
    f.name = name;
    f.path = dir + "/" + f.name;
    f.temporary = !entry;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;  // gone meanwhile
    f.bytes = static_cast<std::uint64_t>(st.st_size);
    f.last_used = st.st_mtim;
    out.push_back(std::move(f));
  }
  closedir(d);
  return out;
}

PruneResult prune(const std::string& dir, std::uint64_t max_bytes) {
  PruneResult r;
  std::vector<DirFile> files = list_directory(dir);
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::vector<DirFile> entries;
  for (DirFile& f : files) {
    if (f.temporary && now - f.last_used.tv_sec > 600 && unlink(f.path.c_str()) == 0) {
      ++r.temporaries_removed;
      r.bytes_removed += f.bytes;
      continue;
    }
    r.bytes_left += f.bytes;
    if (!f.temporary) entries.push_back(std::move(f));
  }
  std::sort(entries.begin(), entries.end(), older);
  for (const DirFile& f : entries) {
    if (r.bytes_left <= max_bytes) break;
    // Another process may have evicted or replaced it already; either way it no longer counts.
    if (unlink(f.path.c_str()) == 0) {
      ++r.entries_removed;
      r.bytes_removed += f.bytes;
    }
    r.bytes_left -= f.bytes;
  }
  return r;
}

std::uint64_t clear(const std::string& dir) {
  std::uint64_t n = 0;
  for (const DirFile& f : list_directory(dir))
    if (unlink(f.path.c_str()) == 0) ++n;
  return n;
}

int make_directory(const std::string& dir) {
  if (dir.empty()) return ENOENT;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  // Create each missing component in turn; a concurrent creator (EEXIST) is fine.
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  }
  if (stat(dir.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

}  // namespace kiln::cache
