// Differential oracle: NVIDIA's cuda_occupancy.h driven by configurations on stdin.
//
// Every line: OP then the device properties, the function attributes and the state,
//   OP major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
//      smemPerBlock smemPerSM numSms smemOptin reservedSmem
//      fnMaxThreads numRegs staticSmem gcConfig maxDynamicSmem numBarriers carveout
//   followed by, for OP
//     C: blockSize dynamicSmem      -> status active factors limRegs limSmem limWarps
//                                      limBlocks limBars allocRegs allocSmem gc
//     P: smemPerThread smemConstant -> status minGridSize blockSize
//        (dynamic shared memory = smemPerThread * blockSize + smemConstant)
//     A: numBlocks blockSize        -> status bytes
#include <cstdio>
#include <cstring>
#include "cuda_occupancy.h"

struct Linear {
    long long a, b;
    size_t operator()(int blockSize) const { return (size_t)(a * blockSize + b); }
};

int main() {
    char op[4];
    while (scanf("%3s", op) == 1) {
        cudaOccDeviceProp p;
        cudaOccFuncAttributes f;
        cudaOccDeviceState s;
        long long smemPerBlock, smemPerSM, optin, reserved, staticSmem, maxDyn;
        int gc, carveout;
        if (scanf("%d %d %d %d %d %d %d %lld %lld %d %lld %lld %d %d %lld %d %lld %d %d",
                  &p.computeMajor, &p.computeMinor, &p.maxThreadsPerBlock,
                  &p.maxThreadsPerMultiprocessor, &p.regsPerBlock, &p.regsPerMultiprocessor,
                  &p.warpSize, &smemPerBlock, &smemPerSM, &p.numSms, &optin, &reserved,
                  &f.maxThreadsPerBlock, &f.numRegs, &staticSmem, &gc, &maxDyn,
                  &f.numBlockBarriers, &carveout) != 19) {
            return 1;
        }
        p.sharedMemPerBlock = (size_t)smemPerBlock;
        p.sharedMemPerMultiprocessor = (size_t)smemPerSM;
        p.sharedMemPerBlockOptin = (size_t)optin;
        p.reservedSharedMemPerBlock = (size_t)reserved;
        f.sharedSizeBytes = (size_t)staticSmem;
        f.partitionedGCConfig = (cudaOccPartitionedGCConfig)gc;
        // What the runtime does when it converts cudaFuncAttributes.
        f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        f.maxDynamicSharedSizeBytes = (size_t)maxDyn;
        f.virtualResourceCount = 0;
        s.cacheConfig = CACHE_PREFER_NONE;
        s.carveoutConfig = carveout;
        if (op[0] == 'C') {
            int blockSize;
            long long dyn;
            if (scanf("%d %lld", &blockSize, &dyn) != 2) return 1;
            cudaOccResult r;
            memset(&r, 0, sizeof r);
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &s, blockSize, (size_t)dyn);
            printf("%d %d %u %d %d %d %d %d %d %zu %d\n", (int)e, r.activeBlocksPerMultiprocessor,
                   r.limitingFactors, r.blockLimitRegs, r.blockLimitSharedMem, r.blockLimitWarps,
                   r.blockLimitBlocks, r.blockLimitBarriers, r.allocatedRegistersPerBlock,
                   r.allocatedSharedMemPerBlock, (int)r.partitionedGCConfig);
        } else if (op[0] == 'P') {
            Linear fn;
            if (scanf("%lld %lld", &fn.a, &fn.b) != 2) return 1;
            int minGrid = 0, block = 0;
            cudaOccError e = cudaOccMaxPotentialOccupancyBlockSizeVariableSMem(&minGrid, &block, &p, &f, &s, fn);
            printf("%d %d %d\n", (int)e, minGrid, block);
        } else if (op[0] == 'A') {
            int numBlocks, blockSize;
            if (scanf("%d %d", &numBlocks, &blockSize) != 2) return 1;
            size_t bytes = 0;
            cudaOccError e = cudaOccAvailableDynamicSMemPerBlock(&bytes, &p, &f, &s, numBlocks, blockSize);
            printf("%d %zu\n", (int)e, bytes);
        } else {
            return 1;
        }
    }
    return 0;
}
