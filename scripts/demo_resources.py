"""Write roofline/data/demo_resources.toml: the demo kernels' compiled resources per architecture.

`gpuroof demo` runs without a GPU and without a compiler, so the registers per thread of
its kernels (validate/kernels/suite.cu, each with the macros its model needs) are compiled
here once, with NVRTC, for every architecture of the GPU database, and packaged with the
compiler's name and version. tests/roofline/test_demo.py recompiles a sample and compares.

    PYTHONPATH=. python scripts/demo_resources.py
"""

from __future__ import annotations

import pathlib

import numpy as np

import occupancy
import roofline
from validate.device._compile import kernel_source, with_defines
from validate.suite._kernels import build_case

OUT = pathlib.Path(__file__).resolve().parents[1] / "roofline" / "data" / "demo_resources.toml"


def main() -> None:
    # CUDA 13 no longer targets sm_70 (V100): a demo there assumes registers and says so.
    archs = sorted({g.architecture.name for g in roofline.gpus()} - {"sm_70"}, key=lambda a: int(a.removeprefix("sm_")))
    rng = np.random.default_rng(0)
    compilers: set[str] = set()
    lines = []
    for model in roofline.suite.demo_kernels(compiled=False):
        if model.name == "matmul_register_tiled":  # no validate case yet: the kernel takes no macros
            function, defines = model.name, {}
        else:
            case = build_case(model, rng)
            function, defines = case.function, dict(case.defines)
        source = with_defines(kernel_source("suite.cu"), defines)
        registers, shared = {}, set()
        for arch in archs:
            found = occupancy.kernel_resources(source, kernel=function, arch=arch)
            registers[arch] = found.registers_per_thread
            shared.add(found.static_shared_memory)
            compilers.add(found.compiler)
        assert len(shared) == 1, (model.label, shared)
        define_text = ", ".join(f"{k} = {v}" for k, v in sorted(defines.items()))
        register_text = ", ".join(f"{a} = {r}" for a, r in registers.items())
        lines += [f'[kernels."{model.label}"]', f'function = "{function}"', f"defines = {{ {define_text} }}",
                  f"static_shared_memory = {shared.pop()}", f"registers_per_thread = {{ {register_text} }}", ""]
        print(model.label, registers, flush=True)
    assert len(compilers) == 1, compilers
    header = [
        "# Registers per thread and static shared memory of the kernels of `gpuroof demo`, compiled",
        "# from validate/kernels/suite.cu (with each model's macros) for every architecture of the GPU",
        "# database. Written by scripts/demo_resources.py; tests/roofline/test_demo.py recompiles a sample.",
        "[source]",
        'file = "validate/kernels/suite.cu"',
        f'compiler = "{compilers.pop()}"',
        'options = "NVRTC defaults (-O3), no -maxrregcount"',
        "",
    ]
    OUT.write_text("\n".join(header + lines), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
