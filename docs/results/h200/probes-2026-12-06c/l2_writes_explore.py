"""Scratch: written bytes DRAM sees during an in-place update / store-only kernel vs footprint (under ncu)."""
import sys, cupy as cp
src = r'''
extern "C" __global__ void inplace(float* a, long long n){
  for (long long i = blockIdx.x*(long long)blockDim.x+threadIdx.x; i < n; i += (long long)gridDim.x*blockDim.x) a[i] = a[i]*1.0001f+1.0f; }
extern "C" __global__ void storeonly(float* a, long long n){
  for (long long i = blockIdx.x*(long long)blockDim.x+threadIdx.x; i < n; i += (long long)gridDim.x*blockDim.x) a[i] = (float)i; }
extern "C" __global__ void copyk(const float* __restrict__ a, float* __restrict__ b, long long n){
  for (long long i = blockIdx.x*(long long)blockDim.x+threadIdx.x; i < n; i += (long long)gridDim.x*blockDim.x) b[i] = a[i]; }
'''
m = cp.RawModule(code=src)
dev = cp.cuda.Device(0); l2 = dev.attributes['L2CacheSize']; sms = dev.attributes['MultiProcessorCount']
print('L2', l2, 'SMs', sms, file=sys.stderr)
fr = [0.125, 0.25, 0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0]
grid = sms*8
for k in ['inplace', 'storeonly', 'copyk']:
    f = m.get_function(k)
    for x in fr:
        n = int(l2*x/4) // 32 * 32
        if k == 'copyk':
            n //= 2
            a = cp.ones(n, cp.float32); b = cp.zeros(n, cp.float32)
            for _ in range(2): f((grid,), (256,), (a, b, cp.int64(n)))
        else:
            a = cp.ones(n, cp.float32)
            for _ in range(2): f((grid,), (256,), (a, cp.int64(n)))
        cp.cuda.Device().synchronize()
        print(k, x, n*4, file=sys.stderr)
