// Latency: pointer chases (one thread, one dependent load per hop) and empty kernels.
//
// A chase's nodes are 8-byte words at chosen byte offsets of one buffer; each holds the
// offset of the next node. `chase_link` writes the links on the device, so a chase can
// spread a few thousand nodes over a buffer of many GiB without copying it from the host.

extern "C" __global__ void chase_link(unsigned long long* __restrict__ chain,
                                      const unsigned long long* __restrict__ offsets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) chain[offsets[i] >> 3] = offsets[i + 1 == n ? 0 : i + 1];
}

#define CHASE_RECORD 4096

__device__ __forceinline__ unsigned long long clock_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory");
  return t;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
  return t;
}

// `warm` unrecorded hops (they bring the nodes into the caches the chase is meant to hit),
// then `hops` (<= CHASE_RECORD) recorded ones: the SM cycles from before a load to after a
// shared-memory store of its value (the store cannot issue before the load returns, so
// the second clock read waits for it too). out = {last node, elapsed ns, elapsed cycles}
// of the recorded part: their ratio is the SM clock while the chase ran.
#define CHASE(NAME, OP)                                                                            \
  extern "C" __global__ void NAME(const unsigned char* __restrict__ base, unsigned long long start, \
                                  int warm, int hops, unsigned* __restrict__ cycles,               \
                                  unsigned long long* __restrict__ out) {                          \
    __shared__ unsigned recorded[CHASE_RECORD];                                                    \
    __shared__ volatile unsigned long long last[2];                                                     \
    unsigned long long p = start;                                                                  \
    for (int i = 0; i < warm; ++i)                                                                 \
      asm volatile("ld.global." OP ".u64 %0, [%1];" : "=l"(p) : "l"(base + p) : "memory");         \
    unsigned long long t0 = global_ns(), c0 = clock_now();                                         \
    for (int i = 0; i < hops; ++i) {                                                               \
      unsigned long long a = clock_now();                                                          \
      asm volatile("ld.global." OP ".u64 %0, [%1];" : "=l"(p) : "l"(base + p) : "memory");         \
      last[i & 1] = p;                                                                             \
      unsigned long long b = clock_now();                                                          \
      recorded[i] = (unsigned)(b - a);                                                             \
    }                                                                                              \
    unsigned long long c1 = clock_now(), t1 = global_ns();                                         \
    for (int i = 0; i < hops; ++i) cycles[i] = recorded[i];                                        \
    out[0] = p; out[1] = t1 - t0; out[2] = c1 - c0;                                                \
  }

CHASE(chase_ca, "ca")  // cached in L1 and L2 (the default for global loads)
CHASE(chase_cg, "cg")  // cached in L2 only

// Launch cost: a kernel that does nothing, and one that holds the GPU for a given time so
// that the host can queue work behind it (the queued work then starts with no host gap).
extern "C" __global__ void empty_kernel() {}

// The first memory round of a launch spread over SMs: one float loaded and stored per thread.
extern "C" __global__ void touch_kernel(const float* __restrict__ x, float* __restrict__ y) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + 1.0f;
}

extern "C" __global__ void spin_kernel(unsigned long long nanoseconds) {
  unsigned long long start = global_ns();
  while (global_ns() - start < nanoseconds) {
  }
}
