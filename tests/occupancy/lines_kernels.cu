// Local memory two ways, for `--lines` (tests/occupancy/test_lines.py).
#include "lines_kernels.cuh"

// A per-thread histogram indexed by loaded data: a stack array in local memory, no spill.
__global__ void local_array(const int* idx, float* y, int n) {
    float t[64] = {};
    for (int i = 0; i < n; ++i) t[idx[threadIdx.x + i * 64] & 63] += 1.0f;
    y[threadIdx.x] = mix(t[threadIdx.x & 63], t[(threadIdx.x + 1) & 63]);
}

// 40 values live across a loop at 32 registers (the launch bounds): ptxas spills.
__global__ void __launch_bounds__(1024, 2) spills(const float* x, float* y, int n) {
    float v[40];
#pragma unroll
    for (int j = 0; j < 40; ++j) v[j] = x[threadIdx.x + j * 128];
    for (int it = 0; it < n; ++it) {
#pragma unroll
        for (int j = 0; j < 40; ++j) v[j] = mix(v[j], v[(j + 1) % 40]);  // the loop body
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 40; ++j) s += v[j];
    y[threadIdx.x] = s;
}
