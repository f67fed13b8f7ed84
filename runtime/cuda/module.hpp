// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loaded code: a CUDA module on one device, its kernels, their occupancy-derived block sizes, and launches.
#pragma once

#include <cuda.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/context.hpp"

namespace kiln::gpu {

struct LoadedFunction {
  CUfunction fn = nullptr;
  std::string name;
  int block_size = 256;  ///< threads per block that maximize occupancy (cuOccupancyMaxPotentialBlockSize)
  /// The smallest block (from 128 threads) that keeps as many threads per SM as `block_size` does. 1-d
  /// elementwise kernels use it: on an H100, black_scholes (2^27 f32) ran 1.092 ms with the occupancy API's
  /// 768-thread blocks (62.6 % achieved occupancy, ncu) and 1.026 ms with 128-thread ones, where a block's
  /// registers and warp slots come back as soon as its own few warps finish rather than all 24.
  int compact_block_size = 256;
  int max_block_size = 1024;  ///< the most threads per block this kernel can be launched with
  int resident_threads = 2048;  ///< threads of this kernel an SM holds at block_size (the occupancy API's)
  int static_shared = 0;        ///< bytes of static shared memory per block (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
};

/// One compiled program's code: CUBIN for an architecture and the PTX it came from (not owned).
struct Image {
  const std::string* cubin;
  const std::string* ptx;
};

/// A module loaded into one device's context, unloaded on destruction: the code of one program, or of several
/// compiled apart (codegen/cuda/compile_parts.hpp), each its own CUmodule, which a function is looked up in.
class Module {
 public:
  /// Loads the CUBIN when it was built for this device's architecture, else JIT-compiles the PTX (a newer
  /// device than the compiler knew). `names` are the kernels to look up. `load_us` receives the time spent.
  /// `block_size` (a multiple of 32, else 0): the block size of every function instead of the occupancy
  /// API's choice (codegen's CudaOptions::block_size, KILN_CUDA_BLOCK_SIZE).
  Module(Device& dev, const std::string& arch, const std::string& cubin, const std::string& ptx,
         const std::vector<std::string>& names, double* load_us = nullptr, int block_size = 0)
      : Module(dev, arch, {Image{&cubin, &ptx}}, names, load_us, block_size) {}
  /// The same for the images of one program compiled in parts, all for `arch`: each name is looked up in
  /// each image's module in turn.
  Module(Device& dev, const std::string& arch, const std::vector<Image>& images, const std::vector<std::string>& names,
         double* load_us = nullptr, int block_size = 0);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  const LoadedFunction& function(std::size_t i) const { return functions_[i]; }
  Device& device() const { return *dev_; }
  bool loaded_from_cubin() const { return from_cubin_; }

 private:
  void unload();

  Device* dev_;
  std::vector<CUmodule> mods_;
  bool from_cubin_ = false;
  std::vector<LoadedFunction> functions_;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// cuLaunchKernel on `stream` (a stream of f's device) with `shared_bytes` of dynamic shared memory per block; a
/// failure to launch is a DeviceError naming the kernel.
void launch(CUstream stream, const LoadedFunction& f, Dim3 grid, Dim3 block, void** params, unsigned shared_bytes = 0);

}  // namespace kiln::gpu
