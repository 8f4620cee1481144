"""Launch each kernel of gpuroof's validate suite once, for Nsight Compute (README.md here).

Prints one JSON line per kernel with the model's counts, the launch and the compiled
resources, so that the profile can be compared with the models (docs/results/h200/ncu_vs_model.md).
Launches happen between ``cuProfilerStart``/``Stop``: ``ncu --profile-from-start off`` sees
only the suite's kernels, not the poison memsets.
"""

import json
import sys

import numpy as np

import validate
from validate.run import _run
from validate.device._driver import driver_call
from validate.suite._kernels import build_case, case_buffers
from validate.device._compile import compile_kernels, kernel_resources, kernel_source, with_defines


def main() -> None:
    session = validate.open_session(0)
    info = validate.query_device(session)
    rng = np.random.default_rng(0)
    driver = session.cuda.driver
    count = 0
    for model in _run.select_models():
        case = build_case(model, rng)
        source = with_defines(kernel_source("suite.cu"), case.defines)
        kernel = compile_kernels(source, [case.function], arch=info.arch)[case.function]
        buffers = case_buffers(session, case)
        args = tuple(buffers[a] if isinstance(a, str) else a for a in case.args)
        launch = session.launcher(kernel, case.grid, case.block, args, case.dynamic_shared_memory)
        session.synchronize()
        # One launch per kernel between start and stop: the profile holds the suite's
        # kernels only, each with only its own buffers allocated (ncu saves and restores
        # device memory between replay passes).
        driver_call(driver.cuProfilerStart)
        launch()
        session.synchronize()
        driver_call(driver.cuProfilerStop)
        r = kernel_resources(kernel)
        print(json.dumps({
            "label": model.label, "function": case.function, "grid": case.grid, "block": case.block,
            "dynamic_shared_memory": case.dynamic_shared_memory, "registers_per_thread": r.registers_per_thread,
            "static_shared_memory": r.static_shared_memory, "flops": model.flops, "dram_bytes": model.dram_bytes,
            "l2_bytes": model.l2_bytes, "l1_bytes": model.l1_bytes, "requested_bytes": model.count("requested_bytes"),
        }), flush=True)
        for buffer in buffers.values():
            buffer.close()
        count += 1
    print(f"{count} kernels on {info.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
