// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "runtime/cache/config.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/stats.hpp"

namespace kiln::cache {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

DiskStore::Access DiskStore::access(bool create) const {
  std::lock_guard lock(mutex_);
  Access a;
  if (refused_ || settings_.mode == CacheMode::off) return a;
  const std::string& dir = settings_.directory;
  // The descriptor stays open once opened, refused or not: another thread may still be using it.
  auto refuse = [&](const std::string& what) {
    refused_ = true;
    warn_once(Warning::untrusted_directory,
              fmt::format("not using {}; kernels are compiled without the disk cache", what));
    return Access{};
  };
  if (!dir_) {
    Opened d = open_cache_directory(dir, create);
    if (!d.problem.empty()) return refuse(fmt::format("the cache directory {}: {}", dir, d.problem));
    if (!d.fd) {
      a.error = d.error;  // missing (or not creatable): tried again next time
      return a;
    }
    dir_ = std::move(d.fd);
  }
  a.dirfd = dir_.get();
  if (!secret_) {
    const SecretResult s = create ? read_or_create_secret(dir_.get()) : read_secret(dir_.get());
    if (!s.problem.empty())
      return refuse(fmt::format("{}/{}: {}; remove it (kiln then writes a new one; entries sealed with the old one are "
                                "recompiled)",
                                dir, kSecretName, s.problem));
    if (s.ok) secret_ = s.secret;
    else a.error = s.error;
  }
  a.secret = secret_;
  return a;
}

bool DiskStore::readable() const {
  if (settings_.mode == CacheMode::off) return false;
  access(false);  // the first call judges the directory, if it exists yet
  std::lock_guard lock(mutex_);
  return !refused_;
}

bool DiskStore::writable() const { return settings_.mode == CacheMode::on && readable(); }

std::optional<Entry> DiskStore::lookup(const ir::Hash128& key, std::string_view canonical_ir) {
  Counters& c = counters();
  const Access a = access(false);
  if (a.dirfd < 0 || !a.secret) {  // no directory or no secret yet: nothing was stored
    bump(c.disk_misses);
    return std::nullopt;
  }
  const std::string name = entry_name(key);
  EntryFile f = read_entry_file(a.dirfd, name, *a.secret);
  switch (f.status) {
    case FileStatus::missing:
      bump(c.disk_misses);
      return std::nullopt;
    case FileStatus::unreadable:
      warn_once(Warning::unusable_directory,
                fmt::format("cannot read {} ({}); kernels are compiled", entry_path(settings_.directory, key), f.problem));
      bump(c.disk_misses);
      return std::nullopt;
    case FileStatus::untrusted:
      reject(a.dirfd, name, f.st, Warning::untrusted_entry, f.problem);
      return std::nullopt;
    case FileStatus::too_large:
      reject(a.dirfd, name, f.st, Warning::corrupt_entry, f.problem);
      return std::nullopt;
    case FileStatus::bad: {
      const DecodeStatus d = f.decoded.status;
      reject(a.dirfd, name, f.st,
             d == DecodeStatus::foreign_version ? Warning::foreign_version
             : d == DecodeStatus::bad_seal      ? Warning::unsealed_entry
                                                : Warning::corrupt_entry,
             f.problem);
      return std::nullopt;
    }
    case FileStatus::ok: break;
  }
  Entry& e = f.decoded.entry;
  if (e.key != key) {
    reject(a.dirfd, name, f.st, Warning::mismatch, fmt::format("its header has key {}", e.key.hex()));
    return std::nullopt;
  }
  if (e.canonical_ir != canonical_ir) {
    reject(a.dirfd, name, f.st, Warning::mismatch, "it was compiled from different IR (a key collision)");
    return std::nullopt;
  }
  // Last use is the file's mtime, which LRU eviction sorts by. Setting it costs one system call and keeps
  // the sealed bytes unchanged.
  if (writable()) futimens(f.fd.get(), nullptr);
  return std::move(e);
}

void DiskStore::reject(int dirfd, const std::string& name, const struct stat& seen, Warning kind, const std::string& why) {
  Counters& c = counters();
  bump(c.rejected_entries);
  bump(c.disk_misses);
  const bool deleting = writable();
  const std::string path = fmt::format("{}/{}", settings_.directory, name);
  warn_once(kind, deleting ? fmt::format("discarding {}: {}; the kernel is recompiled", path, why)
                           : fmt::format("ignoring {}: {}; the kernel is compiled (the cache is read-only: nothing is "
                                         "deleted)",
                                         path, why));
  if (!deleting) return;
  // Delete only the file we judged (a link itself, never its target): a concurrent writer may have renamed a
  // good entry into its place.
  struct stat now;
  if (fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == seen.st_ino &&
      now.st_dev == seen.st_dev)
    unlinkat(dirfd, name.c_str(), 0);
}

void DiskStore::discard(const ir::Hash128& key, const std::string& why) {
  const std::string path = entry_path(settings_.directory, key);
  bump(counters().rejected_entries);
  bump(counters().disk_misses);
  const bool deleting = writable();
  warn_once(Warning::load_failed, fmt::format("{} {}: {}; the kernel is {}", deleting ? "discarding" : "ignoring", path,
                                              why, deleting ? "recompiled" : "compiled"));
  const Access a = access(false);
  if (deleting && a.dirfd >= 0) unlinkat(a.dirfd, entry_name(key).c_str(), 0);
}

bool DiskStore::store(const Entry& e) {
  if (!writable()) return false;
  Counters& c = counters();
  const std::string& dir = settings_.directory;
  auto fail = [&](const std::string& what, int err) {
    bump(c.store_failures);
    warn_once(Warning::store_failed,
              fmt::format("cannot {}{}; kernels are compiled but not cached", what,
                          err ? fmt::format(" ({})", errno_text(err)) : std::string()));
    return false;
  };
  const Access a = access(/*create=*/true);
  if (a.dirfd < 0) {
    if (!writable()) return false;  // refused just now, and warned about
    return fail(fmt::format("create the directory {}", dir), a.error);
  }
  if (!a.secret) return fail(fmt::format("create {}/{}", dir, kSecretName), a.error);

  const std::string bytes = encode(e, *a.secret);
  if (bytes.size() > kMaxEntryBytes)
    return fail(fmt::format("store the entry of {}: {} bytes, more than the entry size limit of {} MiB", e.meta.kernel,
                            bytes.size(), kMaxEntryBytes >> 20),
                0);
  static std::atomic<std::uint64_t> temp_counter{0};
  const std::string temp = fmt::format(".{}.{}.{}.tmp", e.key.hex(), getpid(), temp_counter.fetch_add(1));
  const int fd = openat(a.dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail(fmt::format("write to {}", dir), errno);
  // fsync before rename: after a crash the entry is either complete or absent (the seal would catch a torn
  // file too, but then the work is lost).
  if (!write_all(fd, bytes) || fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlinkat(a.dirfd, temp.c_str(), 0);
    return fail(fmt::format("write {}/{}", dir, temp), err);
  }
  if (close(fd) != 0 || renameat(a.dirfd, temp.c_str(), a.dirfd, entry_name(e.key).c_str()) != 0) {
    const int err = errno;
    unlinkat(a.dirfd, temp.c_str(), 0);
    return fail(fmt::format("write {}", entry_path(dir, e.key)), err);
  }
  bump(c.stores);
  // Every store rescans under the directory's lock (directory.hpp): a size estimate kept per process would
  // not see the other processes' stores, and 16 racing processes then left several times the cap.
  bump(c.evictions, prune_at(a.dirfd, dir, settings_.max_bytes).entries_removed);
  return true;
}

namespace {
std::mutex current_mutex;
std::shared_ptr<DiskStore> current;  // created from the environment on first use
}  // namespace

std::shared_ptr<DiskStore> current_store() {
  std::lock_guard lock(current_mutex);
  if (!current) current = std::make_shared<DiskStore>(settings_from_environment());
  return current;
}

}  // namespace kiln::cache

namespace kiln {

std::string_view name_of(CacheMode m) {
  switch (m) {
    case CacheMode::off: return "off";
    case CacheMode::read_only: return "read-only";
    case CacheMode::on: return "on";
  }
  return "?";
}

CacheSettings cache_settings() { return cache::current_store()->settings(); }

void set_cache_settings(const CacheSettings& settings) {
  auto store = std::make_shared<cache::DiskStore>(settings);
  std::lock_guard lock(cache::current_mutex);
  cache::current = std::move(store);
}

}  // namespace kiln
