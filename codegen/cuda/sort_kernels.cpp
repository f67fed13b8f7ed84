// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/sort_kernels.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "ir/semantics.hpp"
#include "ir/sort_keys.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

constexpr int kThreads = 256;  // a digit per thread in the histogram and scatter blocks
constexpr int kRounds = 16;    // elements per thread and tile: a tile is 4096 keys
constexpr std::int64_t kTile = kThreads * kRounds;
constexpr int kScanThreads = 1024;

const char* c_type(DType t) { return type_name(t); }  // the emitter's names (f16/bf16: their bits)

// The kernels; key_t, code_t, KILN_ENCODE and KILN_DECODE come first (sort_source).
constexpr const char* kKernels = R"(
#define KILN_THREADS 256
#define KILN_ROUNDS 16
#define KILN_TILE (KILN_THREADS * KILN_ROUNDS)

extern "C" __global__ void kiln_sort_encode(const key_t* __restrict__ keys, code_t* __restrict__ codes,
                                            long long* __restrict__ pos, long long total, long long n, int carry) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    key_t x = keys[i];
    code_t code;
    KILN_ENCODE
    codes[i] = code;
    if (carry) pos[i] = i % n;
  }
}

// Digit counts of tile t of row r (block r * tiles + t), at hist[(r * 256 + digit) * tiles + t].
extern "C" __global__ void kiln_sort_hist(const code_t* __restrict__ codes, long long* __restrict__ hist, long long n,
                                          long long tiles, int shift) {
  __shared__ unsigned int h[256];
  const long long r = blockIdx.x / tiles, t = blockIdx.x % tiles;
  h[threadIdx.x] = 0;
  __syncthreads();
  const code_t* row = codes + r * n;
  const long long lo = t * KILN_TILE, hi = min(n, lo + KILN_TILE);
  for (long long i = lo + threadIdx.x; i < hi; i += KILN_THREADS) atomicAdd(&h[(unsigned)(row[i] >> shift) & 255u], 1u);
  __syncthreads();
  hist[(r * 256 + threadIdx.x) * tiles + t] = h[threadIdx.x];
}

// Row blockIdx.x's counts to first slots: an exclusive scan of its 256 * tiles counts, in order. same[row]
// becomes 1 when one digit holds all the row's keys (the pass would not move any).
extern "C" __global__ void kiln_sort_scan(long long* __restrict__ hist, int* __restrict__ same, long long tiles) {
  __shared__ long long s[1024];
  long long* h = hist + blockIdx.x * 256 * tiles;
  const long long len = 256 * tiles, per = (len + 1023) / 1024;
  const long long lo = min(len, threadIdx.x * per), hi = min(len, lo + per);
  long long sum = 0;
  for (long long i = lo; i < hi; ++i) sum += h[i];
  s[threadIdx.x] = sum;
  if (threadIdx.x == 0) same[blockIdx.x] = 0;
  __syncthreads();
  for (int off = 1; off < 1024; off <<= 1) {
    const long long v = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
    __syncthreads();
    s[threadIdx.x] += v;
    __syncthreads();
  }
  long long run = s[threadIdx.x] - sum;
  for (long long i = lo; i < hi; ++i) {
    const long long c = h[i];
    h[i] = run;
    run += c;
  }
  __syncthreads();
  if (threadIdx.x < 256) {  // digit d's first slot and the next digit's: all keys between them
    const long long n = s[1023], at = h[threadIdx.x * tiles], next = threadIdx.x == 255 ? n : h[(threadIdx.x + 1) * tiles];
    if (n > 0 && at == 0 && next == n) same[blockIdx.x] = 1;
  }
}

// Tile t of row r to its slots, element order kept among equal digits. The tile is first put in digit order
// in shared memory (an element's place: the tile's count of smaller digits, then of equal digits before it),
// then written out in that order, so consecutive threads write consecutive slots of a digit's run (written
// element by element, each key would take a sector of its own). A row whose keys all have one digit in this
// pass is copied as it is: the permutation would be the identity.
extern "C" __global__ void __launch_bounds__(KILN_THREADS) kiln_sort_scatter(
    const code_t* __restrict__ cin, code_t* __restrict__ cout, const long long* __restrict__ pin,
    long long* __restrict__ pout, const long long* __restrict__ hist, const int* __restrict__ same, long long n,
    long long tiles, int shift, int carry) {
  __shared__ code_t sorted[KILN_TILE];          // the tile in digit order
  __shared__ unsigned short from[KILN_TILE];    // each sorted element's index in the tile
  __shared__ long long base[256];               // the row's slot of the tile's first element of each digit
  __shared__ unsigned first[256];               // the tile's sorted position of its first element of each digit
  __shared__ unsigned short warp_slot[KILN_THREADS / 32][256];
  __shared__ unsigned warp_total[KILN_THREADS / 32];
  const long long r = blockIdx.x / tiles, t = blockIdx.x % tiles;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long lo = t * KILN_TILE, hi = min(n, lo + KILN_TILE);
  const code_t* rin = cin + r * n;
  code_t* rout = cout + r * n;
  const long long* rpin = pin + r * n;
  long long* rpout = pout + r * n;
  if (same[r]) {
    for (long long i = lo + tid; i < hi; i += KILN_THREADS) {
      rout[i] = rin[i];
      if (carry) rpout[i] = rpin[i];
    }
    return;
  }
  base[tid] = hist[(r * 256 + tid) * tiles + t];
  first[tid] = 0;
  __syncthreads();
  code_t c[KILN_ROUNDS];
  int d[KILN_ROUNDS];
  #pragma unroll
  for (int k = 0; k < KILN_ROUNDS; ++k) {  // element lo + k * KILN_THREADS + tid
    const long long i = lo + k * KILN_THREADS + tid;
    c[k] = i < hi ? rin[i] : (code_t)0;
    d[k] = i < hi ? (int)((unsigned)(c[k] >> shift) & 255u) : 256;  // 256: no element
    if (d[k] < 256) atomicAdd(&first[d[k]], 1u);
  }
  __syncthreads();
  // The tile's counts to first positions: an exclusive scan over the digits (thread tid holds digit tid).
  const unsigned count = first[tid];
  unsigned x = count;
  for (int off = 1; off < 32; off <<= 1) {
    const unsigned y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  if (lane == 31) warp_total[warp] = x;
  __syncthreads();
  unsigned before = 0;
  for (int w = 0; w < warp; ++w) before += warp_total[w];
  unsigned mine = before + x - count;  // digit tid's next sorted position
  first[tid] = mine;
  const unsigned below = (1u << lane) - 1u;
  #pragma unroll
  for (int k = 0; k < KILN_ROUNDS; ++k) {
    for (int q = tid; q < (KILN_THREADS / 32) * 256; q += KILN_THREADS) (&warp_slot[0][0])[q] = 0;
    __syncthreads();
    unsigned peers = 0xffffffffu;  // the warp's lanes with this lane's digit
    for (int bit = 0; bit < 9; ++bit) {
      const unsigned m = __ballot_sync(0xffffffffu, (d[k] >> bit) & 1);
      peers &= ((d[k] >> bit) & 1) ? m : ~m;
    }
    const int rank = __popc(peers & below);
    if (d[k] < 256 && rank == 0) warp_slot[warp][d[k]] = (unsigned short)__popc(peers);
    __syncthreads();
    unsigned run = mine;  // thread tid places digit tid's elements of this round, warp by warp
    for (int w = 0; w < KILN_THREADS / 32; ++w) {
      const unsigned cnt = warp_slot[w][tid];
      warp_slot[w][tid] = (unsigned short)run;
      run += cnt;
    }
    mine = run;
    __syncthreads();
    if (d[k] < 256) {
      const unsigned p = warp_slot[warp][d[k]] + rank;
      sorted[p] = c[k];
      from[p] = (unsigned short)(k * KILN_THREADS + tid);
    }
    __syncthreads();
  }
  for (unsigned j = tid; j < (unsigned)(hi - lo); j += KILN_THREADS) {
    const code_t v = sorted[j];
    const int dj = (int)((unsigned)(v >> shift) & 255u);
    const long long o = base[dj] + (long long)(j - first[dj]);
    rout[o] = v;
    if (carry) rpout[o] = rpin[lo + from[j]];
  }
}

// The payload permuted into `positions` (from its copy); keys decoded from their codes, or (mode 1) gathered
// through the positions into `gathered`.
extern "C" __global__ void kiln_sort_finish(key_t* __restrict__ keys, const code_t* __restrict__ codes,
                                            const long long* __restrict__ pos, long long* __restrict__ positions,
                                            const long long* __restrict__ payload, key_t* __restrict__ gathered,
                                            long long total, long long n, int mode) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
    if (positions) positions[i] = payload[i - i % n + pos[i]];
    if (mode == 1) {
      gathered[i] = keys[i - i % n + pos[i]];
    } else {
      const code_t code = codes[i];
      key_t x;
      KILN_DECODE
      keys[i] = x;
    }
  }
}
)";

/// Entry indices in sort_entries().
enum Entry : std::size_t { kEncode, kHist, kScan, kScatter, kFinish };

/// Modules per (device, key type), made once and kept for the process (as every kiln process-wide object:
/// kernels may run from exit handlers). Binaries are compiled once per (architecture, key type).
const gpu::Module& sort_module(gpu::Device& dev, DType t) {
  static std::mutex mutex;
  static auto* binaries = new std::map<std::pair<std::string, DType>, Binary>();
  static auto* modules = new std::map<std::pair<int, DType>, std::unique_ptr<gpu::Module>>();
  std::lock_guard lock(mutex);
  auto& slot = (*modules)[{dev.info().ordinal, t}];
  if (!slot) {
    const std::string arch = dev.info().arch();
    auto it = binaries->find({arch, t});
    if (it == binaries->end())
      it = binaries->emplace(std::pair{arch, t}, compile_source(sort_source(t), "kiln_sort", arch, {}, false)).first;
    slot = std::make_unique<gpu::Module>(dev, it->second.arch, it->second.cubin, it->second.ptx, sort_entries());
  }
  return *slot;
}

unsigned grid_for(std::int64_t total) {
  return static_cast<unsigned>(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 65536));
}

}  // namespace

std::string sort_source(DType t) {
  return ir::sem::with_type(t, [&](auto zero) {
    using K = ir::sort::SortKey<decltype(zero)>;
    const char* decode = K::cuda_decode ? K::cuda_decode : "(void)code; x = (key_t)0;";  // mode 1 only
    return fmt::format("// kiln's sort kernels for {} keys (codegen/cuda/sort_kernels.cpp)\ntypedef {} key_t;\n"
                       "typedef {} code_t;\n#define KILN_ENCODE {}\n#define KILN_DECODE {}\n{}",
                       name_of(t), c_type(t), K::cuda_code, K::cuda_encode, decode, kKernels);
  });
}

std::vector<std::string> sort_entries() {
  return {"kiln_sort_encode", "kiln_sort_hist", "kiln_sort_scan", "kiln_sort_scatter", "kiln_sort_finish"};
}

void sort_on_device(CallState& call, DType t, std::uint64_t keys, std::uint64_t positions, std::int64_t rows,
                    std::int64_t n, const std::string& what, const std::string& label) {
  const std::int64_t total = rows * n;
  if (total <= 0) return;
  const gpu::Module& m = sort_module(call.dev, t);
  const std::size_t code_bytes = static_cast<std::size_t>(size_of(t));  // a code is as wide as its key
  const bool gather = ir::sem::with_type(t, [](auto zero) { return ir::sort::SortKey<decltype(zero)>::cuda_decode == nullptr; });
  int carry = positions || gather;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  const auto bytes = static_cast<std::size_t>(total);
  CUdeviceptr code[2] = {call.alloc(bytes * code_bytes, "sort codes of " + what),
                         call.alloc(bytes * code_bytes, "sort codes of " + what)};
  CUdeviceptr pos[2] = {carry ? call.alloc(bytes * 8, "sort positions of " + what) : 0,
                        carry ? call.alloc(bytes * 8, "sort positions of " + what) : 0};
  const CUdeviceptr hist = call.alloc(static_cast<std::size_t>(rows * 256 * tiles) * 8, "sort counts of " + what);
  const CUdeviceptr same = call.alloc(static_cast<std::size_t>(rows) * sizeof(int), "sort digit flags of " + what);
  // The positions the sort permutes, read from a copy: the finish kernel writes them in place.
  const CUdeviceptr payload = positions ? call.alloc(bytes * 8, "sort payload of " + what) : 0;
  if (payload)
    call.check(gpu::driver().cuMemcpyDtoDAsync(payload, positions, bytes * 8, call.stream), "copying sort positions");
  auto launch = [&](Entry e, unsigned grid, unsigned block, std::initializer_list<void*> params) {
    std::vector<void*> p(params);
    gpu::launch(call.stream, m.function(e), {grid, 1, 1}, {block, 1, 1}, p.data());
  };
  call.pending.push_back(&label);
  std::int64_t nn = n, tt = tiles, tot = total;
  CUdeviceptr k = keys;
  launch(kEncode, grid_for(total), kThreads, {&k, &code[0], &pos[0], &tot, &nn, &carry});
  const auto blocks = static_cast<unsigned>(rows * tiles);
  int cur = 0;
  for (int shift = 0; shift < static_cast<int>(code_bytes) * 8; shift += 8) {
    int s = shift, c = carry;
    CUdeviceptr h = hist, f = same;
    launch(kHist, blocks, kThreads, {&code[cur], &h, &nn, &tt, &s});
    launch(kScan, static_cast<unsigned>(rows), kScanThreads, {&h, &f, &tt});
    launch(kScatter, blocks, kThreads, {&code[cur], &code[cur ^ 1], &pos[cur], &pos[cur ^ 1], &h, &f, &nn, &tt, &s, &c});
    cur ^= 1;
  }
  // Gathered keys go to the free code buffer (as wide as the keys), then back into the keys.
  int mode = gather ? 1 : 0;
  CUdeviceptr out = positions, in = payload, spare = code[cur ^ 1];
  launch(kFinish, grid_for(total), kThreads, {&k, &code[cur], &pos[cur], &out, &in, &spare, &tot, &nn, &mode});
  if (gather) call.check(gpu::driver().cuMemcpyDtoDAsync(keys, spare, bytes * code_bytes, call.stream), "copying sorted keys");
  for (CUdeviceptr p : {code[0], code[1], pos[0], pos[1], hist, same, payload})
    if (p) call.release(p);
}

std::function<void(ir::Frame&)> DeviceMachine::sort(const ir::SortStmt& s, ir::HostScope& scope) const {
  const int keys = scope.array(s.keys.get()), positions = s.positions ? scope.array(s.positions.get()) : -1;
  const DType t = s.keys->type.elem;
  const int rank = s.keys->type.rank;
  const std::string what = s.keys->name, label = "kiln's sort of " + what;
  return [keys, positions, t, rank, what, label](ir::Frame& fr) {
    const ArrayDesc& d = fr.arrays[static_cast<size_t>(keys)];
    std::int64_t rows = 1;
    for (int k = 0; k + 1 < rank; ++k) rows *= d.shape[k];
    const auto p = positions < 0 ? 0 : reinterpret_cast<std::uint64_t>(fr.arrays[static_cast<size_t>(positions)].data);
    sort_on_device(*static_cast<CallState*>(fr.machine_state), t, reinterpret_cast<std::uint64_t>(d.data), p, rows,
                   d.shape[rank - 1], what, label);
  };
}

}  // namespace kiln::codegen::cuda
