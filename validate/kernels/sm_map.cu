// Where each block of a cluster launch runs: validate._gpc_layout launches this with
// 1-D clusters and reads, per block, the SM it ran on, its cluster, and the global timer
// when it started and when it finished spinning. Blocks of one cluster always share a GPC,
// so SMs that ever share a cluster belong to one GPC (union over many launches).
extern "C" __global__ void sm_map(unsigned int* out, unsigned long long spin_ns) {
  extern __shared__ float s_dynamic[];
  unsigned int smid, cluster, rank;
  unsigned long long t0, t1;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  t1 = t0;
  if (threadIdx.x == 0) {
    while (t1 - t0 < spin_ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    unsigned int* row = out + 8u * blockIdx.x;
    row[0] = smid;
    row[1] = cluster;
    row[2] = rank;
    row[3] = (unsigned int)(t0 & 0xffffffffu);
    row[4] = (unsigned int)(t0 >> 32);
    row[5] = (unsigned int)(t1 & 0xffffffffu);
    row[6] = (unsigned int)(t1 >> 32);
    row[7] = 1u;
  }
  if (spin_ns == 0xffffffffffffffffull) s_dynamic[threadIdx.x] = 0.0f;  // keeps the array referenced
  __syncthreads();
}
