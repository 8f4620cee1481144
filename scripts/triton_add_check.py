"""Our own Triton vector add at 1 M floats (BLOCK 1024 and 256) and an empty Triton kernel, timed
by CUDA events behind a sleep kernel on PyTorch's stream, with L2 warm and after a 256 MB write on
that stream before each sample: which of the two the corpus's Triton durations are
(docs/prediction.md, "The dev worst, checked against its own profile"). Needs a GPU, PyTorch and
Triton (the lent GPU's image has them); prints JSON and writes $OUT/triton_add.json where OUT is set.
N=200 samples per figure by default. Under Nsight:
  N=2 OUT= ncu --clock-control none --cache-control all --print-units base --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum -k regex:vadd \
      --launch-count 20 python3 scripts/triton_add_check.py
"""
import json
import os
import statistics

import torch
import triton
import triton.language as tl


@triton.jit
def vadd(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    tl.store(c_ptr + i, tl.load(a_ptr + i, mask=ok) + tl.load(b_ptr + i, mask=ok), mask=ok)


@triton.jit
def empty(a_ptr, BLOCK: tl.constexpr):
    pass


n = 1 << 20
N = int(os.environ.get("N", "200"))
a, b = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
c = torch.empty_like(a)
junk = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def sample(run, flush):
    if flush:
        junk.fill_(1)
    torch.cuda._sleep(100_000)  # keeps host launch time out of the events
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3


out = {"gpu": torch.cuda.get_device_name()}
runs = {f"add_b{blk}": (lambda blk=blk: vadd[(triton.cdiv(n, blk),)](a, b, c, n, BLOCK=blk))
        for blk in (1024, 256)}
runs["empty"] = lambda: empty[(1,)](a, BLOCK=1)
for name, run in runs.items():
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    for flush in (False, True):
        xs = sorted(sample(run, flush) for _ in range(N))
        out[f"{name}_{'flush' if flush else 'warm'}_us"] = {"median": statistics.median(xs), "p10": xs[N // 10],
                                                             "p90": xs[N - 1 - N // 10]}
assert torch.allclose(c, a + b)
print(json.dumps(out, indent=1))
if os.environ.get("OUT"):
    json.dump(out, open(os.path.join(os.environ["OUT"], "triton_add.json"), "w"), indent=1)
