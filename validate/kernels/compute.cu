// Probes of the time model's compute and latency side (issue 23), compiled with NVRTC.

// Trip latency: every thread walks `trips` trips of a grid-stride loop; each trip reads
// `per_thread` floats a stride apart (one block-trip reads per_thread x blockDim x 4 bytes)
// and the next trip's start depends on what this trip read, so trips wait for each other
// as a loop whose next addresses come from its loads does. `next` holds a permutation that
// keeps every trip on lines no earlier trip touched (the buffer is far past L2).
extern "C" __global__ void trip_walk(const unsigned* __restrict__ next, float* __restrict__ out,
                                     unsigned n, int trips, int per_thread) {
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * 32u % n;
    unsigned stride = gridDim.x * blockDim.x * 32u;
    unsigned sum = 0;
    for (int t = 0; t < trips; ++t) {
        unsigned got = 0;
        #pragma unroll 8
        for (int e = 0; e < 8; ++e) {
            if (e < per_thread) got += __ldcg(next + (i + (unsigned)e * stride) % n);
        }
        sum += got;
        i = (i + (got & 1u) + (unsigned)per_thread * stride) % n;  // depends on the loads
    }
    if (sum == 0xFFFFFFFFu) out[0] = (float)sum;
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
