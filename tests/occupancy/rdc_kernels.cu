// Kernels that call a function the compiler keeps out of line: with relocatable device
// code (-rdc=true, CMake's CUDA_SEPARABLE_COMPILATION) the call follows the ABI and the
// device link (nvlink) sets each kernel's final registers and stack from its call graph.
#include <cstdio>

__device__ __noinline__ float dot_tail(const float* x, int n) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += x[k] * x[k + n] / (x[2 * k] + 1.0f);
    return acc;
}

__global__ void calls_once(const float* x, float* out, int n) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = dot_tail(x, n);
}

__global__ void calls_twice(const float* x, float* out, int n) {
    __shared__ float partial[128];
    partial[threadIdx.x % 128] = dot_tail(x, n) + dot_tail(x + 1, n + threadIdx.x);
    __syncthreads();
    out[threadIdx.x] = partial[(threadIdx.x + 1) % 128];
}

int main() {
    float *x, *out;
    cudaMalloc(&x, 1 << 20);
    cudaMalloc(&out, 1 << 20);
    calls_once<<<1, 128>>>(x, out, 64);
    calls_twice<<<1, 128>>>(x, out, 64);
    std::printf("%d\n", cudaDeviceSynchronize());
    return 0;
}
