// Five kernels that are not in validate's suite, for `validate.measure` (docs/measure.md).
// Compile-time constant: DEG (poly), default 256.
#ifndef DEG
#define DEG 256
#endif

// y = a x + y over float4: 16-byte loads and stores.
extern "C" __global__ void saxpy4(int n4, float a, const float4* __restrict__ x, float4* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 xv = x[i], yv = y[i];
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    y[i] = yv;
  }
}

// y = a x + y in double precision.
extern "C" __global__ void daxpy(int n, double a, const double* __restrict__ x, double* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// 5-point Jacobi step on an nx x ny grid; the border is left as it was.
extern "C" __global__ void stencil5(int nx, int ny, const float* __restrict__ in, float* __restrict__ out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
    int i = y * nx + x;
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
  }
}

// Grid-stride sum, warp shuffles, one partial sum per block.
extern "C" __global__ void block_sum(int n, const float* __restrict__ x, float* __restrict__ partial) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __shared__ float warp_sums[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) partial[blockIdx.x] = s;
  }
}

// Four independent Horner chains of DEG fused multiply-adds per element: arithmetic-bound.
extern "C" __global__ void poly(int n, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float p0 = 0.5f, p1 = 0.25f, p2 = -0.5f, p3 = 0.125f;
#pragma unroll 16
    for (int k = 0; k < DEG; ++k) {
      p0 = fmaf(p0, v, 0.5f);
      p1 = fmaf(p1, v, -0.25f);
      p2 = fmaf(p2, v, 0.125f);
      p3 = fmaf(p3, v, -0.0625f);
    }
    y[i] = (p0 + p1) + (p2 + p3);
  }
}
