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

template <class T>
void sort_row(const char* name, std::size_t n, int reps) {
  const std::vector<T> h = random_values<T>(n, 11, /*full_range=*/true);
  T* in = upload(h);
  T* out = nullptr;
  check(cudaMalloc(&out, n * sizeof(T)), "cudaMalloc");
  std::size_t bytes = 0;
  check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, out, static_cast<int64_t>(n)), "sort size");
  void* tmp = nullptr;
  check(cudaMalloc(&tmp, std::max<std::size_t>(1, bytes)), "cudaMalloc");
  const double ms = median_ms(reps, [&] { check(cub::DeviceRadixSort::SortKeys(tmp, bytes, in, out, static_cast<int64_t>(n)), "sort"); });
  std::printf("cub sort  %-4s n=%-10zu %9.3f ms %8.2f Gkeys/s\n", name, n, ms, n / ms / 1e6);
  cudaFree(in);
  cudaFree(out);
  cudaFree(tmp);
}

/// argsort as CUB users write it: the keys with their positions as values (a stable pairs sort).
template <class T>
void argsort_row(const char* name, std::size_t n, int reps) {
  const std::vector<T> h = random_values<T>(n, 11, /*full_range=*/true);
  std::vector<std::int64_t> iota(n);
  for (std::size_t i = 0; i < n; ++i) iota[i] = static_cast<std::int64_t>(i);
  T* keys = upload(h);
  std::int64_t* pos = upload(iota);
  T* keys_out = nullptr;
  std::int64_t* pos_out = nullptr;
  check(cudaMalloc(&keys_out, n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&pos_out, n * sizeof(std::int64_t)), "cudaMalloc");
  std::size_t bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, pos, pos_out, static_cast<int64_t>(n)), "pairs size");
  void* tmp = nullptr;
  check(cudaMalloc(&tmp, std::max<std::size_t>(1, bytes)), "cudaMalloc");
  const double ms = median_ms(reps, [&] {
    check(cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, keys_out, pos, pos_out, static_cast<int64_t>(n)), "pairs");
  });
  std::printf("cub argsort %-4s n=%-10zu %9.3f ms %8.2f Gkeys/s\n", name, n, ms, n / ms / 1e6);
  cudaFree(keys);
  cudaFree(pos);
  cudaFree(keys_out);
  cudaFree(pos_out);
  cudaFree(tmp);
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
  // Every numeric key type of kiln-bench-gpu's sort rows (the floats' -0.0 and NaN order differs from kiln's,
  // but the keys here have no NaN and CUB's work does not depend on it).
  sort_row<double>("f64", n_sort, reps);
  sort_row<float>("f32", n_sort, reps);
  sort_row<__half>("f16", n_sort, reps);
  sort_row<__nv_bfloat16>("bf16", n_sort, reps);
  sort_row<std::int64_t>("i64", n_sort, reps);
  sort_row<std::int32_t>("i32", n_sort, reps);
  sort_row<std::int16_t>("i16", n_sort, reps);
  sort_row<std::int8_t>("i8", n_sort, reps);
  sort_row<std::uint64_t>("u64", n_sort, reps);
  sort_row<std::uint32_t>("u32", n_sort, reps);
  sort_row<std::uint16_t>("u16", n_sort, reps);
  sort_row<std::uint8_t>("u8", n_sort, reps);
  argsort_row<double>("f64", n_sort, reps);
  argsort_row<float>("f32", n_sort, reps);
  argsort_row<std::int64_t>("i64", n_sort, reps);
  argsort_row<std::int32_t>("i32", n_sort, reps);
  return 0;
}
