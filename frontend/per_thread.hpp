// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-thread state that stays usable while the process exits.
#pragma once

namespace kiln::detail {

/// The calling thread's `T` (one per thread and per `T`), made on first use and freed when the thread ends.
/// Unlike a `thread_local T`, it may be used again after the thread's thread_local objects have been
/// destroyed: exit() destroys the main thread's before it runs atexit handlers and static destructors, which
/// may still trace and compile kernels. Then a fresh `T` is made, and left to the process's end.
template <class T>
T& per_thread() {
  thread_local T* state = nullptr;  // trivially destructible: never destroyed, so it reads null once freed
  struct Owner {
    ~Owner() {
      delete state;
      state = nullptr;
    }
  };
  if (!state) {
    state = new T();
    thread_local Owner owner;  // registered once per thread, on the first use
    (void)owner;
  }
  return *state;
}

}  // namespace kiln::detail
