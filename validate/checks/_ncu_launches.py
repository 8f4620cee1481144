"""Launches for Nsight Compute: synthetic kernels over resources, carveouts and clusters.

`run_launch_plan` launches each planned configuration once, in order, and returns a manifest
(the kernel's resources, the launch, and the driver's active blocks per SM). Run under
``ncu --metrics launch__...``, the profile's rows follow the same order, so each row of
the profile pairs with one launched manifest entry. ``python -m validate.checks._ncu_launches
MANIFEST.jsonl`` runs the plan and writes the manifest, one JSON line per launch.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import asdict, dataclass
from typing import TextIO

import numpy as np
import occupancy

from ..device import (
    DeviceError,
    DeviceInfo,
    JsonDict,
    Session,
    driver_call,
    kernel_resources,
    open_session,
    query_device,
    takes_session,
)
from ._clusters import set_attribute
from ._differential import ProbeVariant, load_probe_kernels

__all__ = ["PlannedLaunch", "launch_plan", "parse_ncu_csv", "run_launch_plan"]


@dataclass(frozen=True)
class PlannedLaunch:
    """One launch: a probe kernel, block size, dynamic shared memory, attributes, cluster,
    grid (blocks; None for one block per SM) and the part of the plan it belongs to."""

    variant: ProbeVariant
    threads_per_block: int
    dynamic_shared_memory: int
    max_dynamic_shared_memory: int | None = None
    carveout: int | None = None
    cluster_size: int = 1
    grid: int | None = None
    part: str = "resources"


REGISTER_KERNELS = ((4, None), (200, 32), (200, 40), (200, 48), (200, 64), (200, 80), (200, 96), (200, 128),
                    (200, 168), (220, 255))
"""(live values, register cap) of the probe kernels: about 22 to 255 registers per thread."""


def launch_plan(arch: occupancy.Architecture, quick: bool = False) -> list[PlannedLaunch]:
    """The synthetic launches profiled, most telling first: carveouts, opt-in dynamic shared
    memory, static shared memory, clusters, launch history and grid size, then a grid of
    block sizes x registers x dynamic shared memory with no carveout."""
    kernels = [ProbeVariant(live, 0, 1, cap) for live, cap in REGISTER_KERNELS]
    light, k32, k64 = kernels[0], kernels[1], kernels[4]
    static_a, static_b = ProbeVariant(40, 12300, 1, 64), ProbeVariant(200, 40960, 1, 96)
    optin = arch.max_shared_memory_per_block_optin
    plan: list[PlannedLaunch] = []
    for v in (light, k64):
        for c in ([0, 10, 25, 50, 75, 100] if not quick else [0, 50]):
            for t in (64, 256, 1024):
                for d in (0, 5000, 30000):
                    plan.append(PlannedLaunch(v, t, d, carveout=c, part="carveout"))
    for d in (50000, 80000, 110000, 150000, 200000, optin):
        for t in (128, 512):
            for c in (None, 25, 100):
                plan.append(PlannedLaunch(light, t, d, max_dynamic_shared_memory=optin, carveout=c, part="optin"))
    for v in (static_a, static_b):
        for t in (128, 512):
            for d in (0, 8000):
                for c in (None, 50):
                    plan.append(PlannedLaunch(v, t, d, carveout=c, part="static"))
    if arch.major >= 9:
        for size in (2, 4, 8, 16):
            for t in (128, 512):
                for d in (0, 30000, 100000):
                    plan.append(PlannedLaunch(k32, t, d, max_dynamic_shared_memory=optin, cluster_size=size,
                                              part="cluster"))
    small, big = PlannedLaunch(light, 1024, 0, part="reset"), PlannedLaunch(light, 32, 47000, part="reset")
    probes = [(light, 256, 0), (light, 256, 1000), (k64, 512, 5000), (k32, 128, 24), (k32, 128, 3000),
              (kernels[7], 256, 47000), (k64, 96, 12000), (light, 1024, 30000)]
    for v, t, d in probes[: 3 if quick else None]:
        x = PlannedLaunch(v, t, d, part="history")
        plan += [small, x, big, x, x]
        for grid in (1, 2048):
            plan.append(PlannedLaunch(v, t, d, grid=grid, part="grid"))
    blocks = [32, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
    dynamic = [0, 24, 512, 1000, 1100, 2048, 2200, 3072, 5120, 7168]
    if quick:
        blocks, dynamic, kernels = blocks[::3], dynamic[::4], kernels[::3]
    for v in kernels:
        for t in blocks:
            for d in dynamic:
                plan.append(PlannedLaunch(v, t, d))
    return plan


@takes_session
def run_launch_plan(session: Session, info: DeviceInfo, plan: list[PlannedLaunch], manifest: TextIO | None = None) -> list[JsonDict]:
    """Launch every planned configuration once, in order; return one manifest entry each.

    A launch the driver would refuse (a block over the kernel's limit) is recorded and
    skipped, so that ncu's rows stay in step with the launched entries. ``manifest``, an open
    text file, receives each entry as a JSON line as soon as it is known.
    """
    arch = occupancy.architecture(info.compute_capability)
    variants = list(dict.fromkeys(p.variant for p in plan))
    kernels, errors = load_probe_kernels(info, variants, "ncu_probe")
    if errors:  # every planned launch needs its kernel: no partial profile
        raise DeviceError(next(iter(errors.values())))
    n = 1024
    source = session.upload(np.arange(n, dtype=np.float32))
    most = max(max(p.cluster_size * info.sm_count, p.grid or 0) for p in plan) * 1024
    sink = session.allocate(4 * most)
    core = session.cuda.core
    entries: list[JsonDict] = []
    for p in plan:
        kernel = kernels[p.variant]
        res = kernel_resources(kernel)
        default_max = max(0, arch.max_shared_memory_per_block - res.static_shared_memory)
        attribute = default_max if p.max_dynamic_shared_memory is None else p.max_dynamic_shared_memory
        entry = {**{k: v for k, v in asdict(p).items() if k != "variant"}, "kernel": p.variant.name,
                 "registers_per_thread": res.registers_per_thread, "static_shared_memory": res.static_shared_memory,
                 "max_threads_per_block": res.max_threads_per_block, "launched": False, "error": None}
        if p.threads_per_block > res.max_threads_per_block or p.dynamic_shared_memory > attribute:
            entry["error"] = "skipped: the driver would refuse this launch"
        else:
            try:
                function = driver_call(session.cuda.driver.cuKernelGetFunction, kernel.handle)
                set_attribute(session, kernel, function, "MAX_DYNAMIC_SHARED_SIZE_BYTES", attribute)
                set_attribute(session, kernel, function, "PREFERRED_SHARED_MEMORY_CARVEOUT",
                              -1 if p.carveout is None else p.carveout)
                set_attribute(session, kernel, function, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED", int(p.cluster_size > 8))
                entry["driver_active_blocks_per_sm"] = int(driver_call(
                    session.cuda.driver.cuOccupancyMaxActiveBlocksPerMultiprocessor, function,
                    p.threads_per_block, p.dynamic_shared_memory))
                grid = p.grid or info.sm_count
                if p.cluster_size > 1:
                    config = core.LaunchConfig(grid=grid, cluster=p.cluster_size, block=p.threads_per_block,
                                               shmem_size=p.dynamic_shared_memory)
                    try:
                        entry["driver_active_clusters"] = int(
                            kernel.occupancy.max_active_clusters(config, stream=session.stream))
                    except Exception as exc:  # noqa: BLE001 - recorded; the launch still runs
                        entry["driver_active_clusters"] = f"error: {exc}"
                else:
                    config = core.LaunchConfig(grid=grid, block=p.threads_per_block, shmem_size=p.dynamic_shared_memory)
                core.launch(session.stream, config, kernel, source, sink, np.int32(n))
                session.synchronize()
                entry["launched"] = True
            except Exception as exc:  # noqa: BLE001 - a refused launch is recorded, not fatal
                entry["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        entries.append(entry)
        if manifest is not None:
            manifest.write(json.dumps(entry) + "\n")
            manifest.flush()
    return entries


def parse_ncu_csv(text: str) -> list[dict[str, str]]:
    """Rows of an ``ncu --csv --page raw`` export, as dicts keyed by metric name (the units
    row, when present, is dropped)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    return [r for r in rows if r.get("ID", "").strip().isdigit()]


def main(argv: list[str]) -> int:
    """Run the plan on device 0 and write the manifest, one JSON line per launch, to ``argv[0]``."""
    session = open_session(0)
    info = query_device(session)

    with open(argv[0], "w", encoding="utf-8") as f:
        entries = run_launch_plan(session, info, launch_plan(occupancy.architecture(info.compute_capability)), f)
    print(f"{sum(e['launched'] for e in entries)} of {len(entries)} launches ran", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


KILO_METRICS = ("shared_mem_config_size", "shared_mem_per_block_static", "shared_mem_per_block_dynamic",
                "shared_mem_per_block_driver", "shared_mem_per_block_allocated")
"""Launch metrics Nsight Compute reports in Kbyte (10^3 bytes) or Kbyte/block."""


def ncu_launches(rows: list[dict[str, str]]) -> list[JsonDict]:
    """The launch metrics of parsed ncu rows as numbers (bytes for shared memory)."""
    out = []
    for r in rows:
        d: JsonDict = {"id": int(r["ID"]), "kernel": r["Kernel Name"]}
        for key, value in r.items():
            if not key.startswith("launch__"):
                continue
            text = value.replace(",", "").strip()
            try:
                number = float(text)
            except ValueError:
                d[key[8:]] = text
                continue
            d[key[8:]] = round(number * 1000) if key[8:] in KILO_METRICS else number
        out.append(d)
    return out


def _model_inputs(launch: JsonDict, arch: occupancy.Architecture, carveout: int | None,
                  max_dynamic: int | None) -> JsonDict:
    static, dynamic = int(launch["shared_mem_per_block_static"]), int(launch["shared_mem_per_block_dynamic"])
    if max_dynamic is None and static + dynamic > arch.max_shared_memory_per_block:
        # A profile does not say the kernel's attribute; a launch above 48 KiB opted in.
        max_dynamic = arch.max_shared_memory_per_block_optin - static
    return dict(threads_per_block=int(launch["block_size"]), registers_per_thread=int(launch["registers_per_thread"]),
                static_shared_memory=static, dynamic_shared_memory=dynamic, max_dynamic_shared_memory=max_dynamic,
                carveout=carveout, block_barriers=int(launch.get("barrier_count", 1)))


LIMITS = {"warps": "occupancy_limit_warps", "registers": "occupancy_limit_registers",
          "shared_memory": "occupancy_limit_shared_mem", "blocks": "occupancy_limit_blocks",
          "barriers": "occupancy_limit_barriers"}


def compare_launch(launch: JsonDict, arch: occupancy.Architecture, carveout: int | None = None,
                   max_dynamic: int | None = None) -> JsonDict:
    """One profiled launch against ``occupancy.calculate(...).driver``: the fields that differ."""
    inputs = _model_inputs(launch, arch, carveout, max_dynamic)
    result = occupancy.calculate(arch, **inputs)
    d = result.driver
    differences = {}
    if d.shared_memory_config != int(launch["shared_mem_config_size"]):
        differences["shared_memory_config"] = (int(launch["shared_mem_config_size"]), d.shared_memory_config)
    for name, metric in LIMITS.items():
        ours = getattr(d, f"block_limit_{name}")
        theirs = int(launch[metric])
        if ours != theirs:
            differences[name] = (theirs, ours)
    return {"inputs": inputs, "active_blocks_per_sm": result.active_blocks_per_sm, "differences": differences}
