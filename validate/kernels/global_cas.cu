// Probes of returning global compare-and-swaps (the cas_contention rule of the time model's
// atomics term). Each kernel runs `iters` operations a thread; the probe times two counts and
// takes the difference, which leaves the launch out. Every kernel writes what it computed, so
// no atomic is dropped.

// One thread's chain of compare-and-swaps on one word, each waiting for the last one's old
// value (the next compare value is the word as the last CAS found it, as a retry loop's is):
// the round trip of a returning atomic at L2.
extern "C" __global__ void global_cas_chain(unsigned* __restrict__ word, unsigned* __restrict__ out, int iters) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    unsigned v = *(volatile unsigned*)word;
    for (int k = 0; k < iters; ++k) {
        unsigned old = atomicCAS(word, v, v + 1u);
        v = old == v ? v + 1u : old;
    }
    out[0] = v;
}

// Every warp of a full GPU sends independent 32-lane compare-and-swaps to a line of its own
// (each lane its own word of the warp's 128-byte line; the compare values follow the word, so
// all succeed): the rate of returning 32-lane atomics on one line a warp.
extern "C" __global__ void global_cas_lines(unsigned* __restrict__ words, unsigned* __restrict__ out, int iters) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* p = words + t;
    unsigned v = *(volatile unsigned*)p, acc = 0u;
    for (int k = 0; k < iters; ++k) acc += atomicCAS(p, v + (unsigned)k, v + (unsigned)k + 1u);
    out[t] = acc;
}

// Adds to one word by the word's type: lane 0 of every warp (one block of 1024 threads per SM)
// adds `iters` times (warp-aggregated updates, as a reduction's per-block or per-warp atomicAdd
// is). The result is unused, so each is a reduction (REDG.E.ADD, .F32, .F64): the rate at which
// the word's L2 slice applies them one after the other, for each type.
extern "C" __global__ void global_add_one_u32(unsigned* __restrict__ word, unsigned* __restrict__ out, int iters) {
    if ((threadIdx.x & 31u) != 0u) return;
    for (int k = 0; k < iters; ++k) atomicAdd(word, 1u);
}

extern "C" __global__ void global_add_one_f32(unsigned* __restrict__ word, unsigned* __restrict__ out, int iters) {
    if ((threadIdx.x & 31u) != 0u) return;
    for (int k = 0; k < iters; ++k) atomicAdd(reinterpret_cast<float*>(word), 1.0f);
}

extern "C" __global__ void global_add_one_f64(unsigned* __restrict__ word, unsigned* __restrict__ out, int iters) {
    if ((threadIdx.x & 31u) != 0u) return;
    for (int k = 0; k < iters; ++k) atomicAdd(reinterpret_cast<double*>(word), 1.0);
}
