// Probes of the time model's corpus-argued rules (validate/probes/_rule_probes.py): each pair of
// kernels isolates one effect a rule claims, present in one kernel and absent in the other, so
// that the measured times decide whether the rule predicts it. Loops are `#pragma unroll 1` so
// that the SASS holds one loop per source loop, with the trips the driver counts. Every kernel
// writes its sum where it cannot be skipped; the values are not checked (the probes time).

// ---- warp_customers: a thread per row (each warp load touches 32 lines), with or without a barrier
template <bool SYNC>
__device__ __forceinline__ void rows(const float* __restrict__ a, float* __restrict__ y, int cols) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int j = 0; j < cols; ++j) {
        s += a[(size_t)row * cols + j];
        if (SYNC) __syncthreads();
    }
    y[row] = s;
}
extern "C" __global__ void rows_free(const float* __restrict__ a, float* __restrict__ y, int cols) {
    rows<false>(a, y, cols);
}
extern "C" __global__ void rows_synced(const float* __restrict__ a, float* __restrict__ y, int cols) {
    rows<true>(a, y, cols);
}

// ---- triangle_work: trips that fall with the thread's global index, or the same mean for all
extern "C" __global__ void trips_by_index(const float* __restrict__ a, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int k = i; k < n; ++k) s += a[k];
    y[i] = s;
}
extern "C" __global__ void trips_even(const float* __restrict__ a, float* __restrict__ y, int trips) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) s += a[i + k];
    y[i] = s;
}

// ---- sass_barriers: a tree in shared memory, one barrier per level in a loop; or warp shuffles
extern "C" __global__ void tree_barriers(const float* __restrict__ a, float* __restrict__ y) {
    extern __shared__ float part[];
    const int t = threadIdx.x;
    part[t] = a[blockIdx.x * blockDim.x + t];
    __syncthreads();
#pragma unroll 1
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = part[0];
}
// ---- barrier_loop_trips: the same tree with interleaved pairs (a level keeps the threads whose
// index is a multiple of 2s: divergent warps, a modulo per thread and level), its issue the bound
extern "C" __global__ void tree_modulo(const float* __restrict__ a, float* __restrict__ y) {
    extern __shared__ float part[];
    const unsigned t = threadIdx.x;
    part[t] = a[blockIdx.x * blockDim.x + t];
    __syncthreads();
#pragma unroll 1
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (t % (2 * s) == 0) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = part[0];
}
extern "C" __global__ void tree_shuffles(const float* __restrict__ a, float* __restrict__ y) {
    float v = a[blockIdx.x * blockDim.x + threadIdx.x];
#pragma unroll 1
    for (int s = 16; s > 0; s >>= 1) v += __shfl_down_sync(0xffffffffu, v, s);
    if ((threadIdx.x & 31) == 0) y[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = v;
}

// ---- enclosing_passes: a block walks `passes` vectors of `len` floats; a pass is a stride loop of
// loads (the hot loop) then a tree of barriers. Short vectors: the passes are most of the work.
extern "C" __global__ void vector_passes(const float* __restrict__ a, float* __restrict__ y, int passes, int len) {
    __shared__ float part[256];
    const int t = threadIdx.x;
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        const float* v = a + ((size_t)blockIdx.x * passes + p) * len;
        float s = 0.0f;
#pragma unroll 1
        for (int j = t; j < len; j += blockDim.x) s += v[j];
        part[t] = s;
        __syncthreads();
#pragma unroll 1
        for (int h = blockDim.x / 2; h > 0; h >>= 1) {
            if (t < h) part[t] += part[t + h];
            __syncthreads();
        }
        if (t == 0) y[blockIdx.x * passes + p] = part[0];
        __syncthreads();
    }
}

// ---- lone_thread: a loop only thread 0 of the grid runs, or lane 0 of every warp
extern "C" __global__ void loop_lone(const float* __restrict__ a, float* __restrict__ y, int trips) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        float s = 0.0f;
#pragma unroll 1
        for (int k = 0; k < trips; ++k) s += a[(size_t)k * 32];
        y[0] = s;
    }
}
extern "C" __global__ void loop_every_warp(const float* __restrict__ a, float* __restrict__ y, int trips) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ((threadIdx.x & 31) == 0) {
        float s = 0.0f;
#pragma unroll 1
        for (int k = 0; k < trips; ++k) s += a[(size_t)k * 32];
        y[i >> 5] = s;
    }
}

// ---- early_exit_share: the first `stay` threads of a block run the loop, the others leave at once
extern "C" __global__ void early_exit(const float* __restrict__ a, float* __restrict__ y, int trips, int stay) {
    if ((int)threadIdx.x >= stay) return;
    const int i = blockIdx.x * stay + threadIdx.x;
    const int threads = gridDim.x * stay;
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) s += a[(size_t)k * threads + i];
    y[i] = s;
}

// ---- nest_trips: a hot loop of loads holding an inner loop of FMAs, or the same FMAs unrolled
extern "C" __global__ void nest_inner_loop(const float* __restrict__ a, float* __restrict__ y, int trips, int inner) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) {
        const float v = a[(size_t)k * threads + i];
#pragma unroll 1
        for (int r = 0; r < inner; ++r) s = fmaf(s, v, v);
    }
    y[i] = s;
}
extern "C" __global__ void nest_unrolled(const float* __restrict__ a, float* __restrict__ y, int trips) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) {
        const float v = a[(size_t)k * threads + i];
#pragma unroll
        for (int r = 0; r < 16; ++r) s = fmaf(s, v, v);
    }
    y[i] = s;
}

// Element i of `trips` rows of n floats, summed: one line per warp and trip
__device__ __forceinline__ float column_sum(const float* __restrict__ a, int trips, int n, int i) {
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) s += a[(size_t)k * n + i];
    return s;
}

// ---- duplicate_warps: 32 x 8 blocks whose eight warps read the same line (threadIdx.y unread), or eight lines
extern "C" __global__ void warps_same_line(const float* __restrict__ a, float* __restrict__ y, int trips, int n) {
    const int i = blockIdx.x * 32 + threadIdx.x;
    y[i] = column_sum(a, trips, n, i);
}
extern "C" __global__ void warps_own_lines(const float* __restrict__ a, float* __restrict__ y, int trips, int n) {
    const int i = (blockIdx.x * 8 + threadIdx.y) * 32 + threadIdx.x;
    y[i] = column_sum(a, trips, n, i);
}

// ---- blocks_sharing_a_line: a grid column of blocks (blockIdx.y unread) loads one line per trip, or its own
extern "C" __global__ void blocks_same_line(const float* __restrict__ a, float* __restrict__ y, int trips, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[blockIdx.y * n + i] = column_sum(a, trips, n, i);
}
extern "C" __global__ void blocks_own_lines(const float* __restrict__ a, float* __restrict__ y, int trips, int n) {
    const int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    y[i] = column_sum(a, trips, n, i);
}

// ---- l1_resident_blocks: a thread per row of two arrays (GESUMMV's walk): two loop iterations of a
// block fit L1 when an SM holds only the grid's few blocks, not when it holds all the occupancy allows
extern "C" __global__ void rows_pair(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                                     int cols) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma unroll 1
    for (int j = 0; j < cols; ++j) s += a[(size_t)row * cols + j] * b[(size_t)row * cols + j];
    y[row] = s;
}

// ---- counted_load_trips: a load loop of `trips` trips (one load in flight: its shared store waits for
// it) fills a tile, then a store loop of `passes` trips over the tile, with no global load, writes it
// out: the store loop's instructions are its own, not the load loop's (a pencil stencil's phases)
extern "C" __global__ void load_then_store(const float* __restrict__ a, float* __restrict__ y, int trips,
                                           int passes) {
    __shared__ float tile[8 * 256];
    const int t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * trips * blockDim.x;
#pragma unroll 1
    for (int k = 0; k < trips; ++k) tile[k * blockDim.x + t] = a[base + (size_t)k * blockDim.x + t];
    __syncthreads();
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
        const int k = p % trips;
        const int right = (t + 1) % blockDim.x;
        y[base + (size_t)k * blockDim.x + t] = 0.5f * (tile[k * blockDim.x + t] + tile[k * blockDim.x + right])
                                               + (float)p;
    }
}
