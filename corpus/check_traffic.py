"""Check access descriptions against Nsight Compute's own counts of the same launches.

    python -m corpus.check_traffic PROJECT [KERNEL_SUBSTRING] [--all] [--gpu GPU]   # from the repository's root

For each described launch (the first of each kernel unless --all) prints the traffic that
`roofline.memory.traffic` counts from the description beside Nsight's counts (the profile of
``--gpu``, default the H200's; a project measured on one GPU only names it):
global load / store sectors the L1 looked up (l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}),
DRAM bytes read / written, and the shared-memory wavefronts the description's counts give
(``shared_wavefronts``) beside l1tex__data_pipe_lsu_wavefronts_mem_shared. A description is right
when its sectors equal Nsight's (to a few per cent: the counts are exact, the profile is of the
compiled code, which may keep a value in a register that the source reads twice).
"""

from __future__ import annotations

import sys

from ._counted import _count_launch
from ._project import load_corpus
from .traffic import DESCRIPTIONS

#: The GPU whose profile the check reads unless ``--gpu`` names another.
DEFAULT_GPU = "h200"


def gpu_option(argv: list[str]) -> tuple[str, list[str]]:
    """``--gpu GPU`` (default `DEFAULT_GPU`) and the arguments without it."""
    if "--gpu" not in argv:
        return DEFAULT_GPU, list(argv)
    at = argv.index("--gpu")
    if at + 1 >= len(argv):
        raise SystemExit("--gpu needs a GPU name (a facts file's, e.g. h100-sxm)")
    return argv[at + 1], argv[:at] + argv[at + 2:]


def main(argv: list[str]) -> int:
    gpu, argv = gpu_option(argv)
    args = [a for a in argv if not a.startswith("--")]
    every = "--all" in argv
    project = load_corpus(gpu, project=args[0])[0]
    described = DESCRIPTIONS.get(project.project, {})
    pattern = args[1] if len(args) > 1 else ""
    print(f"{'kernel':40} {'shape':28} {'ld sect desc/ncu':>22} {'st sect desc/ncu':>22} "
          f"{'dram rd desc/ncu MB':>20} {'dram wr desc/ncu MB':>20} {'shared wavefronts desc/ncu':>26}")
    for k in project.kernels:
        kid = k.short_id
        if pattern not in kid:
            continue
        if kid not in described:
            print(f"{kid:40} (no description)")
            continue
        for launch in (k.launches if every else k.launches[:1]):
            counted = _count_launch(described[kid], k, launch)
            t = counted.traffic
            shared = counted.counts.get("shared_wavefronts", 0.0)
            m = launch.ncu

            def g(name: str) -> float:
                return float(m.get(name, float("nan")))

            ld, st = g("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), g("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
            rd, wr = g("dram__bytes_read.sum"), g("dram__bytes_write.sum")
            print(f"{kid[:40]:40} {launch.shape[:28]:28} {t.l2_load_bytes / 32:>10.4g}/{ld:<11.4g} "
                  f"{t.l2_store_bytes / 32:>10.4g}/{st:<11.4g} {t.dram_load_bytes / 1e6:>9.3g}/{rd / 1e6:<10.3g} "
                  f"{t.dram_store_bytes / 1e6:>9.3g}/{wr / 1e6:<10.3g} "
                  f"{shared:>12.4g}/{g('l1tex__data_pipe_lsu_wavefronts_mem_shared.sum'):<12.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
