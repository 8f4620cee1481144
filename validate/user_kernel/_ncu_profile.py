"""Profiling a program with Nsight Compute the way gpuroof reads it, in one call (`gpuroof profile`).

`profile_program` runs ``ncu`` with the sections `roofline.NCU_SECTIONS` lists plus
``InstructionStats`` and the counters the profile path reads beyond them (global loads per
thread, L2 sectors, DRAM reads and writes), at the clocks the program runs at
(``--clock-control none``), keeps the report (``REPORT.ncu-rep``) and its raw-page export in
base units (``REPORT.csv``), and hands the export to `roofline.profile_report` (which reads
the report's SASS from its source page). The export streams from ncu into a temporary file
beside ``REPORT.csv`` that replaces it once complete (`occupancy.common.atomic_path`): a
failed or interrupted export leaves no ``REPORT.csv`` of half a page, and no temporary.

Errors: no ``ncu``, or an ``ncu`` that cannot read the performance counters
(``ERR_NVGPUCTRPERM``), is a `DeviceError` (exit code 3); a program that cannot start, fails,
or runs no kernel (none matching ``kernel``) is a ``roofline.RooflineError`` (exit code 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import roofline
from occupancy.common import atomic_path, sequence
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from ..device import DeviceError

__all__ = ["NCU_METRICS", "PROFILE_SECTIONS", "ProfileRun", "profile_program"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: The ``--section`` arguments: what `roofline.load_ncu` reads, and the instruction statistics.
PROFILE_SECTIONS: tuple[str, ...] = (*roofline.NCU_SECTIONS, "InstructionStats")
#: Counters beyond the sections, each read by `roofline.load_ncu` for the time model: global
#: loads per thread, DRAM reads and writes, SM<->L2 sectors (all, and the reads: the loads' own
#: L2 hit rate is 1 - DRAM reads / read sectors), requests and hits, L1 data-pipe
#: wavefronts, global load sectors and hits, global store sectors and requests (partial
#: stores), global atomic and reduction instructions, shared atomic instructions.
NCU_METRICS: tuple[str, ...] = (
    "smsp__inst_executed_op_global_ld.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_lookup_hit.sum", "lts__t_requests_srcunit_tex.sum",
    "l1tex__data_pipe_lsu_wavefronts.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum", "smsp__sass_inst_executed_op_shared_atom.sum",
)
_PERMISSION = "ERR_NVGPUCTRPERM"
_NO_KERNEL = "No kernels were profiled"
# Profiling replays every kernel ~40 times: a program of seconds takes minutes; an hour is a hang.
_TIMEOUT_SECONDS = 3600

Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class ProfileRun(BaseModel):
    """One `profile_program`: the files kept, the ncu command, and gpuroof's report of the profile."""

    model_config = _FROZEN

    report_path: str = Field(description="The Nsight Compute report (.ncu-rep).")
    csv_path: str = Field(description="Its raw-page export in base units (what gpuroof ncu reads).")
    command: tuple[str, ...] = Field(description="The ncu command that profiled the program.")
    report: roofline.ProfileReport


def _output(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _run(runner: Runner, command: list[str], **streams: object) -> subprocess.CompletedProcess[str]:
    """`command` run by `runner`, its output captured (or sent where `streams` say)."""
    try:
        return runner(command, **(streams or {"capture_output": True}), text=True, timeout=_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise DeviceError(f"{' '.join(command[:3])} ... ran past {_TIMEOUT_SECONDS} s; stopped") from None
    except OSError as exc:
        raise DeviceError(f"ncu could not be run: {exc}") from None


def _export(runner: Runner, command: list[str], export: Path) -> None:
    """ncu's raw-page export streamed into `export` through a temporary file and a rename: on a
    failure or an interrupt (KeyboardInterrupt) the temporary is removed and `export` is left
    as it was; a kill leaves the temporary to the next write to `export`, which removes it."""
    with atomic_path(export, RooflineError, "output") as tmp, open(tmp, "w", encoding="utf-8") as handle:
        exported = _run(runner, command, stdout=handle, stderr=subprocess.PIPE)
        if exported.returncode != 0:
            last = (_output(exported.stderr or "") or [f"exit code {exported.returncode}"])[-1]
            raise DeviceError(f"ncu could not export {command[2]}: {last[:300]}")


def profile_program(
    command: Sequence[str],
    *,
    output: str | os.PathLike[str] = "gpuroof-profile",
    kernel: str | None = None,
    launch_count: int | None = None,
    binary: str | os.PathLike[str] | None = None,
    gpu: roofline.GPU | str | None = None,
    ncu: str | None = None,
    runner: Runner = subprocess.run,
) -> ProfileRun:
    """Profile `command` with Nsight Compute as gpuroof reads it, and report what gpuroof adds.

    Parameters
    ----------
    command : sequence of str
        The program and its arguments.
    output : str or path
        The report's name: ``OUTPUT.ncu-rep`` and ``OUTPUT.csv`` are written (a suffix
        ``.ncu-rep`` given is taken off).
    kernel : str, optional
        Regular expression: profile only the kernels whose name matches (``ncu -k regex:``).
    launch_count : int, optional
        Profile at most this many launches (``ncu -c``).
    binary : str or path, optional
        The program's binary (or its kernels' source) for the SASS, when the report's source
        page cannot give it (`roofline.load_ncu`).
    gpu : GPU or str, optional
        The database entry for ceilings and prediction (default: the profiled device).
    ncu : str, optional
        The ncu to run (default the one on PATH).
    runner : callable
        `subprocess.run`, or a stand-in in tests.

    Returns
    -------
    ProfileRun

    Raises
    ------
    DeviceError
        No ncu on PATH, or ncu cannot read the GPU's performance counters.
    roofline.RooflineError
        An empty command, a program that is not found, fails, or runs no kernel; a
        ``launch_count`` below 1; a ``kernel`` that is not a regular expression.
    TypeError
        ``command`` that is not a sequence of program arguments.
    """
    command = [str(part) for part in sequence("command", command, "a sequence of program arguments")]
    if not command:
        raise RooflineError("command is empty: give the program to profile after --, e.g. gpuroof profile -- ./app")
    if launch_count is not None and (isinstance(launch_count, bool) or not isinstance(launch_count, int)
                                     or launch_count < 1):
        raise RooflineError(f"launch_count={launch_count!r} must be an integer of at least 1")
    if kernel is not None:
        # a pattern no regex engine takes is refused here, not after ncu has run the program
        try:
            re.compile(kernel)
        except (re.error, TypeError) as exc:
            raise RooflineError(f"kernel={kernel!r} is not a regular expression ({exc})") from None
    if shutil.which(command[0]) is None:
        raise RooflineError(f"command {command[0]!r}: no such program (not a file, not on PATH)")
    ncu = ncu or shutil.which("ncu")
    if ncu is None:
        raise DeviceError("ncu (Nsight Compute) is not on PATH: install Nsight Compute, or add its folder to PATH")
    stem = Path(output)
    if stem.suffix == ".ncu-rep":
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    report, export = stem.with_name(stem.name + ".ncu-rep"), stem.with_name(stem.name + ".csv")
    profile = [ncu, "--clock-control", "none", "--nvtx", *(a for s in PROFILE_SECTIONS for a in ("--section", s)),
               "--metrics", ",".join(NCU_METRICS), "--print-units", "base"]
    if kernel is not None:
        profile += ["--kernel-name", f"regex:{kernel}"]
    if launch_count is not None:
        profile += ["--launch-count", str(launch_count)]
    profile += ["-f", "-o", str(stem), *command]
    done = _run(runner, profile)
    said = _output(done.stdout) + _output(done.stderr)
    if any(_PERMISSION in line for line in said):
        raise DeviceError(f"ncu cannot read the GPU's performance counters ({_PERMISSION}): profiling is "
                          "restricted to admin users here; see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    errors = [line for line in said if line.startswith("==ERROR==")]
    if done.returncode != 0 or errors:
        why = errors[-1] if errors else (said[-1] if said else f"exit code {done.returncode}")
        raise RooflineError(f"the program failed under ncu: {' '.join(command)[:200]} ({why[:300]})")
    if any(_NO_KERNEL in line for line in said) or not report.is_file():
        which = f" matching --kernel {kernel!r}" if kernel is not None else ""
        raise RooflineError(f"the program ran no kernel{which}: Nsight Compute profiled none ({' '.join(command)[:200]})")
    _export(runner, [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"], export)
    result = roofline.profile_report(export, gpu=gpu, binary=binary)
    return ProfileRun(report_path=str(report), csv_path=str(export), command=tuple(["ncu", *profile[1:]]),
                      report=result)
