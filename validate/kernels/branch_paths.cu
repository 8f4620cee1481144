// The branch-paths probe's kernels (validate/probes/_branch_paths.py): straight-line FP32 arithmetic
// that binds the schedulers, behind a branch whose two sides are both issued by a warp, or one of them.
//
// Each thread keeps CHAINS independent FMA chains (instruction-level parallelism, so the schedulers
// bind and not the FMA latency) and runs STEPS fully unrolled steps of them on one side of a branch:
// no loop is left in the SASS. The two sides do different arithmetic of the same length (side_square:
// v = v*v + 1/4, side_linear: v = 0.999 v + 1/8; one FFMA a step each): the compiler cannot merge them
// into one chain, and sides of CHAINS x STEPS instructions are far past what it if-converts. Each side
// stores its sum, so neither is dead code. The seed keeps every value small and finite (v*v + 1/4 from
// below 1/2 stays below 1/2; the linear side tends to 125): no infinities, NaNs or denormals.
//
// branch_lanes and branch_warps differ only in the bit of threadIdx.x they test (the template's Bit):
// bit 1 splits every warp 16/16 (lanes 2, 3, 6, 7, ... take one side), bit 5 gives each warp one side.
// Bit 1 rather than bit 0: ptxas tests bit 0 with a LOP3 and an ISETP but bit 1 and bit 5 with one
// predicate-writing LOP3, and the two kernels' SASS should differ in the constant alone.

#define CHAINS 8
#define STEPS 32

__device__ __forceinline__ void side_square(float (&v)[CHAINS]) {
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) v[k] = fmaf(v[k], v[k], 0.25f);
  }
}

__device__ __forceinline__ void side_linear(float (&v)[CHAINS]) {
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
#pragma unroll
    for (int k = 0; k < CHAINS; ++k) v[k] = fmaf(v[k], 0.999f, 0.125f);
  }
}

__device__ __forceinline__ void start(float (&v)[CHAINS], float seed) {
#pragma unroll
  for (int k = 0; k < CHAINS; ++k) v[k] = seed * (float)(threadIdx.x + k);
}

__device__ __forceinline__ void store(float* out, const float (&v)[CHAINS]) {
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < CHAINS; ++k) sum += v[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <unsigned Bit>
__device__ __forceinline__ void two_sides(float* out, float seed) {
  float v[CHAINS];
  start(v, seed);
  if (threadIdx.x & (1u << Bit)) {
    side_square(v);
    store(out, v);
  } else {
    side_linear(v);
    store(out, v);
  }
}

// (a) divergent: every warp holds threads of both sides, and issues both
extern "C" __global__ void branch_lanes(float* out, float seed) { two_sides<1>(out, seed); }

// (b) warp-uniform: the warps alternate sides, each issues one
extern "C" __global__ void branch_warps(float* out, float seed) { two_sides<5>(out, seed); }

// (c) no branch: every thread runs side_square
extern "C" __global__ void branch_none(float* out, float seed) {
  float v[CHAINS];
  start(v, seed);
  side_square(v);
  store(out, v);
}
