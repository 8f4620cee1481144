// Probes of the time model's compute and latency side (issue 23), compiled with NVRTC.

// Trip latency: a block (the probe launches one, alone on the GPU) walks `trips` trips of a
// grid-stride loop; each trip reads
// `per_thread` floats per thread, coalesced (one block-trip reads per_thread x blockDim x 4
// contiguous bytes, as a grid-stride loop does), and the next trip's start depends on what
// this trip read, so trips wait for each other as a loop whose next addresses come from its
// loads does. The walk moves on by `stride` words a trip (at least the grid's words per
// trip; the host spreads the longest walk over the whole buffer, four times L2, so that
// no trip finds its lines in L2, even when the launch repeats).
template <bool COPY>
__device__ __forceinline__ void walk(const unsigned* __restrict__ next, float* __restrict__ out, unsigned n,
                                     int trips, int per_thread, unsigned stride) {
    // the walk's start stays below n - chunk so that a trip's reads need no wrap: a modulo per
    // load (an emulated division) made 32 warps on one SM issue-bound, not memory-bound
    unsigned chunk = (unsigned)per_thread * blockDim.x;
    unsigned span = n - chunk;
    unsigned i = (blockIdx.x * chunk + threadIdx.x) % span;
    unsigned sum = 0;
    for (int t = 0; t < trips; ++t) {
        unsigned got = 0;
        #pragma unroll 8
        for (int e = 0; e < 8; ++e) {
            if (e < per_thread) {
                unsigned v = __ldcg(next + i + (unsigned)e * blockDim.x);
                if (COPY) __stcg(out + i + (unsigned)e * blockDim.x, __uint_as_float(v));
                got += v;
            }
        }
        sum += got;
        i += stride + (got & 1u);  // depends on the loads
        if (i >= span) i -= span;  // the host keeps stride + 1 < span
    }
    if (sum == 0xFFFFFFFFu) out[0] = (float)sum;
}
extern "C" __global__ void trip_walk(const unsigned* __restrict__ next, float* __restrict__ out,
                                     unsigned n, int trips, int per_thread, unsigned stride) {
    walk<false>(next, out, n, trips, per_thread, stride);
}
// The same walk storing each loaded word at its offset in `out` (n words): a copy's stores in
// flight beside its loads (scripts/loaded_trip_probe.py)
extern "C" __global__ void trip_walk_copy(const unsigned* __restrict__ next, float* __restrict__ out,
                                          unsigned n, int trips, int per_thread, unsigned stride) {
    walk<true>(next, out, n, trips, per_thread, stride);
}

// Overlap: each thread streams one float in and one out and runs `fmas` FMAs on it in four
// independent chains; the sweep over `fmas` crosses the ridge from memory- to compute-bound.
extern "C" __global__ void overlap_sweep(const float* __restrict__ in, float* __restrict__ out, unsigned n,
                                         int fmas) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    float a = x, b = x + 1.0f, c = x + 2.0f, d = x + 3.0f;
    for (int k = 0; k < fmas; k += 4) {
        a = fmaf(a, 0.999f, 0.5f); b = fmaf(b, 0.999f, 0.5f);
        c = fmaf(c, 0.999f, 0.5f); d = fmaf(d, 0.999f, 0.5f);
    }
    out[i] = a + b + c + d;
}

// FMA latency: one warp per SM runs one dependent FMA chain of `length` FMAs.
extern "C" __global__ void fma_chain(float* __restrict__ out, int length, float seed) {
    float a = seed + threadIdx.x;
    for (int k = 0; k < length; ++k) a = fmaf(a, 0.9999f, 0.25f);
    if (a == 12345.0f) out[0] = a;
}
