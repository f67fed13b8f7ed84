// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written forms of the 3-d 7- and 27-point stencils (nearest border, float, kiln-bench-gpu's weights and
// summation order) against a device-to-device copy of the same bytes: which marching form reaches 80 % of the
// copy ceiling, before kiln's generator (codegen/cuda/emit_stencil.cpp) is moved to it (issue 16).
//
//   nvcc -O3 -arch=sm_90 --fmad=false -o stencil3d_forms bench/gpu/stencil3d_forms.cu && ./stencil3d_forms [side]
//
// Forms (every one computes each element with the same operations in the same order as the plain kernel, so
// the outputs are compared bit for bit):
//   plain      one element per thread, 27 or 7 clamped loads (kiln-bench-gpu's hand kernel)
//   march      a warp takes 32 columns x V rows and walks a chunk of z (2.5-d blocking, kiln's form): each step
//              loads the newest plane's V + 2 rows once (halo lanes from the neighbouring strips), writes them to
//              a per-warp tile, and the x neighbours come from it.
//     slots    the neighbours of every live plane read from a tile slot per plane at each use (kiln at 5c560b4)
//     regs     the neighbours read from the tile once when the plane arrives and kept in registers while the
//              plane lives (one tile slot)
//     pf       the next step's plane loaded into registers before the current step computes (prefetch)
//   async D    the same walk with the planes copied global -> shared by cp.async, D planes ahead of the step
//              into a ring of D + 1 tile slots per warp (no registers for the loads in flight)
// --fmad=false as kiln compiles: a*b+c rounds twice.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__constant__ float kW[4] = {0.5f, 0.05f, 0.02f, 0.01f};

__device__ __forceinline__ int clampi(int v, int n) { return min(max(v, 0), n - 1); }

template <int P, class Read>
__device__ __forceinline__ float value(const Read& a) {
  if constexpr (P == 7) {
    return kW[0] * a(0, 0, 0) + kW[1] * (((((a(-1, 0, 0) + a(1, 0, 0)) + a(0, -1, 0)) + a(0, 1, 0)) + a(0, 0, -1)) + a(0, 0, 1));
  } else {
    float s = 0.0f;
#pragma unroll
    for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx) s = s + kW[abs(dz) + abs(dy) + abs(dx)] * a(dz, dy, dx);
    return s;
  }
}

template <int P>
__global__ void plain(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
  if (x >= nx || y >= ny) return;
  auto at = [&](int dz, int dy, int dx) {
    return in[((long long)clampi(z + dz, nz) * ny + clampi(y + dy, ny)) * nx + clampi(x + dx, nx)];
  };
  out[((long long)z * ny + y) * nx + x] = value<P>(at);
}

/// The newest plane of a step: V + 2 rows of the lane's column, and the halo column the edge lanes hold
/// (lane 0: x - 1, lane 31: x + 1).
template <int V>
struct Plane {
  float c[V + 2], h[V + 2];
};

template <int V>
__device__ __forceinline__ void load_plane(Plane<V>& p, const float* __restrict__ in, int z, int y0, int x, int lane, int nz, int ny, int nx) {
  const float* plane = in + (long long)clampi(z, nz) * ny * nx;
  const int xh = clampi(lane == 0 ? x - 1 : x + 1, nx), xc = clampi(x, nx);
#pragma unroll
  for (int r = 0; r < V + 2; ++r) {
    const float* row = plane + clampi(y0 - 1 + r, ny) * nx;
    p.c[r] = row[xc];
    p.h[r] = (lane == 0 || lane == 31) ? row[xh] : 0.0f;
  }
}

/// march<P, V, REGS, PF, MINB>: one warp per 32 x V strip, blocks of 8 warps (32 x 8 threads), block z a chunk of zlen
/// planes; compiled for MINB blocks per SM.
template <int P, int V, bool REGS, bool PF, int MINB = 2>
__global__ void __launch_bounds__(256, MINB) march(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zlen) {
  constexpr int R = V + 2, S = REGS ? 1 : 3;  // rows per plane, tile slots
  __shared__ float tile[8][S][R][34];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int x = blockIdx.x * 32 + lane, y0 = (blockIdx.y * 8 + warp) * V;
  const int zb = blockIdx.z * zlen, ze = min(nz, zb + zlen);
  float (*t)[R][34] = tile[warp];
  // w[p][r][c]: plane z - 1 + p, row y0 - 1 + r, column x - 1 + c (REGS); the centre column only otherwise.
  float w[3][R][3];
  auto arrive = [&](const Plane<V>& pl, int p, int slot) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      t[slot][r][lane + 1] = pl.c[r];
      if (lane == 0) t[slot][r][0] = pl.h[r];
      if (lane == 31) t[slot][r][33] = pl.h[r];
      w[p][r][1] = pl.c[r];
    }
    __syncwarp();
    if (REGS) {
#pragma unroll
      for (int r = 0; r < R; ++r) w[p][r][0] = t[slot][r][lane], w[p][r][2] = t[slot][r][lane + 2];
      __syncwarp();
    }
  };
  Plane<V> cur, next;
  load_plane<V>(cur, in, zb - 1, y0, x, lane, nz, ny, nx);
  arrive(cur, 0, REGS ? 0 : 0);
  load_plane<V>(cur, in, zb, y0, x, lane, nz, ny, nx);
  arrive(cur, 1, REGS ? 0 : 1);
  if (PF) load_plane<V>(next, in, zb + 1, y0, x, lane, nz, ny, nx);
  for (int z = zb; z < ze; ++z) {
    const int step = z - zb;
    if (PF) {
      cur = next;
      if (z + 1 < ze) load_plane<V>(next, in, z + 2, y0, x, lane, nz, ny, nx);
    } else {
      load_plane<V>(cur, in, z + 1, y0, x, lane, nz, ny, nx);
    }
    arrive(cur, 2, REGS ? 0 : (step + 2) % 3);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (x < nx && y0 + v < ny) {
        auto at = [&](int dz, int dy, int dx) {
          if (REGS || dx == 0) return w[dz + 1][v + 1 + dy][dx + 1];
          return t[(step + 1 + dz) % 3][v + 1 + dy][lane + 1 + dx];
        };
        out[((long long)z * ny + y0 + v) * nx + x] = value<P>(at);
      }
    }
    if (!REGS) __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 3; ++c) w[0][r][c] = w[1][r][c], w[1][r][c] = w[2][r][c];
  }
}

/// march_async<P, V, D>: march<P, V, true, ...> with the planes copied into a ring of D + 1 tile slots by cp.async,
/// D planes ahead of the step; each step reads its newest plane's values (centre and neighbours) from its slot.
template <int P, int V, int D>
__global__ void __launch_bounds__(256, 2) march_async(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zlen) {
  constexpr int R = V + 2, S = D + 1;
  __shared__ float tile[8][S][R][34];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int x = blockIdx.x * 32 + lane, y0 = (blockIdx.y * 8 + warp) * V;
  const int zb = blockIdx.z * zlen, ze = min(nz, zb + zlen);
  float (*t)[R][34] = tile[warp];
  const int xc = clampi(x, nx), xh = clampi(lane == 0 ? x - 1 : x + 1, nx);
  // Plane a of the chunk (a = 0: zb - 1) goes to slot a % S.
  auto issue = [&](int a) {
    const float* plane = in + (long long)clampi(zb - 1 + a, nz) * ny * nx;
    float (*s)[34] = t[a % S];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float* row = plane + clampi(y0 - 1 + r, ny) * nx;
      __pipeline_memcpy_async(&s[r][lane + 1], row + xc, 4);
      if (lane == 0) __pipeline_memcpy_async(&s[r][0], row + xh, 4);
      if (lane == 31) __pipeline_memcpy_async(&s[r][33], row + xh, 4);
    }
    __pipeline_commit();
  };
  float w[3][R][3];
  auto take = [&](int a, int p) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 3; ++c) w[p][r][c] = t[a % S][r][lane + c];
  };
  issue(0);
  issue(1);
  __pipeline_wait_prior(0);
  __syncwarp();
  take(0, 0);
  take(1, 1);
  __syncwarp();
#pragma unroll
  for (int d = 0; d < D; ++d) issue(2 + d);
  for (int z = zb; z < ze; ++z) {
    const int a = z - zb + 2;
    __pipeline_wait_prior(D - 1);
    __syncwarp();
    take(a, 2);
    __syncwarp();
    issue(a + D);  // into the slot of plane a - 1, already in registers (past the chunk: a clamped plane, unused)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (x < nx && y0 + v < ny) {
        auto at = [&](int dz, int dy, int dx) { return w[dz + 1][v + 1 + dy][dx + 1]; };
        out[((long long)z * ny + y0 + v) * nx + x] = value<P>(at);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 3; ++c) w[0][r][c] = w[1][r][c], w[1][r][c] = w[2][r][c];
  }
  __pipeline_wait_prior(0);
}

/// stream27<V, MINB>: the 27-point stencil as running sums. Its value is s = 0, then the nine terms of plane z - 1, of
/// plane z, of plane z + 1, each added in that order. So when plane q arrives, each thread adds its nine terms as the
/// last plane to output q - 1 (stored), as the middle plane to output q, and starts output q + 1 with them: the same
/// operations in the same order as the plain kernel (bitwise equal), but only the newest plane is in registers, two
/// running sums per output row instead of three planes of values, and a value's products with the weights are shared
/// by the terms that use the same weight (kW[k] * w computed once per step: 3 products per value, not 27).
template <int V, int MINB = 2>
__global__ void __launch_bounds__(256, MINB) stream27(const float* __restrict__ in, float* __restrict__ out, int nz, int ny, int nx, int zlen) {
  constexpr int R = V + 2;
  __shared__ float tile[8][R][34];
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int x = blockIdx.x * 32 + lane, y0 = (blockIdx.y * 8 + warp) * V;
  const int zb = blockIdx.z * zlen, ze = min(nz, zb + zlen);
  if (zb >= ze) return;
  float (*t)[34] = tile[warp];
  float first[V], mid[V], w[R][3];
  Plane<V> cur, next;
  load_plane<V>(next, in, zb - 1, y0, x, lane, nz, ny, nx);
  for (int q = zb - 1; q <= ze; ++q) {
    cur = next;
    if (q < ze) load_plane<V>(next, in, q + 1, y0, x, lane, nz, ny, nx);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      t[r][lane + 1] = cur.c[r];
      if (lane == 0) t[r][0] = cur.h[r];
      if (lane == 31) t[r][33] = cur.h[r];
    }
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r) w[r][0] = t[r][lane], w[r][1] = cur.c[r], w[r][2] = t[r][lane + 2];
    __syncwarp();
    auto terms = [&](float s, int dz, int v) {
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx) s = s + kW[abs(dz) + abs(dy) + abs(dx)] * w[v + 1 + dy][dx + 1];
      return s;
    };
    const bool last = q - 1 >= zb, middle = q >= zb && q < ze, start = q + 1 < ze;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (last) {
        const float s = terms(mid[v], 1, v);
        if (x < nx && y0 + v < ny) out[((long long)(q - 1) * ny + y0 + v) * nx + x] = s;
      }
      if (middle) mid[v] = terms(first[v], 0, v);
      if (start) first[v] = terms(0.0f, -1, v);
    }
  }
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
  }
  template <class F>
  float median_ms(int reps, const F& f) {
    std::vector<float> t;
    if (reps > 1) f();  // warm-up
    for (int i = 0; i < reps; ++i) {
      CHECK(cudaEventRecord(a));
      f();
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

int main(int argc, char** argv) {
  // argv[2] "quick": 8 and 16 z chunks only (a shorter run); "profile:A,B": one launch (8 chunks) of each form whose
  // name contains A or B, for ncu.
  const std::string mode = argc > 2 ? argv[2] : "";
  const bool quick = mode == "quick", profile = mode.rfind("profile:", 0) == 0;
  const int n = argc > 1 ? std::atoi(argv[1]) : 512, reps = profile ? 1 : 20;
  const std::vector<int> chunk_counts = profile ? std::vector<int>{8} : quick ? std::vector<int>{8, 16} : std::vector<int>{4, 8, 16};
  auto wanted = [&](const std::string& form) {
    if (!profile) return true;
    std::stringstream ss(mode.substr(8));
    for (std::string item; std::getline(ss, item, ',');)
      if (form.find(item) != std::string::npos) return true;
    return false;
  };
  const long long count = (long long)n * n * n;
  const size_t bytes = count * sizeof(float);
  float *in, *out, *ref;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&ref, bytes));
  {
    std::vector<float> h(count);
    unsigned s = 12345;
    for (auto& v : h) s = s * 1664525u + 1013904223u, v = (s >> 8) * (1.0f / 16777216.0f);
    CHECK(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice));
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  Timer timer;
  const double traffic = 2.0 * bytes;  // read once, written once
  const float copy = timer.median_ms(reps, [&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
  const double ceiling = traffic / copy / 1e6;
  std::printf("device %s, %d SMs; %d^3 float, %.3f GB read + written; D2D copy %.3f ms = %.0f GB/s (the ceiling)\n", prop.name,
              prop.multiProcessorCount, n, traffic / 1e9, copy, ceiling);
  std::vector<float> hr(count), ho(count);
  auto report = [&](const char* form, int points, float ms, const char* extra) {
    CHECK(cudaMemcpy(ho.data(), out, bytes, cudaMemcpyDeviceToHost));
    long long diff = 0;
    if (std::memcmp(ho.data(), hr.data(), bytes) != 0)
      for (long long i = 0; i < count; ++i) diff += std::memcmp(&ho[i], &hr[i], 4) != 0;
    std::printf("%-7s %-28s %7.3f ms %6.1f %% of copy  %s  %s\n", points == 7 ? "star7" : "cube27", form, ms, 100.0 * traffic / ms / 1e6 / ceiling,
                diff ? "MISMATCH" : "bitwise equal", extra);
    std::fflush(stdout);
  };
  for (int points : {7, 27}) {
    const dim3 pb(32, 8), pg((n + 31) / 32, (n + 7) / 8, n);
    auto run_plain = [&](float* o) {
      if (points == 7) plain<7><<<pg, pb>>>(in, o, n, n, n);
      else plain<27><<<pg, pb>>>(in, o, n, n, n);
    };
    run_plain(ref);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hr.data(), ref, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(out, 0, bytes));
    report("plain (hand, 32x8)", points, timer.median_ms(reps, [&] { run_plain(out); }), "");
    auto variant = [&](const char* form, auto kernel, int v) {
      if (!wanted(std::to_string(points) + " " + form)) return;
      for (int chunks : chunk_counts) {
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
        const dim3 g((n + 31) / 32, (n + 8 * v - 1) / (8 * v), chunks);
        const int zlen = (n + chunks - 1) / chunks;
        CHECK(cudaMemset(out, 0, bytes));
        const float ms = timer.median_ms(reps, [&] { kernel<<<g, dim3(32, 8)>>>(in, out, n, n, n, zlen); });
        char extra[128];
        cudaFuncAttributes fa;
        CHECK(cudaFuncGetAttributes(&fa, kernel));
        std::snprintf(extra, sizeof extra, "%d z chunks, %u blocks, %d regs, %d blocks/SM", chunks, g.x * g.y * g.z, fa.numRegs, per_sm);
        report(form, points, ms, extra);
      }
    };
    if (points == 7) {
      variant("march slots V=4", march<7, 4, false, false>, 4);
      variant("march regs V=4", march<7, 4, true, false>, 4);
      variant("march regs pf V=1", march<7, 1, true, true>, 1);
      variant("march regs pf V=2", march<7, 2, true, true>, 2);
      variant("march regs pf V=4", march<7, 4, true, true>, 4);
      variant("march regs pf V=8", march<7, 8, true, true>, 8);
      variant("march regs pf V=2 min3", march<7, 2, true, true, 3>, 2);
      variant("march regs pf V=4 min3", march<7, 4, true, true, 3>, 4);
      variant("march regs pf V=2 min4", march<7, 2, true, true, 4>, 2);
      variant("march regs V=2 min4", march<7, 2, true, false, 4>, 2);
      variant("async D=1 V=4", march_async<7, 4, 1>, 4);
      variant("async D=2 V=4", march_async<7, 4, 2>, 4);
      variant("async D=3 V=4", march_async<7, 4, 3>, 4);
      variant("async D=2 V=2", march_async<7, 2, 2>, 2);
    } else {
      variant("march slots V=4", march<27, 4, false, false>, 4);
      variant("march regs V=4", march<27, 4, true, false>, 4);
      variant("march regs pf V=1", march<27, 1, true, true>, 1);
      variant("march regs pf V=2", march<27, 2, true, true>, 2);
      variant("march regs pf V=4", march<27, 4, true, true>, 4);
      variant("march slots pf V=4", march<27, 4, false, true>, 4);
      variant("march regs pf V=2 min3", march<27, 2, true, true, 3>, 2);
      variant("march regs pf V=4 min3", march<27, 4, true, true, 3>, 4);
      variant("march regs pf V=2 min4", march<27, 2, true, true, 4>, 2);
      variant("march regs V=2 min4", march<27, 2, true, false, 4>, 2);
      variant("async D=1 V=2", march_async<27, 2, 1>, 2);
      variant("async D=2 V=2", march_async<27, 2, 2>, 2);
      variant("async D=3 V=2", march_async<27, 2, 3>, 2);
      variant("async D=2 V=4", march_async<27, 4, 2>, 4);
      variant("stream V=4", stream27<4>, 4);
      variant("stream V=8", stream27<8>, 8);
      variant("stream V=4 min3", stream27<4, 3>, 4);
      variant("stream V=2 min4", stream27<2, 4>, 2);
    }
  }
  return 0;
}
