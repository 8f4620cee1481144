// Probes of shared-memory atomics (the shared_atomics term of the time model): one block per SM,
// each on its own shared words, so that the time per operation is one SM's. Each kernel runs
// `iters` operations a thread; the probe times two counts and takes the difference, which
// leaves the launch out. Every kernel writes what it computed, so no atomic is dropped.

// Every lane of every warp adds 1 to one word: the lanes of a warp on one word.
extern "C" __global__ void shared_add_one_word(unsigned* __restrict__ out, int iters) {
    __shared__ unsigned h[1024];
    h[threadIdx.x] = 0u;
    __syncthreads();
    for (int k = 0; k < iters; ++k) atomicAdd(&h[0], 1u);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = h[0];
}

// Every thread adds 1 to its own word: a warp's 32 lanes on 32 words in 32 banks.
extern "C" __global__ void shared_add_spread(unsigned* __restrict__ out, int iters) {
    __shared__ unsigned h[1024];
    h[threadIdx.x] = 0u;
    __syncthreads();
    for (int k = 0; k < iters; ++k) atomicAdd(&h[threadIdx.x], 1u);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = h[threadIdx.x];
}

// Independent compare-and-swap attempts on one word (each lane's compare value is its trip
// count: some succeed, most fail; success or failure, each is one attempt).
extern "C" __global__ void shared_cas_one_word(unsigned* __restrict__ out, int iters) {
    __shared__ unsigned h[1024];
    h[threadIdx.x] = 0u;
    __syncthreads();
    unsigned acc = 0u;
    for (int k = 0; k < iters; ++k) acc += atomicCAS(&h[0], (unsigned)k, (unsigned)k + 1u);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Independent compare-and-swap attempts, each thread on its own word (all succeed).
extern "C" __global__ void shared_cas_spread(unsigned* __restrict__ out, int iters) {
    __shared__ unsigned h[1024];
    h[threadIdx.x] = 0u;
    __syncthreads();
    unsigned acc = 0u;
    for (int k = 0; k < iters; ++k) acc += atomicCAS(&h[threadIdx.x], (unsigned)k, (unsigned)k + 1u);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// One thread's chain of compare-and-swaps, each waiting for the last one's old value: the round trip.
extern "C" __global__ void shared_cas_chain(unsigned* __restrict__ out, int iters) {
    __shared__ unsigned h[32];
    if (threadIdx.x != 0) return;
    h[0] = 0u;
    unsigned v = 0u;
    for (int k = 0; k < iters; ++k) v = atomicCAS(&h[0], v, v + 1u) + 1u;
    out[blockIdx.x] = v;
}
