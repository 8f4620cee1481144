"""Kernels nobody on gpuroof wrote, for Nsight Compute to profile (tests/data/ncu/README.md).

PyTorch's cuBLAS matmuls (bf16, fp32, fp64), a cuDNN convolution, flash attention,
ATen elementwise and reduction kernels, layer norm, softmax, and one Triton kernel; each
inside an NVTX range named after it. Inputs are made and every library warmed up before
``cudaProfilerStart``, so that ``ncu --profile-from-start off`` sees only these kernels.
"""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


def main() -> None:
    torch.manual_seed(0)
    dev = "cuda"
    a16 = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b16 = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    a32 = torch.randn(2048, 2048, device=dev)
    b32 = torch.randn(2048, 2048, device=dev)
    a64 = torch.randn(1024, 1024, device=dev, dtype=torch.float64)
    b64 = torch.randn(1024, 1024, device=dev, dtype=torch.float64)
    img = torch.randn(32, 64, 56, 56, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    conv = torch.nn.Conv2d(64, 128, 3, padding=1).to(dev, torch.float16).to(memory_format=torch.channels_last)
    q, k, v = (torch.randn(4, 16, 2048, 64, device=dev, dtype=torch.bfloat16) for _ in range(3))
    x = torch.randn(1 << 26, device=dev)
    y = torch.randn(1 << 26, device=dev)
    rows = torch.randn(8192, 4096, device=dev)
    ln = torch.nn.LayerNorm(4096).to(dev)
    out = torch.empty_like(x)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = False

    def work() -> None:
        steps = [
            ("matmul_bf16", lambda: a16 @ b16),
            ("matmul_fp32", lambda: a32 @ b32),
            ("matmul_fp64", lambda: a64 @ b64),
            ("conv2d_fp16", lambda: conv(img)),
            ("flash_attention", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
            ("elementwise_mul_add", lambda: x * 2.0 + y),
            ("reduction_sum", lambda: rows.sum(dim=1)),
            ("layer_norm", lambda: ln(rows)),
            ("softmax", lambda: torch.softmax(rows, dim=-1)),
            ("triton_scaled_add", lambda: scaled_add[(triton.cdiv(x.numel(), 1024),)](
                x, y, out, 2.0, x.numel(), BLOCK=1024)),
        ]
        for name, step in steps:
            torch.cuda.nvtx.range_push(name)
            step()
            torch.cuda.nvtx.range_pop()

    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.no_grad():
        work()  # warm-up: cuBLAS/cuDNN handles, Triton compilation
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        work()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
