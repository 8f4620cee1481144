// Probes of the memory-side terms of the time model (issue 23): L2's request rate, global
// atomics (spread and on one address) and random DRAM bursts. Each kernel measures one
// parameter; 32-bit index arithmetic keeps them memory bound.

// One float per 128-byte line of an L2-resident buffer of LINES lines, PASSES times over it,
// 8 independent loads per thread: a warp load touches 32 lines, one sector each (32 requests).
extern "C" __global__ void l2_lone_sector(const float* __restrict__ x, float* __restrict__ sink, unsigned lines,
                                          int passes) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (int p = 0; p < passes; ++p) {
        unsigned word = (unsigned)p & 31u;
        for (unsigned i = t; i < lines; i += 8u * threads) {
            float v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) {
                unsigned j = i + u * threads;
                v[u] = j < lines ? __ldcg(x + (size_t)j * 32u + word) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < 8; ++u) acc += v[u];
        }
    }
    if (acc == 1234.5f) sink[0] = acc;  // never true for the probe's data; keeps the loads
}

// The same buffer read whole, float4 per lane (a warp load: 4 full lines, 16 sectors), PASSES times.
extern "C" __global__ void l2_full_line(const float4* __restrict__ x, float* __restrict__ sink, unsigned vectors,
                                        int passes) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (int p = 0; p < passes; ++p)
        for (unsigned i = t; i < vectors; i += 8u * threads) {
            float4 v[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) {
                unsigned j = i + u * threads;
                v[u] = j < vectors ? __ldcg(x + j) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int u = 0; u < 8; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
        }
    if (acc == 1234.5f) sink[0] = acc;
}

// Warp-aggregated updates of one counter: lane 0 of every warp adds 1, ITERS times.
extern "C" __global__ void atomic_one_address(unsigned* __restrict__ counter, int iters) {
    if ((threadIdx.x & 31u) != 0u) return;
    for (int k = 0; k < iters; ++k) atomicAdd(counter, 1u);
}

// A thread per element copies it and sets one flag (a store every warp shares, one request per
// warp, sent when the warp's own load returns), against the same copy without the flag.
extern "C" __global__ void store_flag(const unsigned* __restrict__ x, unsigned* __restrict__ y, unsigned* flag,
                                      unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = x[i] + 1u; *flag = 1u; }
}

extern "C" __global__ void store_no_flag(const unsigned* __restrict__ x, unsigned* __restrict__ y, unsigned* flag,
                                         unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1u;
}

// Every lane adds 1 to a word of its own line (LINES lines, a buffer that stays in L2), ITERS
// times: updates spread over L2's slices, a warp instruction touching 32 lines.
extern "C" __global__ void atomic_spread(unsigned* __restrict__ x, unsigned lines, int iters) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (int k = 0; k < iters; ++k) {
        unsigned line = (t + (unsigned)k * threads) % lines;
        atomicAdd(x + (size_t)line * 32u, 1u);
    }
}

// Random 64-byte bursts of a buffer of BURSTS bursts: each half-warp reads one burst (16 floats)
// at a hashed place, 8 independent per thread; every burst is read once per launch on average.
extern "C" __global__ void random_burst(const float* __restrict__ x, float* __restrict__ sink, unsigned bursts,
                                        unsigned reads) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    unsigned lane16 = threadIdx.x & 15u;
    float acc = 0.0f;
    for (unsigned i = t >> 4; i < reads; i += 8u * (threads >> 4)) {
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            unsigned r = i + u * (threads >> 4);
            unsigned h = r * 2654435761u;  // Knuth's multiplicative hash: a permutation of 32-bit words
            h ^= h >> 15;
            unsigned b = h % bursts;
            v[u] = r < reads ? x[(size_t)b * 16u + lane16] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) acc += v[u];
    }
    if (acc == 1234.5f) sink[0] = acc;
}

// A read stream over VECTORS float4 (every lane one float4 a trip): what a kernel's DRAM
// traffic does to the lines L2 holds when it starts. Timed after validate's L2 flush (a
// memset: L2 full of written lines) and after the same kernel read a scrub buffer (L2 full
// of clean lines): the difference is the write-back of the flush's lines the stream displaces.
extern "C" __global__ void stream_read(const float4* __restrict__ x, float* __restrict__ sink, unsigned vectors) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (unsigned i = t; i < vectors; i += threads) {
        float4 v = x[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) sink[0] = acc;  // never true for the probe's data; keeps the loads
}

// A copy stream (after a clean scrub): the DRAM's rate for a half-read, half-written mix, which
// converts the write-back's time into bytes.
extern "C" __global__ void stream_copy(const float4* __restrict__ x, float4* __restrict__ y, unsigned vectors) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    for (unsigned i = t; i < vectors; i += threads) y[i] = x[i];
}
