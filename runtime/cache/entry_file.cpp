// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/entry_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace kiln::cache {
namespace {

/// Reads `size` bytes from offset `at` into `out`; false on an error or if the file ends first.
bool read_at(int fd, std::uint64_t at, std::uint64_t size, char* out) {
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, out + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::uint64_t>(n);
  }
  return true;
}

}  // namespace

EntryFile read_entry_file(int dirfd, const std::string& name, const Secret& secret) {
  EntryFile out;
  Opened f = open_cache_file(dirfd, name, /*secret=*/false);
  out.st = f.st;
  if (!f.problem.empty()) {
    out.status = FileStatus::untrusted;
    out.problem = f.problem;
    return out;
  }
  if (!f.fd) {
    out.status = f.error == ENOENT ? FileStatus::missing : FileStatus::unreadable;
    out.problem = std::strerror(f.error);
    return out;
  }
  const std::uint64_t size = static_cast<std::uint64_t>(f.st.st_size);
  if (size > kMaxEntryBytes) {
    out.status = FileStatus::too_large;
    out.problem = fmt::format("{} bytes, more than any entry ({} MiB); not read", size, kMaxEntryBytes >> 20);
    return out;
  }
  std::string bytes(size < kHeaderSize ? size : kHeaderSize, '\0');
  const std::uint64_t head = bytes.size();
  if (!read_at(f.fd.get(), 0, head, bytes.data())) {
    out.status = FileStatus::unreadable;
    out.problem = "cannot read it";
    return out;
  }
  out.decoded = check_header(bytes, size);
  if (out.decoded.status == DecodeStatus::ok) {
    bytes.resize(size);
    if (!read_at(f.fd.get(), head, size - head, bytes.data() + head)) {
      out.status = FileStatus::unreadable;  // shorter than fstat said: changed while read (never by a writer)
      out.problem = "cannot read it whole";
      return out;
    }
    out.decoded = decode(bytes, secret);
  }
  if (out.decoded.status != DecodeStatus::ok) {
    out.status = FileStatus::bad;
    out.problem = std::string(describe(out.decoded.status));
    if (out.decoded.status == DecodeStatus::foreign_version)
      out.problem =
          fmt::format("entry format version {}, this kiln reads {}", out.decoded.version, kFormatVersion);
    return out;
  }
  out.status = FileStatus::ok;
  out.fd = std::move(f.fd);
  return out;
}

}  // namespace kiln::cache
