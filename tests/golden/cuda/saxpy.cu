
// ---- kiln kernel 'saxpy': one __global__ function per top-level parfor ----
// prange at cuda_codegen_test.cpp:<line>: 1-d, elementwise
// each round's loads before its stores: the iterations are independent
extern "C" __global__ void saxpy_k0(long long kiln_b0, unsigned long long kiln_n0, float* __restrict__ y, float a,
    const float* __restrict__ x) {
  const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; kiln_tx + 3 * kiln_sx < kiln_n0; kiln_tx += 4 * kiln_sx) {
    float kiln_dv0[4] = {};
    long long kiln_do0[4] = {};
    #pragma unroll
    for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
      const long long i = kiln_b0 + (long long)(kiln_tx + kiln_u * kiln_sx);
      kiln_do0[kiln_u] = i;
      kiln_dv0[kiln_u] = ((a * x[i]) + y[i]);
    }
    #pragma unroll
    for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
      y[kiln_do0[kiln_u]] = kiln_dv0[kiln_u];
    }
  }
  float kiln_dv0[3] = {};
  long long kiln_do0[3] = {};
  bool kiln_dk[3] = {};
  #pragma unroll
  for (unsigned kiln_u = 0; kiln_u < 3; ++kiln_u) {
    kiln_dk[kiln_u] = kiln_tx + kiln_u * kiln_sx < kiln_n0;
    if (kiln_dk[kiln_u]) {
      const long long i_2 = kiln_b0 + (long long)(kiln_tx + kiln_u * kiln_sx);
      kiln_do0[kiln_u] = i_2;
      kiln_dv0[kiln_u] = ((a * x[i_2]) + y[i_2]);
    }
  }
  #pragma unroll
  for (unsigned kiln_u = 0; kiln_u < 3; ++kiln_u) {
    if (kiln_dk[kiln_u]) {
      y[kiln_do0[kiln_u]] = kiln_dv0[kiln_u];
    }
  }
}
// saxpy_k0 for overlapping array arguments
extern "C" __global__ void saxpy_k0_alias(long long kiln_b0, unsigned long long kiln_n0, float* y, float a,
    const float* x) {
  const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; kiln_tx + 3 * kiln_sx < kiln_n0; kiln_tx += 4 * kiln_sx) {
    #pragma unroll
    for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
      const long long i_3 = kiln_b0 + (long long)(kiln_tx + kiln_u * kiln_sx);
      y[i_3] = ((a * x[i_3]) + y[i_3]);
    }
  }
  for (; kiln_tx < kiln_n0; kiln_tx += kiln_sx) {
    const long long i_4 = kiln_b0 + (long long)kiln_tx;
    y[i_4] = ((a * x[i_4]) + y[i_4]);
  }
}

