// Probes of the memory system's finer costs, for the time model's parameters (issue 11):
// how DRAM moves sparse reads and partial writes, what a partial-sector store costs in L2,
// and what one level of a block's tree (shared load, add, store, barrier) costs in latency.
// Index arithmetic is 32-bit shifts so that the probes stay memory bound.

// Reads one float every 2^STRIDE_LOG2 floats (m of them), 8 independent loads per thread.
extern "C" __global__ void sparse_read(const float* __restrict__ x, float* __restrict__ sink, unsigned m,
                                       int stride_log2) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned i = t; i < m; i += 8u * threads) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            unsigned j = i + u * threads;
            v[u] = j < m ? x[(size_t)j << stride_log2] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) acc += v[u];
    }
    if (acc == 1234.5f) sink[0] = acc;  // never true for the probe's data; keeps the loads
}

// Writes one float every 2^STRIDE_LOG2 floats (m of them): each written sector is written in part.
extern "C" __global__ void sparse_write(float* __restrict__ x, unsigned m, int stride_log2) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (unsigned i = t; i < m; i += threads) x[(size_t)i << stride_log2] = 1.0f;
}

// Partial-sector stores that stay in L2: one float per 128-byte line of a buffer that fits in
// L2, every line PASSES times (a different word each pass). A warp-wide store touches 32 lines.
extern "C" __global__ void l2_partial_store(float* __restrict__ x, unsigned lines, int passes) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p)
        for (unsigned i = t; i < lines; i += threads) x[(size_t)i * 32u + (unsigned)(p & 31)] = (float)p;
}

// One block per SM walks LEVELS tree levels: the lower half adds the upper half's value
// (shared load, add, shared store), then the block waits at a barrier. Per-level latency.
extern "C" __global__ void tree_levels(float* __restrict__ out, int levels) {
    __shared__ float s[1024];
    unsigned t = threadIdx.x, half = blockDim.x >> 1;
    s[t] = (float)t;
    __syncthreads();
    for (int k = 0; k < levels; ++k) {
        if (t < half) s[t] += s[t + half] * 0.5f;
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Reads a buffer of CHUNKS 128-byte chunks once, one chunk per warp load, 8 independent loads
// per thread, in one of two orders of visit. Visit v (warp w, load u: v = w + u x warps) reads
// chunk v (row order: consecutive warps read consecutive chunks, DRAM pages whole) or, in
// column order, the buffer as ROWS rows of CHUNKS / ROWS chunks, walked down its columns
// (consecutive warps read the same column of consecutive rows: a page opened per chunk when
// ROWS covers the warps that run together).
extern "C" __global__ void page_read(const float* __restrict__ x, float* __restrict__ sink, unsigned chunks,
                                     unsigned rows, int column) {
    unsigned lane = threadIdx.x & 31u;
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
    unsigned per_row = chunks / rows;
    float v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
        unsigned c = warp + (unsigned)u * warps;
        unsigned chunk = column ? (c % rows) * per_row + c / rows : c;
        v[u] = c < chunks ? x[(size_t)chunk * 32u + lane] : 0.0f;
    }
    float acc = 0.0f;
#pragma unroll
    for (int u = 0; u < 8; ++u) acc += v[u];
    if (acc == 1234.5f) sink[0] = acc;  // never true for the probe's data; keeps the loads
}
