
// ---- kiln kernel 'jacobi2d': one __global__ function per top-level parfor ----
// prange at kiln_kernels.hpp:<line>: 2-d, elementwise
extern "C" __global__ void jacobi2d_k0(long long kiln_b0, unsigned long long kiln_n0, long long kiln_b1, unsigned long long kiln_n1,
    float* __restrict__ out, long long out_s0, const float* __restrict__ a, long long a_s0) {
  for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty < kiln_n0; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {
    const long long i0 = kiln_b0 + (long long)kiln_ty;
    const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; kiln_tx + 3 * kiln_sx < kiln_n1; kiln_tx += 4 * kiln_sx) {
      #pragma unroll
      for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
        const long long j0 = kiln_b1 + (long long)(kiln_tx + kiln_u * kiln_sx);
        out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0, 1LL)] = (0.25f * (((a[kiln_sub(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0, 1LL)] + a[kiln_add(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0, 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_sub(kiln_add(j0, 1LL), 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_add(kiln_add(j0, 1LL), 1LL)]));
      }
    }
    for (; kiln_tx < kiln_n1; kiln_tx += kiln_sx) {
      const long long j0_2 = kiln_b1 + (long long)kiln_tx;
      out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0_2, 1LL)] = (0.25f * (((a[kiln_sub(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0_2, 1LL)] + a[kiln_add(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0_2, 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_sub(kiln_add(j0_2, 1LL), 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_add(kiln_add(j0_2, 1LL), 1LL)]));
    }
  }
}
// jacobi2d_k0 for overlapping array arguments
extern "C" __global__ void jacobi2d_k0_alias(long long kiln_b0, unsigned long long kiln_n0, long long kiln_b1, unsigned long long kiln_n1,
    float* out, long long out_s0, const float* a, long long a_s0) {
  for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty < kiln_n0; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {
    const long long i0 = kiln_b0 + (long long)kiln_ty;
    const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; kiln_tx + 3 * kiln_sx < kiln_n1; kiln_tx += 4 * kiln_sx) {
      #pragma unroll
      for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
        const long long j0 = kiln_b1 + (long long)(kiln_tx + kiln_u * kiln_sx);
        out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0, 1LL)] = (0.25f * (((a[kiln_sub(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0, 1LL)] + a[kiln_add(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0, 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_sub(kiln_add(j0, 1LL), 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_add(kiln_add(j0, 1LL), 1LL)]));
      }
    }
    for (; kiln_tx < kiln_n1; kiln_tx += kiln_sx) {
      const long long j0_2 = kiln_b1 + (long long)kiln_tx;
      out[kiln_add(i0, 1LL) * out_s0 + kiln_add(j0_2, 1LL)] = (0.25f * (((a[kiln_sub(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0_2, 1LL)] + a[kiln_add(kiln_add(i0, 1LL), 1LL) * a_s0 + kiln_add(j0_2, 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_sub(kiln_add(j0_2, 1LL), 1LL)]) + a[kiln_add(i0, 1LL) * a_s0 + kiln_add(kiln_add(j0_2, 1LL), 1LL)]));
    }
  }
}

