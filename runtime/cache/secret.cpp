// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/secret.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include <fmt/format.h>

#include "runtime/cache/trust.hpp"

namespace kiln::cache {

SecretResult read_secret(int dirfd) {
  SecretResult out;
  Opened f = open_cache_file(dirfd, kSecretName, /*secret=*/true);
  if (!f.problem.empty()) {
    out.problem = f.problem;
    return out;
  }
  if (!f.fd) {
    out.missing = f.error == ENOENT;
    out.error = f.error;
    return out;
  }
  if (f.st.st_size != static_cast<off_t>(kSecretSize)) {
    out.problem = fmt::format("it is {} bytes, not {}", f.st.st_size, kSecretSize);
    return out;
  }
  std::size_t done = 0;
  while (done < kSecretSize) {
    const ssize_t n = pread(f.fd.get(), out.secret.bytes.data() + done, kSecretSize - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out.error = n < 0 ? errno : EIO;
      return out;
    }
    done += static_cast<std::size_t>(n);
  }
  out.ok = true;
  return out;
}

SecretResult read_or_create_secret(int dirfd) {
  SecretResult existing = read_secret(dirfd);
  if (!existing.missing) return existing;
  if (sodium_init() < 0) {
    existing.error = EIO;
    return existing;
  }
  Secret s;
  randombytes_buf(s.bytes.data(), s.bytes.size());  // getrandom(2) on Linux
  static std::atomic<unsigned> counter{0};
  const std::string temp = ".secret." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1)) + ".tmp";
  SecretResult out;
  Fd fd(openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    out.error = errno;
    return out;
  }
  const bool written = write(fd.get(), s.bytes.data(), s.bytes.size()) == static_cast<ssize_t>(s.bytes.size()) &&
                       fsync(fd.get()) == 0;
  const int write_error = errno;
  fd = Fd();
  // link(2) fails with EEXIST if another process's secret got there first: then that one is the secret.
  const bool linked = written && linkat(dirfd, temp.c_str(), dirfd, kSecretName, 0) == 0;
  const int link_error = errno;
  unlinkat(dirfd, temp.c_str(), 0);
  if (!written) {
    out.error = write_error ? write_error : EIO;
    return out;
  }
  if (!linked && link_error != EEXIST) {
    out.error = link_error;
    return out;
  }
  return read_secret(dirfd);
}

}  // namespace kiln::cache
