// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Who may have put a file in the cache: the ownership and mode rules that decide whether kiln uses a cache
// directory, its secret and its entries (docs/cache.md, "Trust"). Files are opened without following links and
// without blocking, and judged by fstat of the opened descriptor, so the file checked is the file read.
#pragma once

#include <sys/stat.h>

#include <string>

namespace kiln::cache {

/// An owned file descriptor (-1: none), closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

/// Why a cache directory with status `st` may not be used, or "" if it may: it must be a directory owned by the
/// effective user that neither group nor others can write (POSIX ACLs granting write show in the group bits).
std::string directory_problem(const struct stat& st);

/// Why a file with status `st` may not be read from a cache directory, or "" if it may: a regular file owned by
/// the effective user that neither group nor others can write. For the secret (`secret`), not read either.
std::string file_problem(const struct stat& st, bool secret);

/// The result of opening a file or directory of the cache.
struct Opened {
  Fd fd;                 ///< open and acceptable, or none
  int error = 0;         ///< errno when it could not be opened (ENOENT: it does not exist)
  std::string problem;   ///< why it was refused: a link, a FIFO, another owner, a mode (fd is then none)
  struct stat st {};     ///< its status when it exists (lstat for a symbolic link)
};

/// openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), then file_problem on its fstat. A
/// symbolic link, FIFO, socket or device in `name`'s place is refused without being followed or blocking.
Opened open_cache_file(int dirfd, const std::string& name, bool secret);

/// Opens the cache directory `path` as kiln uses it: an absolute path whose last component is a directory,
/// not a symbolic link, that directory_problem accepts. With `create`, a missing directory (and missing
/// parents) is created with mode 0700 first. `problem` names the directory and the fix.
Opened open_cache_directory(const std::string& path, bool create);

/// "0755" for the permission bits of `mode`.
std::string mode_text(mode_t mode);

}  // namespace kiln::cache
