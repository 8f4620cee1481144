// CUDA C for each kernel model of roofline.models, compiled with NVRTC by validate.
// Each kernel is the textbook form the model describes (same parameters, same work
// per thread, one element per thread unless the model says otherwise), so that the
// measured time is a test of the model and not of a different algorithm.
// Compile-time parameters come in as macros: TILE (matmul_tiled), BDIMX/BDIMY
// (transpose), BLOCK (reduction). Defaults let the file compile on its own.
#ifndef TILE
#define TILE 16
#endif
#ifndef BDIMX
#define BDIMX 16
#endif
#ifndef BDIMY
#define BDIMY 16
#endif
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void triad(float* __restrict__ a, const float* __restrict__ b,
                                 const float* __restrict__ c, float scalar, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + scalar * c[i];
}

// PMPP ch.3 blur: mean of the in-image pixels of the (2r+1)^2 window.
extern "C" __global__ void blur(const float* __restrict__ in, float* __restrict__ out,
                                int width, int height, int radius) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) {
    float sum = 0.0f;
    int pixels = 0;
    for (int dr = -radius; dr <= radius; ++dr) {
      for (int dc = -radius; dc <= radius; ++dc) {
        int r = row + dr, c = col + dc;
        if (r >= 0 && r < height && c >= 0 && c < width) {
          sum += in[r * width + c];
          ++pixels;
        }
      }
    }
    out[row * width + col] = sum / pixels;
  }
}

// PMPP ch.3/5: C (m x n) = A (m x k) B (k x n), row-major, one output per thread.
extern "C" __global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int m, int k, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float sum = 0.0f;
    for (int i = 0; i < k; ++i) sum += A[row * k + i] * B[i * n + col];
    C[row * n + col] = sum;
  }
}

// PMPP ch.5 tiled matrix multiplication with boundary checks for any m, k, n.
extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int m, int k, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
    int ac = t * TILE + tx, br = t * TILE + ty;
    As[ty][tx] = (row < m && ac < k) ? A[row * k + ac] : 0.0f;
    Bs[ty][tx] = (br < k && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
    #pragma unroll
    for (int i = 0; i < TILE; ++i) sum += As[ty][i] * Bs[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) C[row * n + col] = sum;
}

// Register-tiled SGEMM (the "2-D block tiling" of cuBLAS-style kernels): each block computes a
// 128 x 128 tile of C with 16 x 16 threads of 8 x 8 outputs each, stepping through k 8 at a
// time; A's 128 x 8 tile is staged transposed in shared memory, B's 8 x 128 tile as it is.
// One float4 of each tile per thread and float4 stores of C, so m and n must be multiples of
// 128 and k of 8 (roofline.models.matmul_register_tiled refuses other sizes). The 64
// accumulators per thread are what limit occupancy: registers, not warps.
extern "C" __global__ void matmul_register_tiled(
    const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int k, int n) {
  __shared__ float As[8][128];
  __shared__ float Bs[8][128];
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  int row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
  int a_row = tid / 2, a_col = (tid % 2) * 4;
  int b_row = tid / 32, b_col = (tid % 32) * 4;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < k; k0 += 8) {
    float4 va = *reinterpret_cast<const float4*>(&A[(row0 + a_row) * k + k0 + a_col]);
    As[a_col + 0][a_row] = va.x;
    As[a_col + 1][a_row] = va.y;
    As[a_col + 2][a_row] = va.z;
    As[a_col + 3][a_row] = va.w;
    *reinterpret_cast<float4*>(&Bs[b_row][b_col]) =
        *reinterpret_cast<const float4*>(&B[(k0 + b_row) * n + col0 + b_col]);
    __syncthreads();
    #pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      float a[8], b[8];
      #pragma unroll
      for (int i = 0; i < 8; ++i) {
        a[i] = As[kk][ty * 8 + i];
        b[i] = Bs[kk][tx * 8 + i];
      }
      #pragma unroll
      for (int i = 0; i < 8; ++i) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    __syncthreads();
  }
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
    float* out = &C[(row0 + ty * 8 + i) * n + col0 + tx * 8];
    *reinterpret_cast<float4*>(out) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(out + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
  }
}

// Transposes after Cheng, Grossman & McKercher, Professional CUDA C Programming, ch.4/5,
// exactly as roofline.models.transpose describes them: nx = cols, ny = rows, `in` is
// ny x nx; ix = blockIdx.x * blockDim.x + threadIdx.x (< nx), iy likewise (< ny).
#define TRANSPOSE_INDEX                                  \
  int ix = blockIdx.x * blockDim.x + threadIdx.x;        \
  int iy = blockIdx.y * blockDim.y + threadIdx.y;

extern "C" __global__ void transpose_copy_row(const float* __restrict__ in, float* __restrict__ out,
                                              int ny, int nx) {
  TRANSPOSE_INDEX
  if (ix < nx && iy < ny) out[iy * nx + ix] = in[iy * nx + ix];
}

extern "C" __global__ void transpose_copy_column(const float* __restrict__ in, float* __restrict__ out,
                                                 int ny, int nx) {
  TRANSPOSE_INDEX
  if (ix < nx && iy < ny) out[ix * ny + iy] = in[ix * ny + iy];
}

extern "C" __global__ void transpose_naive_row(const float* __restrict__ in, float* __restrict__ out,
                                               int ny, int nx) {
  TRANSPOSE_INDEX
  if (ix < nx && iy < ny) out[ix * ny + iy] = in[iy * nx + ix];
}

extern "C" __global__ void transpose_naive_column(const float* __restrict__ in, float* __restrict__ out,
                                                  int ny, int nx) {
  TRANSPOSE_INDEX
  if (ix < nx && iy < ny) out[iy * nx + ix] = in[ix * ny + iy];
}

// Unroll-4: four elements blockDim.x apart per thread, each guarded on its own.
extern "C" __global__ void transpose_unroll4_row(const float* __restrict__ in, float* __restrict__ out,
                                                 int ny, int nx) {
  int ix = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  int iy = blockIdx.y * blockDim.y + threadIdx.y;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    int x = ix + u * blockDim.x;
    if (x < nx && iy < ny) out[x * ny + iy] = in[iy * nx + x];
  }
}

extern "C" __global__ void transpose_unroll4_column(const float* __restrict__ in, float* __restrict__ out,
                                                    int ny, int nx) {
  int ix = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  int iy = blockIdx.y * blockDim.y + threadIdx.y;
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    int x = ix + u * blockDim.x;
    if (x < nx && iy < ny) out[iy * nx + x] = in[x * ny + iy];
  }
}

// Diagonal block order (Ruetsch & Micikevicius): a permutation of the blocks so that
// concurrently running blocks touch different DRAM partitions.
#define DIAGONAL_INDEX                                              \
  int bid = blockIdx.x + gridDim.x * blockIdx.y;                    \
  int blk_y = bid % gridDim.y;                                      \
  int blk_x = (bid / gridDim.y + blk_y) % gridDim.x;                \
  int ix = blk_x * blockDim.x + threadIdx.x;                        \
  int iy = blk_y * blockDim.y + threadIdx.y;

extern "C" __global__ void transpose_diagonal_row(const float* __restrict__ in, float* __restrict__ out,
                                                  int ny, int nx) {
  DIAGONAL_INDEX
  if (ix < nx && iy < ny) out[ix * ny + iy] = in[iy * nx + ix];
}

extern "C" __global__ void transpose_diagonal_column(const float* __restrict__ in, float* __restrict__ out,
                                                     int ny, int nx) {
  DIAGONAL_INDEX
  if (ix < nx && iy < ny) out[iy * nx + ix] = in[ix * ny + iy];
}

// Shared-memory tile transpose: a BDIMY x (BDIMX + PAD) tile, coalesced read, barrier,
// coalesced write with the block's threads re-mapped onto the transposed tile.
#ifndef PAD
#define PAD 0
#endif
extern "C" __global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out,
                                            int ny, int nx) {
  __shared__ float tile[BDIMY][BDIMX + PAD];
  int ix = blockIdx.x * BDIMX + threadIdx.x, iy = blockIdx.y * BDIMY + threadIdx.y;
  if (ix < nx && iy < ny) tile[threadIdx.y][threadIdx.x] = in[iy * nx + ix];
  __syncthreads();
  int b = threadIdx.y * BDIMX + threadIdx.x;
  int r = b / BDIMY, c = b % BDIMY;
  int out_row = blockIdx.x * BDIMX + r, out_col = blockIdx.y * BDIMY + c;
  if (out_col < ny && out_row < nx) out[out_row * ny + out_col] = tile[c][r];
}

// Offset and stride patterns (Cheng ch.4 readOffset / writeOffset).
extern "C" __global__ void offset_read(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int n, int offset) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned k = i + offset;
  if (k < (unsigned)n) c[i] = a[k] + b[k];
}

extern "C" __global__ void offset_write(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n, int offset) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned k = i + offset;
  if (k < (unsigned)n) c[k] = a[i] + b[i];
}

// Strided gather and scatter over m = ceil(n / stride) threads.
extern "C" __global__ void strided_read(const float* __restrict__ x, float* __restrict__ y,
                                        int n, int stride) {
  int m = (n + stride - 1) / stride;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) y[i] = x[(size_t)i * stride];
}

extern "C" __global__ void strided_write(const float* __restrict__ x, float* __restrict__ y,
                                         int n, int stride) {
  int m = (n + stride - 1) / stride;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) y[(size_t)i * stride] = x[i];
}

// Array of structures vs structure of arrays (Cheng ch.4 testInnerStruct / testInnerArray).
struct InnerStruct { float x; float y; };

extern "C" __global__ void aos(const InnerStruct* __restrict__ in, InnerStruct* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    InnerStruct t = in[i];
    t.x += 10.0f;
    t.y += 20.0f;
    out[i] = t;
  }
}

extern "C" __global__ void soa(const float* __restrict__ in_x, const float* __restrict__ in_y,
                               float* __restrict__ out_x, float* __restrict__ out_y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out_x[i] = in_x[i] + 10.0f;
    out_y[i] = in_y[i] + 20.0f;
  }
}

// Shared-memory tree reduction (PMPP ch.10): one element per thread, one partial sum per
// block, sequential addressing so active threads stay contiguous.
extern "C" __global__ void reduction(const float* __restrict__ x, float* __restrict__ partial, int n) {
  __shared__ float s[BLOCK];
  int t = threadIdx.x;
  int i = blockIdx.x * BLOCK + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}
