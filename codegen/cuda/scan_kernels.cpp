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

// Published values (both kernels). A value another tile reads is written once into zeroed words of 64 bits, each
// carrying a mark in its high half (a value of 8 bytes takes two words, its halves): a reader that sees the mark
// sees the whole word, since aligned 64-bit accesses are single-copy atomic in the PTX memory model, so neither
// side needs a fence, and one relaxed load of 16 bytes (two such accesses) reads a value and its mark at once.
constexpr const char* kStatus = R"(
#define KILN_B 1024
#define KILN_VEC ((int)(16 / sizeof(acc_t)))
typedef unsigned long long kiln_u64;
struct __align__(16) kiln_slot { kiln_u64 w[2]; };
// A value's bits in the low bytes of a word, and back (in registers).
__device__ __forceinline__ kiln_u64 kiln_bits(double v) { return (kiln_u64)__double_as_longlong(v); }
__device__ __forceinline__ kiln_u64 kiln_bits(float v) { return (kiln_u64)__float_as_uint(v); }
template <class T> __device__ __forceinline__ kiln_u64 kiln_bits(T v) {
  return sizeof(T) == 1 ? (kiln_u64)(unsigned char)v : sizeof(T) == 2 ? (kiln_u64)(unsigned short)v
       : sizeof(T) == 4 ? (kiln_u64)(unsigned)v : (kiln_u64)v;
}
__device__ __forceinline__ double kiln_value_as(kiln_u64 b, double*) { return __longlong_as_double((long long)b); }
__device__ __forceinline__ float kiln_value_as(kiln_u64 b, float*) { return __uint_as_float((unsigned)b); }
template <class T> __device__ __forceinline__ T kiln_value_as(kiln_u64 b, T*) { return (T)b; }
__device__ __forceinline__ acc_t kiln_value(kiln_u64 b) { return kiln_value_as(b, (acc_t*)0); }
__device__ __forceinline__ void kiln_publish(kiln_slot* p, acc_t v, unsigned mark) {
  const kiln_u64 b = kiln_bits(v), m = (kiln_u64)mark << 32;
  if (sizeof(acc_t) > 4)
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" :: "l"(p), "l"(m | (b >> 32)), "l"(m | (b & 0xffffffffull)) : "memory");
  else
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(m | b) : "memory");
}
// A published value's two words read at p (both the same word for values of 4 bytes), to be looked at later:
// the load is in flight until kiln_mark uses its result.
__device__ __forceinline__ void kiln_request(const kiln_slot* p, kiln_u64* a, kiln_u64* b) {
  if (sizeof(acc_t) > 4) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(*a) : "l"(p) : "memory");
    *b = *a;
  }
}
// The mark of words read by kiln_request (0: not yet written, or its halves of different writes) and the value.
__device__ __forceinline__ unsigned kiln_mark(kiln_u64 a, kiln_u64 b, acc_t* v) {
  if (sizeof(acc_t) > 4) {
    if ((a >> 32) != (b >> 32)) return 0;
    *v = kiln_value((a << 32) | (b & 0xffffffffull));
  } else {
    *v = kiln_value(a & 0xffffffffull);
  }
  return (unsigned)(a >> 32);
}
__device__ __forceinline__ unsigned kiln_take(const kiln_slot* p, acc_t* v) {
  kiln_u64 a, b;
  kiln_request(p, &a, &b);
  return kiln_mark(a, b, v);
}
__device__ __forceinline__ acc_t kiln_wait(const kiln_slot* p) {
  acc_t v;
  while (!kiln_take(p, &v)) {}
  return v;
}
__device__ __forceinline__ void kiln_copy16(void* smem, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(global) : "memory");
}
__device__ __forceinline__ void kiln_copies_done() { asm volatile("cp.async.wait_all;" ::: "memory"); }
union kiln_chunk { uint4 q; acc_t e[KILN_VEC]; };
)";

// The kernel in kiln's order (float sums and products, where the order decides the bits); src_t, acc_t, out_t,
// KILN_OP, KILN_OUT, KILN_ROWS and the prelude come first (scan_source). A tile's element e (in line order)
// lives in shared memory at row e / 1024, column e % 1024; rows are padded by 16 bytes, so that they start
// 16-byte aligned (whole chunks move at once) and the walking lanes, one a row at the same column, read
// different banks.
constexpr const char* kOrdered = R"(
#define KILN_THREADS 128
#define KILN_TILE (KILN_ROWS * KILN_B)
#define KILN_STRIDE (KILN_B + KILN_VEC)
#define KILN_GROUP_CHUNKS 4
// A tile arrives in bands: band j is elements [j * KILN_BAND, (j + 1) * KILN_BAND) of each of its rows, one group
// of asynchronous copies, so that the walks start on band 0 while the later bands are still in flight.
#define KILN_BANDS 8
#define KILN_BAND (KILN_B / KILN_BANDS)
#define KILN_BAND_CHUNKS (KILN_ROWS * KILN_BAND / KILN_VEC)

// Waits until at most `left` of this thread's groups of copies are still in flight (wait_group takes a constant).
__device__ __forceinline__ void kiln_copies_left(int left) {
  switch (left) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
  }
}

// Walks elements [k0, k0 + KILN_BAND) of a full row in place, continuing acc (element 0 starts it: the row is
// scanned from its first element), four chunks at a time with the next four already read (within the band: the
// next band may not have arrived).
__device__ __forceinline__ acc_t kiln_walk_band(acc_t* row, int k0, acc_t acc) {
  kiln_chunk c[KILN_GROUP_CHUNKS], nx[KILN_GROUP_CHUNKS];
  #pragma unroll
  for (int q = 0; q < KILN_GROUP_CHUNKS; ++q) c[q].q = ((const uint4*)(row + k0))[q];
  if (k0 == 0) acc = c[0].e[0];
  #pragma unroll 1
  for (int k = k0; k < k0 + KILN_BAND; k += KILN_GROUP_CHUNKS * KILN_VEC) {
    if (k + KILN_GROUP_CHUNKS * KILN_VEC < k0 + KILN_BAND) {
      #pragma unroll
      for (int q = 0; q < KILN_GROUP_CHUNKS; ++q) nx[q].q = ((const uint4*)(row + k + KILN_GROUP_CHUNKS * KILN_VEC))[q];
    }
    #pragma unroll
    for (int q = 0; q < KILN_GROUP_CHUNKS; ++q) {
      #pragma unroll
      for (int i = 0; i < KILN_VEC; ++i) {
        if (q != 0 || i != 0) acc = KILN_OP(acc, c[q].e[i]);
        else if (k != 0) acc = KILN_OP(acc, c[0].e[0]);
        c[q].e[i] = acc;
      }
    }
    #pragma unroll
    for (int q = 0; q < KILN_GROUP_CHUNKS; ++q) ((uint4*)(row + k))[q] = c[q].q;
    #pragma unroll
    for (int q = 0; q < KILN_GROUP_CHUNKS; ++q) c[q] = nx[q];
  }
  return acc;
}

// The group's folder: warp 0 of the group's first tile t0, once its own fold (acc, in every lane) is out, folds
// the totals of the tiles after it, t0 + 1 .. te - 1, in order, publishes each tile's fold, and returns the fold
// after tile te - 1 (in every lane). te is one past the group's last tile when a later group of the line needs
// the chain through this one (every tile of the group is then full), else the group's last tile (the line's last,
// which may have fewer blocks; its fold nobody reads). A tile waits on one word, its predecessor's fold, and the
// chain of dependent operations runs in one warp's registers instead of passing from tile to tile through memory.
// A round reads 32 KILN_FQ consecutive totals from tile u0 on, KILN_FQ a lane
// (coalesced; they were requested before the previous round's fold), takes the whole tiles at its start whose
// totals are all out, every lane folding the same values in the same order (buf, read by all lanes at once), and
// lane i keeps the fold after tile u0 + i and publishes it; the next round starts at the first tile not taken.
// Forward progress: a tile publishes its totals before it waits on anything. The folder publishes tile u's fold
// once the totals of tiles up to u are out, so a tile waiting on its predecessor's fold waits on tiles with
// earlier tickets only, all started; the folder itself waits on later tiles, which need a block of threads
// besides the folder's (scan_on_device requires at least 2 SMs), and on the chain before its group, which the
// folder of the group before (an earlier ticket) publishes once that group's tiles (earlier tickets) are out.
#define KILN_FQ (KILN_ROWS < 4 ? KILN_ROWS : 4)
#define KILN_FT (32 * KILN_FQ / KILN_ROWS)
__device__ acc_t kiln_fold_group(kiln_slot* fold, const kiln_slot* totals, long long t0, long long te, acc_t acc,
                                 acc_t* buf) {
  const int lane = threadIdx.x & 31;
  const long long end = te * KILN_ROWS;  // one past the last total folded
  kiln_u64 wa[KILN_FQ], wb[KILN_FQ];
  long long u0 = t0 + 1;
  #pragma unroll
  for (int j = 0; j < KILN_FQ; ++j) {
    const long long k = u0 * KILN_ROWS + j * 32 + lane;
    if (k < end) kiln_request(totals + k, &wa[j], &wb[j]);
  }
  while (u0 < te) {
    const long long k0 = u0 * KILN_ROWS;
    const int span = (int)min(32LL * KILN_FQ, end - k0);  // the totals of this round's tiles
    acc_t v[KILN_FQ];
    bool ok[KILN_FQ];
    #pragma unroll
    for (int j = 0; j < KILN_FQ; ++j) ok[j] = j * 32 + lane >= span || kiln_mark(wa[j], wb[j], &v[j]) != 0;
    int cnt;  // whole tiles out from u0 on
    for (;;) {
      int have = span;
      #pragma unroll
      for (int j = KILN_FQ - 1; j >= 0; --j) {
        const unsigned m = __ballot_sync(~0u, ok[j]);
        if (m != ~0u) have = j * 32 + __ffs(~m) - 1;
      }
      cnt = min(have, span) / KILN_ROWS;
      if (cnt > 0) break;
      #pragma unroll
      for (int j = 0; j < KILN_FQ; ++j)  // none whole yet: read the missing ones again
        if (!ok[j]) ok[j] = kiln_take(totals + k0 + j * 32 + lane, &v[j]) != 0;
    }
    #pragma unroll
    for (int j = 0; j < KILN_FQ; ++j)
      if (j * 32 + lane < cnt * KILN_ROWS) buf[j * 32 + lane] = v[j];
    __syncwarp();
    #pragma unroll
    for (int j = 0; j < KILN_FQ; ++j) {  // the next round's totals, looked at after this round's fold
      const long long k = (u0 + cnt) * KILN_ROWS + j * 32 + lane;
      if (k < end) kiln_request(totals + k, &wa[j], &wb[j]);
    }
    acc_t kept = acc;
    if (cnt == KILN_FT) {
      #pragma unroll
      for (int i = 0; i < KILN_FT; ++i) {
        #pragma unroll
        for (int r = 0; r < KILN_ROWS; ++r) acc = KILN_OP(acc, buf[i * KILN_ROWS + r]);
        if (lane == i) kept = acc;
      }
    } else {
      for (int i = 0; i < cnt; ++i) {
        #pragma unroll
        for (int r = 0; r < KILN_ROWS; ++r) acc = KILN_OP(acc, buf[i * KILN_ROWS + r]);
        if (lane == i) kept = acc;
      }
    }
    if (lane < cnt) kiln_publish(fold + u0 + lane, kept, 1u);
    __syncwarp();
    u0 += cnt;
  }
  return acc;
}

// One tile per block of threads. Per line: `tiles` tiles, `groups` groups of 1024 blocks. Published: each
// block's total (totals, KILN_ROWS a tile), each tile's fold up to its last block (fold), each group's chain
// (chain); all zeroed before the launch, as the tile counter.
extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS) kiln_scan(
    const src_t* src, out_t* out, long long n, long long tiles, long long groups, acc_t ident, int exclusive,
    kiln_slot* __restrict__ totals, kiln_slot* __restrict__ fold, kiln_slot* __restrict__ chain,
    unsigned long long* __restrict__ ticket) {
  extern __shared__ __align__(16) unsigned char kiln_smem[];
  acc_t* s = (acc_t*)kiln_smem;
  __shared__ acc_t carry[KILN_ROWS], tot[KILN_ROWS], buf[32 * KILN_FQ];
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
  // 1. The tile into shared memory. Where it is full and aligned and needs no conversion, warp 0 copies it by
  // asynchronous 16-byte copies, all in flight at once, band by band (a group of copies a band), so that the walks
  // below start as soon as band 0 has landed; else every thread element by element.
  const bool whole = sizeof(src_t) == sizeof(acc_t) && count == KILN_TILE && ((unsigned long long)x & 15) == 0;
  if (whole) {
    if (tid < 32) {
      #pragma unroll 1
      for (int j = 0; j < KILN_BANDS; ++j) {
        for (int c = tid; c < KILN_BAND_CHUNKS; c += 32) {
          const int r = c / (KILN_BAND / KILN_VEC), e = j * KILN_BAND + c % (KILN_BAND / KILN_VEC) * KILN_VEC;
          kiln_copy16(s + r * KILN_STRIDE + e, x + r * KILN_B + e);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
      }
    }
  } else {
    for (int e = tid; e < count; e += KILN_THREADS) s[(e >> 10) * KILN_STRIDE + (e & (KILN_B - 1))] = (acc_t)x[e];
  }
  __syncthreads();
  const long long status = line * tiles + t;
  const long long g = b0 / KILN_B;
  const bool first_of_group = b0 % KILN_B == 0;
  if (tid < 32) {
    // 2. Each block scanned in order from its first element, a lane a row, band by band as the bands land (each
    // lane waits for its own copies of the band, then the warp's barrier orders the other lanes' before the
    // reads); its total published at once.
    acc_t acc = ident;
    if (whole) {
      #pragma unroll 1
      for (int j = 0; j < KILN_BANDS; ++j) {
        kiln_copies_left(KILN_BANDS - 1 - j);
        __syncwarp();
        if (tid < KILN_ROWS) acc = kiln_walk_band(s + tid * KILN_STRIDE, j * KILN_BAND, acc);
      }
    } else if (tid < rows) {
      acc_t* row = s + tid * KILN_STRIDE;
      const int len = min(KILN_B, count - tid * KILN_B);
      if (len == KILN_B) {
        #pragma unroll 1
        for (int j = 0; j < KILN_BANDS; ++j) acc = kiln_walk_band(row, j * KILN_BAND, acc);
      } else {
        acc = row[0];
        for (int k = 1; k < len; ++k) { acc = KILN_OP(acc, row[k]); row[k] = acc; }
      }
    }
    if (tid < rows) {
      tot[tid] = acc;
      kiln_publish(totals + status * KILN_ROWS + tid, acc, 1u);
    }
    __syncwarp();
    // 3. The tile's folds (lane 0) after the fold before it: none for the group's first tile, which publishes its
    // fold, folds the rest of the group (warp 0, kiln_fold_group) and publishes the chain through its group where
    // a later group of the line needs it; the fold its predecessor's slot holds for every other tile, which
    // requests it together with the chain of the groups before its group (one round trip for both).
    acc_t before = ident, own = ident, ch = ident;
    if (tid == 0) {
      bool need_fold = !first_of_group, need_chain = g > 0 && !first_of_group;
      while (need_fold || need_chain) {
        kiln_u64 fa = 0, fb = 0, ca = 0, cb = 0;
        if (need_fold) kiln_request(fold + status - 1, &fa, &fb);
        if (need_chain) kiln_request(chain + line * groups + g - 1, &ca, &cb);
        if (need_fold && kiln_mark(fa, fb, &before) != 0) need_fold = false;
        if (need_chain && kiln_mark(ca, cb, &ch) != 0) need_chain = false;
      }
      // carry[r], before the chain: the fold up to total(b0 + r - 1) within the group (the group's first tile
      // folds from its own first total; a line's last tile may have fewer blocks).
      acc_t fr = before;
      #pragma unroll
      for (int r = 0; r < KILN_ROWS; ++r) {
        carry[r] = fr;
        if (r < rows) fr = r == 0 && first_of_group ? tot[0] : KILN_OP(fr, tot[r]);
      }
      own = fr;
      if (first_of_group) kiln_publish(fold + status, own, 1u);
    }
    if (first_of_group) {
      const long long tl = min(t + KILN_B / KILN_ROWS, tiles) - 1;  // the group's last tile
      const bool chained = g + 1 < groups;                          // a later group of the line needs its chain
      const long long te = chained ? tl + 1 : tl;
      acc_t last = kiln_value(__shfl_sync(~0u, kiln_bits(own), 0));
      if (t + 1 < te) last = kiln_fold_group(fold + line * tiles, totals + line * tiles * KILN_ROWS, t, te, last, buf);
      if (tid == 0) {
        if (g > 0) ch = kiln_wait(chain + line * groups + g - 1);
        if (chained) kiln_publish(chain + line * groups + g, g > 0 ? KILN_OP(ch, last) : last, 1u);
      }
    }
    if (tid == 0) {
      // Block b0 + r's carry: the fold up to total(b0 + r - 1) after the chain of the groups before its group (the
      // group's first block: the chain alone; the line's first: none).
      if (g > 0) {
        #pragma unroll
        for (int r = 0; r < KILN_ROWS; ++r) carry[r] = r == 0 && first_of_group ? ch : KILN_OP(ch, carry[r]);
      }
      if (b0 == 0) carry[0] = ident;
    }
  }
  __syncthreads();
  // 4. Every element: its running value (inclusive) or the one before it (exclusive), after its carry; the line's
  // block 0 takes none. Whole chunks where the tile is full and aligned.
  if (!exclusive && sizeof(out_t) == sizeof(acc_t) && count == KILN_TILE && ((unsigned long long)y & 15) == 0) {
    for (int c = tid; c < KILN_TILE / KILN_VEC; c += KILN_THREADS) {
      const int e = c * KILN_VEC, r = e >> 10;
      kiln_chunk v;
      v.q = *(const uint4*)(s + r * KILN_STRIDE + (e & (KILN_B - 1)));
      if (b0 + r != 0) {
        const acc_t cr = carry[r];
        #pragma unroll
        for (int i = 0; i < KILN_VEC; ++i) v.e[i] = KILN_OP(cr, v.e[i]);
      }
      *(uint4*)(y + e) = v.q;
    }
    return;
  }
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

// The kernel in any association (integers, which wrap, and min/max, which pick an element: every association
// gives the defined bits, docs/scans.md): a tile is 256 threads' 16 values each (4096: 64 bytes a thread of 4-byte
// values, 128 of 8-byte ones, as CUB's sm_90 tuning gives both sizes as many values a thread; with 64 bytes the
// 8-byte scans had twice the tiles, and look-backs, per element); each thread scans its values in
// registers, the warps their threads' totals by shuffles, and warp 0 looks back over 32 earlier tiles a round trip
// (each publishes its aggregate as soon as its own values are scanned, then its inclusive prefix). In shared
// memory, 16-byte chunk q lives at q + q / 8: the chunks the eight threads of a quarter warp read at once (64 or
// 128 bytes apart) fall on different banks.
constexpr const char* kAnyOrder = R"(
#define KILN_THREADS 256
#define KILN_ITEMS KILN_TREE_VALUES
#define KILN_TILE (KILN_THREADS * KILN_ITEMS)
#define KILN_CHUNKS (KILN_ITEMS / KILN_VEC)
__device__ __forceinline__ int kiln_at(int e) { const int q = e / KILN_VEC; return (q + (q >> 3)) * KILN_VEC + e % KILN_VEC; }

// The prefix of the tiles before t (t > 0), by warp 0, in every lane: 32 tiles' marks and values a round trip,
// back to the nearest inclusive prefix (mark 2); tiles before the line's first count as the identity.
__device__ acc_t kiln_prefix(const kiln_slot* st, long long t, acc_t ident) {
  const int lane = threadIdx.x & 31;
  acc_t total = ident;
  bool have = false;
  for (long long w = t;; w -= 32) {
    const long long j = w - 32 + lane;
    acc_t v = ident;
    unsigned mark = 2;
    if (j >= 0) { while ((mark = kiln_take(st + j, &v)) == 0) {} }
    const unsigned m = __ballot_sync(~0u, mark == 2);
    const int h = 31 - __clz(m);  // m != 0: lanes before the line count as inclusive; else the window had one
    acc_t x = lane >= h ? v : ident;
    #pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const acc_t y = __shfl_down_sync(~0u, x, off);
      if (lane + off < 32) x = KILN_OP(x, y);
    }
    x = __shfl_sync(~0u, x, 0);
    total = have ? KILN_OP(x, total) : x;
    have = true;
    if (m) break;
  }
  return total;
}

extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS) kiln_scan(
    const src_t* src, out_t* out, long long n, long long tiles, acc_t ident, int exclusive,
    kiln_slot* __restrict__ st, unsigned long long* __restrict__ ticket) {
  extern __shared__ __align__(16) unsigned char kiln_smem[];
  acc_t* s = (acc_t*)kiln_smem;
  __shared__ acc_t warp_total[KILN_THREADS / 32];
  __shared__ acc_t prefix;
  __shared__ long long tk;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) tk = (long long)atomicAdd(ticket, 1ull);
  __syncthreads();
  const long long line = tk / tiles, t = tk % tiles;
  const long long e0 = t * KILN_TILE;
  const int count = (int)min((long long)KILN_TILE, n - e0);
  const src_t* x = src + line * n + e0;
  out_t* y = out + line * n + e0;
  const bool whole = sizeof(src_t) == sizeof(acc_t) && count == KILN_TILE && ((unsigned long long)x & 15) == 0;
  if (whole) {
    for (int c = tid; c < KILN_TILE / KILN_VEC; c += KILN_THREADS) kiln_copy16(s + (c + (c >> 3)) * KILN_VEC, x + c * KILN_VEC);
    kiln_copies_done();
  } else {
    for (int e = tid; e < KILN_TILE; e += KILN_THREADS) s[kiln_at(e)] = e < count ? (acc_t)x[e] : ident;
  }
  __syncthreads();
  // The thread's values, scanned in registers.
  acc_t v[KILN_ITEMS];
  #pragma unroll
  for (int c = 0; c < KILN_CHUNKS; ++c) {
    const int q = tid * KILN_CHUNKS + c;
    kiln_chunk ch;
    ch.q = *(const uint4*)(s + (q + (q >> 3)) * KILN_VEC);
    #pragma unroll
    for (int i = 0; i < KILN_VEC; ++i) v[c * KILN_VEC + i] = ch.e[i];
  }
  #pragma unroll
  for (int i = 1; i < KILN_ITEMS; ++i) v[i] = KILN_OP(v[i - 1], v[i]);
  // The warp's inclusive scan of its threads' totals, then the warps'.
  acc_t inc = v[KILN_ITEMS - 1];
  #pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const acc_t o = __shfl_up_sync(~0u, inc, off);
    if (lane >= off) inc = KILN_OP(o, inc);
  }
  if (lane == 31) warp_total[warp] = inc;
  acc_t before = __shfl_up_sync(~0u, inc, 1);  // the warp's threads before this one
  __syncthreads();
  acc_t agg = warp_total[0], wbefore = ident;
  #pragma unroll
  for (int k = 1; k < KILN_THREADS / 32; ++k) {
    if (k == warp) wbefore = agg;
    agg = KILN_OP(agg, warp_total[k]);
  }
  if (warp == 0) {
    const long long status = line * tiles + t;
    acc_t p = ident;
    if (t == 0) {
      if (lane == 0) kiln_publish(st + status, agg, 2u);
    } else {
      if (lane == 0) kiln_publish(st + status, agg, 1u);
      p = kiln_prefix(st + line * tiles, t, ident);
      if (lane == 0) kiln_publish(st + status, KILN_OP(p, agg), 2u);
    }
    if (lane == 0) prefix = p;
  }
  __syncthreads();
  // The thread's prefix: the tiles before, the warps before, the warp's threads before.
  acc_t pre = KILN_OP(prefix, wbefore);
  if (lane > 0) pre = KILN_OP(pre, before);
  #pragma unroll
  for (int c = 0; c < KILN_CHUNKS; ++c) {
    const int q = tid * KILN_CHUNKS + c;
    kiln_chunk ch;
    #pragma unroll
    for (int i = 0; i < KILN_VEC; ++i) {
      const int k = c * KILN_VEC + i;
      ch.e[i] = exclusive ? (k == 0 ? pre : KILN_OP(pre, v[k - 1])) : KILN_OP(pre, v[k]);
    }
    *(uint4*)(s + (q + (q >> 3)) * KILN_VEC) = ch.q;
  }
  __syncthreads();
  if (sizeof(out_t) == sizeof(acc_t) && count == KILN_TILE && ((unsigned long long)y & 15) == 0) {
    for (int c = tid; c < KILN_TILE / KILN_VEC; c += KILN_THREADS)
      *(uint4*)(y + c * KILN_VEC) = *(const uint4*)(s + (c + (c >> 3)) * KILN_VEC);
  } else {
    for (int e = tid; e < count; e += KILN_THREADS) y[e] = KILN_OUT(s[kiln_at(e)]);
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

/// Modules per (device, types, operator, form), made once and kept for the process (as every kiln process-wide
/// object: kernels may run from exit handlers); binaries once per architecture and the rest.
using Key = std::tuple<DType, DType, DType, ReduceOp, bool, int>;

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
      const auto [from, t, to, op, any, rows] = key;
      it = binaries->emplace(std::tuple{arch, key}, compile_source(scan_source(from, t, to, op, ScanForm{any, rows}),
                                                                   "kiln_scan", arch, {}))
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

/// Dynamic shared memory of a tile: the ordered form's rows of 1024 values and 16 bytes; the any-order form's
/// 16-byte chunks with one more each 8.
std::size_t shared_bytes(DType t, ScanForm form) {
  const auto size = static_cast<std::size_t>(size_of(t));
  if (form.any_order) return std::size_t{kScanAnyThreads} * kScanTreeValues * size / 16 * 9 / 8 * 16;
  return static_cast<std::size_t>(form.rows) * (ir::sem::kScanBlock * size + 16);
}

}  // namespace

int scan_tile_rows(DType t, int tile_kib) {
  const int rows = static_cast<int>(std::int64_t{tile_kib} * 1024 / (ir::sem::kScanBlock * size_of(t)));
  int p = 1;
  // A power of two (groups of carries start at tile boundaries), at most 32: a lane of warp 0 walks each block.
  while (p * 2 <= std::min(rows, 32)) p *= 2;
  return p;
}

bool scan_any_order(DType t, ReduceOp op) {
  const bool exact = !is_float(t) || op == ReduceOp::Min || op == ReduceOp::Max;
  return exact && (size_of(t) == 4 || size_of(t) == 8);
}

ScanForm scan_form(DType t, ReduceOp op, int tile_kib) {
  return scan_any_order(t, op) ? ScanForm{true, 0} : ScanForm{false, scan_tile_rows(t, tile_kib)};
}

std::string scan_form_reason(DType t, ReduceOp op, int tile_kib) {
  const ScanForm f = scan_form(t, op, tile_kib);
  if (f.any_order)
    return fmt::format("a tree scan of tiles of {} values ({} {} gives the same bits in any association: {}), "
                       "looking back over 32 tiles a round trip",
                       kScanAnyThreads * kScanTreeValues, name_of(t), ir::name_of(op),
                       is_float(t) ? "min and max pick an element" : "integers wrap");
  return fmt::format("blocks of 1024 walked in order, a lane each, {} a tile ({} KiB; {} {} {}, so kiln's order is "
                     "kept), a whole tile copied in 8 bands and walked band by band as they land, the totals of each "
                     "group of 1024 blocks folded in order by one warp as they come, each tile waiting on its "
                     "predecessor's fold and the chain before its group at once, the folder publishing the chain "
                     "through its group",
                     f.rows, f.rows * size_of(t), name_of(t), ir::name_of(op),
                     is_float(t) ? "depends on the order" : "has values of 1 or 2 bytes, which the tree form does not take");
}

std::string scan_source(DType source, DType type, DType out, ReduceOp op, ScanForm form) {
  if (!ir::scan_stmt_types(source, type, out))
    throw ValueError(fmt::format("kiln's scan kernel: no scan of {} in {} into {}", name_of(source), name_of(type),
                                 name_of(out)));
  if (form.any_order && !scan_any_order(type, op))
    throw ValueError(fmt::format("kiln's scan kernel: a {} {} keeps kiln's order (not the tree form)", name_of(type),
                                 ir::name_of(op)));
  if (!form.any_order && (form.rows < 1 || form.rows > 32 || (form.rows & (form.rows - 1)) != 0))
    throw ValueError(fmt::format("kiln's scan kernel: {} blocks a tile; use a power of two up to 32 (a lane of a warp each)", form.rows));
  const std::string to_out = out == type ? "(v)" : "((v) != 0)";  // an int32 scan of bools back to bool
  // As many blocks of threads an SM as its shared memory holds tiles (an H100's 227 KiB), at most 8 (64
  // registers a thread for 128 threads); the any-order form's 256 threads at most 5 with values of 4 bytes (51
  // registers), 4 with values of 8 bytes (64: their 16 values take 32; with 48, ptxas spills).
  const std::size_t smem = shared_bytes(type, form);
  const std::size_t cap = !form.any_order ? 8 : size_of(type) == 8 ? 4 : 5;
  const int min_blocks = static_cast<int>(std::clamp<std::size_t>(227 * 1024 / (smem + 1024), 1, cap));
  return fmt::format("// kiln's scan kernel: {} in {} into {}, {}, {} (codegen/cuda/scan_kernels.cpp)\n{}\n"
                     "typedef {} src_t;\ntypedef {} acc_t;\ntypedef {} out_t;\n#define KILN_OP {}\n"
                     "#define KILN_OUT(v) {}\n#define KILN_ROWS {}\n#define KILN_MIN_BLOCKS {}\n#define KILN_TREE_VALUES {}\n{}{}",
                     name_of(source), name_of(type), name_of(out), ir::name_of(op),
                     form.any_order ? "any association" : "kiln's order", prelude(), type_name(source), type_name(type),
                     type_name(out), op_function(op), to_out, form.rows, min_blocks, kScanTreeValues, kStatus,
                     form.any_order ? kAnyOrder : kOrdered);
}

void scan_on_device(CallState& call, DType source_type, DType type, DType out_type, ReduceOp op, bool exclusive,
                    std::uint64_t source, std::uint64_t out, std::int64_t lines, std::int64_t n, int tile_kib,
                    const std::string& label) {
  if (lines <= 0 || n <= 0) return;
  const ScanForm form = scan_form(type, op, tile_kib);
  const std::size_t smem = shared_bytes(type, form);
  const gpu::Module& m = scan_module(call.dev, Key{source_type, type, out_type, op, form.any_order, form.rows}, smem);
  const std::int64_t per_tile = form.any_order ? std::int64_t{kScanAnyThreads} * kScanTreeValues
                                               : std::int64_t{form.rows} * ir::sem::kScanBlock;
  const std::int64_t tiles = (n + per_tile - 1) / per_tile;
  const std::int64_t blocks = (n + ir::sem::kScanBlock - 1) / ir::sem::kScanBlock,
                     groups = (blocks + ir::sem::kScanBlock - 1) / ir::sem::kScanBlock;
  // The ordered form's folder (a warp of each group's first tile) waits on tiles with later tickets: they need a
  // second resident block of threads (an SM holds one: the module asks for the tile's shared memory).
  if (!form.any_order && call.dev.info().sm_count < 2)
    throw DeviceError(fmt::format("{}: kiln's ordered scan needs a device of at least 2 SMs ({} has {})", label,
                                  call.dev.info().name, call.dev.info().sm_count));
  if (lines * tiles > 0x7fffffff)
    throw DeviceError(fmt::format("{}: {} tiles exceed CUDA's grid; scan fewer or shorter rows per call", label,
                                  lines * tiles));
  // The tile counter, then the published values (16 bytes each), all zeroed: a value's mark says it is out.
  const auto lt = static_cast<std::size_t>(lines * tiles), lg = static_cast<std::size_t>(lines * groups);
  const std::size_t slots = form.any_order ? lt : lt * static_cast<std::size_t>(form.rows) + lt + lg;
  const std::size_t bytes = 16 + slots * 16;
  const CUdeviceptr scratch = call.alloc(bytes, "scan status of " + label);
  call.check(gpu::driver().cuMemsetD8Async(scratch, 0, bytes, call.stream), "zeroing scan status");
  CUdeviceptr src = source, dst = out, ticket = scratch, totals = scratch + 16,
              fold = totals + lt * static_cast<std::size_t>(form.rows) * 16, chain = fold + lt * 16;
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
  void* ordered[] = {&src, &dst, &nn, &tt, &gg, &ident, &ex, &totals, &fold, &chain, &ticket};
  void* any[] = {&src, &dst, &nn, &tt, &ident, &ex, &totals, &ticket};
  call.pending.push_back(&label);
  gpu::launch(call.stream, m.function(0), {static_cast<unsigned>(lines * tiles), 1, 1},
              {static_cast<unsigned>(form.any_order ? kScanAnyThreads : kScanThreads), 1, 1},
              form.any_order ? any : ordered, static_cast<unsigned>(smem));
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
  scan_plans_.push_back(fmt::format("scan of {} ({} {}{}), one pass: {}", s.source->name, name_of(t), ir::name_of(op),
                                    exclusive ? ", exclusive" : "", scan_form_reason(t, op, tile_kib)));
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
