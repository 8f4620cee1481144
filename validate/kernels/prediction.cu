// Kernels of the prediction check (issue: occupancy-aware prediction).
// ELEMS (independent elements per thread, all loads issued before any store) and the
// residency (limited from the host with dynamic shared memory) set the bytes in flight.
#ifndef ELEMS
#define ELEMS 1
#endif

extern "C" __global__ void copy_sweep(const float* __restrict__ x, float* __restrict__ y, long long n) {
    // Dynamic shared memory is requested at launch only to limit resident blocks per SM.
    long long base = (long long)blockIdx.x * blockDim.x * ELEMS + threadIdx.x;
    float v[ELEMS];
    if ((long long)(blockIdx.x + 1) * blockDim.x * ELEMS <= n) {
        // A full block: no bounds checks, so that all ELEMS loads issue before the first
        // store (guarded loads were split into two rounds at ELEMS = 8 on sm_90).
#pragma unroll
        for (int j = 0; j < ELEMS; ++j) v[j] = x[base + (long long)j * blockDim.x];
#pragma unroll
        for (int j = 0; j < ELEMS; ++j) y[base + (long long)j * blockDim.x] = v[j];
        return;
    }
#pragma unroll
    for (int j = 0; j < ELEMS; ++j) {
        long long i = base + (long long)j * blockDim.x;
        v[j] = i < n ? x[i] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < ELEMS; ++j) {
        long long i = base + (long long)j * blockDim.x;
        if (i < n) y[i] = v[j];
    }
}

// One thread follows a random cycle through a buffer larger than L2: every load depends on
// the previous one, so the time per step is the unloaded memory latency.
extern "C" __global__ void pointer_chase(const unsigned int* __restrict__ next, unsigned int start, int steps,
                                         unsigned int* __restrict__ out) {
    unsigned int p = start;
    for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
    out[0] = p;
}

extern "C" __global__ void empty_kernel(int* out) {
    if (out != nullptr && threadIdx.x == 1024) out[0] = 1;
}
