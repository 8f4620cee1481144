"""Reading Nsight Compute profiles: `load_ncu`, one frozen `NcuKernel` per profiled launch.

Two routes: the CSV that ``ncu --import X.ncu-rep --csv --page raw`` writes (any
``--print-units``; `roofline._ncu_csv`), and the ``.ncu-rep`` file itself through NVIDIA's
``ncu_report`` module (Nsight Compute's ``extras/python``; `roofline._ncu_report`) when it
can be imported. Both read each kernel's metrics through one adapter,
`roofline._ncu_metrics.read_kernel`; the SASS comes from a binary or the report's source page.
"""

from __future__ import annotations

import os
from pathlib import Path

from occupancy.common import as_path

from ._errors import RooflineError
from ._ncu_binary import binary_sass
from ._ncu_csv import load_csv
from ._ncu_records import NCU_SECTIONS, NcuKernel, NcuProfile, short_kernel_name
from ._ncu_report import load_report
from ._ncu_sass import report_sass

__all__ = ["NCU_SECTIONS", "NcuKernel", "NcuProfile", "load_ncu", "short_kernel_name"]


def _with_sass(profile: NcuProfile, file: Path, binary: str | os.PathLike[str] | None) -> NcuProfile:
    """Each kernel with its SASS (`roofline._ncu_sass`): from `binary`, else the report's source page;
    the profile's checks say where it came from, or why there is none, once."""
    profile = _read_sass(profile, file, binary)
    sources = sorted({k.sass_source for k in profile.kernels if k.sass_source})
    with_sass = sum(1 for k in profile.kernels if k.sass is not None)
    line = f"SASS for {with_sass} of {len(profile.kernels)} kernels: " + "; ".join(sources)
    return profile.model_copy(update={"checks": (*profile.checks, line)})


def _read_sass(profile: NcuProfile, file: Path, binary: str | os.PathLike[str] | None) -> NcuProfile:
    kernels = profile.kernels
    if binary is not None:
        found = binary_sass(as_path(binary, RooflineError, "binary"), kernels, short_kernel_name)
        updated = [k.model_copy(update={"sass": sass, "sass_source": why}) for k, (sass, why) in zip(kernels, found)]
        return profile.model_copy(update={"kernels": tuple(updated)})
    report = file if file.suffix == ".ncu-rep" else file.with_suffix(".ncu-rep")
    if not report.is_file():
        why = (f"no SASS: no {report.name} beside the export to read its source page from; "
               "name the program (binary=, gpuroof ncu --binary APP)")
        return profile.model_copy(update={"kernels": tuple(k.model_copy(update={"sass_source": why}) for k in kernels)})
    sass, why = report_sass(report, {k.id: k.arch for k in kernels})
    updated = [k.model_copy(update={"sass": None if sass is None else sass.get(k.id), "sass_source": why})
               for k in kernels]
    return profile.model_copy(update={"kernels": tuple(updated)})


def load_ncu(path: str | os.PathLike[str], *, binary: str | os.PathLike[str] | None = None) -> NcuProfile:
    """Read an Nsight Compute profile: one `NcuKernel` per profiled launch.

    Parameters
    ----------
    path : str or path
        The CSV that ``ncu --import PROFILE.ncu-rep --csv --page raw`` prints (any
        ``--print-units``; ==PROF== lines and program output before the table are skipped),
        or a ``.ncu-rep`` file, read through NVIDIA's ``ncu_report`` module when it can be
        imported. Collect the sections in `NCU_SECTIONS`; without one, the fields it supplies
        are None and listed in each kernel's ``missing``.
    binary : str or path, optional
        The program (executable, shared library, fatbin or cubin) whose kernels were
        profiled: each kernel's SASS is read from it (`occupancy.all_kernel_resources`),
        the function found by its mangled, demangled or short name (template instances
        told apart by their registers and static shared memory where the short name is all
        the profile holds; docs/measure.md). A kernel the binary lacks has no SASS and its
        ``sass_source`` names what the binary holds. Without it, the SASS comes from the report's source page (the ``.ncu-rep`` given,
        or the one of the same name beside a CSV; ``ncu`` on PATH prints it). Each
        kernel's ``sass_source`` says where its SASS came from, or why it has none.

    Returns
    -------
    NcuProfile

    A CSV re-written by hand, a spreadsheet or pandas reads the same: any quoting, the
    columns in any order or a subset of them, an index column, a subset of the rows in any
    order, two exports joined (each with its header and units row). ``NcuProfile.checks``
    says what was cross-checked and assumed: whether the kernel IDs run from 0 without a gap
    (else a subset), and whether the file may be cut. A CSV holds no kernel count, so a file
    cut after a whole row cannot be told from a shorter profile; it is caught when the
    ``.ncu-rep`` of the same name lies beside it (and ``ncu_report`` imports), and named
    when the file does not end with Nsight's final line break.

    Raises
    ------
    RooflineError
        A missing or empty file, a file that is not an Nsight Compute raw-page export (a
        details-page export, another tool's CSV), a CSV cut inside a row or shorter than the
        ``.ncu-rep`` beside it, one that mixes units (the metric and both units named) or
        repeats a kernel ID, an export of another Nsight Compute version (none of the metric
        names gpuroof reads), an unknown unit, or a ``.ncu-rep`` without ``ncu_report`` (or
        that its ``ncu_report`` cannot read), or a ``binary`` that holds none of the
        profiled kernels; the message names the file.

    Examples
    --------
    >>> import roofline
    >>> profile = roofline.load_ncu("tests/data/ncu/torch_roofline.raw.csv")
    >>> k = profile.kernels[0]
    >>> k.name, k.nvtx_range, k.grid, k.registers_per_thread
    ('nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT', 'matmul_bf16', (2, 66, 1), 168)
    >>> round(k.flops["bf16_tensor"] / 2 / 4096**3, 3)
    1.0
    """

    file = as_path(path, RooflineError)
    if file.is_dir():
        raise RooflineError(f"path={str(file)!r} is a folder, not a file: give the raw-page CSV export or the .ncu-rep")
    if not file.is_file():
        raise RooflineError(f"path={str(file)!r}: no such file")
    profile = load_report(file) if file.suffix == ".ncu-rep" else load_csv(file)
    return _with_sass(profile, file, binary)
