// saxpy3: out[i] = a * x[i] + y[i] * z[i], 3 reads and 1 write per element (64-bit indices).
// Each thread computes 8 consecutive elements (two float4 loads per input) into a shared tile;
// after the barrier the block writes the tile back coalesced, one element per thread per step.
constexpr int BLOCK = 256, PER_THREAD = 8, TILE = BLOCK * PER_THREAD;

extern "C" __global__ void __launch_bounds__(BLOCK, 4)
saxpy3(float a, const float* __restrict__ x, const float* __restrict__ y,
       const float* __restrict__ z, float* __restrict__ out, size_t n) {
    __shared__ float tile[TILE];  // 8 KiB
    const size_t first = (size_t)blockIdx.x * TILE;
    const size_t mine = first + threadIdx.x * PER_THREAD;
    float* t = tile + threadIdx.x * PER_THREAD;
    if (mine + PER_THREAD <= n) {
        const float4 *x4 = (const float4*)(x + mine), *y4 = (const float4*)(y + mine),
                     *z4 = (const float4*)(z + mine);
        float4 xv[2] = {x4[0], x4[1]}, yv[2] = {y4[0], y4[1]}, zv[2] = {z4[0], z4[1]};
        for (int k = 0; k < 2; ++k) {
            t[4 * k + 0] = a * xv[k].x + yv[k].x * zv[k].x;
            t[4 * k + 1] = a * xv[k].y + yv[k].y * zv[k].y;
            t[4 * k + 2] = a * xv[k].z + yv[k].z * zv[k].z;
            t[4 * k + 3] = a * xv[k].w + yv[k].w * zv[k].w;
        }
    } else {
        for (int k = 0; k < PER_THREAD; ++k)
            t[k] = mine + k < n ? a * x[mine + k] + y[mine + k] * z[mine + k] : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < PER_THREAD; ++k) {
        const size_t i = first + k * BLOCK + threadIdx.x;
        if (i < n) out[i] = tile[k * BLOCK + threadIdx.x];
    }
}
