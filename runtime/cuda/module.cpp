// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/module.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>

#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::gpu {
namespace {

/// Threads of `fn` resident on one SM in blocks of `threads`.
int resident_threads(CUfunction fn, int threads, const std::string& name) {
  int blocks = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, 0), fmt::format("occupancy of kernel {}", name));
  return blocks * threads;
}

/// The smallest block size from 128 up (in steps of 32) whose resident threads per SM reach `target`, those of
/// `block` (the occupancy API's choice); `block` itself if none is smaller.
int compact_block_size(CUfunction fn, int block, int target, const std::string& name) {
  for (int threads = 128; threads < block; threads += 32)
    if (resident_threads(fn, threads, name) >= target) return threads;
  return block;
}

}  // namespace

Module::Module(Device& dev, const std::string& arch, const std::vector<Image>& images, const std::vector<std::string>& names,
               double* load_us, int block_size)
    : dev_(&dev) {
  const auto t0 = std::chrono::steady_clock::now();
  const DriverApi& d = driver();
  dev.bind();
  from_cubin_ = true;
  for (const Image& image : images) {
    CUmodule mod = nullptr;
    CUresult r = CUDA_ERROR_INVALID_IMAGE;
    bool cubin = false;
    if (!image.cubin->empty() && arch == dev.info().arch()) {
      r = d.cuModuleLoadData(&mod, image.cubin->data());
      cubin = r == CUDA_SUCCESS;
    }
    if (r != CUDA_SUCCESS) r = d.cuModuleLoadData(&mod, image.ptx->c_str());  // the driver JIT-compiles the PTX
    if (r != CUDA_SUCCESS) unload();
    check(r, fmt::format("loading a CUDA module ({} bytes of PTX) on device {} ({})", image.ptx->size(), dev.info().ordinal,
                         dev.info().name));
    mods_.push_back(mod);
    from_cubin_ = from_cubin_ && cubin;
  }
  for (const auto& n : names) {
    LoadedFunction f;
    f.name = n;
    CUresult g = CUDA_ERROR_NOT_FOUND;
    for (CUmodule mod : mods_)
      if ((g = d.cuModuleGetFunction(&f.fn, mod, n.c_str())) == CUDA_SUCCESS) break;
    if (g != CUDA_SUCCESS) {
      unload();
      check(g, fmt::format("kernel {} is missing from its module", n));
    }
    int min_grid = 0, block = 0;
    check(d.cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f.fn, nullptr, 0, 0),
          fmt::format("occupancy of kernel {}", n));
    int max_block = 0;
    check(d.cuFuncGetAttribute(&max_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f.fn),
          fmt::format("attributes of kernel {}", n));
    f.max_block_size = max_block;
    check(d.cuFuncGetAttribute(&f.static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f.fn), fmt::format("attributes of kernel {}", n));
    const int o = block_size;
    f.block_size = o ? std::min(o, max_block) : block;
    f.block_size = std::max(32, f.block_size / 32 * 32);
    f.resident_threads = resident_threads(f.fn, f.block_size, n);
    f.compact_block_size = o ? f.block_size : compact_block_size(f.fn, f.block_size, f.resident_threads, n);
    functions_.push_back(f);
  }
  if (load_us) *load_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

Module::~Module() { unload(); }

void Module::unload() {
  // Best effort: at process exit the driver may already be shutting down.
  if (!mods_.empty() && driver_available()) {
    dev_->bind();
    for (CUmodule mod : mods_) driver().cuModuleUnload(mod);
  }
  mods_.clear();
}

void launch(CUstream stream, const LoadedFunction& f, Dim3 grid, Dim3 block, void** params, unsigned shared_bytes) {
  const CUresult r =
      driver().cuLaunchKernel(f.fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream, params, nullptr);
  if (r != CUDA_SUCCESS)
    throw DeviceError(fmt::format("launching CUDA kernel {} (grid {}x{}x{}, block {}x{}x{}): {}", f.name, grid.x, grid.y,
                                  grid.z, block.x, block.y, block.z, error_text(r)));
}

}  // namespace kiln::gpu
