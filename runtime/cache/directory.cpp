// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "runtime/cache/trust.hpp"

namespace kiln::cache {
namespace {

constexpr std::string_view kEntrySuffix = ".kce";
constexpr std::string_view kTempSuffix = ".tmp";
constexpr const char* kLockName = "lock";

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

/// The exclusive lock on `dirfd`'s "lock" file, held until the result is destroyed; none if it cannot be
/// taken (then pruning goes on without it: the cap still holds, see prune_at). A POSIX record lock rather than
/// flock(2): it belongs to the process, so a child forked while it is held does not keep holding it.
Fd lock_directory(int dirfd) {
  Fd fd(openat(dirfd, kLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0 || !file_problem(st, false).empty()) return Fd();
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  while (fcntl(fd.get(), F_SETLKW, &l) != 0)
    if (errno != EINTR) return Fd();
  return fd;
}

}  // namespace

std::string entry_name(const ir::Hash128& key) { return key.hex() + std::string(kEntrySuffix); }

std::string entry_path(const std::string& dir, const ir::Hash128& key) { return dir + "/" + entry_name(key); }

std::vector<DirFile> list_directory_at(int dirfd, const std::string& dir, int* error) {
  std::vector<DirFile> out;
  if (error) *error = 0;
  // A descriptor of its own: readdir moves the file offset, which dup() would share with `dirfd`.
  const int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (!d) {
    if (error) *error = errno;
    if (fd >= 0) close(fd);
    return out;
  }
  while (const dirent* e = readdir(d)) {
    const std::string_view name = e->d_name;
    const bool entry = is_entry_name(name);
    if (!entry && !is_temp_name(name)) continue;
    struct stat st;
    if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    DirFile f;
    f.name = name;
    f.path = dir + "/" + f.name;
    f.temporary = !entry;
    f.kind = S_ISREG(st.st_mode) ? FileKind::regular : S_ISLNK(st.st_mode) ? FileKind::symlink : FileKind::other;
    f.bytes = f.kind == FileKind::regular ? static_cast<std::uint64_t>(st.st_size) : 0;
    f.last_used = st.st_mtim;
    f.owner = st.st_uid;
    f.mode = st.st_mode;
    out.push_back(std::move(f));
  }
  closedir(d);
  return out;
}

std::vector<DirFile> list_directory(const std::string& dir, int* error) {
  if (error) *error = 0;
  Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (error && errno != ENOENT) *error = errno;
    return {};
  }
  return list_directory_at(fd.get(), dir, error);
}

PruneResult prune_at(int dirfd, const std::string& dir, std::uint64_t max_bytes) {
  // Every writer prunes after its rename, scanning the directory afresh: so once the last writer is done, the
  // directory is within the cap whatever the interleaving. The lock keeps racing writers from evicting on
  // the basis of one snapshot each (evicting more than needed).
  const Fd lock = lock_directory(dirfd);
  PruneResult r;
  std::vector<DirFile> files = list_directory_at(dirfd, dir);
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::vector<DirFile> entries;
  for (DirFile& f : files) {
    if (f.kind != FileKind::regular) continue;  // no bytes; the loader and `kiln-cache clear` remove them
    if (f.temporary && now - f.last_used.tv_sec > 600 && unlinkat(dirfd, f.name.c_str(), 0) == 0) {
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
    if (unlinkat(dirfd, f.name.c_str(), 0) == 0) {
      ++r.entries_removed;
      r.bytes_removed += f.bytes;
    }
    r.bytes_left -= f.bytes;
  }
  return r;
}

PruneResult prune(const std::string& dir, std::uint64_t max_bytes) {
  const Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  return fd ? prune_at(fd.get(), dir, max_bytes) : PruneResult{};
}

std::uint64_t clear(const std::string& dir) {
  const Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return 0;
  std::uint64_t n = 0;
  for (const DirFile& f : list_directory_at(fd.get(), dir))
    if (unlinkat(fd.get(), f.name.c_str(), 0) == 0) ++n;
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
