// Probes of the causes of the time model's errors on unseen code: each kernel isolates one
// access or synchronisation pattern (docs/prediction.md, "Probes for the causes seen on unseen
// code"); validate/probes/_cause_probes.py launches them through validate.measure beside the
// counts of their own access descriptions. Written for gpuroof.

#define WARP_ALL 0xffffffffu

// (1) A thread walks its own row: lane l reads row l of the warp's 32 rows, so one warp load
// touches 32 lines and L1 serves the rest of each line to the later iterations.
extern "C" __global__ void row_per_thread(const float* __restrict__ a, float* __restrict__ out, int rows,
                                          int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = a + (size_t)r * cols;
    float s = 0.0f;
    for (int j = 0; j < cols; ++j) s += p[j];
    out[r] = s;
}

// (2) A column reduction of 2-byte elements: thread c sums column c, a warp reads 64 bytes a row.
extern "C" __global__ void column_sum_u16(const unsigned short* __restrict__ a, float* __restrict__ out, int rows,
                                          int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) s += (float)a[(size_t)r * cols + c];
    out[c] = s;
}

// (2) The same column reduction of 4-byte elements (a warp reads 128 bytes a row).
extern "C" __global__ void column_sum_f32(const float* __restrict__ a, float* __restrict__ out, int rows,
                                          int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) s += a[(size_t)r * cols + c];
    out[c] = s;
}

// (3) A grid-stride loop kept to one load in flight per thread (no unrolling): each trip's
// load waits for the add of the one before it to issue.
extern "C" __global__ void grid_stride_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll 1
    for (int i = t; i < n; i += stride) s += x[i];
    out[t] = s;
}

// (4) Shared-memory counters bumped by a compare-and-swap retry loop: thread t adds 1 to bin
// (t + k) % bins in trip k; with one bin every lane of a warp retries until it wins.
extern "C" __global__ void shared_cas_count(unsigned* __restrict__ out, int iters, int bins) {
    __shared__ unsigned h[1024];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0u;
    __syncthreads();
    for (int k = 0; k < iters; ++k) {
        unsigned* p = &h[(threadIdx.x + k) % bins];
        unsigned old = *(volatile unsigned*)p, assumed;
        do {
            assumed = old;
            old = atomicCAS(p, assumed, assumed + 1u);
        } while (old != assumed);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) out[(size_t)blockIdx.x * bins + b] = h[b];
}

// (4) The same counters bumped by plain shared atomics.
extern "C" __global__ void shared_add_count(unsigned* __restrict__ out, int iters, int bins) {
    __shared__ unsigned h[1024];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0u;
    __syncthreads();
    for (int k = 0; k < iters; ++k) atomicAdd(&h[(threadIdx.x + k) % bins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) out[(size_t)blockIdx.x * bins + b] = h[b];
}

// (5) Global counters bumped by a compare-and-swap retry loop: thread t adds 1 to counter
// t % addresses, iters times; the threads sharing a counter contend for it in L2.
extern "C" __global__ void global_cas_count(unsigned* __restrict__ counters, int addresses, int iters) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* p = counters + t % addresses;
    for (int k = 0; k < iters; ++k) {
        unsigned old = *(volatile unsigned*)p, assumed;
        do {
            assumed = old;
            old = atomicCAS(p, assumed, assumed + 1u);
        } while (old != assumed);
    }
}

// (6) One wave of blocks, each running `rounds` rounds of three phases split by barriers: load
// per_thread floats a thread and sum them, reduce the block's sums by a shared-memory tree
// (a barrier a level), write the block's total to the same per_thread elements of out.
extern "C" __global__ void phased_rounds(const float* __restrict__ x, float* __restrict__ out, int per_thread,
                                         int rounds) {
    __shared__ float sh[1024];
    const int t = threadIdx.x, b = blockDim.x;
    const size_t base = (size_t)blockIdx.x * rounds * per_thread * b;
    for (int r = 0; r < rounds; ++r) {
        const size_t at = base + (size_t)r * per_thread * b + t;
        float s = 0.0f;
        for (int k = 0; k < per_thread; ++k) s += x[at + (size_t)k * b];
        sh[t] = s;
        __syncthreads();
        for (int h = b / 2; h > 0; h >>= 1) {
            if (t < h) sh[t] += sh[t + h];
            __syncthreads();
        }
        const float total = sh[0];
        __syncthreads();  // the next round's first store must not overwrite sh[0] before every warp read it
        for (int k = 0; k < per_thread; ++k) out[at + (size_t)k * b] = total;
    }
}

// A block's reduction (maximum or sum): shuffles within each warp, lane 0 of each warp stores its
// value, and every warp reduces the stored values again; two barriers (sh is reused after).
__device__ float block_reduce(float v, float* sh, bool take_max) {
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(WARP_ALL, v, o);
        v = take_max ? fmaxf(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    if (lane == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = lane < warps ? sh[lane] : (take_max ? -3.402823466e38f : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(WARP_ALL, v, o);
        v = take_max ? fmaxf(v, w) : v + w;
    }
    __syncthreads();
    return v;
}

// (7) A block a row, the row read twice (softmax's first two passes): its maximum, then the sum
// of exp(x - max); thread 0 writes the row's log-sum-exp.
extern "C" __global__ void row_logsumexp(const float* __restrict__ x, float* __restrict__ out, int cols) {
    __shared__ float sh[32];
    const float* row = x + (size_t)blockIdx.x * cols;
    float m = -3.402823466e38f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce(m, sh, true);
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(row[j] - m);
    s = block_reduce(s, sh, false);
    if (threadIdx.x == 0) out[blockIdx.x] = m + __logf(s);
}

// (8) A warp a row: lanes stride the row by 32, a shuffle tree sums the warp, lane 0 writes.
extern "C" __global__ void warp_row_sum(const float* __restrict__ a, float* __restrict__ out, int rows, int cols) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (warp >= rows) return;
    const float* p = a + (size_t)warp * cols;
    float s = 0.0f;
    for (int j = lane; j < cols; j += 32) s += p[j];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(WARP_ALL, s, o);
    if (lane == 0) out[warp] = s;
}

// (9) An accumulator in global memory: thread c adds column c into out[c] itself each trip, as
// PolyBench's products write `c[i][j] +=` and `tmp[i] +=` (out not __restrict__: each trip's store
// stays in the loop, and the next trip's load may not pass it).
extern "C" __global__ void column_sum_stored(const float* a, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    out[c] = 0.0f;
    for (int r = 0; r < rows; ++r) out[c] += a[(size_t)r * cols + c];
}

// (9) Its control: the same walk, one load in flight a trip, the sum kept in a register.
extern "C" __global__ void column_sum_register(const float* __restrict__ a, float* __restrict__ out, int rows,
                                               int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
#pragma unroll 1
    for (int r = 0; r < rows; ++r) s += a[(size_t)r * cols + c];
    out[c] = s;
}

// (10) A block a row, read by three loops in turn (a layer norm's mean, variance and output
// passes): thread t reads the same elements j = t, t + blockDim.x, ... in each loop, so the second
// and third loops find them in L1 or L2 (spread = 0); with spread = 1 each loop reads a row of its
// own, from DRAM. One load in flight a trip.
extern "C" __global__ void row_three_loops(const float* __restrict__ x, float* __restrict__ out, int cols,
                                           int spread) {
    const float* r0 = x + (size_t)blockIdx.x * cols * (spread ? 3 : 1);
    const float* r1 = r0 + (spread ? cols : 0);
    const float* r2 = r1 + (spread ? cols : 0);
    float s = 0.0f, v = 0.0f;
#pragma unroll 1
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += r0[j];
#pragma unroll 1
    for (int j = threadIdx.x; j < cols; j += blockDim.x) v += (r1[j] - s) * (r1[j] - s);
#pragma unroll 1
    for (int j = threadIdx.x; j < cols; j += blockDim.x) out[(size_t)blockIdx.x * cols + j] = r2[j] * v;
}
