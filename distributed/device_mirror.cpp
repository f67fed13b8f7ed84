#include "distributed/device_mirror.hpp"

#include <algorithm>
#include <utility>

#include "distributed/block.hpp"
#include "kiln/device.hpp"

namespace kiln::dist::detail {
namespace {

std::size_t storage_bytes(const Block& b) {
  std::int64_t n = 1;
  for (int d = 0; d < b.rank; ++d) n *= b.extent[d];
  return static_cast<std::size_t>(n * b.elem_size);
}

}  // namespace

void DeviceMirror::to_host(const Block& b, bool write) {
  if (fresh_ == Fresh::device) {
    cuda::detail::copy_to_host(b.base(), storage_.get(), bytes_, device_, nullptr);
    ++whole_copies_;
  }
  fresh_ = write ? Fresh::host : Fresh::both;
}

std::byte* DeviceMirror::to_device(const Block& b, int device) {
  const std::size_t bytes = storage_bytes(b);
  if (storage_ && (device_ != device || bytes_ != bytes)) before_reallocation(b);
  if (!storage_) {
    storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(cuda::detail::device_alloc(bytes, device)),
                                          [device](std::byte* p) { cuda::detail::device_free(p, device); });
    device_ = device;
    bytes_ = bytes;
    fresh_ = Fresh::host;
  }
  if (fresh_ == Fresh::host) {
    cuda::detail::copy_to_device(storage_.get(), b.base(), bytes_, device_, nullptr);
    ++whole_copies_;
    fresh_ = Fresh::both;
  }
  return storage_.get();
}

void DeviceMirror::before_reallocation(const Block& b) {
  if (!storage_) return;
  to_host(b, true);
  storage_.reset();
  device_ = -1;
  bytes_ = 0;
}

void DeviceMirror::copy_planes(const Block& b, int axis, std::int64_t first, std::int64_t planes, bool up) const {
  if (planes <= 0) return;
  std::size_t runs = 1;
  for (int d = 0; d < axis; ++d) runs *= static_cast<std::size_t>(b.extent[d]);
  const auto plane_bytes = static_cast<std::size_t>(b.strides[axis] * b.elem_size);
  const std::size_t offset = static_cast<std::size_t>(first) * plane_bytes;
  const std::size_t pitch = static_cast<std::size_t>(b.extent[axis]) * plane_bytes;
  const std::size_t run = static_cast<std::size_t>(planes) * plane_bytes;
  if (up)
    cuda::detail::copy_runs_to_device(storage_.get() + offset, b.base() + offset, run, runs, pitch, device_, nullptr);
  else
    cuda::detail::copy_runs_to_host(b.base() + offset, storage_.get() + offset, run, runs, pitch, device_, nullptr);
}

void DeviceMirror::download_bands(const Block& b, const std::int64_t* lo, const std::int64_t* hi) {
  if (fresh_ != Fresh::device) return;  // the host copy is current
  for (int d = 0; d < b.rank; ++d) {
    if (lo[d] == 0 && hi[d] == 0) continue;
    // Sends reach `hi` planes below and `lo` above; reflect/mirror fills read up to the width plus one.
    const std::int64_t width = std::min(b.count[d], std::max(lo[d], hi[d]) + 1);
    if (2 * width >= b.count[d]) {
      copy_planes(b, d, b.ghost_lo[d], b.count[d], false);
      continue;
    }
    copy_planes(b, d, b.ghost_lo[d], width, false);
    copy_planes(b, d, b.ghost_lo[d] + b.count[d] - width, width, false);
  }
}

void DeviceMirror::upload_ghosts(const Block& b) {
  if (!storage_ || fresh_ == Fresh::host) return;  // the next to_device uploads everything
  for (int d = 0; d < b.rank; ++d) {
    copy_planes(b, d, 0, b.ghost_lo[d], true);
    copy_planes(b, d, b.ghost_lo[d] + b.count[d], b.ghost_hi[d], true);
  }
}

void DeviceMirror::swap(DeviceMirror& o) noexcept {
  std::swap(fresh_, o.fresh_);
  std::swap(storage_, o.storage_);
  std::swap(device_, o.device_);
  std::swap(bytes_, o.bytes_);
  std::swap(whole_copies_, o.whole_copies_);
}

}  // namespace kiln::dist::detail
