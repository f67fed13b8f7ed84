
// ---- kiln kernel 'argbest': one __global__ function per top-level parfor ----
// test: 1-d, argmin/argmax reduction, argmin best
extern "C" __global__ void __launch_bounds__(256) argbest_k0(long long kiln_b0, unsigned long long kiln_n0, const double* x, char* kiln_scratch) {
  __shared__ unsigned long long kiln_shared[32];
  __shared__ unsigned long long kiln_shared_index[32];
  double best = __longlong_as_double(0x7ff0000000000000LL);
  long long at = -1LL;
  const unsigned long long kiln_total = kiln_n0;
  const unsigned long long kiln_threads = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long kiln_chunk = kiln_total / kiln_threads + (kiln_total % kiln_threads != 0);
  const unsigned long long kiln_first = min(kiln_total, ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * kiln_chunk);
  const unsigned long long kiln_last = min(kiln_total, kiln_first + kiln_chunk);
  for (unsigned long long kiln_t = kiln_first; kiln_t < kiln_last; ++kiln_t) {
    const long long i = kiln_b0 + (long long)kiln_t;
    if ((((x[i] < best) || (isnan(x[i]) && (!isnan(best)))) || (at < 0LL))) {
      best = x[i];
      at = i;
    }
  }
  kiln_block_argreduce<double, true, true, true>(best, at, __longlong_as_double(0x7ff0000000000000LL), kiln_shared, kiln_shared_index);
  if (kiln_thread() == 0) {
    ((double*)(kiln_scratch + 0))[kiln_block()] = best;
    ((long long*)(kiln_scratch + 8192))[kiln_block()] = at;
  }
}
// fold of argbest_k0: one partial per block, combined in block order
extern "C" __global__ void __launch_bounds__(1024) argbest_k0_fold(char* kiln_scratch, unsigned kiln_blocks) {
  __shared__ unsigned long long kiln_shared[32];
  __shared__ unsigned long long kiln_shared_index[32];
  {  // argmin best
    double v = threadIdx.x < kiln_blocks ? ((const double*)(kiln_scratch + 0))[threadIdx.x] : __longlong_as_double(0x7ff0000000000000LL);
    long long k = threadIdx.x < kiln_blocks ? ((const long long*)(kiln_scratch + 8192))[threadIdx.x] : -1LL;
    kiln_block_argreduce<double, true, true, true>(v, k, __longlong_as_double(0x7ff0000000000000LL), kiln_shared, kiln_shared_index);
    if (threadIdx.x == 0) {
      *(double*)(kiln_scratch + 16384) = v;
      *(long long*)(kiln_scratch + 16392) = k;
    }
  }
}

