// Kernels that exercise what occupancy.kernel_resources reads from a binary: register
// spills, launch bounds, named barriers, large static shared memory, a fixed cluster,
// a non-inlined call with its own stack, user constant memory, dynamic shared memory,
// C++ (mangled) names. Used by the differential tests against ptxas -v / cuobjdump and
// by validate.check_resources against the driver. Each kernel writes what it computes,
// so the compiler keeps its resources.

__constant__ float coefficients[256];

extern "C" __global__ void register_heavy(float* __restrict__ x, int n) {
  float a[96];
#pragma unroll
  for (int i = 0; i < 96; i++) a[i] = x[i * n + threadIdx.x];
#pragma unroll
  for (int k = 0; k < 6; k++)
#pragma unroll
    for (int i = 0; i < 96; i++) a[i] = a[i] * a[(i * 7 + k) % 96] + 1.0f;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 96; i++) s += a[i];
  x[threadIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(512, 4) spill_bounded(float* __restrict__ x, int n) {
  float a[64];
#pragma unroll
  for (int i = 0; i < 64; i++) a[i] = x[i * n + threadIdx.x];
#pragma unroll
  for (int k = 0; k < 4; k++)
#pragma unroll
    for (int i = 0; i < 64; i++) a[i] = a[i] * a[(i * 5 + k) % 64] + 2.0f;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 64; i++) s += a[i];
  x[threadIdx.x] = s;
}

extern "C" __global__ void dynamic_index_local(float* __restrict__ x, const int* __restrict__ idx) {
  float a[32];
  for (int i = 0; i < 32; i++) a[i] = x[i * blockDim.x + threadIdx.x];
  x[threadIdx.x] = a[idx[threadIdx.x] & 31];
}

extern "C" __global__ void __launch_bounds__(1024, 2) spill_heavy(float* __restrict__ x, int n) {
  float a[96];
#pragma unroll
  for (int i = 0; i < 96; i++) a[i] = x[i * n + threadIdx.x];
#pragma unroll
  for (int k = 0; k < 6; k++)
#pragma unroll
    for (int i = 0; i < 96; i++) a[i] = a[i] * a[(i * 7 + k) % 96] + 1.0f;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 96; i++) s += a[i];
  x[threadIdx.x] = s;
}

#define BOUNDED(NAME, ...)                                                            \
  extern "C" __global__ void __launch_bounds__(__VA_ARGS__) NAME(float* __restrict__ x) { \
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];                               \
    _Pragma("unroll") for (int i = 0; i < 24; i++) v = v * v + (float)i;              \
    x[blockIdx.x * blockDim.x + threadIdx.x] = v;                                     \
  }
BOUNDED(bounds_128, 128)
BOUNDED(bounds_256_min2, 256, 2)
BOUNDED(bounds_1024_min1, 1024, 1)
BOUNDED(bounds_64_min8, 64, 8)
BOUNDED(bounds_96_min4, 96, 4)
BOUNDED(bounds_512_min3, 512, 3)

#define BARRIERS(N)                                                                   \
  extern "C" __global__ void barriers_##N(float* __restrict__ x) {                    \
    __shared__ float s[256];                                                          \
    s[threadIdx.x % 256] = x[threadIdx.x];                                            \
    asm volatile("bar.sync %0;" ::"r"(N - 1) : "memory");                            \
    x[threadIdx.x] = s[(threadIdx.x + 1) % 256];                                      \
  }
BARRIERS(2)
BARRIERS(5)
BARRIERS(8)
BARRIERS(12)
BARRIERS(16)

#define STATIC_SHARED(NAME, WORDS)                                                    \
  extern "C" __global__ void NAME(float* __restrict__ x) {                            \
    __shared__ float s[WORDS];                                                        \
    for (int i = threadIdx.x; i < WORDS; i += blockDim.x) s[i] = x[i];                \
    __syncthreads();                                                                  \
    x[threadIdx.x] = s[(threadIdx.x * 33) % WORDS];                                   \
  }
STATIC_SHARED(shared_48k, 12288)
STATIC_SHARED(shared_40k, 10240)
STATIC_SHARED(shared_12300, 3075)
STATIC_SHARED(shared_4, 1)

__shared__ double module_shared[300];

extern "C" __global__ void module_shared_user(double* __restrict__ x) {
  module_shared[threadIdx.x % 300] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = module_shared[(threadIdx.x + 7) % 300];
}

extern "C" __global__ void dynamic_shared_only(float* __restrict__ x) {
  extern __shared__ float d[];
  d[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = d[(threadIdx.x + 1) % blockDim.x];
}

__device__ __noinline__ float stack_user(const float* __restrict__ x, int k) {
  float a[40];
  for (int i = 0; i < 40; i++) a[i] = x[i * 3 + k];
  return a[k % 40] + a[(k * 7) % 40];
}

extern "C" __global__ void calls_noinline(float* __restrict__ x) {
  x[threadIdx.x] = stack_user(x, threadIdx.x) + stack_user(x, threadIdx.x + 1);
}

extern "C" __global__ void uses_constant(float* __restrict__ x) {
  x[threadIdx.x] = coefficients[threadIdx.x % 256] * x[threadIdx.x];
}

extern "C" __global__ void fp64_polynomial(double* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i], acc = 0.0;
#pragma unroll
  for (int k = 0; k < 16; k++) acc = acc * v + (double)(k + 1);
  x[i] = acc;
}

template <int N>
__global__ void templated_sum(const float* __restrict__ x, float* __restrict__ y) {
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < N; i++) acc += x[threadIdx.x * N + i];
  y[threadIdx.x] = acc;
}
template __global__ void templated_sum<4>(const float*, float*);
template __global__ void templated_sum<32>(const float*, float*);

namespace gpuroof_test {
__global__ void namespaced(int* __restrict__ out) { out[threadIdx.x] = threadIdx.x * 3; }
}  // namespace gpuroof_test

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_pair(float* __restrict__ x) {
  __shared__ float s[1024];
  s[threadIdx.x % 1024] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 1024];
}

extern "C" __global__ void __cluster_dims__(2, 2, 1) cluster_quad(float* __restrict__ x) {
  x[blockIdx.x * blockDim.x + threadIdx.x] *= 3.0f;
}
#endif

#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 12 || __CUDACC_VER_MINOR__ >= 4)
extern "C" __global__ void __maxnreg__(32) capped_registers(float* __restrict__ x, int n) {
  float a[24];
#pragma unroll
  for (int i = 0; i < 24; i++) a[i] = x[i * n + threadIdx.x];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 24; i++) s += a[i] * a[(i + 3) % 24];
  x[threadIdx.x] = s;
}
#endif
