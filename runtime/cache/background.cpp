// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cache/background.hpp"

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "kiln/cache.hpp"

namespace kiln::cache {
namespace {

/// Longest the exit of a process waits for its pending entries.
constexpr auto kExitWait = std::chrono::seconds(5);

class Writer {
 public:
  void enqueue(std::shared_ptr<DiskStore> store, Entry e, std::shared_ptr<const void> keepalive) {
    std::lock_guard lock(mutex_);
    if (!thread_) start_locked();
    queue_.push_back({std::move(store), std::move(e), std::move(keepalive)});
    wake_.notify_one();
  }

  /// Waits until the queue is empty and nothing is being written; false if `limit` passed first.
  bool flush(std::chrono::steady_clock::duration limit) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, limit, [this] { return queue_.empty() && !busy_; });
  }

  /// At exit (or when libkiln is unloaded): write what is pending, then end the thread. If the disk does not
  /// let us finish in time, the thread is left alone; its temporary file is cleaned up by a later prune.
  void shutdown() {
    if (!flush(kExitWait)) return;
    std::thread* t;
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      wake_.notify_one();
      t = thread_;
      thread_ = nullptr;
    }
    if (t) {
      t->join();
      delete t;
    }
  }

  // fork() copies this object but not the thread: the child starts afresh with its own thread when it
  // stores something; what the parent had queued is the parent's to write.
  void before_fork() { mutex_.lock(); }
  void after_fork_in_parent() { mutex_.unlock(); }
  void after_fork_in_child() {
    // Fresh synchronization objects: the copies may record waiters (the writer thread) that do not exist here.
    new (&mutex_) std::mutex();
    new (&wake_) std::condition_variable();
    new (&idle_) std::condition_variable();
    queue_.clear();
    busy_ = false;
    stop_ = false;
    thread_ = nullptr;  // the parent's thread object; it has no thread here, so it is neither joined nor freed
  }

 private:
  struct Job {
    std::shared_ptr<DiskStore> store;
    Entry entry;
    std::shared_ptr<const void> keepalive;
  };

  void start_locked() {
    thread_ = new std::thread([this] { run(); });
    static const bool registered = [] {
      std::atexit([] { instance().shutdown(); });
      return true;
    }();
    (void)registered;
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      Job job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      job.store->store(job.entry);  // never throws: failures are counted and warned about
      job = {};
      lock.lock();
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

 public:
  static Writer& instance() {
    // Never destroyed: the exit handler and threads may use it during static destruction.
    static Writer* const w = [] {
      auto* created = new Writer();
      pthread_atfork([] { instance().before_fork(); }, [] { instance().after_fork_in_parent(); },
                     [] { instance().after_fork_in_child(); });
      return created;
    }();
    return *w;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Job> queue_;
  bool busy_ = false, stop_ = false;
  std::thread* thread_ = nullptr;
};

}  // namespace

void store_in_background(std::shared_ptr<DiskStore> store, Entry e, std::shared_ptr<const void> keepalive) {
  Writer::instance().enqueue(std::move(store), std::move(e), std::move(keepalive));
}

void flush_background_stores() { Writer::instance().flush(std::chrono::hours(24)); }

}  // namespace kiln::cache

namespace kiln {

void cache_flush() { cache::flush_background_stores(); }

}  // namespace kiln
