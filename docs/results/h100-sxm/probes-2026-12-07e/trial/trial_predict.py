"""Predict the trial kernels (trial_k.cu) at 16 and 32 waves of 8 blocks of 256 an SM, without and with
the branch factor branch_divergence gives (flops rough: 2 a step of one side); prints [kernel, listing,
longest path, added us without a factor, added us with it]. python trial_predict.py [GPU]"""
import json, sys, numpy as np, occupancy, roofline
from roofline.divergence import branch_divergence
res = occupancy.all_kernel_resources(open(__import__("pathlib").Path(__file__).with_name("trial_k.cu")).read(), arch="sm_90", sass=True)
t = np.arange(256)
factor = {"warp_branch": branch_divergence((t >> 5) & 1).issue_factor, "lane_branch": branch_divergence(t & 1).issue_factor,
          "two_ifs": 1.0, "nested": 1.0}
fl = {"warp_branch": 2*64+1, "lane_branch": 2*64+1, "two_ifs": 2*(20+16)+1, "nested": 2*(8+16)+1}  # rough per-thread flops
gpu = sys.argv[1] if len(sys.argv) > 1 else "h100-sxm"
wave = 132 * 8
for k in factor:
    s = res[k].sass
    row = [k, s.instructions.total, s.longest_path_instructions]
    for f in (None, factor[k]):
        secs = []
        for w in (16, 32):
            blocks = w * wave; th = blocks * 256
            kern = roofline.Kernel(name=k, flops=fl[k] * th, dram_bytes=8.0 * th, branch_issue_factor=f,
                                   launch=occupancy.Launch(grid=blocks, block=256, resources=res[k]))
            secs.append(roofline.predict(gpu, kern).seconds)
        row.append(round((secs[1] - secs[0]) * 1e6, 1))
    print(row)
