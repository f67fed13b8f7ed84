// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/sort_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "codegen/cuda/device_machine.hpp"
#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "ir/semantics.hpp"
#include "ir/sort_keys.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {
namespace {

constexpr int kThreads = 256;            // a digit per thread in every block
constexpr std::int64_t kCountTiles = 4;  // fewest tiles per block of the counting read (fewer global atomics)

const char* c_type(DType t) { return type_name(t); }  // the emitter's names (f16/bf16: their bits)

// The kernels; key_t, code_t, KILN_ENCODE, KILN_DECODE, KILN_LOSSY and KILN_ITEMS come first (sort_source). Elements of a
// tile are held warp by warp, item by item, lane by lane: item k of a thread is element e0 + 32 k, so loads
// are coalesced and the order of (warp, item, lane) is the input order that the stable ranks follow.
constexpr const char* kKernels = R"(
#define KILN_THREADS 256
#define KILN_WARPS (KILN_THREADS / 32)
#define KILN_TILE (KILN_THREADS * KILN_ITEMS)
#define KILN_PASSES ((int)sizeof(code_t))
#define KILN_ALL ((unsigned)0xffffffffu)
#define KILN_DIGIT(c, shift) ((int)((unsigned)((c) >> (shift)) & 255u))
// Look-back words: kind (1: the tile's own count, 2: the count of the row up to and including the tile) in
// bits 62-63, the pass + 1 in bits 56-61 (a word left by an earlier pass reads as not ready: one zeroing per
// sort), the count below.
#define KILN_AGGREGATE 1ull
#define KILN_PREFIX 2ull
#define KILN_COUNT_MASK ((1ull << 56) - 1ull)
#define KILN_LOOKBACK 8  // earlier tiles' words a look-back step reads at once

__device__ __forceinline__ code_t kiln_encode(key_t x) {
  code_t code;
  KILN_ENCODE
  return code;
}

__device__ __forceinline__ key_t kiln_decode(code_t code) {
  key_t x;
  KILN_DECODE
  return x;
}

// The exclusive sum of x over the block's threads in order (256 threads); `sums` holds KILN_WARPS values.
template <class T>
__device__ __forceinline__ T kiln_block_exclusive(T x, T* sums) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T inc = x;
  #pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const T y = __shfl_up_sync(KILN_ALL, inc, off);
    if (lane >= off) inc += y;
  }
  if (lane == 31) sums[warp] = inc;
  __syncthreads();
  T before = 0;
  for (int w = 0; w < warp; ++w) before += sums[w];
  __syncthreads();  // sums may be reused
  return before + inc - x;
}

// Byte `pass` of a code, the pass's digit: one byte permutation (PRMT), where a shift by the pass and a mask
// take two instructions of the integer pipe that bounds a digit pass.
__device__ __forceinline__ unsigned kiln_digit(code_t c, int pass) {
  const unsigned w = sizeof(code_t) > 4 && pass >= 4 ? (unsigned)((unsigned long long)c >> 32) : (unsigned)c;
  return __byte_perm(w, 0u, 0x4440u | (unsigned)(pass & 3));
}

// The lanes of the warp whose d (a number of BITS bits: 8 for a digit, 9 where 256 marks a lane without an
// element) equals this lane's: one ballot per bit, each lane keeping the lanes whose bit equals its own. In
// PTX because ptxas then makes a bit one vote and one predicated complement, the bits' predicates all come
// from d at once (R2P) and three-input ands combine the votes: about 2.5 instructions a bit, where the same
// loop in C++ compiled to 7 (shifts, masks, compares and selects; nvdisasm of sm_90 code). The digit passes
// are bound by the integer pipe (ncu, H100) and this is most of their work per key.
template <int BITS>
__device__ __forceinline__ unsigned kiln_peers(unsigned d) {
  unsigned same[BITS];
  #pragma unroll
  for (int bit = 0; bit < BITS; ++bit)
    asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\tand.b32 t, %1, %2;\n\tsetp.ne.u32 p, t, 0;\n\t"
                 "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t@!p not.b32 %0, %0;\n\t}"
                 : "=r"(same[bit]) : "r"(d), "r"(1u << bit));
  unsigned peers = same[0];
  #pragma unroll
  for (int bit = 1; bit < BITS; ++bit) peers &= same[bit];
  return peers;
}

// Each item's rank among the equal digits of its warp's items before it (items in order, lanes in order),
// and the warp's count per digit in `counts` (zero on entry). Digit 256: no element.
__device__ __forceinline__ void kiln_warp_rank(const int (&d)[KILN_ITEMS], unsigned (&rank)[KILN_ITEMS],
                                               unsigned short* counts) {
  const unsigned lane = threadIdx.x & 31u, below = (1u << lane) - 1u;
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k) {
#if __CUDA_ARCH__ >= 700
    const unsigned peers = __match_any_sync(KILN_ALL, d[k]);
#else
    const unsigned peers = kiln_peers<9>((unsigned)d[k]);
#endif
    const int leader = __ffs(peers) - 1;  // the lowest lane: ranks follow lane order
    unsigned old = 0;
    if (lane == (unsigned)leader && d[k] < 256) {
      old = counts[d[k]];
      counts[d[k]] = (unsigned short)(old + __popc(peers));
    }
    rank[k] = __shfl_sync(KILN_ALL, old, leader) + __popc(peers & below);
    __syncwarp();  // the next item's leader reads what this one wrote
  }
}

// Thread `digit`: the warps' counts of its digit become each warp's first place among the tile's keys of that
// digit (warps in order); returns the tile's count.
__device__ __forceinline__ unsigned kiln_warp_offsets(unsigned short (*counts)[256], int digit) {
  unsigned sum = 0;
  #pragma unroll
  for (int w = 0; w < KILN_WARPS; ++w) {
    const unsigned c = counts[w][digit];
    counts[w][digit] = (unsigned short)sum;
    sum += c;
  }
  return sum;
}

// The kernels' shared memory is dynamic: a tile of 8-byte payloads (argsort's positions) outgrows the 48 KiB of
// static shared memory above 16 keys per thread. sort_source sizes it (KILN_*_BYTES, checked here).
extern __shared__ __align__(16) unsigned char kiln_shared[];

struct KilnSmallShared {
  code_t sorted[KILN_TILE];
  unsigned short from[KILN_TILE];
  unsigned short counts[KILN_WARPS][256];
  unsigned first[256];
  unsigned sums[KILN_WARPS];
};
static_assert(sizeof(KilnSmallShared) <= KILN_SMALL_BYTES, "kiln_sort_small's shared memory, sized by sort_source");

// A row of at most a tile, sorted by block `row` in shared memory: every pass ranks the keys, held by the
// threads in order (warp by warp, item by item, lane by lane), and puts them and their tile positions in that
// pass's order; a pass whose digit every key shares is skipped. Keys and payload are then gathered through
// the positions, so every key comes back with its own bits.
extern "C" __global__ void __launch_bounds__(KILN_THREADS) kiln_sort_small(key_t* __restrict__ keys,
                                                                           long long* __restrict__ positions,
                                                                           long long n, int carry) {
  KilnSmallShared& sh = *reinterpret_cast<KilnSmallShared*>(kiln_shared);
  code_t* sorted = sh.sorted;
  unsigned short* from = sh.from;
  unsigned short (*counts)[256] = sh.counts;
  unsigned* first = sh.first;
  unsigned* sums = sh.sums;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  key_t* row = keys + (long long)blockIdx.x * n;
  const int e0 = warp * 32 * KILN_ITEMS + lane;  // item k is element e0 + 32 k
  code_t c[KILN_ITEMS];
  unsigned short at[KILN_ITEMS];
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k) {
    const int e = e0 + 32 * k;
    c[k] = e < n ? kiln_encode(row[e]) : (code_t)0;
    at[k] = (unsigned short)e;
  }
  for (int pass = 0; pass < KILN_PASSES; ++pass) {
    const int shift = 8 * pass;
    for (int q = tid; q < KILN_WARPS * 256; q += KILN_THREADS) (&counts[0][0])[q] = 0;
    __syncthreads();
    int d[KILN_ITEMS];
    unsigned rank[KILN_ITEMS];
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k) d[k] = e0 + 32 * k < n ? KILN_DIGIT(c[k], shift) : 256;
    kiln_warp_rank(d, rank, counts[warp]);
    __syncthreads();
    const unsigned total = kiln_warp_offsets(counts, tid);
    if (__syncthreads_or(total == (unsigned)n)) continue;  // one digit holds every key
    first[tid] = kiln_block_exclusive(total, sums);
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (d[k] < 256) {
        const unsigned p = first[d[k]] + counts[warp][d[k]] + rank[k];
        sorted[p] = c[k];
        from[p] = at[k];
      }
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (e0 + 32 * k < n) {
        c[k] = sorted[e0 + 32 * k];
        at[k] = from[e0 + 32 * k];
      }
  }
  // Every read of the row comes before any write (the block owns it).
  key_t x[KILN_ITEMS];
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k)
    if (e0 + 32 * k < n) x[k] = row[at[k]];
  __syncthreads();
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k)
    if (e0 + 32 * k < n) row[e0 + 32 * k] = x[k];
  if (carry) {
    long long* prow = positions + (long long)blockIdx.x * n;
    long long v[KILN_ITEMS];
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (e0 + 32 * k < n) v[k] = prow[at[k]];
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (e0 + 32 * k < n) prow[e0 + 32 * k] = v[k];
  }
}

// A row's plan, from its counts (`hist`: the row's, KILN_PASSES * 256): each pass's counts become the row's first
// slot per digit, base[pass * 256 + digit]; bit `pass` of *mask is set unless one digit holds every key (the
// pass is skipped). Made by the row's last block of kiln_sort_count: the counts are complete then.
__device__ __forceinline__ void kiln_plan_row(volatile const unsigned long long* hist, unsigned long long* base,
                                              unsigned* mask, long long n) {
  __shared__ unsigned long long sums[KILN_WARPS];
  unsigned long long count[KILN_PASSES];  // every pass's loads before the first scan waits on one
  #pragma unroll
  for (int pass = 0; pass < KILN_PASSES; ++pass) count[pass] = hist[pass * 256 + threadIdx.x];
  unsigned m = 0;
  #pragma unroll
  for (int pass = 0; pass < KILN_PASSES; ++pass) {
    base[pass * 256 + threadIdx.x] = kiln_block_exclusive(count[pass], sums);
    if (!__syncthreads_or(count[pass] == (unsigned long long)n)) m |= 1u << pass;
  }
  if (threadIdx.x == 0) *mask = m;
}

// One read of the keys: every pass's digit counts per row (block row * chunks + c takes `chunk` tiles of its
// row) into hist[(row * KILN_PASSES + pass) * 256 + digit], and the row's plan (kiln_plan_row) into base and
// mask, by the row's last block (done[row] counts them; null: no plan). With a payload (`carry`), whether each
// tile's is its indices in the row (argsort's positions are): a tile's that is not is copied to `orig`,
// flagged in moved_tiles and its row in `moved` (kiln_sort_finish then takes each position through its sorted
// index). For float keys also, per tile, the counts of negative keys, zeros and NaNs in tcount[tile * 3 +
// 0..2], the tile's zeros (from its start) and NaNs (from its end, backwards) in input order into `side`, and
// lossy[row] = 1 when a key does not come back from its code (-0.0, a NaN payload).
extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS) kiln_sort_count(
    const key_t* __restrict__ keys, unsigned long long* __restrict__ hist, unsigned* __restrict__ tcount,
    int* __restrict__ lossy, key_t* __restrict__ side, const long long* __restrict__ positions,
    long long* __restrict__ orig, unsigned* __restrict__ moved_tiles, int* __restrict__ moved,
    unsigned long long* __restrict__ base, unsigned* __restrict__ mask, unsigned* __restrict__ done, long long n,
    long long tiles, long long chunk, long long chunks, int carry) {
  __shared__ unsigned h[KILN_PASSES * 256 * 4];  // 4 copies, lane % 4's: a quarter of the same-digit conflicts
#if KILN_LOSSY
  __shared__ unsigned zero_sums[KILN_WARPS], nan_sums[KILN_WARPS];
  const code_t zero = (code_t)((code_t)1 << (8 * sizeof(code_t) - 1)), nan = (code_t)~(code_t)0;
#endif
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long row = blockIdx.x / chunks, part = blockIdx.x % chunks;
  for (int q = tid; q < KILN_PASSES * 256 * 4; q += KILN_THREADS) h[q] = 0;
  __syncthreads();
  unsigned* hl = h + (lane & 3);
  const int i0 = warp * 32 * KILN_ITEMS + lane;  // item k is the tile's element i0 + 32 k
  const long long t_end = min(tiles, (part + 1) * chunk);
  for (long long t = part * chunk; t < t_end; ++t) {
    const long long lo = row * n + t * KILN_TILE;
    const int count = (int)min((long long)KILN_TILE, n - t * KILN_TILE);
    const key_t* tk = keys + lo;
    key_t x[KILN_ITEMS];
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (i0 + 32 * k < count) x[k] = tk[i0 + 32 * k];
#if KILN_LOSSY
    unsigned neg = 0, zeros = 0, nans = 0;
    bool bad = false;
#endif
    // Each code is used where it is made (not kept: the registers allow more blocks).
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (i0 + 32 * k < count) {
        const code_t c = kiln_encode(x[k]);
        #pragma unroll
        for (int p = 0; p < KILN_PASSES; ++p) atomicAdd(&hl[(p * 256 + KILN_DIGIT(c, 8 * p)) * 4], 1u);
#if KILN_LOSSY
        neg += c < zero;
        zeros += c == zero;
        nans += c == nan;
        if (c == zero || c == nan) {  // the only codes that other keys share (sort_keys.hpp)
          union { key_t key; code_t bits; } a, b;
          a.key = x[k];
          b.key = kiln_decode(c);
          bad |= a.bits != b.bits;
        }
#endif
      }
#if KILN_LOSSY
    for (int off = 16; off > 0; off >>= 1) {
      neg += __shfl_xor_sync(KILN_ALL, neg, off);
      zeros += __shfl_xor_sync(KILN_ALL, zeros, off);
      nans += __shfl_xor_sync(KILN_ALL, nans, off);
    }
    unsigned* tc = tcount + (row * tiles + t) * 3;
    if (lane == 0) {
      if (neg) atomicAdd(&tc[0], neg);
      if (zeros) atomicAdd(&tc[1], zeros);
      if (nans) atomicAdd(&tc[2], nans);
    }
    if (__any_sync(KILN_ALL, bad) && lane == 0) atomicOr(&lossy[row], 1);
    if (__syncthreads_or(zeros + nans > 0)) {  // the tile's zeros and NaNs to `side`, in input order
      if (lane == 0) zero_sums[warp] = zeros, nan_sums[warp] = nans;
      __syncthreads();
      unsigned zb = 0, nb = 0;
      for (int w = 0; w < warp; ++w) zb += zero_sums[w], nb += nan_sums[w];
      const unsigned below = (1u << lane) - 1u;
      key_t* ts = side + lo;
      #pragma unroll
      for (int k = 0; k < KILN_ITEMS; ++k) {
        const bool valid = i0 + 32 * k < count;
        const code_t c = valid ? kiln_encode(x[k]) : (code_t)0;
        const bool is_zero = valid && c == zero, is_nan = valid && c == nan;
        const unsigned mz = __ballot_sync(KILN_ALL, is_zero), mn = __ballot_sync(KILN_ALL, is_nan);
        if (is_zero) ts[zb + __popc(mz & below)] = x[k];
        if (is_nan) ts[count - 1 - (nb + __popc(mn & below))] = x[k];
        zb += __popc(mz);
        nb += __popc(mn);
      }
      __syncthreads();  // the sums are reused by the next tile
    }
#endif
    if (carry) {  // is the tile's payload its indices in the row? Else a copy, for kiln_sort_finish (after the
                  // keys: their registers are free)
      bool same = true;
      #pragma unroll
      for (int k = 0; k < KILN_ITEMS; ++k)
        if (i0 + 32 * k < count) same &= positions[lo + i0 + 32 * k] == t * KILN_TILE + i0 + 32 * k;
      if (__syncthreads_or(!same)) {
        for (int j = tid; j < count; j += KILN_THREADS) orig[lo + j] = positions[lo + j];
        if (tid == 0) {
          moved_tiles[row * tiles + t] = 1u;
          atomicOr(&moved[row], 1);
        }
      }
    }
  }
  __syncthreads();
  unsigned long long* rh = hist + row * KILN_PASSES * 256;
  for (int q = tid; q < KILN_PASSES * 256; q += KILN_THREADS) {
    const unsigned sum = h[q * 4] + h[q * 4 + 1] + h[q * 4 + 2] + h[q * 4 + 3];
    if (sum) atomicAdd(&rh[q], (unsigned long long)sum);
  }
  // The row's last block to finish makes its plan (no kernel of its own: one launch fewer a sort). Each
  // thread's counts are out before the block's arrival is counted, and the last block reads them from L2.
  if (done == nullptr) return;  // the rows written from their counts (kiln_sort_fill) need no plan
  __shared__ int last;
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(&done[row], 1u) == (unsigned)(chunks - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  kiln_plan_row(rh, base + row * KILN_PASSES * 256, mask + row, n);
}

// The count of digit threadIdx.x in the row's tiles before tile t > 0, from their look-back words (`word`: tile
// 0's word of the digit; a tile's words are 256 apart). Each step reads the KILN_LOOKBACK tiles below the
// nearest one not summed yet at once (their loads overlap instead of following each other) and sums them from
// the nearest on while they are ready, up to one that holds the row's count up to it. Tile 0's word always
// holds that count, so the walk ends there at the latest.
__device__ __forceinline__ unsigned long long kiln_look_back(volatile unsigned long long* word, long long t,
                                                            unsigned long long tag) {
  unsigned long long earlier = 0;
  long long j = t - 1;
  for (;;) {
    unsigned long long s[KILN_LOOKBACK];
    #pragma unroll
    for (int i = 0; i < KILN_LOOKBACK; ++i) s[i] = j - i >= 0 ? word[(j - i) * 256] : 0ull;
    int taken = 0;
    bool done = false;
    #pragma unroll
    for (int i = 0; i < KILN_LOOKBACK; ++i)
      if (!done && taken == i && (s[i] & (63ull << 56)) == tag) {
        earlier += s[i] & KILN_COUNT_MASK;
        taken = i + 1;
        done = (s[i] >> 62) == KILN_PREFIX;
      }
    if (done) return earlier;
    j -= taken;
  }
}

// A digit pass's shared memory; the payload's place (`v`, `digit_of`) only where it carries one.
template <bool CARRY>
struct KilnPassShared {
  union {
    code_t c[KILN_TILE];
    long long v[CARRY ? KILN_TILE : 1];
  } sorted;                                     // the tile in this pass's order: keys, then payload
  unsigned offs[KILN_WARPS][256];               // per warp: its digits' counts, then its next place per digit
  union {                                       // slot in the row - place in the tile's order, per digit:
    long long wide[256];                        //   rows of 2^31 keys or more
    int narrow[256];                            //   shorter rows (32-bit address arithmetic)
  } shift;
  unsigned char digit_of[CARRY ? KILN_TILE : 1];  // each sorted key's digit, for the payload
  unsigned sums[KILN_WARPS];
  long long ticket;
};
static_assert(sizeof(KilnPassShared<false>) <= KILN_PASS_BYTES, "kiln_sort_pass's shared memory, sized by sort_source");
static_assert(sizeof(KilnPassShared<true>) <= KILN_PASS_CARRY_BYTES, "kiln_sort_pass_carry's shared memory");

// Where a digit pass's tile is read and written: the tile's input codes (or keys, on the row's first active
// pass) and indices, the row's output codes (or keys, on its last) and indices (or positions, on its last).
// A pass with a payload carries each key's index in its row (kiln_carry), as 32-bit integers in rows shorter
// than 2^31 keys: the tile's start in the previous pass's indices, the row's start in this pass's.
struct KilnTileIo {
  const key_t* keys_in;
  const code_t* codes_in;
  const void* index_in;
  key_t* keys_out;
  code_t* codes_out;
  void* index_out;
  long long* positions_out;
};

// The tile, in digit order in shared memory, written out in that order: consecutive threads write consecutive
// slots of a digit's run. I: the type of a slot in the row (int for rows shorter than 2^31 keys: one
// multiply-add for an address, where 64-bit offsets take four integer instructions).
template <class I, bool CARRY, bool FULL>
__device__ __forceinline__ void kiln_write_tile(KilnPassShared<CARRY>& s, const I* shift, const KilnTileIo& io,
                                                int count, int pass, bool is_last) {
  const int tid = threadIdx.x;
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k) {
    const int j = tid + KILN_THREADS * k;
    if (FULL || j < count) {
      const code_t v = s.sorted.c[j];
      const unsigned dj = kiln_digit(v, pass);
      if (CARRY) s.digit_of[CARRY ? j : 0] = (unsigned char)dj;
      const I o = shift[dj] + (I)j;
      if (is_last) io.keys_out[o] = kiln_decode(v);
      else io.codes_out[o] = v;
    }
  }
}

// The payload of a pass (argsort's positions) moves as each key's index in its row, of type P (32 bits in rows
// shorter than 2^31 keys: half the traffic of the 8-byte positions): the row's first active pass makes them
// from the tile's place (nothing read), the others read the previous pass's, the last writes them as 8-byte
// positions. They are the positions themselves where kiln_sort_count found the row's positions to be its
// indices (as argsort makes them); elsewhere kiln_sort_finish takes each position through its index afterwards.
// Each index goes to its key's place in the tile's order (`rank`), then out in that order as the keys did.
template <class P, class I, bool FULL>
__device__ __forceinline__ void kiln_carry(KilnPassShared<true>& s, const I* shift, const KilnTileIo& io,
                                           const unsigned short (&rank)[KILN_ITEMS], long long t, int count,
                                           bool is_first, bool is_last) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int i0 = warp * 32 * KILN_ITEMS + lane;  // item k is the tile's element i0 + 32 k
  P* sorted = reinterpret_cast<P*>(s.sorted.v);
  P p[KILN_ITEMS];
  const P* in = static_cast<const P*>(io.index_in);
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k)
    if (FULL || i0 + 32 * k < count) p[k] = is_first ? (P)(t * KILN_TILE + i0 + 32 * k) : in[i0 + 32 * k];
  __syncthreads();  // every key is read out of `sorted` before the indices go in
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k)
    if (FULL || i0 + 32 * k < count) sorted[rank[k]] = p[k];
  __syncthreads();
  P* out = static_cast<P*>(io.index_out);
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k) {
    const int j = tid + KILN_THREADS * k;
    if (FULL || j < count) {
      const I o = shift[s.digit_of[j]] + (I)j;
      if (is_last) io.positions_out[o] = (long long)sorted[j];
      else out[o] = sorted[j];
    }
  }
}

// A digit pass's tile t of row `row` (count keys; FULL: count is KILN_TILE, so no key needs a bounds check and
// a digit's 8 bits are all its votes, where a partial tile marks its missing keys with a ninth).
// The order of work keeps the look-back short: the tile's digit counts are published as soon as the keys are
// in (per-warp shared counts), before the keys are ranked; the look-back comes after the ranking, when the
// earlier tiles have had that time to publish theirs and their row counts.
template <bool CARRY, bool FULL>
__device__ __forceinline__ void kiln_pass_tile(KilnPassShared<CARRY>& s, const KilnTileIo& io,
                                               unsigned long long row_first, volatile unsigned long long* word,
                                               long long n, long long t, int count, int pass, bool is_first,
                                               bool is_last) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int i0 = warp * 32 * KILN_ITEMS + lane;                // item k is the tile's element i0 + 32 k
  code_t c[KILN_ITEMS];
  if (is_first) {
    key_t x[KILN_ITEMS];
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k)
      if (FULL || i0 + 32 * k < count) x[k] = io.keys_in[i0 + 32 * k];
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k) c[k] = FULL || i0 + 32 * k < count ? kiln_encode(x[k]) : (code_t)0;
  } else {
    #pragma unroll
    for (int k = 0; k < KILN_ITEMS; ++k) c[k] = FULL || i0 + 32 * k < count ? io.codes_in[i0 + 32 * k] : (code_t)0;
  }
  // The warps' digit counts, then the tile's (thread tid: digit tid), published for the later tiles.
  unsigned* my = s.offs[warp];
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k)
    if (FULL || i0 + 32 * k < count) atomicAdd(&my[kiln_digit(c[k], pass)], 1u);
  __syncthreads();
  unsigned warp_count[KILN_WARPS], total = 0;  // kept in registers: shared memory's pipe is busy too
  #pragma unroll
  for (int w = 0; w < KILN_WARPS; ++w) {
    warp_count[w] = s.offs[w][tid];
    total += warp_count[w];
  }
  const unsigned long long tag = (unsigned long long)(pass + 1) << 56;
  word[t * 256] = ((t == 0 ? KILN_PREFIX : KILN_AGGREGATE) << 62) | tag | total;
  const unsigned tile_first = kiln_block_exclusive(total, s.sums);  // its barriers order the reads above
  unsigned next = tile_first;
  #pragma unroll
  for (int w = 0; w < KILN_WARPS; ++w) {
    s.offs[w][tid] = next;
    next += warp_count[w];
  }
  __syncthreads();
  // Ranks: each warp's items in order, lanes in order, from its next place per digit; the keys go to their
  // places in the tile's order.
  const unsigned below = (1u << lane) - 1u;
  unsigned short rank[CARRY ? KILN_ITEMS : 1];
  #pragma unroll
  for (int k = 0; k < KILN_ITEMS; ++k) {
    const bool valid = FULL || i0 + 32 * k < count;
    const unsigned d = valid ? kiln_digit(c[k], pass) : 256u;
#if KILN_MATCH == 1
    const unsigned peers = __match_any_sync(KILN_ALL, d);
#elif KILN_MATCH == 2
    // Half the items on each pipe: the votes on the integer pipe, __match_any_sync on the pipe of shared memory
    // and cross-lane operations.
    const unsigned peers = (k & 1) ? kiln_peers<FULL ? 8 : 9>(d) : __match_any_sync(KILN_ALL, d);
#else
    const unsigned peers = kiln_peers<FULL ? 8 : 9>(d);
#endif
    // Any lane of the group may take its places; the highest is one instruction (FLO) away, the lowest two.
    const int leader = 31 - __clz(peers);
    unsigned at = 0;
    // One shared-memory operation rather than a load and a store. Only this warp touches its counters, and
    // the next item's leader reads them after this one's update (the __syncwarp): the ranks are exact.
    if (lane == leader && valid) at = atomicAdd(&my[d], (unsigned)__popc(peers));
    const unsigned r = __shfl_sync(KILN_ALL, at, leader) + __popc(peers & below);
    __syncwarp();
    if (valid) s.sorted.c[r] = c[k];
    if (CARRY) rank[CARRY ? k : 0] = (unsigned short)r;
  }
  unsigned long long earlier = 0;
  if (t > 0) {
    earlier = kiln_look_back(word, t, tag);
    word[t * 256] = (KILN_PREFIX << 62) | tag | (earlier + total);
  }
  const long long shift = (long long)(row_first + earlier) - (long long)tile_first;
  const bool narrow = n <= 0x7fffffffLL;  // every slot of the row, and so every shift, fits an int
  if (narrow) s.shift.narrow[tid] = (int)shift;
  else s.shift.wide[tid] = shift;
  __syncthreads();
  if (narrow) kiln_write_tile<int, CARRY, FULL>(s, s.shift.narrow, io, count, pass, is_last);
  else kiln_write_tile<long long, CARRY, FULL>(s, s.shift.wide, io, count, pass, is_last);
  if constexpr (CARRY) {
    if (narrow) kiln_carry<unsigned, int, FULL>(s, s.shift.narrow, io, rank, t, count, is_first, is_last);
    else kiln_carry<unsigned long long, long long, FULL>(s, s.shift.wide, io, rank, t, count, is_first, is_last);
  }
}

// One digit pass over every row's tiles. A row's active passes (mask) alternate between the buffers: the
// first reads the keys (encoding them), the last writes the keys (decoding them) unless it is also the first,
// which writes buffer a (kiln_sort_finish brings such rows back). Tiles are taken in order from a counter, so
// every tile a block waits for in the look-back has started. Full tiles (all but a row's last, unless the row
// is a multiple of the tile) take a form without bounds checks.
template <bool CARRY>
__device__ __forceinline__ void kiln_pass(KilnPassShared<CARRY>& s, key_t* __restrict__ keys,
                                          code_t* __restrict__ ca, code_t* __restrict__ cb,
                                          long long* __restrict__ positions, void* __restrict__ va,
                                          void* __restrict__ vb, const unsigned long long* __restrict__ base,
                                          const unsigned* __restrict__ mask, unsigned long long* __restrict__ status,
                                          unsigned* __restrict__ tickets, long long n, long long tiles, int pass) {
  const int tid = threadIdx.x;
  for (int q = tid; q < KILN_WARPS * 256; q += KILN_THREADS) (&s.offs[0][0])[q] = 0;
  if (tid == 0) s.ticket = atomicAdd(&tickets[pass], 1u);
  __syncthreads();
  const long long row = s.ticket / tiles, t = s.ticket % tiles;
  const unsigned m = mask[row];
  if (!((m >> pass) & 1u)) return;
  const int before = __popc(m & ((1u << pass) - 1u));
  const bool is_first = before == 0, is_last = before > 0 && (m >> (pass + 1)) == 0;
  const long long row_at = row * n, lo = row_at + t * KILN_TILE;  // the row's and the tile's first element
  const int count = (int)min((long long)KILN_TILE, n - t * KILN_TILE);
  KilnTileIo io;
  io.keys_in = keys + lo;
  io.codes_in = ((before & 1) ? ca : cb) + lo;  // pass `before` - 1 wrote a when even
  io.keys_out = keys + row_at;
  io.codes_out = ((before & 1) ? cb : ca) + row_at;
  const long long index_bytes = n <= 0x7fffffffLL ? 4 : 8;  // kiln_carry's P
  io.index_in = CARRY && !is_first ? (const char*)((before & 1) ? va : vb) + lo * index_bytes : nullptr;
  io.index_out = CARRY && !is_last ? (char*)((before & 1) ? vb : va) + row_at * index_bytes : nullptr;
  io.positions_out = CARRY ? positions + row_at : nullptr;
  const unsigned long long row_first = base[(row * KILN_PASSES + pass) * 256 + tid];  // no wait until used
  volatile unsigned long long* word = status + (row * tiles) * 256 + tid;
  if (count == KILN_TILE) kiln_pass_tile<CARRY, true>(s, io, row_first, word, n, t, count, pass, is_first, is_last);
  else kiln_pass_tile<CARRY, false>(s, io, row_first, word, n, t, count, pass, is_first, is_last);
}

// The pass for keys alone and with a payload (argsort's positions): the payload's registers and shared memory
// are not paid by a sort of keys alone.
extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS) kiln_sort_pass(
    key_t* __restrict__ keys, code_t* __restrict__ ca, code_t* __restrict__ cb,
    const unsigned long long* __restrict__ base, const unsigned* __restrict__ mask,
    unsigned long long* __restrict__ status, unsigned* __restrict__ tickets, long long n, long long tiles, int pass) {
  KilnPassShared<false>& s = *reinterpret_cast<KilnPassShared<false>*>(kiln_shared);
  kiln_pass<false>(s, keys, ca, cb, nullptr, nullptr, nullptr, base, mask, status, tickets, n, tiles, pass);
}

extern "C" __global__ void __launch_bounds__(KILN_THREADS, KILN_MIN_BLOCKS_CARRY) kiln_sort_pass_carry(
    key_t* __restrict__ keys, code_t* __restrict__ ca, code_t* __restrict__ cb, long long* __restrict__ positions,
    void* __restrict__ va, void* __restrict__ vb, const unsigned long long* __restrict__ base,
    const unsigned* __restrict__ mask, unsigned long long* __restrict__ status, unsigned* __restrict__ tickets,
    long long n, long long tiles, int pass) {
  KilnPassShared<true>& s = *reinterpret_cast<KilnPassShared<true>*>(kiln_shared);
  kiln_pass<true>(s, keys, ca, cb, positions, va, vb, base, mask, status, tickets, n, tiles, pass);
}
// Rows of one-byte integer keys alone (sort_fills): a key is its code, so keys of one code are the same bits
// and the stable sort of a row is its histogram written out, each digit's run after the smaller digits' runs.
// Block row * tiles + t scans its row's counts (kiln_sort_count's) into each digit's first slot and writes its
// tile's slots: the digit of a slot is the last whose run starts at or before it. A thread's slots increase,
// so its digit only moves up: a thread walks the row's digits once at most. No pass or finishing kernel runs.
extern "C" __global__ void __launch_bounds__(KILN_THREADS) kiln_sort_fill(key_t* __restrict__ keys,
                                                                          const unsigned long long* __restrict__ hist,
                                                                          long long n, long long tiles) {
  __shared__ unsigned long long first[256 + 1];
  __shared__ unsigned long long sums[KILN_WARPS];
  __shared__ int start;
  const int tid = threadIdx.x;
  const long long row = blockIdx.x / tiles, t = blockIdx.x % tiles;
  const unsigned long long count = hist[row * KILN_PASSES * 256 + tid];
  first[tid] = kiln_block_exclusive(count, sums);
  if (tid == 0) first[256] = (unsigned long long)n;
  __syncthreads();
  const unsigned long long lo = (unsigned long long)t * KILN_TILE;
  if (count > 0 && first[tid] <= lo && lo < first[tid] + count) start = tid;  // the digit of the tile's first slot
  __syncthreads();
  const int size = (int)min((long long)KILN_TILE, n - (long long)lo);
  key_t* out = keys + row * n + (long long)lo;
  int d = start;
  for (int j = tid; j < size; j += KILN_THREADS) {
    while (first[d + 1] <= lo + (unsigned long long)j) ++d;  // first[256] = n ends every walk
    out[j] = kiln_decode((code_t)d);
  }
}

// Block row * tiles + t, after the passes, where its row needs it (one kernel for all of it: one launch a sort):
// - a row with one active pass gets its keys (decoded) and indices back from buffer a;
// - with a payload, the sorted indices become the positions: the same where the row's positions were its
//   indices (kiln_sort_count checked), else each the position at its index (the row's positions as they came
//   in: a tile found to be its indices has no copy in `orig`). A row without an active pass kept its order;
// - a float row with a key that does not come back from its code gets the tile's zeros and NaNs (kept by
//   kiln_sort_count) where the sorted row holds them, in input order: zeros after the row's negative keys,
//   NaNs last, each after those of the earlier tiles. The copy leaves those runs to them, so every slot of the
//   row is written by one block, whatever the order of the blocks.
extern "C" __global__ void __launch_bounds__(KILN_THREADS) kiln_sort_finish(
    key_t* __restrict__ keys, const code_t* __restrict__ ca, long long* __restrict__ positions,
    const void* __restrict__ va, const unsigned* __restrict__ mask, const int* __restrict__ moved,
    const unsigned* __restrict__ moved_tiles, const long long* __restrict__ orig, const key_t* __restrict__ side,
    const unsigned* __restrict__ tcount, const int* __restrict__ lossy, long long n, long long tiles, int carry) {
  const long long row = blockIdx.x / tiles, t = blockIdx.x % tiles, at = row * n;
  const int active = __popc(mask[row]);
  const bool gather = carry && active > 0 && moved[row];
#if KILN_LOSSY
  const bool fix = lossy[row] != 0;
#else
  const bool fix = false;
#endif
  if (active != 1 && !gather && !fix) return;
  const long long lo = t * KILN_TILE, hi = min(n, lo + KILN_TILE);
  long long zeros_at = 0, zeros_end = 0, nans_at = n;  // the row's runs of zeros and of NaNs
#if KILN_LOSSY
  // The row's negatives, NaNs and zeros; the zeros and NaNs of the tiles before this one.
  __shared__ unsigned long long sums[5];
  const unsigned* rc = tcount + row * tiles * 3;
  if (fix) {
    if (threadIdx.x < 5) sums[threadIdx.x] = 0;
    __syncthreads();
    unsigned long long neg = 0, nans = 0, zeros = 0, zeros_before = 0, nans_before = 0;
    for (long long u = threadIdx.x; u < tiles; u += KILN_THREADS) {
      neg += rc[u * 3];
      zeros += rc[u * 3 + 1];
      nans += rc[u * 3 + 2];
      if (u < t) zeros_before += rc[u * 3 + 1], nans_before += rc[u * 3 + 2];
    }
    atomicAdd(&sums[0], neg);
    atomicAdd(&sums[1], nans);
    atomicAdd(&sums[2], zeros);
    atomicAdd(&sums[3], zeros_before);
    atomicAdd(&sums[4], nans_before);
    __syncthreads();
    zeros_at = (long long)sums[0];
    zeros_end = zeros_at + (long long)sums[2];
    nans_at = n - (long long)sums[1];
  }
#endif
  if (active == 1 || gather) {
    const bool narrow = n <= 0x7fffffffLL;  // kiln_carry's indices are 32-bit
    for (long long i = lo + threadIdx.x; i < hi; i += KILN_THREADS) {
      long long p = 0;
      if (active == 1) {
        if (!fix || ((i < zeros_at || i >= zeros_end) && i < nans_at)) keys[at + i] = kiln_decode(ca[at + i]);
        if (carry) p = narrow ? (long long)((const unsigned*)va)[at + i] : ((const long long*)va)[at + i];
      } else {
        p = positions[at + i];
      }
      if (gather && moved_tiles[row * tiles + p / KILN_TILE]) p = orig[at + p];
      if (carry) positions[at + i] = p;
    }
  }
#if KILN_LOSSY
  if (fix) {
    const unsigned zeros = rc[t * 3 + 1], tile_nans = rc[t * 3 + 2];
    for (unsigned j = threadIdx.x; j < zeros; j += KILN_THREADS)
      keys[at + zeros_at + (long long)sums[3] + j] = side[at + lo + j];
    for (unsigned j = threadIdx.x; j < tile_nans; j += KILN_THREADS)
      keys[at + nans_at + (long long)sums[4] + j] = side[at + hi - 1 - j];
  }
#endif
}
)";

/// Entry indices in sort_entries().
enum Entry : std::size_t { kSmall, kCount, kPass, kPassCarry, kFinish, kFill };

/// Modules per (device, key type, keys per thread), made once and kept for the process (as every kiln
/// process-wide object: kernels may run from exit handlers). Binaries are compiled once per (architecture, key
/// type, keys per thread).
struct SortModule {
  std::unique_ptr<gpu::Module> module;
  int count_blocks = 1;  ///< blocks of the counting read resident on the whole device at once
  SortShared shared;     ///< dynamic shared memory of the small sort and the digit passes
};

const SortModule& sort_module(gpu::Device& dev, DType t, int items, int match) {
  static std::mutex mutex;
  static auto* binaries = new std::map<std::tuple<std::string, DType, int, int>, Binary>();
  static auto* modules = new std::map<std::tuple<int, DType, int, int>, SortModule>();
  std::lock_guard lock(mutex);
  SortModule& entry = (*modules)[{dev.info().ordinal, t, items, match}];
  std::unique_ptr<gpu::Module>& slot = entry.module;
  if (!slot) {
    const std::string arch = dev.info().arch();
    auto it = binaries->find({arch, t, items, match});
    if (it == binaries->end())
      it = binaries->emplace(std::tuple{arch, t, items, match},
                             compile_source(sort_source(t, items, match), "kiln_sort", arch, {}, false))
               .first;
    slot = std::make_unique<gpu::Module>(dev, it->second.arch, it->second.cubin, it->second.ptx, sort_entries());
    // The registers of the counting read and the digit passes fit 3 or 4 blocks per SM (sort_source); the
    // driver's own split of an SM's memory between L1 and shared memory may hold fewer (on an H100, ncu showed
    // 132 KiB of shared memory for the pass: 2 blocks of the payload pass's 47 KiB). They read little twice:
    // all of it to shared memory.
    for (Entry e : {kCount, kPass, kPassCarry})
      gpu::check(gpu::driver().cuFuncSetAttribute(slot->function(e).fn,
                                                  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                                  CU_SHAREDMEM_CARVEOUT_MAX_SHARED),
                 "setting the shared memory carveout of kiln's sort kernels");
    entry.shared = sort_shared(t, items);
    for (const auto& [e, bytes] : {std::pair{kSmall, entry.shared.small}, std::pair{kPass, entry.shared.pass},
                                   std::pair{kPassCarry, entry.shared.pass_carry}})
      gpu::check(gpu::driver().cuFuncSetAttribute(slot->function(e).fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  bytes),
                 fmt::format("asking for {} bytes of shared memory for kiln's sort kernels ({} keys per thread; "
                             "KILN_CUDA_SORT_ITEMS sets fewer)", bytes, items));
    int per_sm = 0;
    gpu::check(gpu::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, slot->function(kCount).fn,
                                                                          kThreads, 0),
               "occupancy of kiln's sort kernels");
    entry.count_blocks = std::max(1, per_sm) * std::max(1, dev.info().sm_count);
  }
  return entry;
}

/// Byte offsets of the sort's scratch arrays inside one allocation, each 8-byte aligned.
struct Layout {
  std::size_t bytes = 0;
  std::size_t take(std::size_t n) {
    const std::size_t at = bytes;
    bytes += (n + 7) / 8 * 8;
    return at;
  }
};

unsigned grid_of(std::int64_t blocks, const std::string& what) {
  if (blocks > 0x7fffffff) throw DeviceError(fmt::format("kiln's sort of {}: {} blocks exceed CUDA's grid; sort fewer or "
                                                         "shorter rows per call", what, blocks));
  return static_cast<unsigned>(blocks);
}

}  // namespace

int sort_items(DType t, int setting, int shared_optin) {
  if (setting != 0) return setting;
  int items = kSortItems;
  (void)t;
  // Fewer where a block cannot have the shared memory of the largest kernel (the pass carrying a payload).
  while (shared_optin > 0 && items > 4 && sort_shared(t, items).pass_carry > shared_optin) --items;
  return items;
}

bool sort_fills(DType t, bool carry) { return !carry && size_of(t) == 1 && !is_float(t); }

int sort_match(DType t, int setting) {
  if (setting >= 0) return setting;
  (void)t;
  // Half the items each way: votes alone keep the integer pipe 82% busy and __match_any_sync alone the pipe of
  // shared memory and cross-lane operations 75%, so splitting the items shares the work between the two pipes.
  // Measured on an H100 (10^7 keys, median of 15, ways 0, 1, 2, 0 in one run): i32 0.400/0.503/0.382/0.406 ms,
  // f64 0.961/1.060/0.938/0.968, argsort f64 1.542/1.584/1.536/1.554.
  return 2;
}

std::string sort_items_reason(DType t, int setting, int match_setting) {
  const int items = sort_items(t, setting);
  std::string out = fmt::format("{} keys, {} per thread (tiles of {}): ", name_of(t), items, kThreads * items);
  out += setting != 0 ? "KILN_CUDA_SORT_ITEMS"
                      : "the default (larger tiles were no faster on an H100), fewer where a block cannot have the "
                        "shared memory of the pass that carries a payload";
  static constexpr const char* kWays[] = {"votes", "__match_any_sync", "half the items by votes, half by __match_any_sync"};
  out += fmt::format("; equal digits by {}: ", kWays[sort_match(t, match_setting)]);
  out += match_setting >= 0 ? "KILN_CUDA_SORT_MATCH"
                            : "the default (votes alone keep the integer pipe 82% busy, __match_any_sync alone the pipe "
                              "of shared memory and cross-lane operations 75%: half each shares them; faster for every key "
                              "type measured on an H100)";
  return out;
}

SortShared sort_shared(DType t, int items) {
  // The structs of kKernels, each array's size plus room for alignment (the kernels static_assert that it fits).
  const int tile = kThreads * items, code = size_of(t), warps = kThreads / 32, pad = 32;
  SortShared s;
  s.small = code * tile + 2 * tile + 2 * warps * 256 + 4 * 256 + 4 * warps + pad;
  const int rest = 4 * warps * 256 + 8 * 256 + 4 * warps + 8 + pad;  // offs, shift_to_row, sums, ticket
  s.pass = std::max(code * tile, 8) + 1 + rest;
  s.pass_carry = std::max(code, 8) * tile + tile + rest;
  return s;
}

std::string sort_source(DType t, int items, int match) {
  if (match < 0 || match > 2)
    throw ValueError(fmt::format("kiln's sort kernels: match {}; use 0 (votes), 1 (__match_any_sync) or 2 (half each) "
                                 "(KILN_CUDA_SORT_MATCH)", match));
  if (items < 4 || items > 32)
    throw ValueError(fmt::format("kiln's sort kernels: {} keys per thread; use 4 to 32 (KILN_CUDA_SORT_ITEMS)", items));
  return ir::sem::with_type(t, [&](auto zero) {
    using K = ir::sort::SortKey<decltype(zero)>;
    // The registers of the counting read and the digit passes are capped so that this many blocks fit an SM
    // (they wait on memory: more blocks keep more of it in flight): as many as leave each thread the registers
    // for its keys (a word each, two for 8-byte codes and for a payload) and about 48 more. ptxas fits that without
    // spilling, or a few bytes (sm_90): 4 blocks (64 registers) for 16 codes of up to 4 bytes, 3 (80) for 16
    // 8-byte codes or 32 of up to 4 bytes, 3 for a pass carrying 16 payloads.
    const int words = sizeof(typename K::Code) <= 4 ? 1 : 2;
    const int min_blocks = std::max(1, 256 / (48 + items * words)), min_blocks_carry = std::max(1, 256 / (48 + items * 2));
    const SortShared shared = sort_shared(t, items);
    return fmt::format("// kiln's sort kernels for {} keys (codegen/cuda/sort_kernels.cpp)\ntypedef {} key_t;\n"
                       "typedef {} code_t;\n#define KILN_ENCODE {}\n#define KILN_DECODE {}\n#define KILN_LOSSY {}\n"
                       "#define KILN_ITEMS {}\n#define KILN_MIN_BLOCKS {}\n#define KILN_MIN_BLOCKS_CARRY {}\n"
                       "#define KILN_SMALL_BYTES {}\n#define KILN_PASS_BYTES {}\n#define KILN_PASS_CARRY_BYTES {}\n#define KILN_MATCH {}\n{}",
                       name_of(t), c_type(t), K::cuda_code, K::cuda_encode, K::cuda_decode, is_float(t) ? 1 : 0, items,
                       min_blocks, min_blocks_carry, shared.small, shared.pass, shared.pass_carry, match, kKernels);
  });
}

std::vector<std::string> sort_entries() {
  return {"kiln_sort_small", "kiln_sort_count", "kiln_sort_pass", "kiln_sort_pass_carry", "kiln_sort_finish",
          "kiln_sort_fill"};
}

void sort_on_device(CallState& call, DType t, std::uint64_t keys, std::uint64_t positions, std::int64_t rows,
                    std::int64_t n, int items, int match, const std::string& what, const std::string& label) {
  if (rows <= 0 || n <= 0) return;
  const SortModule& sm = sort_module(call.dev, t, items, match);
  const gpu::Module& m = *sm.module;
  const std::int64_t kTile = std::int64_t{kThreads} * items;
  auto launch = [&](Entry e, unsigned grid, std::initializer_list<void*> params) {
    std::vector<void*> p(params);
    const int bytes = e == kSmall ? sm.shared.small : e == kPass ? sm.shared.pass : e == kPassCarry ? sm.shared.pass_carry : 0;
    gpu::launch(call.stream, m.function(e), {grid, 1, 1}, {kThreads, 1, 1}, p.data(), static_cast<unsigned>(bytes));
  };
  call.pending.push_back(&label);
  CUdeviceptr k = keys, pos = positions;
  std::int64_t nn = n;
  int carry = positions != 0;
  if (n <= kTile) {  // a block per row, in shared memory
    launch(kSmall, grid_of(rows, what), {&k, &pos, &nn, &carry});
    return;
  }
  const int passes = size_of(t);  // a code is as wide as its key: a pass per byte
  const bool lossy = is_float(t);
  // The counting read runs in one wave where it can: each block takes enough of its row's tiles (at least
  // kCountTiles) for the rows' blocks to fit the device at once. A second, partly filled wave left most SMs
  // idle at its end (the f64 count ran 1.5 waves of 4-tile blocks on an H100).
  std::int64_t tiles = (n + kTile - 1) / kTile;
  const std::int64_t per_row = std::max<std::int64_t>(1, sm.count_blocks / rows);
  std::int64_t chunk = std::max(kCountTiles, (tiles + per_row - 1) / per_row), chunks = (tiles + chunk - 1) / chunk;
  const auto total = static_cast<std::size_t>(rows * n);
  const auto r = static_cast<std::size_t>(rows), rt = static_cast<std::size_t>(rows * tiles);
  if (sort_fills(t, carry != 0)) {  // the counts, then the rows written from them
    const CUdeviceptr hist = call.alloc(r * 256 * 8, "sort counts of " + what);
    call.check(gpu::driver().cuMemsetD8Async(hist, 0, r * 256 * 8, call.stream), "zeroing sort counts");
    CUdeviceptr h = hist, none = 0;
    launch(kCount, grid_of(rows * chunks, what),
           {&k, &h, &none, &none, &none, &none, &none, &none, &none, &none, &none, &none, &nn, &tiles, &chunk, &chunks,
            &carry});
    launch(kFill, grid_of(rows * tiles, what), {&k, &h, &nn, &tiles});
    call.release(hist);
    return;
  }
  // Zeroed: histograms, look-back words, per-tile float counts, tile counters, lossy flags, the flags of
  // payloads that are not their rows' indices (per tile and per row), the counting blocks done per row. Then
  // the rest.
  Layout z;
  const std::size_t hist_at = z.take(r * passes * 256 * 8), status_at = z.take(rt * 256 * 8),
                    tcount_at = z.take(lossy ? rt * 3 * 4 : 0), tickets_at = z.take(8 * 4), lossy_at = z.take(r * 4),
                    moved_tiles_at = z.take(carry ? rt * 4 : 0), moved_at = z.take(carry ? r * 4 : 0),
                    done_at = z.take(r * 4);
  const std::size_t zeroed = z.bytes;
  const std::size_t base_at = z.take(r * passes * 256 * 8), mask_at = z.take(r * 4);
  const CUdeviceptr scratch = call.alloc(z.bytes, "sort counts of " + what);
  const auto code_bytes = static_cast<std::size_t>(size_of(t));
  const CUdeviceptr ca = call.alloc(total * code_bytes, "sort codes of " + what);
  const CUdeviceptr cb = passes > 2 ? call.alloc(total * code_bytes, "sort codes of " + what) : 0;  // 3+ passes
  // The passes carry each key's index in its row: 32-bit in rows shorter than 2^31 keys (kiln_carry). `orig`:
  // the tiles of a payload that is not its rows' indices (written only then).
  const std::size_t index_bytes = n <= 0x7fffffff ? 4 : 8;
  const CUdeviceptr va = carry ? call.alloc(total * index_bytes, "sort indices of " + what) : 0;
  const CUdeviceptr vb = carry && passes > 2 ? call.alloc(total * index_bytes, "sort indices of " + what) : 0;
  const CUdeviceptr orig = carry ? call.alloc(total * 8, "sort positions of " + what) : 0;
  const CUdeviceptr side = lossy ? call.alloc(total * code_bytes, "sort zeros and NaNs of " + what) : 0;
  call.check(gpu::driver().cuMemsetD8Async(scratch, 0, zeroed, call.stream), "zeroing sort counts");
  CUdeviceptr hist = scratch + hist_at, status = scratch + status_at, tcount = scratch + tcount_at,
              tickets = scratch + tickets_at, flags = scratch + lossy_at, base = scratch + base_at,
              mask = scratch + mask_at, a = ca, b = cb, pa = va, pb = vb, s = side, o = orig,
              moved_tiles = scratch + moved_tiles_at, moved = scratch + moved_at, done = scratch + done_at;
  launch(kCount, grid_of(rows * chunks, what), {&k, &hist, &tcount, &flags, &s, &pos, &o, &moved_tiles, &moved, &base,
                                                &mask, &done, &nn, &tiles, &chunk, &chunks, &carry});
  const unsigned blocks = grid_of(rows * tiles, what);
  for (int pass = 0; pass < passes; ++pass)
    if (carry)
      launch(kPassCarry, blocks, {&k, &a, &b, &pos, &pa, &pb, &base, &mask, &status, &tickets, &nn, &tiles, &pass});
    else
      launch(kPass, blocks, {&k, &a, &b, &base, &mask, &status, &tickets, &nn, &tiles, &pass});
  launch(kFinish, blocks, {&k, &a, &pos, &pa, &mask, &moved, &moved_tiles, &o, &s, &tcount, &flags, &nn, &tiles, &carry});
  for (CUdeviceptr p : {scratch, ca, cb, va, vb, orig, side})
    if (p) call.release(p);
}

std::function<void(ir::Frame&)> DeviceMachine::sort(const ir::SortStmt& s, ir::HostScope& scope) const {
  const int keys = scope.array(s.keys.get()), positions = s.positions ? scope.array(s.positions.get()) : -1;
  const DType t = s.keys->type.elem;
  const int rank = s.keys->type.rank;
  const std::string what = s.keys->name, label = "kiln's sort of " + what;
  const int setting = sort_items_, match = sort_match(t, sort_match_);
  std::string plan = fmt::format("sort of {}: {}", what, sort_items_reason(t, setting, sort_match_));
  if (sort_fills(t, positions >= 0))
    plan += "; rows longer than a tile written from their digit counts (keys alone, of one byte: a key is its code, "
            "so a row's histogram written out is its stable sort; one read and one write instead of a digit pass and "
            "the copy back)";
  else if (positions >= 0)
    plan += "; positions carried through the digit passes as 32-bit row indices in rows shorter than 2^31 keys "
            "(half the traffic of 8-byte positions; the counting read checks that they are the indices)";
  sort_plans_.push_back(std::move(plan));
  return [keys, positions, t, rank, what, label, setting, match](ir::Frame& fr) {
    const ArrayDesc& d = fr.arrays[static_cast<size_t>(keys)];
    std::int64_t rows = 1;
    for (int k = 0; k + 1 < rank; ++k) rows *= d.shape[k];
    const auto p = positions < 0 ? 0 : reinterpret_cast<std::uint64_t>(fr.arrays[static_cast<size_t>(positions)].data);
    CallState& call = *static_cast<CallState*>(fr.machine_state);
    sort_on_device(call, t, reinterpret_cast<std::uint64_t>(d.data), p, rows, d.shape[rank - 1],
                   sort_items(t, setting, call.dev.info().shared_per_block_optin), match, what, label);
  };
}

}  // namespace kiln::codegen::cuda
