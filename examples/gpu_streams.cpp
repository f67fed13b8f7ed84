// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A host array processed on the GPU in chunks over three streams: while one chunk's kernel runs, the next
// chunk travels to the device and the previous one's result travels back. The device holds only a few chunks
// at a time, so the host array may be larger than the GPU's memory. The program times one stream (copies and
// kernels one after another) against three, and the copies alone (the ceiling the overlap approaches).
//   gpu_streams [N] [--reps R]    (exits with 77, "skipped", without a GPU)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

#include "example.hpp"

namespace {

constexpr long long kChunk = 1 << 22;  // elements per chunk: 16 MiB of floats

/// Every chunk of `in` through `kernel` into `out`, chunk c on streams[c % streams.size()].
template <class K>
void process(const K& kernel, std::span<kiln::cuda::Stream> streams, const kiln::cuda::PinnedBuffer<float>& in,
             const kiln::cuda::PinnedBuffer<float>& out) {
  const long long n = static_cast<long long>(in.size());
  for (long long off = 0, c = 0; off < n; off += kChunk, ++c) {
    const kiln::cuda::Stream& s = streams[static_cast<std::size_t>(c) % streams.size()];
    const long long len = std::min(kChunk, n - off);
    // Stream-ordered memory: allocated when the stream gets here, back in the pool when the stream has
    // passed this chunk's copy out (the DeviceArrays go out of scope at once; their memory does not).
    kiln::DeviceArray<float> x({len}, s);
    x.copy_from(std::span<const float>(in.data() + off, static_cast<std::size_t>(len)), &s);
    const kiln::DeviceArray<float> y = kernel.async(s)(x);
    y.copy_to(std::span<float>(out.data() + off, static_cast<std::size_t>(len)), &s);
  }
  for (const kiln::cuda::Stream& s : streams) s.synchronize();
}

/// Host -> device and device -> host copies of every chunk, on two streams: the time no overlap can beat.
double copies_only_ms(const kiln::cuda::PinnedBuffer<float>& in, const kiln::cuda::PinnedBuffer<float>& out) {
  kiln::cuda::Stream up, down;
  const long long n = static_cast<long long>(in.size());
  return 1e3 * example::seconds([&] {
    for (long long off = 0; off < n; off += kChunk) {
      const long long len = std::min(kChunk, n - off);
      kiln::DeviceArray<float> a({len}, up), b({len}, down);
      a.copy_from(std::span<const float>(in.data() + off, static_cast<std::size_t>(len)), &up);
      b.copy_to(std::span<float>(out.data() + off, static_cast<std::size_t>(len)), &down);
    }
    up.synchronize();
    down.synchronize();
  });
}

}  // namespace

int main(int argc, char** argv) {
  auto args = example::parse(argc, argv, 1LL << 27);
  args.target = kiln::Target::cuda;
  if (!kiln::cuda::available()) {
    std::printf("skipped: %s\n", kiln::cuda::unavailable_reason().c_str());
    return 77;
  }
  auto kernel = kiln::jit("soft_clip", [](kiln::Array<float> x) {
    return kiln::tanh(x * 0.5f) * 2.0f + kiln::sqrt(x * x + 1.0f) * 0.25f;
  });

  const long long n = std::max(1LL, args.n);
  kiln::cuda::PinnedBuffer<float> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 2003) * 0.01f - 10.0f;

  std::vector<kiln::cuda::Stream> one(1), three(3);
  process(kernel, one, in, out);  // compiles the kernel and warms the pool
  kiln::cuda::reset_memory_peak();
  std::vector<double> t1, t3, tc;
  for (int r = 0; r < args.reps; ++r) {  // interleaved
    t1.push_back(1e3 * example::seconds([&] { process(kernel, one, in, out); }));
    t3.push_back(1e3 * example::seconds([&] { process(kernel, three, in, out); }));
    tc.push_back(copies_only_ms(in, out));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double m1 = median(t1), m3 = median(t3), mc = median(tc);
  const kiln::cuda::MemoryStats mem = kiln::cuda::memory_stats();

  process(kernel, three, in, out);  // the copies alone left `out` undefined: the checked result comes last
  double max_err = 0;
  for (long long i = 0; i < n; i += std::max(1LL, n / 100003)) {
    const float x = in[static_cast<std::size_t>(i)];
    const double want = std::tanh(x * 0.5) * 2.0 + std::sqrt(double(x) * x + 1.0) * 0.25;
    max_err = std::fmax(max_err, std::fabs(out[static_cast<std::size_t>(i)] - want) / std::fmax(1.0, std::fabs(want)));
  }
  const double gb = 2.0 * static_cast<double>(n) * sizeof(float) / 1e9;
  std::printf("gpu_streams  %lld floats (%.2f GB each way) in chunks of %lld, median of %d\n", n, gb / 2, kChunk, args.reps);
  std::printf("  one stream     %8.2f ms  (%.1f GB/s host<->device)\n", m1, gb / m1 * 1e3);
  std::printf("  three streams  %8.2f ms  (%.1f GB/s)  overlap gain %.2fx\n", m3, gb / m3 * 1e3, m1 / m3);
  std::printf("  copies alone   %8.2f ms  (%.1f GB/s)  three streams reach %.0f%% of this ceiling\n", mc, gb / mc * 1e3,
              100.0 * mc / m3);
  std::printf("  device memory peak %.1f MiB for %.1f MiB of host data\n", static_cast<double>(mem.peak_bytes) / (1 << 20),
              gb * 1e9 / (1 << 20));
  std::printf("  max rel. error against double-precision C++: %.2e\n", max_err);
  return max_err <= 1e-5 ? 0 : 1;
}
