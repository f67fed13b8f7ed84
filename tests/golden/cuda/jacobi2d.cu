
// ---- kiln kernel 'jacobi2d': one __global__ function per top-level parfor ----
// prange at kiln_kernels.hpp:<line>: 2-d, elementwise
// stencil: 4 x 32 elements of the innermost dimension per warp, 4 rows per thread, neighbours through shared memory
extern "C" __global__ void __launch_bounds__(256) jacobi2d_k0(long long kiln_b0, unsigned long long kiln_n0, long long kiln_b1, unsigned long long kiln_n1,
    float* __restrict__ out, long long out_s0, const float* __restrict__ a, long long a_n0,
    long long a_s0, long long a_n1) {
  __shared__ float kiln_tile0[8][4][160];
  for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty * 4 < kiln_n0; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {
    const long long kiln_i0 = kiln_b0 + (long long)(kiln_ty * 4);
    const unsigned kiln_lane = threadIdx.x & 31u;
    const unsigned kiln_warp = (threadIdx.x + blockDim.x * threadIdx.y) >> 5;
    const long long kiln_wa = kiln_b1 - (((kiln_b1 % 32) + 32) % 32);
    const unsigned long long kiln_off = (unsigned long long)(kiln_b1 - kiln_wa);
    const unsigned long long kiln_wsx = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
    for (unsigned long long kiln_wx = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; kiln_wx * 128 < kiln_off + kiln_n1; kiln_wx += kiln_wsx) {
      const unsigned long long kiln_t = kiln_wx * 128 + kiln_lane;
      const long long kiln_j0 = kiln_wa + (long long)kiln_t;
      // window 0: a, rows 0..5
      const long long kiln_w0_0_row = kiln_i0 + 0LL;
      const bool kiln_w0_0_ok = (unsigned long long)kiln_w0_0_row < (unsigned long long)a_n0;
      const long long kiln_w0_0_at = kiln_w0_0_row * a_s0;
      const float kiln_w0_0_0 = kiln_w0_0_ok && (unsigned long long)(kiln_j0 + 1LL) < (unsigned long long)a_n1 ? a[kiln_w0_0_at + kiln_j0 + 1LL] : (float)0;
      const float kiln_w0_0_1 = kiln_w0_0_ok && (unsigned long long)(kiln_j0 + 33LL) < (unsigned long long)a_n1 ? a[kiln_w0_0_at + kiln_j0 + 33LL] : (float)0;
      const float kiln_w0_0_2 = kiln_w0_0_ok && (unsigned long long)(kiln_j0 + 65LL) < (unsigned long long)a_n1 ? a[kiln_w0_0_at + kiln_j0 + 65LL] : (float)0;
      const float kiln_w0_0_3 = kiln_w0_0_ok && (unsigned long long)(kiln_j0 + 97LL) < (unsigned long long)a_n1 ? a[kiln_w0_0_at + kiln_j0 + 97LL] : (float)0;
      const long long kiln_w0_1_row = kiln_i0 + 1LL;
      const bool kiln_w0_1_ok = (unsigned long long)kiln_w0_1_row < (unsigned long long)a_n0;
      const long long kiln_w0_1_at = kiln_w0_1_row * a_s0;
      const float kiln_w0_1_0 = kiln_w0_1_ok && (unsigned long long)(kiln_j0 + 0LL) < (unsigned long long)a_n1 ? a[kiln_w0_1_at + kiln_j0 + 0LL] : (float)0;
      const float kiln_w0_1_1 = kiln_w0_1_ok && (unsigned long long)(kiln_j0 + 32LL) < (unsigned long long)a_n1 ? a[kiln_w0_1_at + kiln_j0 + 32LL] : (float)0;
      const float kiln_w0_1_2 = kiln_w0_1_ok && (unsigned long long)(kiln_j0 + 64LL) < (unsigned long long)a_n1 ? a[kiln_w0_1_at + kiln_j0 + 64LL] : (float)0;
      const float kiln_w0_1_3 = kiln_w0_1_ok && (unsigned long long)(kiln_j0 + 96LL) < (unsigned long long)a_n1 ? a[kiln_w0_1_at + kiln_j0 + 96LL] : (float)0;
      const float kiln_w0_1_4 = kiln_w0_1_ok && kiln_lane < 2u && (unsigned long long)(kiln_j0 + 128LL) < (unsigned long long)a_n1 ? a[kiln_w0_1_at + kiln_j0 + 128LL] : (float)0;
      kiln_tile0[kiln_warp][0][kiln_lane + 16] = kiln_w0_1_0;
      kiln_tile0[kiln_warp][0][kiln_lane + 48] = kiln_w0_1_1;
      kiln_tile0[kiln_warp][0][kiln_lane + 80] = kiln_w0_1_2;
      kiln_tile0[kiln_warp][0][kiln_lane + 112] = kiln_w0_1_3;
      if (kiln_lane < 2u) kiln_tile0[kiln_warp][0][kiln_lane + 144] = kiln_w0_1_4;
      const long long kiln_w0_2_row = kiln_i0 + 2LL;
      const bool kiln_w0_2_ok = (unsigned long long)kiln_w0_2_row < (unsigned long long)a_n0;
      const long long kiln_w0_2_at = kiln_w0_2_row * a_s0;
      const float kiln_w0_2_m = kiln_w0_2_ok && kiln_lane >= 31u && (unsigned long long)(kiln_j0 + (-31LL)) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + (-31LL)] : (float)0;
      const float kiln_w0_2_0 = kiln_w0_2_ok && (unsigned long long)(kiln_j0 + 1LL) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + 1LL] : (float)0;
      const float kiln_w0_2_1 = kiln_w0_2_ok && (unsigned long long)(kiln_j0 + 33LL) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + 33LL] : (float)0;
      const float kiln_w0_2_2 = kiln_w0_2_ok && (unsigned long long)(kiln_j0 + 65LL) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + 65LL] : (float)0;
      const float kiln_w0_2_3 = kiln_w0_2_ok && (unsigned long long)(kiln_j0 + 97LL) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + 97LL] : (float)0;
      const float kiln_w0_2_4 = kiln_w0_2_ok && kiln_lane < 1u && (unsigned long long)(kiln_j0 + 129LL) < (unsigned long long)a_n1 ? a[kiln_w0_2_at + kiln_j0 + 129LL] : (float)0;
      if (kiln_lane >= 31u) kiln_tile0[kiln_warp][1][kiln_lane - 16] = kiln_w0_2_m;
      kiln_tile0[kiln_warp][1][kiln_lane + 16] = kiln_w0_2_0;
      kiln_tile0[kiln_warp][1][kiln_lane + 48] = kiln_w0_2_1;
      kiln_tile0[kiln_warp][1][kiln_lane + 80] = kiln_w0_2_2;
      kiln_tile0[kiln_warp][1][kiln_lane + 112] = kiln_w0_2_3;
      if (kiln_lane < 1u) kiln_tile0[kiln_warp][1][kiln_lane + 144] = kiln_w0_2_4;
      const long long kiln_w0_3_row = kiln_i0 + 3LL;
      const bool kiln_w0_3_ok = (unsigned long long)kiln_w0_3_row < (unsigned long long)a_n0;
      const long long kiln_w0_3_at = kiln_w0_3_row * a_s0;
      const float kiln_w0_3_m = kiln_w0_3_ok && kiln_lane >= 31u && (unsigned long long)(kiln_j0 + (-31LL)) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + (-31LL)] : (float)0;
      const float kiln_w0_3_0 = kiln_w0_3_ok && (unsigned long long)(kiln_j0 + 1LL) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + 1LL] : (float)0;
      const float kiln_w0_3_1 = kiln_w0_3_ok && (unsigned long long)(kiln_j0 + 33LL) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + 33LL] : (float)0;
      const float kiln_w0_3_2 = kiln_w0_3_ok && (unsigned long long)(kiln_j0 + 65LL) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + 65LL] : (float)0;
      const float kiln_w0_3_3 = kiln_w0_3_ok && (unsigned long long)(kiln_j0 + 97LL) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + 97LL] : (float)0;
      const float kiln_w0_3_4 = kiln_w0_3_ok && kiln_lane < 1u && (unsigned long long)(kiln_j0 + 129LL) < (unsigned long long)a_n1 ? a[kiln_w0_3_at + kiln_j0 + 129LL] : (float)0;
      if (kiln_lane >= 31u) kiln_tile0[kiln_warp][2][kiln_lane - 16] = kiln_w0_3_m;
      kiln_tile0[kiln_warp][2][kiln_lane + 16] = kiln_w0_3_0;
      kiln_tile0[kiln_warp][2][kiln_lane + 48] = kiln_w0_3_1;
      kiln_tile0[kiln_warp][2][kiln_lane + 80] = kiln_w0_3_2;
      kiln_tile0[kiln_warp][2][kiln_lane + 112] = kiln_w0_3_3;
      if (kiln_lane < 1u) kiln_tile0[kiln_warp][2][kiln_lane + 144] = kiln_w0_3_4;
      const long long kiln_w0_4_row = kiln_i0 + 4LL;
      const bool kiln_w0_4_ok = (unsigned long long)kiln_w0_4_row < (unsigned long long)a_n0;
      const long long kiln_w0_4_at = kiln_w0_4_row * a_s0;
      const float kiln_w0_4_0 = kiln_w0_4_ok && (unsigned long long)(kiln_j0 + 0LL) < (unsigned long long)a_n1 ? a[kiln_w0_4_at + kiln_j0 + 0LL] : (float)0;
      const float kiln_w0_4_1 = kiln_w0_4_ok && (unsigned long long)(kiln_j0 + 32LL) < (unsigned long long)a_n1 ? a[kiln_w0_4_at + kiln_j0 + 32LL] : (float)0;
      const float kiln_w0_4_2 = kiln_w0_4_ok && (unsigned long long)(kiln_j0 + 64LL) < (unsigned long long)a_n1 ? a[kiln_w0_4_at + kiln_j0 + 64LL] : (float)0;
      const float kiln_w0_4_3 = kiln_w0_4_ok && (unsigned long long)(kiln_j0 + 96LL) < (unsigned long long)a_n1 ? a[kiln_w0_4_at + kiln_j0 + 96LL] : (float)0;
      const float kiln_w0_4_4 = kiln_w0_4_ok && kiln_lane < 2u && (unsigned long long)(kiln_j0 + 128LL) < (unsigned long long)a_n1 ? a[kiln_w0_4_at + kiln_j0 + 128LL] : (float)0;
      kiln_tile0[kiln_warp][3][kiln_lane + 16] = kiln_w0_4_0;
      kiln_tile0[kiln_warp][3][kiln_lane + 48] = kiln_w0_4_1;
      kiln_tile0[kiln_warp][3][kiln_lane + 80] = kiln_w0_4_2;
      kiln_tile0[kiln_warp][3][kiln_lane + 112] = kiln_w0_4_3;
      if (kiln_lane < 2u) kiln_tile0[kiln_warp][3][kiln_lane + 144] = kiln_w0_4_4;
      const long long kiln_w0_5_row = kiln_i0 + 5LL;
      const bool kiln_w0_5_ok = (unsigned long long)kiln_w0_5_row < (unsigned long long)a_n0;
      const long long kiln_w0_5_at = kiln_w0_5_row * a_s0;
      const float kiln_w0_5_0 = kiln_w0_5_ok && (unsigned long long)(kiln_j0 + 1LL) < (unsigned long long)a_n1 ? a[kiln_w0_5_at + kiln_j0 + 1LL] : (float)0;
      const float kiln_w0_5_1 = kiln_w0_5_ok && (unsigned long long)(kiln_j0 + 33LL) < (unsigned long long)a_n1 ? a[kiln_w0_5_at + kiln_j0 + 33LL] : (float)0;
      const float kiln_w0_5_2 = kiln_w0_5_ok && (unsigned long long)(kiln_j0 + 65LL) < (unsigned long long)a_n1 ? a[kiln_w0_5_at + kiln_j0 + 65LL] : (float)0;
      const float kiln_w0_5_3 = kiln_w0_5_ok && (unsigned long long)(kiln_j0 + 97LL) < (unsigned long long)a_n1 ? a[kiln_w0_5_at + kiln_j0 + 97LL] : (float)0;
      __syncwarp();
      if (kiln_ty * 4 + 0 < kiln_n0) {
        const long long i0 = kiln_i0 + 0;
        if (kiln_t + 0ull - kiln_off < kiln_n1) {
          const long long j0 = kiln_j0 + 0;
          out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0, 1LL)] = (0.25f * (((kiln_w0_0_0 + kiln_w0_2_0) + kiln_w0_1_0) + kiln_tile0[kiln_warp][0][kiln_lane + 18]));
        }
        if (kiln_t + 32ull - kiln_off < kiln_n1) {
          const long long j0_2 = kiln_j0 + 32;
          out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0_2, 1LL)] = (0.25f * (((kiln_w0_0_1 + kiln_w0_2_1) + kiln_w0_1_1) + kiln_tile0[kiln_warp][0][kiln_lane + 50]));
        }
        if (kiln_t + 64ull - kiln_off < kiln_n1) {
          const long long j0_3 = kiln_j0 + 64;
          out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0_3, 1LL)] = (0.25f * (((kiln_w0_0_2 + kiln_w0_2_2) + kiln_w0_1_2) + kiln_tile0[kiln_warp][0][kiln_lane + 82]));
        }
        if (kiln_t + 96ull - kiln_off < kiln_n1) {
          const long long j0_4 = kiln_j0 + 96;
          out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0_4, 1LL)] = (0.25f * (((kiln_w0_0_3 + kiln_w0_2_3) + kiln_w0_1_3) + kiln_tile0[kiln_warp][0][kiln_lane + 114]));
        }
      }
      if (kiln_ty * 4 + 1 < kiln_n0) {
        const long long i0_2 = kiln_i0 + 1;
        if (kiln_t + 0ull - kiln_off < kiln_n1) {
          const long long j0_5 = kiln_j0 + 0;
          out[kiln_add(i0_2, 1LL) * out_s0 + kiln_add(j0_5, 1LL)] = (0.25f * (((kiln_tile0[kiln_warp][0][kiln_lane + 17] + kiln_w0_3_0) + kiln_tile0[kiln_warp][1][kiln_lane + 15]) + kiln_tile0[kiln_warp][1][kiln_lane + 17]));
        }
        if (kiln_t + 32ull - kiln_off < kiln_n1) {
          const long long j0_6 = kiln_j0 + 32;
          out[kiln_add(i0_2, 1LL) * out_s0 + kiln_add(j0_6, 1LL)] = (0.25f * (((kiln_tile0[kiln_warp][0][kiln_lane + 49] + kiln_w0_3_1) + kiln_tile0[kiln_warp][1][kiln_lane + 47]) + kiln_tile0[kiln_warp][1][kiln_lane + 49]));
        }
        if (kiln_t + 64ull - kiln_off < kiln_n1) {
          const long long j0_7 = kiln_j0 + 64;
          out[kiln_add(i0_2, 1LL) * out_s0 + kiln_add(j0_7, 1LL)] = (0.25f * (((kiln_tile0[kiln_warp][0][kiln_lane + 81] + kiln_w0_3_2) + kiln_tile0[kiln_warp][1][kiln_lane + 79]) + kiln_tile0[kiln_warp][1][kiln_lane + 81]));
        }
        if (kiln_t + 96ull - kiln_off < kiln_n1) {
          const long long j0_8 = kiln_j0 + 96;
          out[kiln_add(i0_2, 1LL) * out_s0 + kiln_add(j0_8, 1LL)] = (0.25f * (((kiln_tile0[kiln_warp][0][kiln_lane + 113] + kiln_w0_3_3) + kiln_tile0[kiln_warp][1][kiln_lane + 111]) + kiln_tile0[kiln_warp][1][kiln_lane + 113]));
        }
      }
      if (kiln_ty * 4 + 2 < kiln_n0) {
        const long long i0_3 = kiln_i0 + 2;
        if (kiln_t + 0ull - kiln_off < kiln_n1) {
          const long long j0_9 = kiln_j0 + 0;
          out[kiln_add(i0_3, 1LL) * out_s0 + kiln_add(j0_9, 1LL)] = (0.25f * (((kiln_w0_2_0 + kiln_tile0[kiln_warp][3][kiln_lane + 17]) + kiln_tile0[kiln_warp][2][kiln_lane + 15]) + kiln_tile0[kiln_warp][2][kiln_lane + 17]));
        }
        if (kiln_t + 32ull - kiln_off < kiln_n1) {
          const long long j0_10 = kiln_j0 + 32;
          out[kiln_add(i0_3, 1LL) * out_s0 + kiln_add(j0_10, 1LL)] = (0.25f * (((kiln_w0_2_1 + kiln_tile0[kiln_warp][3][kiln_lane + 49]) + kiln_tile0[kiln_warp][2][kiln_lane + 47]) + kiln_tile0[kiln_warp][2][kiln_lane + 49]));
        }
        if (kiln_t + 64ull - kiln_off < kiln_n1) {
          const long long j0_11 = kiln_j0 + 64;
          out[kiln_add(i0_3, 1LL) * out_s0 + kiln_add(j0_11, 1LL)] = (0.25f * (((kiln_w0_2_2 + kiln_tile0[kiln_warp][3][kiln_lane + 81]) + kiln_tile0[kiln_warp][2][kiln_lane + 79]) + kiln_tile0[kiln_warp][2][kiln_lane + 81]));
        }
        if (kiln_t + 96ull - kiln_off < kiln_n1) {
          const long long j0_12 = kiln_j0 + 96;
          out[kiln_add(i0_3, 1LL) * out_s0 + kiln_add(j0_12, 1LL)] = (0.25f * (((kiln_w0_2_3 + kiln_tile0[kiln_warp][3][kiln_lane + 113]) + kiln_tile0[kiln_warp][2][kiln_lane + 111]) + kiln_tile0[kiln_warp][2][kiln_lane + 113]));
        }
      }
      if (kiln_ty * 4 + 3 < kiln_n0) {
        const long long i0_4 = kiln_i0 + 3;
        if (kiln_t + 0ull - kiln_off < kiln_n1) {
          const long long j0_13 = kiln_j0 + 0;
          out[kiln_add(i0_4, 1LL) * out_s0 + kiln_add(j0_13, 1LL)] = (0.25f * (((kiln_w0_3_0 + kiln_w0_5_0) + kiln_w0_4_0) + kiln_tile0[kiln_warp][3][kiln_lane + 18]));
        }
        if (kiln_t + 32ull - kiln_off < kiln_n1) {
          const long long j0_14 = kiln_j0 + 32;
          out[kiln_add(i0_4, 1LL) * out_s0 + kiln_add(j0_14, 1LL)] = (0.25f * (((kiln_w0_3_1 + kiln_w0_5_1) + kiln_w0_4_1) + kiln_tile0[kiln_warp][3][kiln_lane + 50]));
        }
        if (kiln_t + 64ull - kiln_off < kiln_n1) {
          const long long j0_15 = kiln_j0 + 64;
          out[kiln_add(i0_4, 1LL) * out_s0 + kiln_add(j0_15, 1LL)] = (0.25f * (((kiln_w0_3_2 + kiln_w0_5_2) + kiln_w0_4_2) + kiln_tile0[kiln_warp][3][kiln_lane + 82]));
        }
        if (kiln_t + 96ull - kiln_off < kiln_n1) {
          const long long j0_16 = kiln_j0 + 96;
          out[kiln_add(i0_4, 1LL) * out_s0 + kiln_add(j0_16, 1LL)] = (0.25f * (((kiln_w0_3_3 + kiln_w0_5_3) + kiln_w0_4_3) + kiln_tile0[kiln_warp][3][kiln_lane + 114]));
        }
      }
      __syncwarp();  // the tile is written again by the next strip
    }
  }
}
// jacobi2d_k0 for overlapping array arguments
extern "C" __global__ void __launch_bounds__(256) jacobi2d_k0_alias(long long kiln_b0, unsigned long long kiln_n0, long long kiln_b1, unsigned long long kiln_n1,
    float* out, long long out_s0, const float* a, long long a_n0,
    long long a_s0, long long a_n1) {
  for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty < kiln_n0; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {
    const long long i0_5 = kiln_b0 + (long long)kiln_ty;
    const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; kiln_tx < kiln_n1; kiln_tx += kiln_sx) {
      const long long j0_17 = kiln_b1 + (long long)kiln_tx;
      out[kiln_add(i0_5, 1LL) * out_s0 + kiln_add(j0_17, 1LL)] = (0.25f * (((a[kiln_sub(kiln_add(i0_5, 1LL), 1LL) * a_s0 + kiln_add(j0_17, 1LL)] + a[kiln_add(kiln_add(i0_5, 1LL), 1LL) * a_s0 + kiln_add(j0_17, 1LL)]) + a[kiln_add(i0_5, 1LL) * a_s0 + kiln_sub(kiln_add(j0_17, 1LL), 1LL)]) + a[kiln_add(i0_5, 1LL) * a_s0 + kiln_add(kiln_add(j0_17, 1LL), 1LL)]));
    }
  }
}

