// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "distributed/device_mirror.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "distributed/block.hpp"
#include "kiln/device.hpp"
#include "kiln/kernel.hpp"
#include "kiln/runtime.hpp"

namespace kiln::dist::detail {
namespace {

/// `to(all) = from` on device views of one element type and rank, compiled for the CUDA target once per
/// type and rank (the packing of slabs); called through the type-erased interface with device views.
template <Element T, int N>
void copy_view(const ArrayDesc& to, const ArrayDesc& from, int device) {
  Options o;
  o.target = Target::cuda;
  static const auto kernel = kiln::jit(fmt::format("kiln_dist_copy_{}_{}d", name_of(dtype_of<T>()), N),
                                       [](kiln::Array<T, N> out, kiln::Array<T, N> in) { out(kiln::all) = in; }, o);
  kiln::detail::ArgValue args[2] = {
      kiln::detail::array_arg(static_cast<T*>(to.data), N, to.shape, to.strides, true, "packed slab"),
      kiln::detail::array_arg(static_cast<T*>(from.data), N, from.shape, from.strides, false, "packed slab")};
  for (auto& a : args) {
    a.on_device = true;
    a.device = device;
  }
  kernel.core()->call(kernel.options_id(), args, 2, nullptr);
}

template <Element T>
void copy_view_of_rank(int rank, const ArrayDesc& to, const ArrayDesc& from, int device) {
  switch (rank) {
    case 1: return copy_view<T, 1>(to, from, device);
    case 2: return copy_view<T, 2>(to, from, device);
    case 3: return copy_view<T, 3>(to, from, device);
    default: return copy_view<T, 4>(to, from, device);
  }
}

void copy_on_device(DType t, int rank, const ArrayDesc& to, const ArrayDesc& from, int device) {
  switch (t) {
    case DType::Bool: return copy_view_of_rank<bool>(rank, to, from, device);
    case DType::I32: return copy_view_of_rank<std::int32_t>(rank, to, from, device);
    case DType::I64: return copy_view_of_rank<std::int64_t>(rank, to, from, device);
    case DType::F32: return copy_view_of_rank<float>(rank, to, from, device);
    case DType::F64: return copy_view_of_rank<double>(rank, to, from, device);
    case DType::U8: case DType::I8: return copy_view_of_rank<std::uint8_t>(rank, to, from, device);  // bytes alike
    case DType::U16: case DType::I16: case DType::F16: case DType::BF16:
      return copy_view_of_rank<std::uint16_t>(rank, to, from, device);
    case DType::U32: return copy_view_of_rank<std::uint32_t>(rank, to, from, device);
    case DType::U64: return copy_view_of_rank<std::uint64_t>(rank, to, from, device);
  }
}

/// The elements of the host view `box` to (`pack`) or from a contiguous row-major buffer: one memcpy per run
/// along the last axis, the runs spread over the threads (a slab across the last axis of a 322^3 block is
/// 103684 runs of 16 bytes).
void copy_box_on_host(const ArrayDesc& box, std::byte* packed, int rank, std::int64_t elem, bool pack) {
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= box.shape[d];
  const auto run = static_cast<std::size_t>(box.shape[rank - 1] * elem);
#pragma omp parallel for schedule(static) num_threads(kiln::num_threads()) if (rows >= 4096)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t off = 0;
    for (std::int64_t rest = r, d = rank - 2; d >= 0; --d) {
      off += (rest % box.shape[d]) * box.strides[d];
      rest /= box.shape[d];
    }
    std::byte* at = static_cast<std::byte*>(box.data) + off * elem;
    if (pack) std::memcpy(packed + static_cast<std::size_t>(r) * run, at, run);
    else std::memcpy(at, packed + static_cast<std::size_t>(r) * run, run);
  }
}

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
  // The host storage is only replaced after before_reallocation: the sizes of the two copies always agree.
  if (storage_ && bytes_ != bytes)
    throw Error("kiln::dist: internal error: a block's storage changed size while its device copy was kept");
  if (storage_ && device_ != device) before_reallocation(b);  // another GPU for this thread: move there
  if (!storage_) {
    storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(cuda::detail::device_alloc(bytes, device)),
                                          [device, bytes](std::byte* p) { cuda::detail::device_free(p, bytes, device); });
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
  packed_.reset();  // on the old device
  packed_bytes_ = 0;
  device_ = -1;
  bytes_ = 0;
}

void DeviceMirror::copy_planes(const Block& b, int axis, std::int64_t first, std::int64_t planes, bool up) {
  if (planes <= 0) return;
  const auto plane_bytes = static_cast<std::size_t>(b.strides[axis] * b.elem_size);
  const std::size_t offset = static_cast<std::size_t>(first) * plane_bytes;
  if (axis == 0) {  // one contiguous range
    const std::size_t bytes = static_cast<std::size_t>(planes) * plane_bytes;
    if (up) cuda::detail::copy_to_device(storage_.get() + offset, b.base() + offset, bytes, device_, nullptr);
    else cuda::detail::copy_to_host(b.base() + offset, storage_.get() + offset, bytes, device_, nullptr);
    return;
  }
  // A slab across the rows is `runs` runs of `run` bytes, `pitch` apart. The copy engine takes them one by
  // one, about 27 ns a run on an H100 (the exchanges of the bands of a 8194^2 and a 322^3 block: 0.83 ms
  // for 4 x 8194 runs, 12.6 ms for 4 x 103684). Packing on the device instead (a copy kernel into a
  // contiguous buffer, one copy through page-locked staging, memcpy per run on the host over the threads)
  // costs about 0.3 ms a slab whatever its runs (2.1 and 4.3 ms for the same exchanges). So a slab of up
  // to kPackRuns runs goes as one strided copy, a larger one is packed.
  constexpr std::size_t kPackRuns = 16384;
  std::size_t runs = 1;
  for (int d = 0; d < axis; ++d) runs *= static_cast<std::size_t>(b.extent[d]);
  if (runs <= kPackRuns) {
    const std::size_t run = static_cast<std::size_t>(planes) * plane_bytes;
    const std::size_t pitch = static_cast<std::size_t>(b.extent[axis]) * plane_bytes;
    if (up)
      cuda::detail::copy_runs_to_device(storage_.get() + offset, b.base() + offset, run, runs, pitch, device_, nullptr);
    else
      cuda::detail::copy_runs_to_host(b.base() + offset, storage_.get() + offset, run, runs, pitch, device_, nullptr);
    return;
  }
  ArrayDesc slab;
  std::int64_t elements = 1;
  for (int d = 0; d < b.rank; ++d) {
    slab.shape[d] = d == axis ? planes : b.extent[d];
    slab.strides[d] = b.strides[d];
    elements *= slab.shape[d];
  }
  const auto bytes = static_cast<std::size_t>(elements * b.elem_size);
  if (packed_bytes_ < bytes) {
    const int device = device_;
    packed_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(cuda::detail::device_alloc(bytes, device)),
                                         [device, bytes](std::byte* p) { cuda::detail::device_free(p, bytes, device); });
    packed_bytes_ = bytes;
  }
  ArrayDesc packed = slab;
  std::int64_t stride = 1;
  for (int d = b.rank - 1; d >= 0; --d) {
    packed.strides[d] = stride;
    stride *= slab.shape[d];
  }
  packed.data = packed_.get();
  slab.data = storage_.get() + offset;
  // The host side in page-locked memory, which the copy engine reads and writes directly (from pageable
  // memory the driver stages every copy through its own buffers).
  if (staging_bytes_ < bytes) {
    staging_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(cuda::detail::pinned_alloc(bytes)), &cuda::detail::pinned_free);
    staging_bytes_ = bytes;
  }
  ArrayDesc host_slab = slab;
  host_slab.data = b.base() + offset;
  if (up) {
    copy_box_on_host(host_slab, staging_.get(), b.rank, b.elem_size, true);
    cuda::detail::copy_to_device(packed.data, staging_.get(), bytes, device_, nullptr);
    copy_on_device(b.dtype, b.rank, slab, packed, device_);
  } else {
    copy_on_device(b.dtype, b.rank, packed, slab, device_);
    cuda::detail::copy_to_host(staging_.get(), packed.data, bytes, device_, nullptr);
    copy_box_on_host(host_slab, staging_.get(), b.rank, b.elem_size, false);
  }
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
  std::swap(packed_, o.packed_);
  std::swap(packed_bytes_, o.packed_bytes_);
  std::swap(staging_, o.staging_);
  std::swap(staging_bytes_, o.staging_bytes_);
}

}  // namespace kiln::dist::detail
