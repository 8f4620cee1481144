// Template kernels for the tests of `gpuroof ncu --binary` / `roofline.load_ncu(..., binary=)`:
// each profiled kernel is matched to its function in the binary by its mangled, demangled or short
// name (tests/roofline/test_ncu_binary.py). Written for gpuroof.
//
// A program: scripts/device_ncu_templates.sh builds it, profiles it with ncu and reads the export
// with the cubin. The tests build the cubin only:
//   nvcc -cubin -arch=sm_90 -std=c++17 --extended-lambda tests/data/ncu/template_kernels.cu
#include <cuda_bf16.h>

#include <cstdio>
#include <type_traits>

// A type and a bool template parameter; the bool also reaches the kernel as a std::bool_constant
// argument. The atomic instance stages its column sums in shared memory: the two instances that
// one short name covers differ in static shared memory (0 and 1024 bytes).
template <typename OutFloat, bool Atomic>
__global__ void column_sum(OutFloat* out, const OutFloat* in, int rows, int cols, int stride,
                           std::integral_constant<bool, Atomic>) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    if (c < cols) {
        for (int r = 0; r < rows; ++r) sum += static_cast<float>(in[r * stride + c]);
    }
    if constexpr (Atomic) {
        __shared__ float partial[256];
        partial[threadIdx.x] = sum;
        __syncthreads();
        if (c < cols) atomicAdd(reinterpret_cast<float*>(out) + c, partial[threadIdx.x ^ 1] + 0.0f * sum);
    } else {
        if (c < cols) out[c] = static_cast<OutFloat>(sum);
    }
}

namespace gpuroof_test {
namespace detail {

// A kernel templated on a functor: instantiated with a lambda's closure type and a named struct.
template <typename F>
__global__ void apply(float* x, int n, F f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = f(x[i]);
}

struct Square {
    __device__ float operator()(float v) const { return v * v; }
};

}  // namespace detail
}  // namespace gpuroof_test

namespace {

// An integer template parameter in an anonymous namespace.
template <int Width>
__global__ void tile_copy(float* out, const float* in, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Width;
#pragma unroll
    for (int j = 0; j < Width; ++j) {
        if (i + j < n) out[i + j] = in[i + j];
    }
}

}  // namespace

// A C++ kernel that is no template, and one with C linkage.
__global__ void add_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

extern "C" __global__ void scale_kernel(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

int main() {
    const int rows = 64, cols = 4096, n = rows * cols;
    float *x, *y;
    __nv_bfloat16* b;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(__nv_bfloat16));
    cudaMemset(x, 0, n * sizeof(float));
    cudaMemset(y, 0, n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(__nv_bfloat16));
    const int threads = 256, blocks = (cols + threads - 1) / threads;
    column_sum<<<blocks, threads>>>(b, b + cols, rows - 1, cols, cols, std::bool_constant<false>{});
    column_sum<<<blocks, threads>>>(y, x, rows, cols, cols, std::bool_constant<true>{});
    float k = 3.0f;
    gpuroof_test::detail::apply<<<n / threads, threads>>>(x, n, [=] __device__(float v) { return v * k; });
    gpuroof_test::detail::apply<<<n / threads, threads>>>(x, n, gpuroof_test::detail::Square{});
    tile_copy<4><<<n / 4 / threads, threads>>>(y, x, n);
    add_kernel<<<n / threads, threads>>>(x, n);
    scale_kernel<<<n / threads, threads>>>(x, 0.5f, n);
    cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess) {
        std::fprintf(stderr, "template_kernels: %s\n", cudaGetErrorString(status));
        return 1;
    }
    return 0;  // silent on success: ncu --csv prints the table on the same stdout
}
