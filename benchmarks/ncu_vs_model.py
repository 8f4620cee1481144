"""The model-vs-counters table: gpuroof's suite models against Nsight Compute's DRAM and L2 bytes.

Reads tests/data/ncu/suite.raw_base.csv (each suite kernel launched once under ncu, with
the L2 sector and DRAM read/write counters; tests/data/ncu/README.md) and writes
docs/results/h200/ncu_vs_model.md.

    python benchmarks/ncu_vs_model.py [OUT.md]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import roofline
from roofline import models

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "tests" / "data" / "ncu" / "suite.raw_base.csv"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "results" / "h200" / "ncu_vs_model.md"
    profile = roofline.load_ncu(PROFILE)
    suite = models.suite()
    if len(suite) != len(profile.kernels):
        raise SystemExit(f"{len(suite)} models but {len(profile.kernels)} profiled kernels")
    rows, dram_ratios, l2_ratios = [], [], []
    for model, k in zip(suite, profile.kernels):
        dram = k.dram_bytes / model.dram_bytes
        l2 = k.measured.l2_sector_bytes / model.l2_bytes if model.l2_bytes else None
        dram_ratios.append(dram)
        if l2 is not None:
            l2_ratios.append(l2)
        fp32 = k.flops.get("fp32", 0.0)
        rows.append(
            f"| {model.label} | `{k.name}` {k.grid[0]}x{k.grid[1]} x {k.threads_per_block} | "
            f"{model.dram_bytes / 1e6:,.1f} | {k.dram_bytes / 1e6:,.1f} | {dram:.3f} | "
            f"{(model.l2_bytes or 0) / 1e6:,.1f} | {k.measured.l2_sector_bytes / 1e6:,.1f} | "
            f"{'-' if l2 is None else f'{l2:.3f}'} | {model.flops / 1e6:,.1f} | {fp32 / 1e6:,.1f} | "
            f"{k.measured.duration_seconds * 1e6:,.1f} |")
    header = [
        "# Model against counters: the suite's DRAM and L2 bytes on an H200 (Nsight Compute)",
        "",
        "Each kernel of `roofline.models.suite()` (`gpuroof validate`'s suite at full size) launched once under "
        "Nsight Compute 2025.3.1 on an NVIDIA H200 (driver 580.159.04), `--clock-control none`, caches flushed "
        "before the launch (ncu's default), with the counters `dram__bytes_read.sum`, `dram__bytes_write.sum` "
        "and `lts__t_sectors_srcunit_tex.sum` (every 32-byte sector the SMs read or write in L2). The profile "
        "is `tests/data/ncu/suite.raw_base.csv` (commands in `tests/data/ncu/README.md`); this page is "
        "`python benchmarks/ncu_vs_model.py`.",
        "",
        "Model DRAM bytes are compulsory traffic (each distinct sector read once, written once); model L2 bytes "
        "are the sectors every warp-wide access touches (`roofline.Kernel` docstring). Ratios are counter / model.",
        "",
        "| kernel | launch | DRAM MB model | DRAM MB ncu | ratio | L2 MB model | L2 MB ncu | ratio | "
        "MFLOP model | MFLOP ncu FP32 | time us |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary = [
        "",
        f"DRAM: median counter/model {statistics.median(dram_ratios):.3f}, range {min(dram_ratios):.3f} to "
        f"{max(dram_ratios):.3f} over {len(dram_ratios)} kernels. L2 sectors: median {statistics.median(l2_ratios):.3f}, "
        f"range {min(l2_ratios):.3f} to {max(l2_ratios):.3f} over {len(l2_ratios)} kernels.",
        "",
        "Reading the table:",
        "",
        "- Streaming kernels (copy, vector_add, triad, offset and strided reads, aos/soa, transposes, "
        "reduction): DRAM counters within 0.96 to 1.01 of the compulsory bytes. They fall a little short "
        "because writes still held in the 60 MiB L2 when the kernel ends are written back after ncu stops "
        "counting; blur's 0.89 is the same effect on a smaller output.",
        "- The matmuls move 42 to 84 times the compulsory DRAM bytes: their three 64 MiB matrices do not fit "
        "the 60 MiB L2, so the model's DRAM count (all reuse captured by L2) is a loose lower bound for them.",
        "- L2: the model counts the sectors of every warp-wide access as if L1 kept nothing. Where L1 does "
        "catch reuse the counter is lower: blur's window (0.25 and 0.05), aos's second field of each sector "
        "(0.50), matmul_naive's rows (0.12), the naive column transpose (0.40), offset_read's shared boundary "
        "sectors (0.88). Where accesses are fully coalesced and not reused, model and counter agree exactly "
        "(ratio 1.000 for 10 kernels).",
        "- The flops Nsight counts are FP32 instructions as its roofline counts them (FADD + FMUL + 2 FFMA). "
        "They equal the model's for the streaming kernels and the matmuls; blur has more FP32 instructions "
        "than the one add per window pixel the model counts (its division by the pixel count among them). "
        "The compiler's `HFMA2.MMA` register moves (in the SASS of `strided_read`, `reduction`, `matmul_naive` "
        "and `matmul_tiled`, read with `cuobjdump -sass` on the device) appear in Nsight's half-precision "
        "roofline as FP16 flops, so a kernel with no arithmetic can show a few FP16 operations there.",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(header + rows + summary) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
