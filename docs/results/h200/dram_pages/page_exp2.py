import cupy as cp, numpy as np
src = open('validate/kernels/effects.cu').read()
k = cp.RawModule(code=src).get_function('page_read')
buf = cp.full((1 << 30) // 4, np.nan, dtype=cp.float32); sink = cp.zeros(1024, dtype=cp.float32)
chunks = (1 << 30) // 128; grid = chunks * 4 // 256
def t(rows, col):
    args = (buf, sink, np.uint32(chunks), np.uint32(rows), np.int32(col))
    for _ in range(2): k((grid,), (256,), args)
    s, e = cp.cuda.Event(), cp.cuda.Event(); s.record()
    for _ in range(7): k((grid,), (256,), args)
    e.record(); e.synchronize(); return cp.cuda.get_elapsed_time(s, e) / 7 * 1e3
row = t(1, 0)
print('row', round(row, 1))
for r in (8, 16, 32, 64, 128, 256, 512, 1024, 4096, 65536):
    v = t(r, 1); print(f'col R={r:6d} {v:8.1f} us {v/row:.3f}x', flush=True)
