// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CUB's own scan and radix sort on the same inputs as kiln-bench-gpu's cumsum and sort rows, so that issue 19's
// "GPU >= 0.8x CUB" is measured against CUB itself and not only through CuPy (whose routines may or may not
// dispatch to CUB, depending on its version and CUPY_ACCELERATORS). Built with nvcc on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_primitives bench/gpu/cub_primitives.cu
//   /tmp/cub_primitives [--reps R] [--only scan|sort]
// Each row: the median of R runs timed with CUDA events around the one CUB call (its temporary storage
// allocated once beforehand, as a library user would keep it), after one untimed warm-up.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

/// Median milliseconds of `reps` timed runs of `f` (one warm-up first).
template <class F>
double median_ms(int reps, F&& f) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  f();
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a), "record");
    f();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Device memory for `n` elements of T filled from `host`.
template <class T>
T* upload(const std::vector<T>& host) {
  T* d = nullptr;
  check(cudaMalloc(&d, std::max<std::size_t>(1, host.size()) * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  return d;
}

/// Floats uniform in [-1, 1) (f16 and bf16 rounded from f32); integers in [-1000, 1000] (`full_range`: over
/// the type's whole range, as kiln-bench-gpu's and bench/gpu/cupy_sort.py's integer sort keys are: a radix
/// sort's digit passes run faster on keys whose high bytes are nearly all equal).
template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed, bool full_range = false) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : v) x = T(d(g));
  } else if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(-1, 1);
    for (auto& x : v) x = d(g);
  } else if constexpr (sizeof(T) >= 4 && std::is_signed_v<T>) {
    if (full_range) {
      for (auto& x : v) x = static_cast<T>(g());
    } else {
      std::uniform_int_distribution<T> d(-1000, 1000);
      for (auto& x : v) x = d(g);
    }
  } else {  // the narrow and unsigned types (sort keys only): over the whole range
    for (auto& x : v) x = static_cast<T>(g());
  }
  return v;
}

template <class T>
void scan_row(const char* name, std::size_t n, int reps) {
  const std::vector<T> h = random_values<T>(n, 7);
  T* in = upload(h);
  T* out = nullptr;
  check(cudaMalloc(&out, n * sizeof(T)), "cudaMalloc");
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, static_cast<int64_t>(n)), "scan size");
  void* tmp = nullptr;
  check(cudaMalloc(&tmp, std::max<std::size_t>(1, bytes)), "cudaMalloc");
  const double ms = median_ms(reps, [&] { check(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, static_cast<int64_t>(n)), "scan"); });
  std::printf("cub scan  %-4s n=%-10zu %9.3f ms %8.0f GB/s\n", name, n, ms, 2.0 * n * sizeof(T) / ms / 1e6);
  cudaFree(in);
  cudaFree(out);
  cudaFree(tmp);
}

/// CUB's radix order as an unsigned code of the key's bits (its bit twiddling): unsigned keys as they are, signed
/// ones with the sign bit flipped, floats with the sign bit flipped when clear and every bit flipped when set (so
/// -0.0 comes before +0.0 and NaNs by their bits, unlike kiln; the keys here have no NaN).
template <class T>
unsigned long long cub_code(const T& x) {
  constexpr int bits = 8 * sizeof(T);
  unsigned long long u = 0;
  std::memcpy(&u, &x, sizeof(T));
  const unsigned long long sign = 1ull << (bits - 1), all = bits == 64 ? ~0ull : (1ull << bits) - 1;
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || std::is_floating_point_v<T>)
    return (u & sign) ? (~u & all) : (u | sign);
  else if constexpr (std::is_signed_v<T>) return u ^ sign;
  else return u;
}

/// Whether CUB's pairs sort of `h` is right: `pos` a permutation, each key its position's key bit for bit, the
/// codes never decreasing and equal codes in increasing positions (a stable sort's answer is unique, so this
/// checks it exactly in one pass).
template <class T>
bool pairs_ok(const std::vector<T>& h, const std::vector<T>& keys, const std::vector<std::int64_t>& pos) {
  const std::size_t n = h.size();
  std::vector<char> seen(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t p = pos[i];
    if (p < 0 || static_cast<std::size_t>(p) >= n || seen[p]) return false;
    seen[p] = 1;
    if (std::memcmp(&keys[i], &h[p], sizeof(T)) != 0) return false;
    if (i == 0) continue;
    const unsigned long long a = cub_code(h[pos[i - 1]]), b = cub_code(h[p]);
    if (b < a || (a == b && pos[i - 1] > p)) return false;
  }
  return true;
}

template <class T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  check(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
  return h;
}

/// CUB's sort (SortKeys) and argsort as CUB users write it (SortPairs: the keys with their int64 positions as
/// values, a stable pairs sort) of the keys kiln-bench-gpu sorts (the same seed and distribution), both checked:
/// the pairs by pairs_ok, the sorted keys against the pairs' keys bit for bit.
template <class T>
void sort_rows(const char* name, std::size_t n, int reps) {
  const std::vector<T> h = random_values<T>(n, 1, /*full_range=*/true);
  std::vector<std::int64_t> iota(n);
  for (std::size_t i = 0; i < n; ++i) iota[i] = static_cast<std::int64_t>(i);
  T* keys = upload(h);
  std::int64_t* pos = upload(iota);
  T* keys_out = nullptr;
  T* sorted = nullptr;
  std::int64_t* pos_out = nullptr;
  check(cudaMalloc(&keys_out, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&sorted, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&pos_out, n * sizeof(std::int64_t)), "cudaMalloc");
  std::size_t pair_bytes = 0, key_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, pair_bytes, keys, keys_out, pos, pos_out, static_cast<int64_t>(n)), "pairs size");
  check(cub::DeviceRadixSort::SortKeys(nullptr, key_bytes, keys, sorted, static_cast<int64_t>(n)), "sort size");
  void* tmp = nullptr;
  check(cudaMalloc(&tmp, std::max<std::size_t>(1, std::max(pair_bytes, key_bytes))), "cudaMalloc");
  const double sort_ms = median_ms(reps, [&] { check(cub::DeviceRadixSort::SortKeys(tmp, key_bytes, keys, sorted, static_cast<int64_t>(n)), "sort"); });
  const double pairs_ms = median_ms(reps, [&] {
    check(cub::DeviceRadixSort::SortPairs(tmp, pair_bytes, keys, keys_out, pos, pos_out, static_cast<int64_t>(n)), "pairs");
  });
  const std::vector<T> pk = download(keys_out, n), sk = download(sorted, n);
  const bool pairs = pairs_ok(h, pk, download(pos_out, n));
  const bool keys_ok = pairs && std::memcmp(pk.data(), sk.data(), n * sizeof(T)) == 0;
  std::printf("cub sort  %-4s n=%-10zu %9.3f ms %8.2f Gkeys/s  %s\n", name, n, sort_ms, n / sort_ms / 1e6, keys_ok ? "ok" : "MISMATCH");
  std::printf("cub argsort %-4s n=%-10zu %9.3f ms %8.2f Gkeys/s  %s\n", name, n, pairs_ms, n / pairs_ms / 1e6, pairs ? "ok" : "MISMATCH");
  for (void* p : {static_cast<void*>(keys), static_cast<void*>(pos), static_cast<void*>(keys_out), static_cast<void*>(sorted),
                  static_cast<void*>(pos_out), tmp})
    cudaFree(p);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  const char* only = "";  // --only scan|sort: one kind of row
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "device");
  std::printf("device: %s, CUB %d.%d.%d, median of %d\n", p.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, reps);
  // kiln-bench-gpu's sizes: cumsum rows 2^27 elements, sort rows 10^7 keys.
  const std::size_t n_scan = std::size_t{1} << 27, n_sort = 10000000;
  if (std::strcmp(only, "sort") != 0) {
    scan_row<double>("f64", n_scan, reps);
    scan_row<float>("f32", n_scan, reps);
    scan_row<std::int64_t>("i64", n_scan, reps);
    scan_row<std::int32_t>("i32", n_scan, reps);
  }
  if (std::strcmp(only, "scan") == 0) return 0;
  // Every numeric key type of kiln-bench-gpu's sort and argsort rows (the floats' -0.0 and NaN order differs from
  // kiln's, but the keys here have no NaN and CUB's work does not depend on it).
  sort_rows<double>("f64", n_sort, reps);
  sort_rows<float>("f32", n_sort, reps);
  sort_rows<__half>("f16", n_sort, reps);
  sort_rows<__nv_bfloat16>("bf16", n_sort, reps);
  sort_rows<std::int64_t>("i64", n_sort, reps);
  sort_rows<std::int32_t>("i32", n_sort, reps);
  sort_rows<std::int16_t>("i16", n_sort, reps);
  sort_rows<std::int8_t>("i8", n_sort, reps);
  sort_rows<std::uint64_t>("u64", n_sort, reps);
  sort_rows<std::uint32_t>("u32", n_sort, reps);
  sort_rows<std::uint16_t>("u16", n_sort, reps);
  sort_rows<std::uint8_t>("u8", n_sort, reps);
  return 0;
}
