// Memory-hierarchy microbenchmarks: the working-set sweep, host-memory reads and writes
// (mapped and managed memory), and the L2-persistence kernel. 16-byte vectors, grid-stride
// loops over one wave of blocks; results kept live with a store never taken on real data.

#define LOAD4(OP, ptr, v)                                                                   \
  asm volatile("ld.global." OP ".v4.f32 {%0,%1,%2,%3}, [%4];"                               \
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(ptr))

// Read n vectors once, grid-stride (mapped and managed memory, host to device).
extern "C" __global__ void read_once(const float4* __restrict__ x, float* __restrict__ sink, long long n,
                                     float sentinel) {
  float acc = 0.0f;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
    float4 a;
    LOAD4("cg", x + i, a);
    acc += (a.x + a.y) + (a.z + a.w);
  }
  if (acc == sentinel) sink[threadIdx.x] = acc;
}

// Working-set sweep: block b re-reads its own slice x[b * slice, (b + 1) * slice), its
// threads stepping by blockDim and wrapping around, four independent loads per iteration.
// The blocks of one SM together hold 1/SMs of the footprint: it stays in that SM's L1
// while it fits (.ca), the whole footprint in L2 while it fits (.cg), else it streams from
// DRAM. A slice smaller than the block is read by several threads at once, as L1 serves it.
#define READ_SLICES(NAME, OP)                                                                \
  extern "C" __global__ void NAME(const float4* __restrict__ x, float* __restrict__ sink,    \
                                  unsigned slice, int iterations, float sentinel) {         \
    const float4* s = x + (unsigned long long)blockIdx.x * slice;                           \
    unsigned step = blockDim.x % slice, i = threadIdx.x % slice;                             \
    float acc = 0.0f;                                                                        \
    for (int it = 0; it < iterations; ++it) {                                                \
      float4 a, b, c, d;                                                                     \
      LOAD4(OP, s + i, a); i += step; i = i >= slice ? i - slice : i;                        \
      LOAD4(OP, s + i, b); i += step; i = i >= slice ? i - slice : i;                        \
      LOAD4(OP, s + i, c); i += step; i = i >= slice ? i - slice : i;                        \
      LOAD4(OP, s + i, d); i += step; i = i >= slice ? i - slice : i;                        \
      acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) +                    \
             ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));                      \
    }                                                                                        \
    if (acc == sentinel) sink[threadIdx.x] = acc;                                            \
  }

READ_SLICES(read_slices_ca, "ca")
READ_SLICES(read_slices_cg, "cg")

// Write n vectors once (mapped and managed memory, device to host).
extern "C" __global__ void write_once(float4* __restrict__ y, long long n, float value) {
  float4 v = make_float4(value, value, value, value);
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = v;
}

// L2 persistence: stream `stream_n` vectors once while re-reading a hot set of hot_mask + 1
// vectors (a power of two), one hot vector per 2^ratio_shift streamed ones. Between two
// reads of the same hot line the kernel touches hot bytes x (1 + 2^ratio_shift) distinct
// bytes, so without persistence a hot set whose reuse distance exceeds L2 is evicted.
extern "C" __global__ void stream_hot(const float4* __restrict__ stream, long long stream_n,
                                      const float4* __restrict__ hot, long long hot_mask, int ratio_shift,
                                      float* __restrict__ sink, float sentinel) {
  float acc = 0.0f;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < stream_n; i += stride) {
    float4 a, b;
    LOAD4("cg", stream + i, a);
    LOAD4("cg", hot + ((i >> ratio_shift) & hot_mask), b);
    acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
  }
  if (acc == sentinel) sink[threadIdx.x] = acc;
}
