// Template of one occupancy-check kernel, filled in by
// validate._occupancy_check.probe_source (a string.Template: the kernel name, the live
// values, the static shared array and the barrier statement are filled in). Live values
// drive the register count (with the program's -maxrregcount); the static __shared__
// array sets static shared memory; `bar.sync N` makes the kernel use barriers 0..N.
// What the compiler produced is read back from the loaded kernel, never assumed.
extern "C" __global__ void $name(const float* __restrict__ in, float* __restrict__ out, int n) {
  $static_declaration
  extern __shared__ float s_dynamic[];
  float v[$live];
#pragma unroll
  for (int j = 0; j < $live; ++j) v[j] = in[(threadIdx.x * $live + j) % n];
#pragma unroll
  for (int r = 0; r < 3; ++r) {
#pragma unroll
    for (int j = 0; j < $live; ++j) v[j] = fmaf(v[j], v[(j + 1) % $live], v[(j + 3) % $live]);
  }
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < $live; ++j) acc += v[j] * (j + 1);
  $static_store
  if (n < 0) s_dynamic[threadIdx.x] = acc;
  __syncthreads();
  $barrier_statement
  $static_load
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
