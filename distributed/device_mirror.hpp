// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target on distributed arrays, one GPU per rank: a copy of a block's storage on the rank's GPU in
// the same layout (ghost layers included), and which copy is current. MPI moves host memory, so the halo
// exchange of a device-resident block is staged through the host: the owned bands that the messages and
// the border rules read come down before it, the ghost layers go up after it, and nothing else moves. Host
// access (local(), fill, scatter, gather, the reductions) brings the whole block down first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kiln::dist::detail {

class Block;

class DeviceMirror {
 public:
  /// Makes the host copy current (downloading the device copy if it is newer). `write`: the caller changes
  /// the host copy, so the device copy goes stale.
  void to_host(const Block& b, bool write);
  /// Makes the copy on `device` current, allocating it and uploading the host copy if that is newer; returns
  /// the device address of the storage's start.
  std::byte* to_device(const Block& b, int device);
  /// A CUDA kernel wrote into the device copy.
  void written_on_device() { fresh_ = Fresh::device; }
  /// The host storage is about to be replaced (wider ghosts): the host copy made current, the device copy
  /// dropped (the next to_device allocates it in the new layout).
  void before_reallocation(const Block& b);
  /// Before an exchange: where only the device copy is current, the owned planes within the exchange's
  /// reach of each side along each axis (`lo`/`hi`: ghost widths; one plane more for the mirror rules)
  /// downloaded into the host copy, across the whole storage extent of the other axes.
  void download_bands(const Block& b, const std::int64_t* lo, const std::int64_t* hi);
  /// After an exchange: the ghost layers (every side of every axis, corners included) uploaded.
  void upload_ghosts(const Block& b);
  bool resident() const { return storage_ != nullptr; }
  std::byte* base() const { return storage_.get(); }
  int device() const { return device_; }
  void swap(DeviceMirror& o) noexcept;
  /// Copies of the whole storage between host and device so far (bands and ghost layers not counted): a
  /// time loop of CUDA calls makes none after its first.
  std::int64_t whole_copies() const { return whole_copies_; }

 private:
  enum class Fresh : std::uint8_t { host, device, both };
  /// Storage planes [first, first + planes) along `axis` (storage coordinates), the whole extent of the
  /// other axes: one copy along axis 0; across the rows one strided copy, or, for many runs, packed on the
  /// device and moved in one copy.
  void copy_planes(const Block& b, int axis, std::int64_t first, std::int64_t planes, bool up);
  Fresh fresh_ = Fresh::host;
  std::shared_ptr<std::byte> storage_;
  int device_ = -1;
  std::size_t bytes_ = 0;
  std::int64_t whole_copies_ = 0;
  std::shared_ptr<std::byte> packed_;  ///< device buffer of a packed slab (grown as needed)
  std::size_t packed_bytes_ = 0;
  std::shared_ptr<std::byte> staging_;  ///< its host side, page-locked (grown as needed)
  std::size_t staging_bytes_ = 0;
};

}  // namespace kiln::dist::detail
