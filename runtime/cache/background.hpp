// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Entries are written by a background thread: storing costs an fsync (4-17 ms on the reference VM, as much
// as compiling the kernel), which a kernel's first call should not wait for. Entries still pending when the
// process exits are written first (bounded: a hung disk does not hang the exit).
#pragma once

#include <memory>

#include "runtime/cache/entry.hpp"
#include "runtime/cache/store.hpp"

namespace kiln::cache {

/// Queues `e` for `store->store(e)` on the writer thread (started on first use). `keepalive` is released once
/// the entry is written: the frontend passes the loaded code, so that a kernel created meanwhile finds it in
/// memory rather than compiling it again.
void store_in_background(std::shared_ptr<DiskStore> store, Entry e, std::shared_ptr<const void> keepalive = {});

/// Waits until every entry queued so far has been written or has failed.
void flush_background_stores();

}  // namespace kiln::cache
