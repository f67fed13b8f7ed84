// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::random on the GPU against hand-written CUDA: one thread per element, each computing the Philox block
// of its counter (for the packed stream: one thread per block, storing its 4 floats or 2 doubles as one vector)
// and mapping it as docs/random.md specifies, written with plain operators and compiled with
// --fmad=false (as kiln's own CUDA is), so the hand numbers are kiln's bit for bit.
#include "bench/gpu/random_rows.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/measure.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "frontend/settings.hpp"
#include "ir/random.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/module.hpp"

namespace benchgpu {
namespace {

const char* kSource = R"CUDA(
struct Block { unsigned x0, x1, x2, x3; };
__device__ Block philox(unsigned long long key, unsigned long long counter, unsigned c2 = 0) {
  unsigned k0 = (unsigned)key, k1 = (unsigned)(key >> 32);
  unsigned c0 = (unsigned)counter, c1 = (unsigned)(counter >> 32), c3 = 0;
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    const unsigned n0 = __umulhi(0xCD9E8D57u, c2) ^ c1 ^ k0, n2 = __umulhi(0xD2511F53u, c0) ^ c3 ^ k1;
    c1 = 0xCD9E8D57u * c2;
    c3 = 0xD2511F53u * c0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  Block b = {c0, c1, c2, c3};
  return b;
}
extern "C" __global__ void hand_uniform_f32(float* out, long long n, long long key) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)(philox(key, i).x0 >> 8) * 0x1p-24f;
}
__constant__ double kc[9] = {0x1p+0, -0x1.3bd3cc9be45dep+4, 0x1.03c1f081b5ac4p+6, -0x1.55d3c7e3cbffap+6, 0x1.e1f506891babbp+5,
                             -0x1.a6d1f2a204a8cp+4, 0x1.f9d38a3763cc3p+2, -0x1.b6e24f44b128fp+0, 0x1.20c62c2f2d7f5p-2};
__constant__ double ks[9] = {0x1.921fb54442d18p+2, -0x1.4abbce625be53p+5, 0x1.466bc6775aae2p+6, -0x1.32d2cce62bd86p+6,
                             0x1.50783487ee782p+5, -0x1.e3074fde8871fp+3, 0x1.e8f434d018d63p+1, -0x1.6fadb9f155744p-1,
                             0x1.aaec32af93359p-4};
__device__ double box_muller_radius(const Block& b) {
  const double u1 = (double)((((unsigned long long)b.x1 << 32 | b.x0) >> 11) + 1) * 0x1p-53;
  const unsigned long long bits = __double_as_longlong(u1);
  long long e = (long long)(bits >> 52) - 1023;
  double f = __longlong_as_double((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (f > 0x1.6a09e667f3bcdp+0) { f = f * 0.5; e = e + 1; }
  const double s = (f - 1.0) / (f + 1.0), z = s * s;
  double p = 2.0 / 23;
#pragma unroll
  for (int k = 21; k >= 3; k -= 2) p = p * z + 2.0 / k;
  const double de = (double)e;
  const double ln_u1 = de * 0x1.62e42feep-1 + (de * 0x1.a39ef35793c76p-33 + (s * 2.0 + s * (z * p)));
  return sqrt(-2.0 * ln_u1);
}
// cos (sine false) or sin of 2 pi c 2^-53: both polynomials, as ir/random.hpp writes it.
__device__ double turn(const Block& b, bool sine) {
  const unsigned long long c = ((unsigned long long)b.x3 << 32 | b.x2) >> 11;
  const long long q4 = (long long)((c + (1ull << 50)) >> 51);
  const double t = (double)((long long)c - (q4 << 51)) * 0x1p-53, w = t * t;
  double pc = kc[8], ps = ks[8];
#pragma unroll
  for (int k = 7; k >= 0; --k) { pc = pc * w + kc[k]; ps = ps * w + ks[k]; }
  const long long q = (sine ? q4 + 3 : q4) & 3;
  const double v = (q & 1) ? t * ps : pc;
  return ((q + 1) & 2) ? -v : v;
}
extern "C" __global__ void hand_normal_f64(double* out, long long n, long long key) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Block b = philox(key, i);
  out[i] = box_muller_radius(b) * turn(b, false);
}
// The packed stream (ir/random.hpp): block j (counter word 2 is 1) gives elements 4j..4j+3 (2j, 2j+1), stored as
// one float4 (double2) where the block lies inside the array.
extern "C" __global__ void hand_packed_uniform_f32(float* out, long long n, long long key) {
  const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (4 * j >= n) return;
  const Block b = philox(key, j, 1);
  const float v[4] = {(float)(b.x0 >> 8) * 0x1p-24f, (float)(b.x1 >> 8) * 0x1p-24f, (float)(b.x2 >> 8) * 0x1p-24f,
                      (float)(b.x3 >> 8) * 0x1p-24f};
  if (4 * j + 3 < n) {
    reinterpret_cast<float4*>(out)[j] = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    for (int k = 0; 4 * j + k < n; ++k) out[4 * j + k] = v[k];
  }
}
extern "C" __global__ void hand_packed_normal_f64(double* out, long long n, long long key) {
  const long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (2 * j >= n) return;
  const Block b = philox(key, j, 1);
  const double r = box_muller_radius(b);
  const double z0 = r * turn(b, false), z1 = r * turn(b, true);
  if (2 * j + 1 < n) {
    reinterpret_cast<double2*>(out)[j] = make_double2(z0, z1);
  } else {
    out[2 * j] = z0;
  }
}
)CUDA";

const std::vector<std::string> kNames = {"hand_uniform_f32", "hand_normal_f64", "hand_packed_uniform_f32",
                                         "hand_packed_normal_f64"};
constexpr long long kKey = 0x5EED0F0123456789LL;

using bench::median;

/// kiln's and the hand kernel's outputs equal bit for bit, and equal to ir/random.hpp on a sample.
template <class T, class Def>
std::string check(const kiln::DeviceArray<T>& a, const kiln::DeviceArray<T>& b, Def definition) {
  const std::vector<T> x = a.to_vector(), y = b.to_vector();
  if (std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) != 0) return "MISMATCH (kiln vs hand)";
  for (std::size_t i = 0; i < x.size(); i += 1 + x.size() / 4099) {
    const T want = definition(kKey, static_cast<std::int64_t>(i));
    if (std::memcmp(&x[i], &want, sizeof(T)) != 0) return "MISMATCH (vs ir/random.hpp at " + std::to_string(i) + ")";
  }
  return "ok (bitwise)";
}

}  // namespace

void random_rows(kiln::gpu::Device& dev, const std::function<double(const std::function<void()>&)>& time_ms, int reps,
                 long long n) {
  // kiln_float_rules: --fmad=false, as kiln's own CUDA.
  const auto bin = kiln::codegen::cuda::compile_source(kSource, "hand_random", dev.info().arch(), {}, true,
                                                       kiln::detail::cuda_options().lineinfo);
  const kiln::gpu::Module module(dev, bin.arch, bin.cubin, bin.ptx, kNames);
  const kiln::Options on_gpu = kiln::Options().on(kiln::Target::cuda);
  auto ku = kiln::jit("random_uniform_f32", [](kiln::Array<float, 1> x, kiln::Int key) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = kiln::random::uniform<float>(key, i); });
  }, on_gpu);
  auto kz = kiln::jit("random_normal_f64", [](kiln::Array<double, 1> x, kiln::Int key) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = kiln::random::normal<double>(key, i); });
  }, on_gpu);
  // The packed stream: fills that compute one Philox block per 4 floats (2 doubles, a normal pair).
  auto pu = kiln::jit("random_packed_uniform_f32", [](kiln::Array<float, 1> x, kiln::Int key) {
    kiln::random::packed::fill_uniform(x, key);
  }, on_gpu);
  auto pz = kiln::jit("random_packed_normal_f64", [](kiln::Array<double, 1> x, kiln::Int key) {
    kiln::random::packed::fill_normal(x, key);
  }, on_gpu);
  kiln::DeviceArray<float> u({n}), hu({n});
  kiln::DeviceArray<double> z({n}), hz({n});
  auto hand = [&](std::size_t f, void* out, long long per_thread) {
    long long nn = n, key = kKey;
    void* params[] = {&out, &nn, &key};
    const unsigned grid = static_cast<unsigned>((n + 256 * per_thread - 1) / (256 * per_thread));
    kiln::gpu::launch(dev.stream(), module.function(f), {grid, 1, 1}, {256, 1, 1}, params);
  };
  namespace rnd = kiln::ir::random;
  struct Line {
    const char* name;
    double bytes_per;
    std::function<void()> kiln_run, hand_run;
    std::function<std::string()> checked;
  };
  const Line lines[] = {
      {"random_uniform_f32", 4, [&] { ku(u, kKey); }, [&] { hand(0, hu.data(), 1); },
       [&] { return check(u, hu, [](std::int64_t k, std::int64_t c) { return rnd::uniform_f32(k, c); }); }},
      {"random_normal_f64", 8, [&] { kz(z, kKey); }, [&] { hand(1, hz.data(), 1); },
       [&] { return check(z, hz, [](std::int64_t k, std::int64_t c) { return rnd::normal_f64(k, c); }); }},
      {"packed_uniform_f32", 4, [&] { pu(u, kKey); }, [&] { hand(2, hu.data(), 4); },
       [&] {
         return check(u, hu, [](std::int64_t k, std::int64_t g) {
           return static_cast<float>(rnd::packed_element(kiln::Intrinsic::RandomPackedUniformF32, k, g).as_float);
         });
       }},
      {"packed_normal_f64", 8, [&] { pz(z, kKey); }, [&] { hand(3, hz.data(), 2); },
       [&] {
         return check(z, hz, [](std::int64_t k, std::int64_t g) {
           return rnd::packed_element(kiln::Intrinsic::RandomPackedNormalF64, k, g).as_float;
         });
       }},
  };
  std::printf("\nrandom numbers, n = %lld per row (cuRAND's Philox4_32_10 through CuPy: bench/gpu/curand_philox.py --n %lld):\n",
              n, n);
  std::printf("  %-20s %10s %10s %7s %9s  %s\n", "row", "kiln ms", "hand ms", "ratio", "Gnum/s", "check");
  for (const Line& l : lines) {
    for (int w = 0; w < 2; ++w) l.kiln_run(), l.hand_run();
    std::vector<double> tk, th;
    for (int r = 0; r < reps; ++r) {
      if (r % 2) {
        tk.push_back(time_ms(l.kiln_run));
        th.push_back(time_ms(l.hand_run));
      } else {
        th.push_back(time_ms(l.hand_run));
        tk.push_back(time_ms(l.kiln_run));
      }
    }
    const double mk = median(tk), mh = median(th);
    std::printf("  %-20s %10.3f %10.3f %7.3f %9.2f  %s\n", l.name, mk, mh, mk / mh, static_cast<double>(n) / mk / 1e6,
                l.checked().c_str());
  }
}

}  // namespace benchgpu
