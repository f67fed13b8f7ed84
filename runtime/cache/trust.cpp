// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/trust.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "runtime/cache/directory.hpp"

namespace kiln::cache {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

std::string mode_text(mode_t mode) { return fmt::format("{:04o}", static_cast<unsigned>(mode & 07777)); }

namespace {

std::string kind_text(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a file";
  return "not a regular file";
}

std::string owner_text(const struct stat& st) {
  return fmt::format("it is owned by uid {}, not by this process's effective uid {}", st.st_uid, geteuid());
}

/// What to do about a refused cache directory `path` with status `st`.
std::string directory_fix(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode) && st.st_uid == geteuid()) return fmt::format("run chmod go-w {} (or chmod 700)", path);
  return "set KILN_CACHE_DIR to an absolute path of a directory of your own (kiln creates it with mode 0700)";
}

}  // namespace

std::string directory_problem(const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return fmt::format("it is {}, not a directory", kind_text(st.st_mode));
  if (st.st_uid != geteuid()) return owner_text(st);
  const bool group = st.st_mode & S_IWGRP, others = st.st_mode & S_IWOTH;
  if (group || others)
    return fmt::format("it is writable by {} (mode {})",
                       group && others ? "its group and others" : group ? "its group" : "others", mode_text(st.st_mode));
  return "";
}

std::string file_problem(const struct stat& st, bool secret) {
  if (!S_ISREG(st.st_mode)) return fmt::format("it is {}", kind_text(st.st_mode));
  if (st.st_uid != geteuid()) return owner_text(st);
  const mode_t others = secret ? (S_IRWXG | S_IRWXO) : (S_IWGRP | S_IWOTH);
  if (st.st_mode & others)
    return fmt::format("it is {} by group or others (mode {})", secret ? "accessible" : "writable", mode_text(st.st_mode));
  return "";
}

Opened open_cache_file(int dirfd, const std::string& name, bool secret) {
  Opened out;
  Fd fd(openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    out.error = errno;
    // A link (ELOOP under O_NOFOLLOW) or a socket (ENXIO): say what is there rather than an errno.
    if ((out.error == ELOOP || out.error == ENXIO) && fstatat(dirfd, name.c_str(), &out.st, AT_SYMLINK_NOFOLLOW) == 0) {
      out.problem = fmt::format("it is {}", kind_text(out.st.st_mode));
      out.error = 0;
    }
    return out;
  }
  if (fstat(fd.get(), &out.st) != 0) {
    out.error = errno;
    return out;
  }
  out.problem = file_problem(out.st, secret);
  if (out.problem.empty()) out.fd = std::move(fd);
  return out;
}

Opened open_cache_directory(const std::string& path, bool create) {
  Opened out;
  if (path.empty() || path[0] != '/') {
    out.problem = "it is not an absolute path (it would depend on the working directory, so a checkout could carry "
                  "entries); set KILN_CACHE_DIR to an absolute path";
    return out;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    Fd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) {
      if (fstat(fd.get(), &out.st) != 0) {
        out.error = errno;
        return out;
      }
      out.problem = directory_problem(out.st);
      if (out.problem.empty()) out.fd = std::move(fd);
      else out.problem += "; " + directory_fix(path, out.st);
      return out;
    }
    out.error = errno;
    if (lstat(path.c_str(), &out.st) == 0) {
      // It exists, so the open failed on what it is: a link to anything, or not a directory.
      if (S_ISLNK(out.st.st_mode) || !S_ISDIR(out.st.st_mode)) {
        out.problem = S_ISLNK(out.st.st_mode) ? "it is a symbolic link (never followed)" : directory_problem(out.st);
        out.problem += "; " + directory_fix(path, out.st);
        out.error = 0;
      }
      return out;
    }
    if (out.error != ENOENT || !create || attempt > 0) return out;
    if (const int err = make_directory(path); err != 0) {
      out.error = err;
      return out;
    }
  }
  return out;
}

}  // namespace kiln::cache
