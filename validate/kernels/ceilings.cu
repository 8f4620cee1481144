// Microbenchmarks for the measured ceilings. Each one is sized by the caller to fill
// the GPU (a grid of several blocks per SM, grid-stride loops) and keeps its results
// live with a store the compiler cannot prove dead (`if (acc == sentinel) sink[...]`),
// never taken on real data.

// DRAM: 16-byte vectors, grid-stride. Each kernel comes in variants that keep U
// independent 16-byte accesses in flight per thread (all U loads issued before the
// first use), and copy also with streaming (evict-first) stores; the ceiling is the best
// variant and grid, as empirical roofline tools report it.
#define GRID_STRIDE_LOOP(U, BODY, TAIL)                                           \
  long long stride = (long long)gridDim.x * blockDim.x;                          \
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                \
  for (; i + (U - 1) * stride < n; i += U * stride) { BODY }                     \
  for (; i < n; i += stride) { TAIL }

#define DRAM_READ(U)                                                                       \
  extern "C" __global__ void dram_read_u##U(const float4* __restrict__ x, float* __restrict__ sink, \
                                            long long n, float sentinel) {                \
    float acc = 0.0f;                                                                      \
    GRID_STRIDE_LOOP(U, float4 v[U];                                                       \
      _Pragma("unroll") for (int u = 0; u < U; ++u) v[u] = x[i + u * stride];             \
      _Pragma("unroll") for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;, \
      float4 w = x[i]; acc += w.x + w.y + w.z + w.w;)                                     \
    if (acc == sentinel) sink[threadIdx.x] = acc;                                          \
  }

#define DRAM_WRITE(U)                                                                      \
  extern "C" __global__ void dram_write_u##U(float4* __restrict__ y, long long n, float value) { \
    float4 v = make_float4(value, value, value, value);                                    \
    GRID_STRIDE_LOOP(U,                                                                    \
      _Pragma("unroll") for (int u = 0; u < U; ++u) y[i + u * stride] = v;,               \
      y[i] = v;)                                                                           \
  }

#define STORE_PLAIN(p, v) (*(p) = (v))
#define STORE_STREAM(p, v) __stcs((p), (v))
#define DRAM_COPY(U, SUFFIX, STORE)                                                        \
  extern "C" __global__ void dram_copy_u##U##SUFFIX(const float4* __restrict__ x,          \
                                                    float4* __restrict__ y, long long n) { \
    GRID_STRIDE_LOOP(U, float4 v[U];                                                       \
      _Pragma("unroll") for (int u = 0; u < U; ++u) v[u] = x[i + u * stride];             \
      _Pragma("unroll") for (int u = 0; u < U; ++u) STORE(y + i + u * stride, v[u]);,     \
      STORE(y + i, x[i]);)                                                                 \
  }

#define DRAM_TRIAD(U)                                                                      \
  extern "C" __global__ void dram_triad_u##U(float4* __restrict__ a, const float4* __restrict__ b, \
                                             const float4* __restrict__ c, float s, long long n) { \
    GRID_STRIDE_LOOP(U, float4 bv[U]; float4 cv[U];                                        \
      _Pragma("unroll") for (int u = 0; u < U; ++u) { bv[u] = b[i + u * stride]; cv[u] = c[i + u * stride]; } \
      _Pragma("unroll") for (int u = 0; u < U; ++u)                                        \
        a[i + u * stride] = make_float4(bv[u].x + s * cv[u].x, bv[u].y + s * cv[u].y,      \
                                        bv[u].z + s * cv[u].z, bv[u].w + s * cv[u].w);,    \
      float4 p = b[i]; float4 q = c[i];                                                    \
      a[i] = make_float4(p.x + s * q.x, p.y + s * q.y, p.z + s * q.z, p.w + s * q.w);)     \
  }

// Copy without a loop: each thread moves U 16-byte vectors of its block's contiguous chunk
// and exits (the pattern of framework elementwise kernels); many short blocks keep every
// DRAM channel busy without a grid-stride walk.
#define DRAM_COPY_CHUNK(U)                                                                 \
  extern "C" __global__ void dram_copy_chunk_u##U(const float4* __restrict__ x,            \
                                                  float4* __restrict__ y, long long n) {   \
    long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;                 \
    float4 v[U];                                                                           \
    _Pragma("unroll") for (int u = 0; u < U; ++u) {                                        \
      long long i = base + (long long)u * blockDim.x;                                      \
      if (i < n) v[u] = x[i];                                                              \
    }                                                                                      \
    _Pragma("unroll") for (int u = 0; u < U; ++u) {                                        \
      long long i = base + (long long)u * blockDim.x;                                      \
      if (i < n) y[i] = v[u];                                                              \
    }                                                                                      \
  }

DRAM_READ(1) DRAM_READ(2) DRAM_READ(4)
DRAM_WRITE(1) DRAM_WRITE(2) DRAM_WRITE(4)
DRAM_COPY(1, , STORE_PLAIN) DRAM_COPY(2, , STORE_PLAIN) DRAM_COPY(4, , STORE_PLAIN)
DRAM_COPY(1, _cs, STORE_STREAM) DRAM_COPY(2, _cs, STORE_STREAM) DRAM_COPY(4, _cs, STORE_STREAM)

// Copy whose loads skip L1 and ask L2 to fetch 256-byte blocks (sm_80+ prefetch-size
// hint), with streaming stores: fewer, larger DRAM requests.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
__device__ __forceinline__ float4 load_prefetch(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
#define DRAM_COPY_PF(U)                                                                    \
  extern "C" __global__ void dram_copy_pf_u##U(const float4* __restrict__ x,               \
                                               float4* __restrict__ y, long long n) {      \
    GRID_STRIDE_LOOP(U, float4 v[U];                                                       \
      _Pragma("unroll") for (int u = 0; u < U; ++u) v[u] = load_prefetch(x + i + u * stride); \
      _Pragma("unroll") for (int u = 0; u < U; ++u) __stcs(y + i + u * stride, v[u]);,     \
      __stcs(y + i, load_prefetch(x + i));)                                                \
  }
DRAM_COPY_PF(1) DRAM_COPY_PF(2) DRAM_COPY_PF(4)
#endif
DRAM_COPY_CHUNK(1) DRAM_COPY_CHUNK(2) DRAM_COPY_CHUNK(4) DRAM_COPY_CHUNK(8)
DRAM_TRIAD(1) DRAM_TRIAD(2) DRAM_TRIAD(4)

// L2: every block re-reads a buffer that fits in L2, with ld.global.cg (cache in L2,
// not in L1), so that after the first pass every load is an L2 hit.
extern "C" __global__ void l2_read(const float4* __restrict__ x, float* __restrict__ sink,
                                   long long n, int passes, float sentinel) {
  float acc = 0.0f;
  for (int p = 0; p < passes; ++p) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
      float a, b, c, d;
      asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(x + i));
      acc += a + b + c + d;
    }
  }
  if (acc == sentinel) sink[threadIdx.x] = acc;
}

// Shared memory: conflict-free 16-byte loads, four independent accumulators. One warp
// load moves 512 bytes in four bank-wide phases of 128 bytes.
extern "C" __global__ void shared_read(float* __restrict__ sink, int iterations, int step, float sentinel) {
  __shared__ float4 s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = make_float4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  float4 a0 = make_float4(0, 0, 0, 0), a1 = a0, a2 = a0, a3 = a0;
  int base = threadIdx.x & 1023;
  for (int it = 0; it < iterations; ++it) {
    float4 v0 = s[(base + 0) & 1023], v1 = s[(base + 256) & 1023];
    float4 v2 = s[(base + 512) & 1023], v3 = s[(base + 768) & 1023];
    a0.x += v0.x; a0.y += v0.y; a0.z += v0.z; a0.w += v0.w;
    a1.x += v1.x; a1.y += v1.y; a1.z += v1.z; a1.w += v1.w;
    a2.x += v2.x; a2.y += v2.y; a2.z += v2.z; a2.w += v2.w;
    a3.x += v3.x; a3.y += v3.y; a3.z += v3.z; a3.w += v3.w;
    // A run-time step (32) gives a new address each iteration that the compiler
    // cannot predict, so the loads cannot be hoisted out of the loop.
    base = (base + step) & 1023;
  }
  float acc = a0.x + a0.y + a0.z + a0.w + a1.x + a1.y + a1.z + a1.w + a2.x + a2.y + a2.z + a2.w +
              a3.x + a3.y + a3.z + a3.w;
  if (acc == sentinel) sink[threadIdx.x] = acc;
}

// FMA throughput: 8 independent dependency chains per thread hide the FMA latency
// (4 cycles for FP32 on Volta and later) with enough warps per scheduler.
#define FMA_CHAINS(T, FMA)                                                              \
  T x0 = (T)threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, \
    x6 = x0 + 6, x7 = x0 + 7;                                                           \
  for (int i = 0; i < iterations; ++i) {                                                \
    _Pragma("unroll") for (int j = 0; j < 16; ++j) {                                    \
      x0 = FMA(x0, a, b); x1 = FMA(x1, a, b); x2 = FMA(x2, a, b); x3 = FMA(x3, a, b);   \
      x4 = FMA(x4, a, b); x5 = FMA(x5, a, b); x6 = FMA(x6, a, b); x7 = FMA(x7, a, b);   \
    }                                                                                   \
  }                                                                                     \
  T r = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;                                          \
  if (r == sentinel) sink[threadIdx.x] = r;

extern "C" __global__ void fma_fp32(float* __restrict__ sink, int iterations, float a, float b,
                                    float sentinel) {
  FMA_CHAINS(float, fmaf)
}

extern "C" __global__ void fma_fp64(double* __restrict__ sink, int iterations, double a, double b,
                                    double sentinel) {
  FMA_CHAINS(double, fma)
}
