import cupy as cp, numpy as np, sys
src = open('validate/kernels/effects.cu').read()
mod = cp.RawModule(code=src, options=('-std=c++17',))
k = mod.get_function('page_read')
buf = cp.full((1 << 30) // 4, np.nan, dtype=cp.float32); sink = cp.zeros(1024, dtype=cp.float32)
chunks = (1 << 30) // 128; grid = chunks * 4 // 256
for rows, col in ((1, 0), (65536, 1), (4096, 1), (2048, 1), (1024, 1)):
    for _ in range(2):
        k((grid,), (256,), (buf, sink, np.uint32(chunks), np.uint32(rows), np.int32(col)))
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event(); s.record()
    for _ in range(5): k((grid,), (256,), (buf, sink, np.uint32(chunks), np.uint32(rows), np.int32(col)))
    e.record(); e.synchronize(); print(rows, col, cp.cuda.get_elapsed_time(s, e) / 5 * 1e3, 'us', flush=True)
