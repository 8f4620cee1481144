// Probes of the written lines L2 keeps at a kernel's end (the l2_keeps_writes rule of the time
// model's DRAM term). Each kernel sweeps its `n` floats front to back with the whole grid
// (grid-stride), so lines enter L2 in address order; Nsight Compute counts the bytes DRAM
// writes while it runs. A line L2 still holds at the end is written back after the kernel.

// Every line written, none read: what L2 keeps of a kernel's written lines.
extern "C" __global__ void l2_store_only(float* __restrict__ a, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        a[i] = (float)i;
}

// Every line read, then written: the same, each line brought in by a read first.
extern "C" __global__ void l2_update_in_place(float* __restrict__ a, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        a[i] = a[i] * 0.5f + 1.0f;
}

// Half the footprint read, half written: written lines sharing L2 with lines only read.
extern "C" __global__ void l2_copy(const float* __restrict__ a, float* __restrict__ b, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}

// Every line read, none written, after validate's L2 flush: the flush's written lines this
// sweep's lines displace are the DRAM writes while it runs. The sum is stored only if it equals
// a value the buffer's NaNs never give, so the loads stay and nothing is written.
extern "C" __global__ void l2_read_only(const float* __restrict__ a, float* __restrict__ out, long long n) {
    float s = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        s += a[i];
    if (s == 1234567.0f) out[0] = s;
}

// Every `stride`-th float written (stride 2: each 32-byte sector half written), none read: each
// sector written in part is read whole from DRAM (its fill) before L2 writes it back.
extern "C" __global__ void l2_strided_store(float* __restrict__ a, long long n, int stride) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        a[i * stride] = (float)i;
}

// The same floats read, then written: a sector the kernel loads is whole in L2 when the store
// merges into it, so its only DRAM read is the load's (no second fill).
extern "C" __global__ void l2_strided_update(float* __restrict__ a, long long n, int stride) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        a[i * stride] = a[i * stride] * 0.5f + 1.0f;
}
