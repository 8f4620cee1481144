// Kernels whose SASS tests/occupancy/test_sass.py reads with nvdisasm: a known number of
// independent global loads in flight, a dependent chase, vector loads, a shared-memory tree
// with barriers in a loop, and a lane-divergent branch.

// N independent loads, then one use of all of them: N in flight (straight-line code).
template <int N>
__device__ void sum_once(const float* __restrict__ x, float* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, t = gridDim.x * blockDim.x;
    float v[N];
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = x[i + k * t];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) s += v[k];
    y[i] = s;
}

// The same in a loop the compiler may not unroll: N in flight per iteration.
template <int N>
__device__ void sum_loop(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, t = gridDim.x * blockDim.x;
    float s = 0.0f;
#pragma unroll 1
    for (int j = i; j + (N - 1) * t < n; j += N * t) {
        float v[N];
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = x[j + k * t];
#pragma unroll
        for (int k = 0; k < N; ++k) s += v[k];
    }
    y[i] = s;
}

extern "C" __global__ void loads_1(const float* __restrict__ x, float* __restrict__ y) { sum_once<1>(x, y); }
extern "C" __global__ void loads_2(const float* __restrict__ x, float* __restrict__ y) { sum_once<2>(x, y); }
extern "C" __global__ void loads_4(const float* __restrict__ x, float* __restrict__ y) { sum_once<4>(x, y); }
extern "C" __global__ void loads_8(const float* __restrict__ x, float* __restrict__ y) { sum_once<8>(x, y); }
extern "C" __global__ void loop_loads_1(const float* __restrict__ x, float* __restrict__ y, int n) { sum_loop<1>(x, y, n); }
extern "C" __global__ void loop_loads_2(const float* __restrict__ x, float* __restrict__ y, int n) { sum_loop<2>(x, y, n); }
extern "C" __global__ void loop_loads_4(const float* __restrict__ x, float* __restrict__ y, int n) { sum_loop<4>(x, y, n); }
extern "C" __global__ void loop_loads_8(const float* __restrict__ x, float* __restrict__ y, int n) { sum_loop<8>(x, y, n); }

// Each load's address is the previous load's value: one in flight, however far unrolled.
extern "C" __global__ void chase(const int* __restrict__ next, int* __restrict__ out, int steps) {
    int i = threadIdx.x;
    for (int k = 0; k < steps; ++k) i = next[i];
    out[threadIdx.x] = i;
}

// One 16-byte load per thread (LDG.E.128), one 8-byte load (LDG.E.64).
extern "C" __global__ void vector4(const float4* __restrict__ x, float4* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = x[i];
        y[i] = make_float4(2.0f * v.x, v.y, v.z, v.w);
    }
}
extern "C" __global__ void fp64(const double* __restrict__ a, double* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = a[i] * a[i] + 1.0;
}

// A block reduction whose tree stays a loop: per level two LDS, one FADD, one STS and one
// BAR (the __syncthreads) in the loop body.
extern "C" __global__ void tree(const float* __restrict__ x, float* __restrict__ out) {
    __shared__ float s[1024];
    s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
#pragma unroll 1
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// Odd and even lanes take different sides of a branch in every iteration (lane-divergent).
extern "C" __global__ void divergent(const float* __restrict__ a, float* __restrict__ y, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        if (threadIdx.x & 1) {
#pragma unroll 1
            for (int j = 0; j < 8; ++j) acc = acc * x + 1.0f;
        } else {
            acc = __fdividef(acc, x + 2.0f) + __expf(acc);
        }
    }
    y[i] = acc;
}

// Every thread that finds a positive element adds to one counter (the compiler may aggregate a warp's adds).
extern "C" __global__ void counter(const float* __restrict__ x, int* count, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (x[i] > 0.0f) atomicAdd(count, 1);
}

// A histogram: the bin each thread adds to is the value it loaded.
extern "C" __global__ void histogram(const int* __restrict__ x, int* bins, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[x[i] & 255], 1);
}

// Each thread that finds a positive element copies it and sets one flag (a store every warp shares).
extern "C" __global__ void flag(const float* __restrict__ x, float* __restrict__ y, int* done, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) { y[i] = x[i]; *done = 1; }
}

// A matrix product one element per thread, as naive code writes it: each trip loads a[i][k] (the
// same word for a row of threads, the next word next trip) and b[k][j] (a new row of b, n floats on,
// every trip; no threadIdx.y or blockIdx.y reaches it).
extern "C" __global__ void matmul_rows(const float* a, const float* b, float* c, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    float acc = 0.0f;
#pragma unroll 1  // two loads a trip: few enough in flight for the scoreboard oracle
    for (int k = 0; k < n; ++k) acc += a[i * n + k] * b[k * n + j];
    c[i * n + j] = acc;
}

// A triangle as PolyBench's correlation writes it: thread j1 of the grid walks rows j1 + 1 .. m - 1,
// so its trips fall by one per index of the grid (`SassLoop.index_trips` "global").
extern "C" __global__ void triangle(const float* a, float* c, int m) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 >= m) return;
    float acc = 0.0f;
#pragma unroll 1
    for (int j2 = j1 + 1; j2 < m; ++j2) acc += a[j2 * m + j1];
    c[j1] = acc;
}

// The other side of a triangle: the bound is the thread's index (j < i).
extern "C" __global__ void lower(const float* a, float* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 1
    for (int j = 0; j < i; ++j) acc += a[j];
    c[i] = acc;
}

// A block-stride loop: its counter starts at the thread's index but steps by the run-time block size,
// so the trips of two threads differ by at most one (no index_trips).
extern "C" __global__ void block_stride(const float* a, float* c, int n) {
    float acc = 0.0f;
#pragma unroll 1
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += a[i];
    c[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// One thread of the grid walks a column alone, as PolyBench's Gram-Schmidt kernel 1 does: every
// other thread exits before the loop (`SassSummary.lone_thread` "global").
extern "C" __global__ void lone_walk(const float* a, float* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        float s = 0.0f;
#pragma unroll 1
        for (int k = 0; k < n; ++k) s += a[k * n] * a[k * n];
        *r = s;
    }
}

// Thread 0 of each block sums a row alone, then the block shares it: the others branch over the
// loop to the barrier (`SassSummary.lone_thread` "thread").
extern "C" __global__ void lone_then_sync(const float* a, float* r, int n) {
    __shared__ float total;
    if (threadIdx.x == 0) {
        float s = 0.0f;
#pragma unroll 1
        for (int k = 0; k < n; ++k) s += a[blockIdx.x * n + k];
        total = s;
    }
    __syncthreads();
    r[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
