"""The corpus's measurement files: other projects' kernels, timed and profiled on a GPU.

One file per project and GPU, ``corpus/measurements/<gpu>/<project>.json`` (a
`CorpusProject`): the project's name, address, commit and license, and per kernel its
category, the SASS summary of the cubin that ran, and every launch with its shape, grid,
block, the CUDA-event duration (L2 scrubbed, median of repeats, the spread), the SM and
memory clocks read while it ran, and Nsight Compute's metrics of the same launch
(``--clock-control none --print-units base``; the metrics `CORPUS_METRICS` names, with
their units once per file). Figures only: no code, binary or SASS listing of the other
projects.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from occupancy import SassSummary
from occupancy.common import as_path, dumps_json, pydantic_error, read_json, write_atomic
from roofline import RooflineError
from roofline.memory import WARP_SIZE

__all__ = [
    "CORPUS_METRICS",
    "CorpusKernel",
    "CorpusLaunch",
    "CorpusProject",
    "corpus_gpus",
    "corpus_metrics",
    "load_corpus",
    "write_corpus_project",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Where the measurements live: one folder per GPU (the facts file's name).
_DIRECTORY = Path(__file__).parent / "measurements"

#: The Nsight Compute metrics a corpus file keeps (regular expressions, whole names): what
#: `load_ncu` reads, and the instruction counts (InstructionStats, the memory tables) the
#: profile path and the time model need. A raw page holds ~1300 metrics per launch.
CORPUS_METRICS: tuple[str, ...] = (
    r"Kernel Name", r"Block Size", r"Grid Size", r"CC",
    r"launch__(grid|block|cluster)_dim_[xyz]",
    r"launch__(registers_per_thread|shared_mem_per_block_(static|dynamic|driver)"
    r"|shared_mem_config_size|barrier_count|sm_count|waves_per_multiprocessor|occupancy_limit_\w+)",
    r"device__attribute_(compute_capability_(major|minor)|display_name|multiprocessor_count)",
    r"gpu__time_duration\.sum", r"(sm|smsp|dram|lts)__cycles_elapsed\.avg\.per_second",
    r"sm__maximum_warps_per_active_cycle_pct", r"sm__warps_active\.avg\.pct_of_peak_sustained_active",
    r"dram__bytes(_read|_write)?\.sum(\.per_second)?", r"lts__lts2xbar_cycles_active\.sum\.per_second",
    r"l1tex__lsu_writeback_active_mem_lgds?\.sum\.per_second", r"lts__t_(sectors|requests)_srcunit_tex(_op_(read|write|atom|red))?\.sum",
    r"smsp__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on\.sum\.per_cycle_elapsed",
    r"sm__ops_path_tensor_src_\w+\.sum\.per_cycle_elapsed",
    r"(sm|smsp)__inst_(executed|issued)\.sum", r"inst_executed", r"smsp__thread_inst_executed(_pred_on)?\.sum",
    r"(sm|smsp)__sass_inst_executed_op_\w+\.sum", r"l1tex__t_(sectors|requests)_pipe_lsu_mem_global_op_\w+\.sum",
    r"l1tex__data_pipe_lsu_wavefronts(_mem_shared(_op_(ld|st))?)?\.sum", r"l1tex__data_bank_conflicts_pipe_lsu_mem_shared\.sum",
    r"l1tex__t_(sectors|requests)_pipe_lsu_mem_(global|local)_op_(ld|st|atom|red)\.sum",
    r"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit\.sum", r"l1tex__m_xbar2l1tex_read_sectors\.sum",
    r"lts__t_sectors_srcunit_tex_lookup_hit\.sum", r"smsp__inst_executed_pipe_\w+\.sum", r"(sm|smsp)__cycles_active\.avg",
    r"smsp__average_warps_issue_stalled_\w+_per_issue_active\.ratio",
)
_KEEP = re.compile("|".join(f"(?:{m})" for m in CORPUS_METRICS))


def corpus_metrics(row: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of one profiled launch (metric name -> anything) that a corpus file keeps."""
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a mapping of metric names, not {type(row).__name__}")
    return {name: value for name, value in row.items() if isinstance(name, str) and _KEEP.fullmatch(name)}


class CorpusLaunch(BaseModel):
    """One launch of a corpus kernel: its shape, the measured duration and Nsight's metrics (SI units)."""

    model_config = _FROZEN

    shape: str = Field(min_length=1, description='Problem shape and block, e.g. "n=4096 block=32x8".')
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared_memory: int = Field(default=0, ge=0, description="Bytes per block.")
    build_defines: tuple[str, ...] = Field(default=(), description="The project's tunables this build set.")
    duration_median_seconds: float = Field(gt=0, description="CUDA events, L2 scrubbed, median of repeats.")
    duration_spread: float = Field(ge=0, description="Interquartile range over the median.")
    repetitions: int = Field(ge=1)
    sm_clock_hz: float | None = Field(default=None, gt=0, description="Median SM clock while timed (NVML).")
    memory_clock_hz: float | None = Field(default=None, gt=0)
    throttled: bool | None = None
    buffer_bytes: int | None = Field(
        default=None, ge=0, description="Bytes of the device buffers the launch was given (each moved once: the "
                                        "compulsory traffic a user reads off the source).")
    ncu: dict[str, float | str] = Field(
        description="Nsight Compute raw-page metrics of this launch (the `CORPUS_METRICS`), in the project's "
                    "ncu_units.")

    @property
    def blocks(self) -> int:
        """Blocks of the grid."""
        return math.prod(self.grid)

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    @property
    def warps(self) -> int:
        """Warps of the whole launch (a partial warp counts)."""
        return self.blocks * -(-self.threads_per_block // WARP_SIZE)


class CorpusKernel(BaseModel):
    """One kernel of a project and its launches."""

    model_config = _FROZEN

    id: str = Field(min_length=1, description='"project/kernel", unique in the corpus.')
    name: str = Field(min_length=1, description="Function name (template arguments included).")
    category: str = Field(min_length=1)
    source: str = Field(default="", description="The file in the project that defines it.")
    note: str = ""
    symbol: str = Field(default="", description="The symbol that ran (mangled for C++).")
    registers_per_thread: int | None = Field(default=None, ge=0, le=255)
    sass: SassSummary | None = Field(default=None, description="Summary of the SASS that ran (figures only).")
    launches: tuple[CorpusLaunch, ...] = Field(min_length=1)

    @property
    def short_id(self) -> str:
        """The id without its project: the key of the kernel's access description."""
        return self.id.split("/", 1)[-1]


class CorpusProject(BaseModel):
    """Every measured kernel of one project on one GPU."""

    model_config = _FROZEN

    project: str = Field(min_length=1)
    url: str = Field(min_length=1)
    commit: str = Field(min_length=1)
    license: str = Field(min_length=1)
    gpu: str = Field(min_length=1, description="The device name the driver reported.")
    nsight_compute: str = Field(default="", description="``ncu --version`` of the profiles.")
    ncu_units: dict[str, str] = Field(
        default_factory=dict, description="Each metric's unit as ``ncu --print-units base`` printed it.")
    launch_overhead_seconds: float | None = Field(default=None, gt=0, description=(
        "The empty kernel's time (validate's launch probe: CUDA events behind a spin kernel) measured in the "
        "session that timed these launches, before and after them (mean): the launch cost their durations "
        "hold. None: the GPU's packaged calibration stands in for it."))
    timing_session: str = Field(default="", description="When and how the durations were timed.")
    kernels: tuple[CorpusKernel, ...] = Field(min_length=1)


# ---------------------------------------------------------------------------------------
# files


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_corpus_project(project: CorpusProject, directory: str | os.PathLike[str]) -> Path:
    """Write ``directory/<project>.json`` atomically; returns the path."""
    if not isinstance(project, CorpusProject):
        raise TypeError(f"project must be a CorpusProject, not {type(project).__name__}")
    return write_atomic(as_path(directory, RooflineError, "directory") / f"{_slug(project.project)}.json",
                        dumps_json(project.model_dump(mode="json")), RooflineError, "directory")


def corpus_gpus(directory: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The GPUs with measurements: the folders of ``directory`` (default ``corpus/measurements``)."""
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.json"))))


def load_corpus(gpu: str, *, project: str | None = None,
                directory: str | os.PathLike[str] | None = None) -> tuple[CorpusProject, ...]:
    """Read the corpus of one GPU.

    Parameters
    ----------
    gpu : str
        Folder name under ``directory`` (the facts file's name: ``"h200"``, ``"h100-sxm"``).
    project : str, optional
        Only this project (its name, case-insensitive).
    directory : path, optional
        The measurements' root (default ``corpus/measurements``); ``directory/<gpu>/*.json``.

    Raises
    ------
    RooflineError
        No measurements for ``gpu``, no such project, or a file that is not a `CorpusProject`.
    """
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a str (a folder of the corpus), not {type(gpu).__name__}")
    if project is not None and not isinstance(project, str):
        raise TypeError(f"project must be a str, not {type(project).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    if not gpu or gpu != Path(gpu).name:
        raise RooflineError(f"gpu={gpu!r} is not a corpus folder name; measured GPUs: "
                            f"{', '.join(corpus_gpus(root)) or 'none'}")
    folder = root / gpu
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        known = ", ".join(corpus_gpus(root)) or "none"
        raise RooflineError(f"gpu={gpu!r} has no corpus measurements under {root}; measured GPUs: {known}")
    projects = []
    for path in files:
        data = read_json(path, RooflineError)
        try:
            projects.append(CorpusProject.model_validate(data))
        except ValidationError as exc:
            raise pydantic_error(exc, RooflineError, f"{path}") from None
    if project is not None:
        chosen = tuple(p for p in projects if p.project.lower() == project.lower())
        if not chosen:
            names = ", ".join(p.project for p in projects)
            raise RooflineError(f"project={project!r} is not in the {gpu} corpus; projects: {names}")
        return chosen
    return tuple(projects)

