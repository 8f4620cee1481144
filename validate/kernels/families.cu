// Kernels of the families that issue 11 measures and the suite (suite.cu) lacks:
// the four classic block reductions (PMPP ch.10, Cheng et al. ch.3), a shared-memory
// stride sweep for bank conflicts, lane-divergent vs warp-uniform branches of equal work,
// and a grid-stride copy unrolled EPT ways (loads in flight at low occupancy).
// Compile-time parameters come as #defines (validate._compile.with_defines):
// BLOCK (reductions), STRIDE and ITERS (shared sweep), ITERS (branches), EPT (copy).

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef STRIDE
#define STRIDE 1
#endif
#ifndef ITERS
#define ITERS 256
#endif
#ifndef EPT
#define EPT 1
#endif

// --- reductions: one partial sum per block of BLOCK threads, one element per thread ---

extern "C" __global__ void reduce_interleaved(const float* __restrict__ x, float* __restrict__ partial, int n) {
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_interleaved_compact(const float* __restrict__ x, float* __restrict__ partial,
                                                      int n) {
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        unsigned index = 2 * stride * tid;
        if (index < BLOCK) s[index] += s[index + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_sequential(const float* __restrict__ x, float* __restrict__ partial, int n) {
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

extern "C" __global__ void reduce_warp_shuffle(const float* __restrict__ x, float* __restrict__ partial, int n) {
    __shared__ float warp_sums[BLOCK / 32];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid, lane = tid % 32, warp = tid / 32;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? warp_sums[lane] : 0.0f;
        for (int offset = BLOCK / 64; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}

// --- shared-memory stride sweep: each thread reads word (tid * STRIDE) % 1024 ITERS times ---
// The index depends on the loop counter so that the loads cannot be hoisted; the add of
// k * 32 words keeps every lane's bank (32 banks of 4 bytes) fixed across iterations.
extern "C" __global__ void shared_stride(const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float s[2048];
    unsigned tid = threadIdx.x;
    for (unsigned w = tid; w < 2048; w += blockDim.x) s[w] = x[w];
    __syncthreads();
    float acc = 0.0f;
    unsigned base = (tid * STRIDE) % 1024;
#pragma unroll 8
    for (unsigned k = 0; k < ITERS; ++k) acc += s[base + (k % 32) * 32];
    y[blockIdx.x * blockDim.x + tid] = acc;
}

// --- branches of equal work: x <- x*x + a on one side, x <- x/2 + b on the other ---
// UNIFORM=1 branches per warp (warp index parity), UNIFORM=0 per lane (lane parity).
#ifndef UNIFORM
#define UNIFORM 0
#endif
extern "C" __global__ void branches(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = 0.0f, ai = a[i], bi = b[i];
    int side = UNIFORM ? (i / 32) & 1 : i & 1;
    if (side) {
#pragma unroll 4
        for (int k = 0; k < ITERS; ++k) x = fmaf(x, x, ai);
    } else {
#pragma unroll 4
        for (int k = 0; k < ITERS; ++k) x = fmaf(x, 0.5f, bi);
    }
    y[i] = x;
}

// --- grid-stride copy, EPT independent loads in flight per thread per trip ---
extern "C" __global__ void grid_stride_copy(const float* __restrict__ x, float* __restrict__ y, int n) {
    int threads = gridDim.x * blockDim.x;
    int start = blockIdx.x * blockDim.x + threadIdx.x;
    for (int base = start; base < n; base += EPT * threads) {
        float v[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            int i = base + e * threads;
            v[e] = i < n ? x[i] : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            int i = base + e * threads;
            if (i < n) y[i] = v[e];
        }
    }
}
