"""A small PyTorch program whose kernels Nsight Compute profiles for the shared-memory
configuration check: matmuls (cuBLAS, cluster kernels on sm_90), convolutions (cuDNN),
layer norm, softmax and attention, each in two precisions, each run twice."""

import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
g = torch.Generator(device=dev).manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device=dev, dtype=dtype, generator=g)


for _ in range(2):
    for dtype in (torch.bfloat16, torch.float32):
        a, b = rand(4096, 4096, dtype=dtype), rand(4096, 4096, dtype=dtype)
        (a @ b).sum()
        rand(1000, 3000, dtype=dtype) @ rand(3000, 700, dtype=dtype)
        x = rand(32, 64, 56, 56, dtype=dtype)
        w = rand(128, 64, 3, 3, dtype=dtype)
        F.conv2d(x, w, padding=1)
        F.conv2d(x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last), padding=1)
        h = rand(8192, 1024, dtype=dtype)
        F.layer_norm(h, (1024,))
        F.layer_norm(rand(4096, 4096, dtype=dtype), (4096,))
        torch.softmax(h, dim=-1)
        torch.softmax(rand(2048, 32000, dtype=dtype), dim=-1)
        q = rand(4, 16, 1024, 64, dtype=torch.bfloat16)
        F.scaled_dot_product_attention(q, q, q, is_causal=True)
torch.cuda.synchronize()
print("torch program done")
