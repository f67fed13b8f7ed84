// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The device helpers every generated module starts with: kiln's arithmetic (ir/semantics.hpp) in CUDA C,
// the fixed-order block reductions, atomics for array reductions, and failure reporting.
#include "codegen/cuda/prelude.hpp"

#include "codegen/cuda/prelude_random.hpp"

#include "kiln/abi.hpp"

namespace kiln::codegen::cuda {
namespace {

constexpr const char* kPrelude = R"CUDA(// ---- kiln prelude: the arithmetic of ir/semantics.hpp ------------------------------------------------
// Integers wrap: C++ leaves signed overflow undefined, so the arithmetic is done in unsigned types of at
// least 32 bits (an 8- or 16-bit operand would otherwise be promoted to a signed int that can overflow).
template <class T> struct kiln_wide { typedef unsigned int u; };
template <> struct kiln_wide<long long> { typedef unsigned long long u; };
template <> struct kiln_wide<unsigned long long> { typedef unsigned long long u; };
template <class T> struct kiln_is_signed { static const bool value = false; };
template <> struct kiln_is_signed<signed char> { static const bool value = true; };
template <> struct kiln_is_signed<short> { static const bool value = true; };
template <> struct kiln_is_signed<int> { static const bool value = true; };
template <> struct kiln_is_signed<long long> { static const bool value = true; };
template <class T> __device__ __forceinline__ T kiln_add(T a, T b) { typedef typename kiln_wide<T>::u U; return (T)((U)a + (U)b); }
__device__ __forceinline__ float kiln_add(float a, float b) { return a + b; }
__device__ __forceinline__ double kiln_add(double a, double b) { return a + b; }
template <class T> __device__ __forceinline__ T kiln_sub(T a, T b) { typedef typename kiln_wide<T>::u U; return (T)((U)a - (U)b); }
template <class T> __device__ __forceinline__ T kiln_mul(T a, T b) { typedef typename kiln_wide<T>::u U; return (T)((U)a * (U)b); }
__device__ __forceinline__ float kiln_mul(float a, float b) { return a * b; }
__device__ __forceinline__ double kiln_mul(double a, double b) { return a * b; }
template <class T> __device__ __forceinline__ T kiln_neg(T a) { typedef typename kiln_wide<T>::u U; return (T)((U)0 - (U)a); }
// Division is total: x / 0 == 0, x % 0 == x, MIN / -1 == MIN, MIN % -1 == 0 (the -1 cases: signed types).
template <class T> __device__ __forceinline__ T kiln_div(T a, T b) {
  if constexpr (kiln_is_signed<T>::value) return b == 0 ? (T)0 : b == (T)-1 ? kiln_neg(a) : (T)(a / b);
  else return b == 0 ? (T)0 : (T)(a / b);
}
template <class T> __device__ __forceinline__ T kiln_mod(T a, T b) {
  if constexpr (kiln_is_signed<T>::value) return b == 0 ? a : b == (T)-1 ? (T)0 : (T)(a % b);
  else return b == 0 ? a : (T)(a % b);
}
// Shift counts are taken modulo the width; >> is arithmetic on signed types, logical on unsigned ones.
template <class T> __device__ __forceinline__ T kiln_shl(T a, T b) {
  typedef typename kiln_wide<T>::u U;
  return (T)((U)a << ((U)b & (U)(sizeof(T) * 8 - 1)));
}
template <class T> __device__ __forceinline__ T kiln_shr(T a, T b) {
  typedef typename kiln_wide<T>::u U;
  return (T)(a >> ((U)b & (U)(sizeof(T) * 8 - 1)));
}
template <class T> __device__ __forceinline__ T kiln_abs(T a) {
  if constexpr (kiln_is_signed<T>::value) return a < (T)0 ? kiln_neg(a) : a;
  else return a;
}
template <class T> __device__ __forceinline__ T kiln_min(T a, T b) { return a < b ? a : b; }
template <class T> __device__ __forceinline__ T kiln_max(T a, T b) { return a > b ? a : b; }
// Float min/max propagate NaN and order -0 before +0 (IEEE 754-2019 minimum/maximum).
__device__ __forceinline__ float kiln_min(float a, float b) {
  if (isnan(a) || isnan(b)) return __int_as_float(0x7fc00000);
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
__device__ __forceinline__ double kiln_min(double a, double b) {
  if (isnan(a) || isnan(b)) return __longlong_as_double(0x7ff8000000000000LL);
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
__device__ __forceinline__ float kiln_max(float a, float b) {
  if (isnan(a) || isnan(b)) return __int_as_float(0x7fc00000);
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
__device__ __forceinline__ double kiln_max(double a, double b) {
  if (isnan(a) || isnan(b)) return __longlong_as_double(0x7ff8000000000000LL);
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
// Float to integer saturates (cvt.rzi clamps to the range) and maps NaN to 0; integer narrowing wraps.
__device__ __forceinline__ int kiln_to_i32(float x) { return isnan(x) ? 0 : __float2int_rz(x); }
__device__ __forceinline__ int kiln_to_i32(double x) { return isnan(x) ? 0 : __double2int_rz(x); }
__device__ __forceinline__ long long kiln_to_i64(float x) { return isnan(x) ? 0 : __float2ll_rz(x); }
__device__ __forceinline__ long long kiln_to_i64(double x) { return isnan(x) ? 0 : __double2ll_rz(x); }
__device__ __forceinline__ unsigned kiln_to_u32(float x) { return isnan(x) ? 0u : __float2uint_rz(x); }
__device__ __forceinline__ unsigned kiln_to_u32(double x) { return isnan(x) ? 0u : __double2uint_rz(x); }
__device__ __forceinline__ unsigned long long kiln_to_u64(float x) { return isnan(x) ? 0ull : __float2ull_rz(x); }
__device__ __forceinline__ unsigned long long kiln_to_u64(double x) { return isnan(x) ? 0ull : __double2ull_rz(x); }
// 8- and 16-bit types: truncated and saturated to int first, then clamped to the type's range.
template <class T, int Lo, int Hi, class F> __device__ __forceinline__ T kiln_to_small(F x) {
  const int v = kiln_to_i32(x);
  return (T)(v < Lo ? Lo : v > Hi ? Hi : v);
}
__device__ __forceinline__ int kiln_wrap_i32(long long x) { return (int)(unsigned)(unsigned long long)x; }
template <class T> __device__ __forceinline__ bool kiln_isnan(T) { return false; }
__device__ __forceinline__ bool kiln_isnan(float x) { return isnan(x); }
__device__ __forceinline__ bool kiln_isnan(double x) { return isnan(x); }
// f16 and bf16 are held as their bits and converted through f32 as kiln/half.hpp does, rounding to
// nearest-even, so that every target gives the same bits.
__device__ __forceinline__ float kiln_f16_to_f32(unsigned short h) {
  unsigned o = ((unsigned)h & 0x7fffu) << 13;
  const unsigned exp = o & (0x7c00u << 13);
  o += (127u - 15u) << 23;
  if (exp == (0x7c00u << 13)) o += (128u - 16u) << 23;
  else if (exp == 0u) o = __float_as_uint(__fsub_rn(__uint_as_float(o + (1u << 23)), __uint_as_float(113u << 23)));
  return __uint_as_float(o | (((unsigned)h & 0x8000u) << 16));
}
__device__ __forceinline__ unsigned short kiln_f32_to_f16(float x) {
  unsigned f = __float_as_uint(x);
  const unsigned sign = f & 0x80000000u;
  f ^= sign;
  unsigned o;
  if (f >= (143u << 23)) o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  else if (f < (113u << 23)) o = __float_as_uint(__fadd_rn(__uint_as_float(f), 0.5f)) - (126u << 23);
  else o = (f + 0xc8000fffu + ((f >> 13) & 1u)) >> 13;
  return (unsigned short)(o | (sign >> 16));
}
__device__ __forceinline__ float kiln_bf16_to_f32(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
__device__ __forceinline__ unsigned short kiln_f32_to_bf16(float x) {
  const unsigned f = __float_as_uint(x);
  if ((f & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((f >> 16) | 0x40u);
  return (unsigned short)((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

// ---- reductions: a fixed tree, so results are the same bits on every run -----------------------------
struct kiln_op_add { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return kiln_add(a, b); } };
struct kiln_op_mul { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return kiln_mul(a, b); } };
struct kiln_op_min { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return kiln_min(a, b); } };
struct kiln_op_max { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return kiln_max(a, b); } };

__device__ __forceinline__ unsigned kiln_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ __forceinline__ unsigned kiln_block() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }

// Stencil windows: a lane's neighbour's register, read by every lane of the warp together (bool has no
// __shfl_sync of its own).
template <class T>
__device__ __forceinline__ T kiln_shfl(T v, unsigned src) { return (T)__shfl_sync(0xffffffffu, v, (int)src); }
__device__ __forceinline__ bool kiln_shfl(bool v, unsigned src) { return __shfl_sync(0xffffffffu, (int)v, (int)src) != 0; }

// Lanes combine with their right neighbours at distance 1, 2, 4, ...: each step joins adjacent runs, in
// order, so the tree suits order-sensitive combinations (argmin/argmax) as well.
template <class T, class Op>
__device__ __forceinline__ T kiln_warp_reduce(T v, Op op) {
  const unsigned lane = kiln_thread() & 31u;
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const T o = (T)__shfl_down_sync(0xffffffffu, v, off);
    if ((lane & (2 * off - 1)) == 0) v = op(v, o);
  }
  return v;
}

// The block's combined value, in thread 0. Every thread of the block must call it (blocks are whole warps).
template <class T, class Op>
__device__ T kiln_block_reduce(T v, Op op, T identity, unsigned long long* shared) {
  T* s = (T*)shared;
  const unsigned tid = kiln_thread(), lane = tid & 31u, warp = tid >> 5;
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31u) >> 5;
  v = kiln_warp_reduce(v, op);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  if (warp == 0) v = kiln_warp_reduce(lane < warps ? s[lane] : identity, op);
  __syncthreads();
  return v;
}

// Cooperative rows (emit_cooperative.cpp): a group of threads shares each row, a warp (blockDim.x == 32,
// the block's rows along y) or the whole block (blockDim.x > 32, one row at a time); threadIdx.x is the
// thread's lane in its group.
template <class T>
__device__ __forceinline__ T kiln_shfl_down(T v, unsigned d) { return (T)__shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ bool kiln_shfl_down(bool v, unsigned d) { return __shfl_down_sync(0xffffffffu, (int)v, d) != 0; }

// Makes the group's stores visible to the group (one thread stores what its row stores).
__device__ __forceinline__ void kiln_group_sync() {
  if (blockDim.x > 32u) __syncthreads();
  else __syncwarp();
}

// Lanes combine with their right neighbours at distance 1, 2, 4, 8, 16 (as kiln_warp_reduce).
template <class T, class Op>
__device__ __forceinline__ T kiln_lane_tree(T v, Op op) {
  const unsigned lane = threadIdx.x & 31u;
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const T o = kiln_shfl_down(v, off);
    if ((lane & (2 * off - 1)) == 0) v = op(v, o);
  }
  return v;
}

// The group's combined value, the same bits in every thread of the group: the lane tree, then for a block
// the warps' values in warp order through the same tree in warp 0 (missing warps are the identity); lane 0's
// value is broadcast (a shuffle, or shared memory for a block). The order depends only on blockDim.x, so
// a launch's result is the same on every run. Every thread of the group must call it.
template <class T, class Op>
__device__ T kiln_group_reduce(T v, Op op, T identity, unsigned long long* shared) {
  v = kiln_lane_tree(v, op);
  if (blockDim.x <= 32u) return kiln_shfl(v, 0);
  T* s = (T*)shared;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (lane == 0) s[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = kiln_lane_tree(lane < warps ? s[lane] : identity, op);
    if (lane == 0) s[32] = v;
  }
  __syncthreads();
  return s[32];
}

// argmin/argmax: does the later candidate (x, k) replace the running (v, i)? The reduction's own update
// condition, so combining partials in order equals one pass in order.
template <class T, bool IsMin, bool NanWins, bool EmptyLoses>
__device__ __forceinline__ bool kiln_arg_takes(T x, long long k, T v, long long i) {
  bool take = IsMin ? (x < v) : (x > v);
  if (NanWins) take = take || (kiln_isnan(x) && !kiln_isnan(v));
  if (EmptyLoses) take = take || i < 0;
  (void)k;
  return take;
}

template <class T, bool IsMin, bool NanWins, bool EmptyLoses>
__device__ __forceinline__ void kiln_warp_argreduce(T& v, long long& i) {
  const unsigned lane = kiln_thread() & 31u;
#pragma unroll
  for (unsigned off = 1; off < 32; off <<= 1) {
    const T ov = (T)__shfl_down_sync(0xffffffffu, v, off);
    const long long oi = __shfl_down_sync(0xffffffffu, i, off);
    if ((lane & (2 * off - 1)) == 0 && kiln_arg_takes<T, IsMin, NanWins, EmptyLoses>(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

template <class T, bool IsMin, bool NanWins, bool EmptyLoses>
__device__ void kiln_block_argreduce(T& v, long long& i, T identity, unsigned long long* shared, unsigned long long* shared_index) {
  T* s = (T*)shared;
  long long* si = (long long*)shared_index;
  const unsigned tid = kiln_thread(), lane = tid & 31u, warp = tid >> 5;
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31u) >> 5;
  kiln_warp_argreduce<T, IsMin, NanWins, EmptyLoses>(v, i);
  if (lane == 0) {
    s[warp] = v;
    si[warp] = i;
  }
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? s[lane] : identity;
    i = lane < warps ? si[lane] : -1;
    kiln_warp_argreduce<T, IsMin, NanWins, EmptyLoses>(v, i);
  }
  __syncthreads();
}

// ---- array reductions (a[k] op= e at data-dependent k): atomics ------------------------------------------
__device__ __forceinline__ void kiln_atomic_add(int* p, int v) { atomicAdd((unsigned*)p, (unsigned)v); }
__device__ __forceinline__ void kiln_atomic_add(unsigned* p, unsigned v) { atomicAdd(p, v); }
__device__ __forceinline__ void kiln_atomic_add(long long* p, long long v) { atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ void kiln_atomic_add(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
__device__ __forceinline__ void kiln_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void kiln_atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void kiln_atomic_min(int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void kiln_atomic_min(unsigned* p, unsigned v) { atomicMin(p, v); }
__device__ __forceinline__ void kiln_atomic_min(long long* p, long long v) { atomicMin(p, v); }
__device__ __forceinline__ void kiln_atomic_min(unsigned long long* p, unsigned long long v) { atomicMin(p, v); }
__device__ __forceinline__ void kiln_atomic_max(int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void kiln_atomic_max(unsigned* p, unsigned v) { atomicMax(p, v); }
__device__ __forceinline__ void kiln_atomic_max(long long* p, long long v) { atomicMax(p, v); }
__device__ __forceinline__ void kiln_atomic_max(unsigned long long* p, unsigned long long v) { atomicMax(p, v); }
// The rest by compare-and-swap on the bits.
// Each returns the value it replaced (kiln::atomic_min/max on floats use them too).
template <class T, class Op>
__device__ T kiln_atomic_cas32(T* p, T v, Op op) {
  unsigned* a = (unsigned*)p;
  unsigned old = *a, assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, &assumed, 4);
    const T next = op(cur, v);
    unsigned bits;
    memcpy(&bits, &next, 4);
    old = atomicCAS(a, assumed, bits);
  } while (old != assumed);
  T replaced;
  memcpy(&replaced, &assumed, 4);
  return replaced;
}
template <class T, class Op>
__device__ T kiln_atomic_cas64(T* p, T v, Op op) {
  unsigned long long* a = (unsigned long long*)p;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, &assumed, 8);
    const T next = op(cur, v);
    unsigned long long bits;
    memcpy(&bits, &next, 8);
    old = atomicCAS(a, assumed, bits);
  } while (old != assumed);
  T replaced;
  memcpy(&replaced, &assumed, 8);
  return replaced;
}
// 8- and 16-bit elements: compare-and-swap on the aligned 32-bit word that holds them.
template <class T, class Op>
__device__ void kiln_atomic_cas_small(T* p, T v, Op op) {
  const unsigned long long at = (unsigned long long)p;
  unsigned* a = (unsigned*)(at & ~3ull);
  const unsigned shift = (unsigned)(at & 3ull) * 8u, mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *a, assumed;
  do {
    assumed = old;
    const T cur = (T)((assumed & mask) >> shift);
    const T next = op(cur, v);
    old = atomicCAS(a, assumed, (assumed & ~mask) | (((unsigned)next << shift) & mask));
  } while (old != assumed);
}
template <class T, class Op>
__device__ __forceinline__ void kiln_atomic_cas(T* p, T v, Op op) {
  if constexpr (sizeof(T) < 4) kiln_atomic_cas_small(p, v, op);
  else if constexpr (sizeof(T) == 4) kiln_atomic_cas32(p, v, op);
  else kiln_atomic_cas64(p, v, op);
}
template <class T> __device__ __forceinline__ void kiln_atomic_add(T* p, T v) { kiln_atomic_cas(p, v, kiln_op_add()); }
template <class T> __device__ __forceinline__ void kiln_atomic_min(T* p, T v) { kiln_atomic_cas(p, v, kiln_op_min()); }
template <class T> __device__ __forceinline__ void kiln_atomic_max(T* p, T v) { kiln_atomic_cas(p, v, kiln_op_max()); }
template <class T> __device__ __forceinline__ void kiln_atomic_mul(T* p, T v) { kiln_atomic_cas(p, v, kiln_op_mul()); }
// Equal bit patterns (a private copy's element still at the identity: -0.0 is not +0.0).
template <class T>
__device__ __forceinline__ bool kiln_same_bits(T a, T b) {
  if constexpr (sizeof(T) == 4) {
    unsigned x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
  } else {
    unsigned long long x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    return x == y;
  }
}

// ---- explicit atomics (kiln::atomic_*, ir/atomics.hpp): relaxed, device scope; each returns the old value --
// Integers wrap (through the unsigned forms); float sub is the add of -v, which IEEE defines as the same.
__device__ __forceinline__ int kiln_fetch_add(int* p, int v) { return (int)atomicAdd((unsigned*)p, (unsigned)v); }
__device__ __forceinline__ long long kiln_fetch_add(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ float kiln_fetch_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double kiln_fetch_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ int kiln_fetch_sub(int* p, int v) { return (int)atomicSub((unsigned*)p, (unsigned)v); }
__device__ __forceinline__ long long kiln_fetch_sub(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, 0ULL - (unsigned long long)v); }
__device__ __forceinline__ float kiln_fetch_sub(float* p, float v) { return atomicAdd(p, -v); }
__device__ __forceinline__ double kiln_fetch_sub(double* p, double v) { return atomicAdd(p, -v); }
__device__ __forceinline__ int kiln_fetch_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ long long kiln_fetch_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ float kiln_fetch_min(float* p, float v) { return kiln_atomic_cas32(p, v, kiln_op_min()); }
__device__ __forceinline__ double kiln_fetch_min(double* p, double v) { return kiln_atomic_cas64(p, v, kiln_op_min()); }
__device__ __forceinline__ int kiln_fetch_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ long long kiln_fetch_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ float kiln_fetch_max(float* p, float v) { return kiln_atomic_cas32(p, v, kiln_op_max()); }
__device__ __forceinline__ double kiln_fetch_max(double* p, double v) { return kiln_atomic_cas64(p, v, kiln_op_max()); }
__device__ __forceinline__ int kiln_fetch_exchange(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ long long kiln_fetch_exchange(long long* p, long long v) { return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ float kiln_fetch_exchange(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double kiln_fetch_exchange(double* p, double v) {
  return __longlong_as_double((long long)atomicExch((unsigned long long*)p, (unsigned long long)__double_as_longlong(v)));
}
// Compare-exchange compares bit patterns.
__device__ __forceinline__ int kiln_fetch_cas(int* p, int e, int v) { return atomicCAS(p, e, v); }
__device__ __forceinline__ long long kiln_fetch_cas(long long* p, long long e, long long v) {
  return (long long)atomicCAS((unsigned long long*)p, (unsigned long long)e, (unsigned long long)v);
}
__device__ __forceinline__ float kiln_fetch_cas(float* p, float e, float v) {
  return __uint_as_float(atomicCAS((unsigned*)p, __float_as_uint(e), __float_as_uint(v)));
}
__device__ __forceinline__ double kiln_fetch_cas(double* p, double e, double v) {
  return __longlong_as_double((long long)atomicCAS((unsigned long long*)p, (unsigned long long)__double_as_longlong(e),
                                                   (unsigned long long)__double_as_longlong(v)));
}

// ---- failures: the first one of a call is kept, with its message -----------------------------------------
struct KilnStatus {
  int code;
  char message[KILN_MESSAGE_BYTES];
};

__device__ int kiln_put_i64(char* out, int at, int end, long long v) {
  char digits[24];
  int n = 0;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do {
    digits[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0 && at < end) out[at++] = '-';
  while (n > 0 && at < end) out[at++] = digits[--n];
  return at;
}

// Records code and `message` with each {} replaced by the next of args, unless a failure is already recorded.
__device__ void kiln_fail(KilnStatus* status, int code, const char* message, int nargs, const long long* args) {
  if (atomicCAS(&status->code, 0, code) != 0) return;
  const int end = KILN_MESSAGE_BYTES - 1;
  int at = 0, next = 0;
  for (const char* c = message; *c && at < end; ++c) {
    if (c[0] == '{' && c[1] == '}' && next < nargs) {
      at = kiln_put_i64(status->message, at, end, args[next++]);
      ++c;
    } else {
      status->message[at++] = *c;
    }
  }
  status->message[at] = 0;
}
// ---- end of the kiln prelude ---------------------------------------------------------------------------
)CUDA";

}  // namespace

std::string prelude() {
  std::string text = kPrelude + random_prelude();
  const std::string key = "KILN_MESSAGE_BYTES";
  const std::string bytes = std::to_string(sizeof(KernelStatus::message));
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + bytes.size()))
    text.replace(at, key.size(), bytes);
  return text;
}

}  // namespace kiln::codegen::cuda
