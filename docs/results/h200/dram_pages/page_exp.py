import cupy as cp, numpy as np
src = r'''
extern "C" __global__ void visit(const float* __restrict__ x, float* __restrict__ sink, unsigned chunks, unsigned rows,
                                 unsigned pitch, unsigned group, int mode) {
    unsigned lane = threadIdx.x & 31u;
    unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, warps = (gridDim.x * blockDim.x) >> 5;
    float v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
        unsigned c = warp + (unsigned)u * warps, chunk;
        if (mode == 0) chunk = c;
        else if (mode == 1) chunk = (c % rows) * pitch + c / rows;
        else { unsigned g = c / group, n = chunks / group; chunk = (unsigned)(((unsigned long long)g * 2654435761ull) % n) * group + c % group; }
        v[u] = c < chunks ? x[(size_t)chunk * 32u + lane] : 0.0f;
    }
    float acc = 0.0f;
#pragma unroll
    for (int u = 0; u < 8; ++u) acc += v[u];
    if (acc == 1234.5f) sink[0] = acc;
}'''
k = cp.RawModule(code=src).get_function('visit')
buf = cp.full((5 << 28) // 4, np.nan, dtype=cp.float32); sink = cp.zeros(1024, dtype=cp.float32)
chunks = (1 << 30) // 128; grid = chunks * 4 // 256
def t(rows=1, pitch=1, group=1, mode=0):
    args = (buf, sink, np.uint32(chunks), np.uint32(rows), np.uint32(pitch), np.uint32(group), np.int32(mode))
    for _ in range(2): k((grid,), (256,), args)
    s, e = cp.cuda.Event(), cp.cuda.Event(); s.record()
    for _ in range(7): k((grid,), (256,), args)
    e.record(); e.synchronize(); return cp.cuda.get_elapsed_time(s, e) / 7 * 1e3
res = {}
res['row'] = t()
for rows, pitch in ((65536, 128), (65536, 129), (65536, 136), (65536, 144), (8192, 1024), (8192, 1025), (1024, 8192), (1024, 8193), (1024, 8200)):
    res[f'col R={rows} pitch={pitch*128}B'] = t(rows, pitch, 1, 1)
for g in (1, 2, 4, 8, 16, 32, 64, 256):
    res[f'random groups of {g*128} B'] = t(1, 1, g, 2)
for k_, v in res.items(): print(f'{k_:32s} {v:8.1f} us  {v/res["row"]:.3f}x', flush=True)
