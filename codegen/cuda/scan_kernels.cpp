// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/scan_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/prelude.hpp"
#include "ir/ops.hpp"
#include "ir/scan.hpp"
#include "ir/scan_rows.hpp"
#include "ir/semantics.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

// The kernel; src_t, acc_t, out_t, KILN_OP, KILN_OUT, KILN_ROWS and the prelude come first (scan_source). A tile's
// element e (in line order) lives in shared memory at row e / 1024, column e % 1024; rows are padded so that the
// row walks (lanes 0..rows-1 of warp 0, one row each, at the same column) fall on different banks.
constexpr const char* kKernel = R"(
#define KILN_B 1024
#define KILN_THREADS 128
#define KILN_TILE (KILN_ROWS * KILN_B)
#define KILN_PAD (sizeof(acc_t) >= 4 ? 1 : (int)(4 / sizeof(acc_t)))
#define KILN_STRIDE (KILN_B + KILN_PAD)
#define KILN_UNROLL 16
#define KILN_CHUNK 16

__device__ __forceinline__ acc_t kiln_read(const acc_t* p) { return *(volatile const acc_t*)p; }

// The fold of its group's totals up to the block before block t * KILN_ROWS, for tile t (not the group's first):
// the nearest earlier tile that has published its fold (flag 2; the group's first tile publishes it without
// waiting on anything), then the totals of every tile after it in order (flag 1 or 2: they are out).
__device__ acc_t kiln_tile_prefix(volatile int* flag, const acc_t* fold, const acc_t* totals, long long t) {
  long long j = t - 1;
  for (;;) {
    const int f = flag[j];
    if (f == 2) break;
    if (f == 1) --j;  // its totals are out: look further back
  }
  __threadfence();
  acc_t acc = kiln_read(fold + j);
  for (long long u = j + 1; u < t; ++u) {
    acc_t v[KILN_ROWS];
    #pragma unroll
    for (int r = 0; r < KILN_ROWS; ++r) v[r] = kiln_read(totals + u * KILN_ROWS + r);
    #pragma unroll
    for (int r = 0; r < KILN_ROWS; ++r) acc = KILN_OP(acc, v[r]);
  }
  return acc;
}

// The chain of the groups' folds up to group g - 1 (g >= 1): the nearest earlier group whose chain is out (flag 2;
// group 0's is its fold), then the folds of the groups after it in order.
__device__ acc_t kiln_group_prefix(volatile int* flag, const acc_t* fold, const acc_t* chain, long long g) {
  long long h = g - 1;
  for (;;) {
    const int f = flag[h];
    if (f == 2) break;
    if (f == 1) --h;
  }
  __threadfence();
  acc_t acc = kiln_read(chain + h);
  for (long long u = h + 1; u < g; ++u) acc = KILN_OP(acc, kiln_read(fold + u));
  return acc;
}

// One tile per block of threads. Per line: `tiles` tiles, `groups` groups of 1024 blocks. Status (zeroed before
// the launch): tile_flag and tile_fold per tile, the totals KILN_ROWS per tile, group_flag, group_fold and
// group_chain per group, and the tile counter.
extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS) kiln_scan(
    const src_t* src, out_t* out, long long n, long long tiles, long long groups, acc_t ident, int exclusive,
    acc_t* __restrict__ totals, acc_t* __restrict__ tile_fold, int* __restrict__ tile_flag,
    acc_t* __restrict__ group_fold, acc_t* __restrict__ group_chain, int* __restrict__ group_flag,
    unsigned long long* __restrict__ ticket) {
  extern __shared__ __align__(16) unsigned char kiln_smem[];
  acc_t* s = (acc_t*)kiln_smem;
  __shared__ acc_t carry[KILN_ROWS], tot[KILN_ROWS];
  __shared__ long long tk;
  const int tid = threadIdx.x;
  if (tid == 0) tk = (long long)atomicAdd(ticket, 1ull);
  __syncthreads();
  const long long line = tk / tiles, t = tk % tiles;
  const long long b0 = t * KILN_ROWS;  // the tile's first block in its line
  const int count = (int)min((long long)KILN_TILE, n - b0 * KILN_B);
  const int rows = (count + KILN_B - 1) / KILN_B;
  const src_t* x = src + line * n + b0 * KILN_B;
  out_t* y = out + line * n + b0 * KILN_B;
  // 1. The tile into shared memory, KILN_UNROLL loads in flight a thread.
  for (int e0 = 0; e0 < KILN_TILE; e0 += KILN_THREADS * KILN_UNROLL) {
    acc_t v[KILN_UNROLL];
    #pragma unroll
    for (int u = 0; u < KILN_UNROLL; ++u) {
      const int e = e0 + u * KILN_THREADS + tid;
      if (e < count) v[u] = (acc_t)x[e];
    }
    #pragma unroll
    for (int u = 0; u < KILN_UNROLL; ++u) {
      const int e = e0 + u * KILN_THREADS + tid;
      if (e < count) s[(e >> 10) * KILN_STRIDE + (e & (KILN_B - 1))] = v[u];
    }
  }
  __syncthreads();
  // 2. Each block scanned in order from its first element, in place: thread r walks row r, reading a chunk's
  // cells before its steps so that a step waits on its operation only. Its total goes out for the later tiles.
  const long long status = line * tiles + t;
  if (tid < rows) {
    acc_t* row = s + tid * KILN_STRIDE;
    const int len = min(KILN_B, count - tid * KILN_B);
    acc_t acc = row[0];
    int k = 0;
    for (; k + KILN_CHUNK <= len; k += KILN_CHUNK) {
      acc_t v[KILN_CHUNK];
      #pragma unroll
      for (int u = 0; u < KILN_CHUNK; ++u) v[u] = row[k + u];
      #pragma unroll
      for (int u = 0; u < KILN_CHUNK; ++u) {
        acc = (u == 0 && k == 0) ? v[0] : KILN_OP(acc, v[u]);
        row[k + u] = acc;
      }
    }
    for (; k < len; ++k) {
      acc = k == 0 ? row[0] : KILN_OP(acc, row[k]);
      row[k] = acc;
    }
    tot[tid] = acc;
    totals[status * KILN_ROWS + tid] = acc;
    __threadfence();
  }
  __syncthreads();
  // 3. The carries, by one thread: the fold of the group's totals before the tile (look-back), the tile's own
  // folds, published; the chain of the groups before this one where there are any.
  if (tid == 0) {
    const long long g = b0 / KILN_B;
    const bool first_of_group = b0 % KILN_B == 0, last_of_group = (b0 + KILN_ROWS) % KILN_B == 0;
    volatile int* tflag = tile_flag + line * tiles;
    volatile int* gflag = group_flag + line * groups;
    if (!first_of_group) tflag[t] = 1;  // the totals are out (fenced by their threads)
    acc_t before = ident, f[KILN_ROWS];
    if (!first_of_group) before = kiln_tile_prefix(tflag, tile_fold + line * tiles, totals + line * tiles * KILN_ROWS, t);
    #pragma unroll
    for (int r = 0; r < KILN_ROWS; ++r) {
      const acc_t total = r < rows ? tot[r] : ident;  // a line's last tile may have fewer blocks
      f[r] = r == 0 ? (first_of_group ? total : KILN_OP(before, total)) : KILN_OP(f[r - 1], total);
    }
    tile_fold[status] = f[KILN_ROWS - 1];
    __threadfence();
    tflag[t] = 2;
    acc_t chain = ident;  // the chain of the groups before g
    if (last_of_group && g == 0) {
      group_chain[line * groups] = f[KILN_ROWS - 1];
      __threadfence();
      gflag[0] = 2;
    } else if (last_of_group) {
      group_fold[line * groups + g] = f[KILN_ROWS - 1];
      __threadfence();
      gflag[g] = 1;
    }
    if (g > 0) chain = kiln_group_prefix(gflag, group_fold + line * groups, group_chain + line * groups, g);
    if (last_of_group && g > 0) {
      group_chain[line * groups + g] = KILN_OP(chain, f[KILN_ROWS - 1]);
      __threadfence();
      gflag[g] = 2;
    }
    // Block b0 + r's carry: the fold up to total(b0 + r - 1) after the chain of the groups before its group.
    #pragma unroll
    for (int r = 0; r < KILN_ROWS; ++r) {
      acc_t c;
      if (r == 0) c = b0 == 0 ? ident : first_of_group ? chain : g == 0 ? before : KILN_OP(chain, before);
      else c = g == 0 ? f[r - 1] : KILN_OP(chain, f[r - 1]);
      carry[r] = c;
    }
  }
  __syncthreads();
  // 4. Every element: its running value (inclusive) or the one before it (exclusive), after its carry; line's
  // block 0 takes none.
  for (int e = tid; e < count; e += KILN_THREADS) {
    const int r = e >> 10, k = e & (KILN_B - 1);
    const bool none = b0 + r == 0;
    acc_t v;
    if (!exclusive) v = none ? s[r * KILN_STRIDE + k] : KILN_OP(carry[r], s[r * KILN_STRIDE + k]);
    else if (k == 0) v = carry[r];
    else v = none ? s[r * KILN_STRIDE + k - 1] : KILN_OP(carry[r], s[r * KILN_STRIDE + k - 1]);
    y[e] = KILN_OUT(v);
  }
}
)";

const char* op_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::Add: return "kiln_add";
    case ReduceOp::Mul: return "kiln_mul";
    case ReduceOp::Min: return "kiln_min";
    case ReduceOp::Max: return "kiln_max";
    default: break;
  }
  throw ValueError("kiln's scan kernel combines with Add, Mul, Min or Max");
}

/// Modules per (device, types, operator, rows), made once and kept for the process (as every kiln process-wide
/// object: kernels may run from exit handlers); binaries once per architecture and the rest.
using Key = std::tuple<DType, DType, DType, ReduceOp, int>;

const gpu::Module& scan_module(gpu::Device& dev, const Key& key, std::size_t shared_bytes) {
  static std::mutex mutex;
  static auto* binaries = new std::map<std::tuple<std::string, Key>, Binary>();
  static auto* modules = new std::map<std::tuple<int, Key>, std::unique_ptr<gpu::Module>>();
  std::lock_guard lock(mutex);
  std::unique_ptr<gpu::Module>& slot = (*modules)[{dev.info().ordinal, key}];
  if (!slot) {
    const std::string arch = dev.info().arch();
    auto it = binaries->find({arch, key});
    if (it == binaries->end()) {
      const auto [from, t, to, op, rows] = key;
      it = binaries->emplace(std::tuple{arch, key}, compile_source(scan_source(from, t, to, op, rows), "kiln_scan", arch, {}))
               .first;
    }
    slot = std::make_unique<gpu::Module>(dev, it->second.arch, it->second.cubin, it->second.ptx,
                                         std::vector<std::string>{scan_entry()});
    // A tile's values are dynamic shared memory (more than the 48 KiB a launch gets without asking); the
    // kernel reads little else twice: all of an SM's memory to shared memory.
    const CUfunction fn = slot->function(0).fn;
    gpu::check(gpu::driver().cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                static_cast<int>(shared_bytes)),
               "setting the shared memory of kiln's scan kernel");
    gpu::check(gpu::driver().cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                                CU_SHAREDMEM_CARVEOUT_MAX_SHARED),
               "setting the shared memory carveout of kiln's scan kernel");
  }
  return *slot;
}

std::size_t shared_bytes(DType t, int rows) {
  const int size = size_of(t);
  const int pad = size >= 4 ? 1 : 4 / size;
  return static_cast<std::size_t>(rows) * (ir::sem::kScanBlock + pad) * static_cast<std::size_t>(size);
}

}  // namespace

int scan_tile_rows(DType t, int tile_kib) {
  const int rows = static_cast<int>(std::int64_t{tile_kib} * 1024 / (ir::sem::kScanBlock * size_of(t)));
  int p = 1;
  while (p * 2 <= std::min(rows, 64)) p *= 2;  // a power of two: groups of carries start at tile boundaries
  return p;
}

std::string scan_source(DType source, DType type, DType out, ReduceOp op, int rows) {
  if (!ir::scan_stmt_types(source, type, out))
    throw ValueError(fmt::format("kiln's scan kernel: no scan of {} in {} into {}", name_of(source), name_of(type),
                                 name_of(out)));
  if (rows < 1 || rows > 64 || (rows & (rows - 1)) != 0)
    throw ValueError(fmt::format("kiln's scan kernel: {} blocks a tile; use a power of two up to 64", rows));
  const std::string to_out = out == type ? "(v)" : "((v) != 0)";  // an int32 scan of bools back to bool
  // As many blocks of threads an SM as its shared memory holds tiles (an H100's 227 KiB), at most 8 (64
  // registers a thread): a tile's walks use few of its threads, so the SM's other tiles keep memory busy.
  const int min_blocks = static_cast<int>(std::clamp<std::size_t>(227 * 1024 / (shared_bytes(type, rows) + 256), 1, 8));
  return fmt::format("// kiln's scan kernel: {} in {} into {}, {} (codegen/cuda/scan_kernels.cpp)\n{}\n"
                     "typedef {} src_t;\ntypedef {} acc_t;\ntypedef {} out_t;\n#define KILN_OP {}\n"
                     "#define KILN_OUT(v) {}\n#define KILN_ROWS {}\n#define KILN_MIN_BLOCKS {}\n{}",
                     name_of(source), name_of(type), name_of(out), ir::name_of(op), prelude(), type_name(source),
                     type_name(type), type_name(out), op_function(op), to_out, rows, min_blocks, kKernel);
}

void scan_on_device(CallState& call, DType source_type, DType type, DType out_type, ReduceOp op, bool exclusive,
                    std::uint64_t source, std::uint64_t out, std::int64_t lines, std::int64_t n, int tile_kib,
                    const std::string& label) {
  if (lines <= 0 || n <= 0) return;
  const int rows = scan_tile_rows(type, tile_kib);
  const std::size_t smem = shared_bytes(type, rows);
  const gpu::Module& m = scan_module(call.dev, Key{source_type, type, out_type, op, rows}, smem);
  const std::int64_t blocks = (n + ir::sem::kScanBlock - 1) / ir::sem::kScanBlock;
  std::int64_t tiles = (blocks + rows - 1) / rows, groups = (blocks + ir::sem::kScanBlock - 1) / ir::sem::kScanBlock;
  if (lines * tiles > 0x7fffffff)
    throw DeviceError(fmt::format("{}: {} tiles exceed CUDA's grid; scan fewer or shorter rows per call", label,
                                  lines * tiles));
  // Zeroed: the flags and the tile counter. Then the published values, 8-byte aligned.
  const auto lt = static_cast<std::size_t>(lines * tiles), lg = static_cast<std::size_t>(lines * groups);
  const std::size_t size = static_cast<std::size_t>(size_of(type));
  auto round8 = [](std::size_t b) { return (b + 7) / 8 * 8; };
  const std::size_t ticket_at = 0, tflag_at = 8, gflag_at = tflag_at + round8(lt * 4), zeroed = gflag_at + round8(lg * 4);
  const std::size_t totals_at = zeroed, tfold_at = totals_at + round8(lt * rows * size),
                    gfold_at = tfold_at + round8(lt * size), gchain_at = gfold_at + round8(lg * size),
                    bytes = gchain_at + round8(lg * size);
  const CUdeviceptr scratch = call.alloc(bytes, "scan status of " + label);
  call.check(gpu::driver().cuMemsetD8Async(scratch, 0, zeroed, call.stream), "zeroing scan flags");
  CUdeviceptr src = source, dst = out, ticket = scratch + ticket_at, tflag = scratch + tflag_at,
              gflag = scratch + gflag_at, totals = scratch + totals_at, tfold = scratch + tfold_at,
              gfold = scratch + gfold_at, gchain = scratch + gchain_at;
  std::uint64_t ident = 0;  // the identity's bits, as the kernel's acc_t parameter
  ir::sem::with_type(type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T v = ir::scan_identity<T>(op);
      std::memcpy(&ident, &v, sizeof v);
    }
  });
  long long nn = n, tt = tiles, gg = groups;
  int ex = exclusive ? 1 : 0;
  void* params[] = {&src, &dst, &nn, &tt, &gg, &ident, &ex, &totals, &tfold, &tflag, &gfold, &gchain, &gflag, &ticket};
  call.pending.push_back(&label);
  gpu::launch(call.stream, m.function(0), {static_cast<unsigned>(lines * tiles), 1, 1}, {kScanThreads, 1, 1}, params,
              static_cast<unsigned>(smem));
  call.release(scratch);
}

std::function<void(ir::Frame&)> DeviceMachine::scan(const ir::ScanStmt& s, ir::HostScope& scope) const {
  const int source = scope.array(s.source.get()), out = scope.array(s.out.get());
  const DType from = s.source->type.elem, t = s.type, to = s.out->type.elem;
  const ReduceOp op = s.op;
  const bool exclusive = s.exclusive;
  const int rank = s.source->type.rank;
  const std::string label = "kiln's scan of " + s.source->name;
  const int tile_kib = scan_tile_kib_;
  return [=](ir::Frame& fr) {
    const ArrayDesc& d = fr.arrays[static_cast<size_t>(source)];
    std::int64_t lines = 1;
    for (int k = 0; k + 1 < rank; ++k) lines *= d.shape[k];
    scan_on_device(*static_cast<CallState*>(fr.machine_state), from, t, to, op, exclusive,
                   reinterpret_cast<std::uint64_t>(d.data),
                   reinterpret_cast<std::uint64_t>(fr.arrays[static_cast<size_t>(out)].data), lines, d.shape[rank - 1],
                   tile_kib, label);
  };
}

}  // namespace kiln::codegen::cuda
