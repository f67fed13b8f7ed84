// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A second process for the cache tests: runs the named kernels of cache_kernels.hpp with the disk cache the
// environment describes (KILN_CACHE_DIR, KILN_CACHE, ...) and prints the cache statistics on one line:
//   stats memory_hits=0 disk_hits=3 disk_misses=0 compiles=0 stores=0 store_failures=0 rejected=0 evictions=0 libmvec=0
// (libmvec: 1 if glibc's vector math library is loaded in this process by then).
// Exits 1 if a kernel's result is wrong. With KILN_TEST_START_FILE set, waits until that file exists, so
// that racing processes start their compilations together.
//   cache_helper pi saxpy dot
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache_kernels.hpp"

int main(int argc, char** argv) {
  if (const char* start = std::getenv("KILN_TEST_START_FILE"))
    for (int i = 0; i < 20000 && access(start, F_OK) != 0; ++i) usleep(500);
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string problem = cache_kernels::run_and_check(argv[i]);
    if (!problem.empty()) {
      std::fprintf(stderr, "cache_helper: %s\n", problem.c_str());
      status = 1;
    }
  }
  kiln::cache_flush();  // entries are written in the background: count them
  const kiln::CacheStats s = kiln::cache_stats();
  std::printf("stats memory_hits=%llu disk_hits=%llu disk_misses=%llu compiles=%llu stores=%llu store_failures=%llu "
              "rejected=%llu evictions=%llu libmvec=%d\n",
              static_cast<unsigned long long>(s.memory_hits), static_cast<unsigned long long>(s.disk_hits),
              static_cast<unsigned long long>(s.disk_misses), static_cast<unsigned long long>(s.compiles),
              static_cast<unsigned long long>(s.stores), static_cast<unsigned long long>(s.store_failures),
              static_cast<unsigned long long>(s.rejected_entries), static_cast<unsigned long long>(s.evictions),
              dlopen("libmvec.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr ? 1 : 0);
  return status;
}
