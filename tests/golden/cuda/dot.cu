
// ---- kiln kernel 'dot': one __global__ function per top-level parfor ----
// prange at cuda_codegen_test.cpp:<line>: 1-d, reduction, add s
extern "C" __global__ void __launch_bounds__(256) dot_k0(long long kiln_b0, unsigned long long kiln_n0, const double* __restrict__ x, const double* __restrict__ y,
    char* kiln_scratch) {
  __shared__ unsigned long long kiln_shared[32];
  double s = (-0.0);
  const unsigned long long kiln_sx = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; kiln_tx + 3 * kiln_sx < kiln_n0; kiln_tx += 4 * kiln_sx) {
    #pragma unroll
    for (unsigned kiln_u = 0; kiln_u < 4; ++kiln_u) {
      const long long i = kiln_b0 + (long long)(kiln_tx + kiln_u * kiln_sx);
      s = (s + (x[i] * y[i]));
    }
  }
  for (; kiln_tx < kiln_n0; kiln_tx += kiln_sx) {
    const long long i_2 = kiln_b0 + (long long)kiln_tx;
    s = (s + (x[i_2] * y[i_2]));
  }
  s = kiln_block_reduce(s, kiln_op_add(), (-0.0), kiln_shared);
  if (kiln_thread() == 0) ((double*)(kiln_scratch + 0))[kiln_block()] = s;
}
// fold of dot_k0: one partial per block, combined in block order
extern "C" __global__ void __launch_bounds__(1024) dot_k0_fold(char* kiln_scratch, unsigned kiln_blocks) {
  __shared__ unsigned long long kiln_shared[32];
  {  // add s
    double v = threadIdx.x < kiln_blocks ? ((const double*)(kiln_scratch + 0))[threadIdx.x] : (-0.0);
    v = kiln_block_reduce(v, kiln_op_add(), (-0.0), kiln_shared);
    if (threadIdx.x == 0) *(double*)(kiln_scratch + 8192) = v;
  }
}

