// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/context.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/host_slots.hpp"
#include "runtime/cuda/memory_totals.hpp"

namespace kiln::gpu {
namespace {

int attribute(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  check(driver().cuDeviceGetAttribute(&v, a, d), "cuDeviceGetAttribute");
  return v;
}

/// KILN_CUDA_DEVICE, or 0 when unset or not a number.
int default_device() {
  static const int d = [] {
    const char* s = std::getenv("KILN_CUDA_DEVICE");
    if (!s || !*s) return 0;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    return (end && *end == '\0' && v >= 0 && v < 1024) ? static_cast<int>(v) : 0;
  }();
  return d;
}

thread_local int t_current = -1;

constexpr std::size_t kScratchGranule = 4096;

}  // namespace

Scratch& Scratch::operator=(Scratch&& o) noexcept {
  if (this != &o) {
    if (device_) device_->give_back(ptr_, bytes_);
    device_ = o.device_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.device_ = nullptr;
  }
  return *this;
}

Scratch::~Scratch() {
  if (device_) device_->give_back(ptr_, bytes_);
}

Device::Device(int ordinal) {
  const DriverApi& d = driver();
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw DeviceError(fmt::format("CUDA device {} does not exist (this machine has {})", ordinal, count));
  CUdevice dev = 0;
  check(d.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  info_.ordinal = ordinal;
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  info_.name = name;
  info_.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info_.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info_.sm_count = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info_.max_threads_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info_.max_threads_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  info_.max_grid[0] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  info_.max_grid[1] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  info_.max_grid[2] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  info_.shared_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info_.shared_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info_.shared_reserved = attribute(dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  info_.max_blocks_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  info_.shared_per_block_optin = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  check(d.cuDeviceTotalMem(&info_.memory_bytes, dev), "cuDeviceTotalMem");
  // The primary context is the one the CUDA runtime and other libraries share, so kiln's device memory
  // and theirs are interchangeable.
  check(d.cuDevicePrimaryCtxRetain(&ctx_, dev), fmt::format("cuDevicePrimaryCtxRetain on device {}", ordinal));
  check(d.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  // Kernels that allocate inside a parfor use the device heap (8 MiB by default).
  if (const char* mb = std::getenv("KILN_CUDA_HEAP_MB"); mb && std::atol(mb) > 0)
    check(d.cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, static_cast<std::size_t>(std::atol(mb)) << 20), "cuCtxSetLimit");
  // Non-blocking: kiln's work does not serialize with the legacy default stream of other code.
  check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  // Call temporaries, results of asynchronous calls and stream-ordered DeviceArrays come from the default
  // pool. By default the pool returns freed memory to the driver at every synchronization, so the next call
  // maps it again (tens of microseconds per MiB); kept, a freed block serves the next allocation of its size.
  check(d.cuDeviceGetDefaultMemPool(&pool_, dev), "cuDeviceGetDefaultMemPool");
  std::uint64_t keep = UINT64_MAX;
  check(d.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep), "cuMemPoolSetAttribute");
  blocks_ = std::make_unique<StreamBlocks>(*this, stream_);
}

void Device::bind() const {
  const DriverApi& d = driver();
  CUcontext cur = nullptr;
  if (d.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx_) return;
  check(d.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}

Scratch Device::scratch(std::size_t bytes) {
  bytes = std::max<std::size_t>(kScratchGranule, (bytes + kScratchGranule - 1) / kScratchGranule * kScratchGranule);
  Scratch s;
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].second >= bytes) {
        s.ptr_ = free_[i].first;
        s.bytes_ = free_[i].second;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        s.device_ = this;
        return s;
      }
    }
  }
  bind();
  check(driver().cuMemAlloc(&s.ptr_, bytes),
        fmt::format("allocating {} bytes of scratch on CUDA device {}", bytes, info_.ordinal));
  count_alloc(bytes);
  s.bytes_ = bytes;
  s.device_ = this;
  return s;
}

void Device::give_back(CUdeviceptr p, std::size_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  free_.emplace_back(p, bytes);
}

Device::~Device() = default;

void Device::add_stream_blocks(StreamBlocks* b) {
  std::lock_guard lock(blocks_mutex_);
  all_blocks_.push_back(b);
}

void Device::remove_stream_blocks(StreamBlocks* b) noexcept {
  std::lock_guard lock(blocks_mutex_);
  std::erase(all_blocks_, b);
}

std::size_t Device::release_stream_blocks() noexcept {
  std::lock_guard lock(blocks_mutex_);
  std::size_t n = 0;
  for (StreamBlocks* b : all_blocks_) {
    n += b->kept();
    b->release();
  }
  return n;
}

HostSlots& Device::host_slots() {
  std::lock_guard lock(mutex_);
  if (!host_slots_) host_slots_ = std::make_unique<HostSlots>(*this);
  return *host_slots_;
}

CUdeviceptr Device::status_slot() {
  {
    std::lock_guard lock(mutex_);
    if (!free_slots_.empty()) {
      const CUdeviceptr p = free_slots_.back();
      free_slots_.pop_back();
      return p;
    }
  }
  // A chunk of slots at a time: one allocation and one clearing serve many calls.
  constexpr std::size_t kSlots = 64, kSlotBytes = (sizeof(KernelStatus) + 15) / 16 * 16;
  bind();
  CUdeviceptr chunk = 0;
  check(driver().cuMemAlloc(&chunk, kSlots * kSlotBytes), fmt::format("allocating kernel status memory on CUDA device {}", info_.ordinal));
  count_alloc(kSlots * kSlotBytes);
  // Cleared on kiln's own stream, never on a caller's stream: that one may be recording a graph.
  check(driver().cuMemsetD8Async(chunk, 0, kSlots * kSlotBytes, stream_), "clearing kernel status memory");
  check(driver().cuStreamSynchronize(stream_), "clearing kernel status memory");
  std::lock_guard lock(mutex_);
  for (std::size_t i = kSlots; i-- > 1;) free_slots_.push_back(chunk + i * kSlotBytes);
  return chunk;
}

void Device::release_status_slot(CUdeviceptr p) noexcept {
  std::lock_guard lock(mutex_);
  free_slots_.push_back(p);
}

void Device::clear_status_slot(CUdeviceptr p) {
  check(driver().cuMemsetD8Async(p, 0, sizeof(KernelStatus), stream_), "clearing kernel status memory");
  check(driver().cuStreamSynchronize(stream_), "clearing kernel status memory");
}

void Device::count_alloc(std::size_t bytes) noexcept {
  allocations_.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t now = in_use_.fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed) + static_cast<std::int64_t>(bytes);
  std::int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void Device::count_free(std::size_t bytes) noexcept { in_use_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed); }

int device_count() noexcept {
  if (!driver_available()) return 0;
  int n = 0;
  return driver().cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
}

namespace {

/// The devices used so far, made on first use. Every call looks its device up, so the lookup of one that
/// exists is a load (`ready`); the mutex only orders the first use of each.
struct Devices {
  std::mutex mutex;
  std::array<std::unique_ptr<Device>, 64> slots;
  std::array<std::atomic<Device*>, 64> ready{};
};
Devices& devices() {
  static Devices& d = *new Devices;  // never destroyed: Streams and arrays may outlive static destruction
  return d;
}

}  // namespace

Device& device(int ordinal) {
  Devices& all = devices();
  if (ordinal < 0 || ordinal >= static_cast<int>(all.slots.size()))
    throw DeviceError(fmt::format("CUDA device {} does not exist", ordinal));
  const auto i = static_cast<std::size_t>(ordinal);
  if (Device* d = all.ready[i].load(std::memory_order_acquire)) return *d;
  std::lock_guard lock(all.mutex);
  auto& slot = all.slots[i];
  if (!slot) {
    slot = std::make_unique<Device>(ordinal);
    all.ready[i].store(slot.get(), std::memory_order_release);
  }
  return *slot;
}

MemoryTotals memory_totals() noexcept {
  Devices& all = devices();
  std::lock_guard lock(all.mutex);
  MemoryTotals t;
  for (const auto& d : all.slots)
    if (d) t.in_use_bytes += d->in_use_bytes(), t.peak_bytes += d->peak_bytes();
  return t;
}

void reset_memory_peaks() noexcept {
  Devices& all = devices();
  std::lock_guard lock(all.mutex);
  for (const auto& d : all.slots)
    if (d) d->reset_peak();
}

int current_device() { return t_current >= 0 ? t_current : default_device(); }

void set_current_device(int ordinal) {
  const int n = device_count();
  if (ordinal < 0 || ordinal >= n)
    throw DeviceError(fmt::format("cannot select CUDA device {}: this machine has {}", ordinal, n));
  t_current = ordinal;
}

}  // namespace kiln::gpu
