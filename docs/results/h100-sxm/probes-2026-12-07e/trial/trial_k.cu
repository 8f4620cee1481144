// 1. if/else on warp index (uniform) in straight-line code
extern "C" __global__ void warp_branch(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float a = x, b = x * 0.5f;
    if ((threadIdx.x >> 5) & 1) {
        #pragma unroll
        for (int k = 0; k < 32; ++k) { a = a * 1.0001f + 0.5f; b = b * 0.9999f + a; }
    } else {
        #pragma unroll
        for (int k = 0; k < 32; ++k) { a = a * 0.9998f - 0.25f; b = b * 1.0002f - a; }
    }
    out[i] = a + b;
}
// 2. same on lane parity (divergent)
extern "C" __global__ void lane_branch(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float a = x, b = x * 0.5f;
    if (threadIdx.x & 1) {
        #pragma unroll
        for (int k = 0; k < 32; ++k) { a = a * 1.0001f + 0.5f; b = b * 0.9999f + a; }
    } else {
        #pragma unroll
        for (int k = 0; k < 32; ++k) { a = a * 0.9998f - 0.25f; b = b * 1.0002f - a; }
    }
    out[i] = a + b;
}
// 3. switch with 4 cases
extern "C" __global__ void switch4(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    switch ((threadIdx.x >> 5) & 3) {
    case 0:
        #pragma unroll
        for (int k = 0; k < 8; ++k) x = x * 1.1f + 0.1f;
        break;
    case 1:
        #pragma unroll
        for (int k = 0; k < 16; ++k) x = x * 1.2f - 0.2f;
        break;
    case 2:
        #pragma unroll
        for (int k = 0; k < 4; ++k) x = x * 1.3f + 0.3f;
        break;
    default:
        x = __sinf(x);
    }
    out[i] = x;
}
// 4. early exit
extern "C" __global__ void early_exit(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = in[i] * 2.0f + 1.0f;
}
// 5. grid-stride with branch inside
extern "C" __global__ void gs_branch(float* out, const float* in, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = in[i];
        if (x > 0.f) x = x * 3.0f + 1.0f; else x = -x * 0.5f;
        out[i] = x;
    }
}
// 6. loop-free with predicated tail
extern "C" __global__ void pred_tail(float* out, const float* in, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    float s = 0.f;
    if (i + 0 < n) s += in[i + 0];
    if (i + 1 < n) s += in[i + 1];
    if (i + 2 < n) s += in[i + 2];
    if (i + 3 < n) s += in[i + 3];
    if (i < n) out[i / 4] = s;
}
// 7. two sequential if/else blocks
extern "C" __global__ void two_ifs(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[i], b = a;
    if (threadIdx.x & 32) {
        #pragma unroll
        for (int k = 0; k < 16; ++k) a = a * 1.01f + 0.3f;
    } else {
        #pragma unroll
        for (int k = 0; k < 24; ++k) a = a * 0.99f - 0.3f;
    }
    if (threadIdx.x & 64) {
        #pragma unroll
        for (int k = 0; k < 20; ++k) b = b * 1.02f + a;
    } else {
        #pragma unroll
        for (int k = 0; k < 12; ++k) b = b * 0.98f - a;
    }
    out[i] = a + b;
}
// 8. nested ifs
extern "C" __global__ void nested(float* out, const float* in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[i];
    if (threadIdx.x & 32) {
        #pragma unroll
        for (int k = 0; k < 8; ++k) a = a * 1.01f + 0.3f;
        if (threadIdx.x & 64) {
            #pragma unroll
            for (int k = 0; k < 24; ++k) a = a * 1.03f + 0.1f;
        } else {
            #pragma unroll
            for (int k = 0; k < 4; ++k) a = a * 0.97f + 0.2f;
        }
    } else {
        #pragma unroll
        for (int k = 0; k < 10; ++k) a = a * 0.99f - 0.3f;
    }
    out[i] = a;
}
// 9. grid-stride, 2 loads per trip
