// Kernels written for gpuroof's tests of `gpuroof resources` on an ordinary project file:
// host code, C and C++ standard headers, CUDA's headers, cooperative groups, templates,
// __launch_bounds__, big static shared memory and a loop that spills.
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#ifndef TILE
#define TILE 32
#endif

// A template instantiated twice: two kernels with one C++ name.
template <int BLOCK>
__global__ void softmax_fp16(const __half* in, __half* out, int n) {
    __shared__ float row[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    row[threadIdx.x] = i < n ? __half2float(in[i]) : -INFINITY;
    __syncthreads();
    float m = -INFINITY;
    for (int k = 0; k < BLOCK; ++k) m = fmaxf(m, row[k]);
    float s = 0.0f;
    for (int k = 0; k < BLOCK; ++k) s += __expf(row[k] - m);
    if (i < n) out[i] = __float2half(__expf(row[threadIdx.x] - m) / s);
}
template __global__ void softmax_fp16<128>(const __half*, __half*, int);
template __global__ void softmax_fp16<256>(const __half*, __half*, int);

namespace gemm {
// 40 KiB of static shared memory and launch bounds with a minimum of blocks per SM.
__global__ void __launch_bounds__(256, 2) tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE * 5];
    __shared__ float bs[TILE][TILE * 5];
    int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        for (int r = ty; r < TILE; r += blockDim.x / TILE) {
            as[r][tx] = a[(blockIdx.y * TILE + r) * n + k0 + tx];
            bs[r][tx] = b[(k0 + r) * n + blockIdx.x * TILE + tx];
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[(blockIdx.y * TILE + ty) * n + blockIdx.x * TILE + tx] = acc;
}
}  // namespace gemm

// A grid-wide reduction with cooperative groups, device printf and assert.
__global__ void grid_sum(const float* x, float* out, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    float s = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) s += x[i];
    auto warp = cg::tiled_partition<32>(block);
    for (int o = 16; o > 0; o /= 2) s += warp.shfl_down(s, o);
    if (warp.thread_rank() == 0) atomicAdd(out, s);
    assert(n >= 0);
    if (grid.thread_rank() == 0 && n == 0) printf("empty input\n");
}

// Many values live across a loop with at most 32 registers per thread: ptxas spills
// (-DLIVE=64 spills more: the gate's planted regression).
#ifndef LIVE
#define LIVE 48
#endif
__global__ void __launch_bounds__(1024, 2) spilling_loop(const float* x, float* out, int n) {
    float v[LIVE];
#pragma unroll
    for (int j = 0; j < LIVE; ++j) v[j] = x[threadIdx.x + j * 1024];
    for (int it = 0; it < n; ++it) {
#pragma unroll
        for (int j = 0; j < LIVE; ++j) v[j] = v[j] * v[(j + 1) % LIVE] + v[(j + 7) % LIVE];
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < LIVE; ++j) s += v[j];
    out[threadIdx.x] = s;
}

// A per-thread array indexed at run time: a stack frame, no spills.
extern "C" __global__ void local_array(const int* idx, float* out) {
    float buf[64];
    for (int j = 0; j < 64; ++j) buf[j] = j * 0.5f;
    out[threadIdx.x] = buf[idx[threadIdx.x] & 63];
}

int main() {
    std::vector<float> host(1 << 20, 1.0f);
    float *x = nullptr, *out = nullptr;
    cudaMalloc(&x, host.size() * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    cudaMemcpy(x, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
    grid_sum<<<64, 256>>>(x, out, static_cast<int>(host.size()));
    float sum = 0.0f;
    cudaMemcpy(&sum, out, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("%f\n", sum);
    return sum == 0.0f ? EXIT_FAILURE : EXIT_SUCCESS;
}
