#include "runtime/cache/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "runtime/cache/config.hpp"
#include "runtime/cache/directory.hpp"
#include "runtime/cache/stats.hpp"

namespace kiln::cache {
namespace {

/// No writer produces entries this large; a file that is must not be read into memory.
constexpr std::uint64_t kMaxEntryBytes = 256ull << 20;

/// Rescan the directory after this many stores even below the cap: other processes store too.
constexpr std::uint32_t kStoresPerScan = 64;

std::string errno_text(int err) { return std::strerror(err); }

/// Reads the whole file behind `fd`; false on a read error.
bool read_all(int fd, std::uint64_t size, std::string& out) {
  out.resize(size);
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd, out.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;  // shorter than fstat said: decode reports it as truncated
    done += static_cast<std::uint64_t>(n);
  }
  out.resize(done);
  return true;
}

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

std::optional<Entry> DiskStore::lookup(const ir::Hash128& key, std::string_view canonical_ir) {
  Counters& c = counters();
  const std::string path = entry_path(settings_.directory, key);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR)
      warn_once(Warning::unusable_directory, "cannot read " + path + " (" + errno_text(errno) + "); kernels are compiled");
    bump(c.disk_misses);
    return std::nullopt;
  }
  struct stat st;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && static_cast<std::uint64_t>(st.st_size) > kMaxEntryBytes) {
    reject(path, fd, Warning::corrupt_entry, "larger than any entry");
    return std::nullopt;
  }
  std::string bytes;
  if (!regular || !read_all(fd, static_cast<std::uint64_t>(st.st_size), bytes)) {
    warn_once(Warning::unusable_directory, "cannot read " + path + "; kernels are compiled");
    close(fd);
    bump(c.disk_misses);
    return std::nullopt;
  }
  Decoded d = decode(bytes);
  if (d.status == DecodeStatus::foreign_version) {
    reject(path, fd, Warning::foreign_version,
           "entry format version " + std::to_string(d.version) + ", this kiln reads " + std::to_string(kFormatVersion));
    return std::nullopt;
  }
  if (d.status != DecodeStatus::ok) {
    reject(path, fd, Warning::corrupt_entry, std::string(describe(d.status)));
    return std::nullopt;
  }
  if (d.entry.key != key) {
    reject(path, fd, Warning::mismatch, "its header has key " + d.entry.key.hex());
    return std::nullopt;
  }
  if (d.entry.canonical_ir != canonical_ir) {
    reject(path, fd, Warning::mismatch, "it was compiled from different IR (a key collision)");
    return std::nullopt;
  }
  // Last use is the file's mtime, which LRU eviction sorts by. Setting it costs one system call and keeps
  // the checksummed bytes unchanged. Failure (someone else's file in a shared directory) only skews LRU.
  if (writable()) futimens(fd, nullptr);
  close(fd);
  return std::move(d.entry);
}

void DiskStore::reject(const std::string& path, int fd, Warning kind, const std::string& why) {
  Counters& c = counters();
  bump(c.rejected_entries);
  bump(c.disk_misses);
  warn_once(kind, "discarding " + path + ": " + why + "; the kernel is recompiled");
  if (writable()) {
    // Delete only the file we read: a concurrent writer may have renamed a good entry into its place.
    struct stat ours, now;
    if (fstat(fd, &ours) == 0 && stat(path.c_str(), &now) == 0 && ours.st_ino == now.st_ino && ours.st_dev == now.st_dev)
      unlink(path.c_str());
  }
  close(fd);
}

void DiskStore::discard(const ir::Hash128& key, const std::string& why) {
  const std::string path = entry_path(settings_.directory, key);
  bump(counters().rejected_entries);
  bump(counters().disk_misses);
  warn_once(Warning::load_failed, "discarding " + path + ": " + why + "; the kernel is recompiled");
  if (writable()) unlink(path.c_str());
}

bool DiskStore::store(const Entry& e) {
  if (!writable()) return false;
  Counters& c = counters();
  const std::string& dir = settings_.directory;
  const std::string path = entry_path(dir, e.key);
  auto fail = [&](const std::string& what, int err) {
    bump(c.store_failures);
    warn_once(Warning::store_failed, "cannot " + what + " (" + errno_text(err) + "); kernels are compiled but not cached");
    return false;
  };
  if (const int err = make_directory(dir)) return fail("create the directory " + dir, err);

  const std::string bytes = encode(e);
  const std::string temp = dir + "/." + e.key.hex() + "." + std::to_string(getpid()) + "." +
                           std::to_string(temp_counter_.fetch_add(1)) + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return fail("write to " + dir, errno);
  // fsync before rename: after a crash the entry is either complete or absent (the checksum would catch a
  // torn file too, but then the work is lost).
  if (!write_all(fd, bytes) || fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlink(temp.c_str());
    return fail("write " + temp, err);
  }
  if (close(fd) != 0 || rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return fail("write " + path, err);
  }
  bump(c.stores);
  evict_after_store(bytes.size());
  return true;
}

void DiskStore::evict_after_store(std::uint64_t bytes) {
  const std::int64_t before = estimated_bytes_.fetch_add(static_cast<std::int64_t>(bytes));
  const bool known = before >= 0;
  const bool periodic = stores_since_scan_.fetch_add(1) + 1 >= kStoresPerScan;
  if (known && !periodic && static_cast<std::uint64_t>(before) + bytes <= settings_.max_bytes) return;
  stores_since_scan_.store(0);
  const PruneResult r = prune(settings_.directory, settings_.max_bytes);
  bump(counters().evictions, r.entries_removed);
  estimated_bytes_.store(static_cast<std::int64_t>(r.bytes_left));
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
