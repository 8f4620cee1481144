// A warp-specialised kernel written for gpuroof's tests: one producer warp group gives registers
// back with setmaxnreg.dec, two consumer warp groups take them with setmaxnreg.inc. The launch
// (384 threads, one block per SM) gets ptxas's count; each warp group then runs with its own.
// setmaxnreg needs an architecture-specific target (sm_90a, sm_100a, sm_120a, or a family sm_100f):
// for the others the kernel keeps its launch's count throughout.
#if defined(__CUDA_ARCH_SPECIFIC__) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SETMAXNREG(op, n) asm volatile("setmaxnreg." #op ".sync.aligned.u32 " #n ";\n")
#else
#define SETMAXNREG(op, n)
#endif

#define DEPTH 32

__global__ void __launch_bounds__(384, 1) warp_specialised(const float* x, float* out, int n) {
    int group = threadIdx.x / 128;
    if (group == 0) {  // producer: copies, needs few registers
        SETMAXNREG(dec, 40);
        for (int i = threadIdx.x; i < n; i += 128) out[i] = x[i];
    } else {  // consumers: a deep register-resident accumulator
        SETMAXNREG(inc, 232);
        float acc[DEPTH];
#pragma unroll
        for (int j = 0; j < DEPTH; ++j) acc[j] = x[threadIdx.x + j * 384];
        for (int it = 0; it < n; ++it) {
#pragma unroll
            for (int j = 0; j < DEPTH; ++j) acc[j] = acc[j] * acc[(j + 3) % DEPTH] + 1.0f;
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < DEPTH; ++j) s += acc[j];
        out[n + threadIdx.x] = s;
    }
}
