"""The ``.ncu-rep`` route of `roofline.load_ncu` (NVIDIA's ``ncu_report`` module), and the kernel-ID
checks both routes make (a CSV's kernels counted against the report beside it)."""

from __future__ import annotations

import glob
import importlib
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ._errors import RooflineError
from ._ncu_metrics import Reader, read_kernel
from ._ncu_records import NcuKernel, NcuProfile

__all__ = ["cross_checks", "load_report", "ncu_report_module", "report_count"]


def _ranges(ids: list[int]) -> str:
    out, start = [], None
    for i, n in enumerate(ids):
        if start is None:
            start = n
        if i + 1 == len(ids) or ids[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def cross_checks(path: Path, kernels: list[NcuKernel], *, ends_with_newline: bool) -> list[str]:
    """What the kernel IDs say: duplicates refused; gaps, a start past 0 and a possible cut stated.

    Nsight numbers the profiled launches 0, 1, 2, ... in a report; an export of the whole
    report holds them all, in order. A CSV carries no kernel count, so a file cut after a
    whole row reads as a shorter profile: the last line says so when the file does not
    end with the line break Nsight writes, and otherwise the count is checked against the
    ``.ncu-rep`` beside the file when one is there and ``ncu_report`` imports.
    """
    seen: dict[int, int] = {}
    for position, k in enumerate(kernels):
        if k.id in seen:
            raise RooflineError(f"{path}: kernel ID {k.id} appears twice (rows {seen[k.id] + 1} and {position + 1}): "
                                "two exports of different profiles joined? keep one")
        seen[k.id] = position
    ids = sorted(seen)
    checks = []
    holes = sorted(set(range(ids[0], ids[-1] + 1)) - set(ids))
    if ids[0] != 0 or holes:
        checks.append(f"kernel IDs {_ranges(ids)}: a subset of the profile's launches"
                      + (f" ({len(holes)} missing between them)" if holes else ""))
    else:
        checks.append(f"kernel IDs 0-{ids[-1]} without a gap")
    if [k.id for k in kernels] != sorted(seen):
        checks.append("rows not in kernel ID order (kept in the file's order)")
    if not ends_with_newline:
        checks.append(f"the file does not end with a line break, as Nsight's exports do: it may be cut after "
                      f"kernel ID {kernels[-1].id}")
    if path.suffix == ".ncu-rep":
        return checks  # the report itself: every launch it holds
    report = path.with_suffix(".ncu-rep")
    counted = report_count(report) if report.is_file() else None
    if counted is not None:
        if counted > len(kernels) and not holes and ids[0] == 0:
            raise RooflineError(f"{path} holds {len(kernels)} kernels, {report.name} beside it {counted}: "
                                f"the CSV is cut after kernel ID {ids[-1]}; export it again")
        checks.append(f"{len(kernels)} of the {counted} kernels of {report.name}")
    elif ends_with_newline:
        checks.append("a CSV export holds no kernel count: a file cut after a whole row would read as a "
                      "shorter profile (keep the .ncu-rep beside it to have the count checked)")
    return checks


def report_count(report: Path) -> int | None:
    """Kernels in a ``.ncu-rep``, where NVIDIA's ``ncu_report`` reads it (else None)."""
    module = ncu_report_module()
    if module is None:
        return None
    try:
        context = module.load_report(str(report))
        return sum(context.range_by_idx(r).num_actions() for r in range(context.num_ranges()))
    except Exception:  # noqa: BLE001 - ncu_report raises its own types; no count is no check
        return None




def ncu_report_module() -> ModuleType | None:
    """Import NVIDIA's ``ncu_report``, looking in the Nsight Compute installations found."""
    try:
        import ncu_report  # type: ignore[import-not-found]

        return ncu_report
    except ImportError:
        pass
    places = []
    ncu = shutil.which("ncu")
    if ncu:
        places.append(Path(ncu).resolve().parent / "extras" / "python")
    places += [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)]
    places += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True)]
    for place in places:
        if (place / "ncu_report.py").is_file():
            sys.path.append(str(place))
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(str(place))
    return None


def _report_unit(name: str) -> str:
    """The base unit ``ncu_report`` gives a metric gpuroof reads in (what ``--print-units base`` prints)."""
    if name.startswith("gpu__time_duration"):
        return "ns"
    if "pct" in name:
        return "%"
    return ""


def _mangled_name(action: Any, module: ModuleType) -> str | None:
    """The kernel's symbol as the report keeps it; None where this ncu_report cannot say."""
    try:
        return action.name(module.IAction.NameBase_MANGLED) or None
    except Exception:  # noqa: BLE001 - ncu_report raises its own types
        return None


def load_report(path: Path) -> NcuProfile:
    module = ncu_report_module()
    if module is None:
        raise RooflineError(
            f"reading {path} needs NVIDIA's ncu_report module (Nsight Compute's extras/python, not found "
            "on PYTHONPATH or next to ncu); or export it: ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
    try:
        context = module.load_report(str(path))
    except Exception as exc:  # noqa: BLE001 - ncu_report raises its own types
        raise RooflineError(f"{path} could not be read by the ncu_report module found ({exc}); a report written by "
                            "another Nsight Compute version reads with that version's ncu, or export it there: "
                            "ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv") from None
    kernels = []
    for r in range(context.num_ranges()):
        profiled = context.range_by_idx(r)
        for a in range(profiled.num_actions()):
            action = profiled.action_by_idx(a)
            names = set(action.metric_names())

            def get(name: str, action: Any = action, names: set[str] = names) -> tuple[str | float, str] | None:
                if name not in names:
                    return None
                # IMetric.unit() crashed the interpreter (ncu_report of Nsight Compute 2025.3.1,
                # Python 3.12); values come in base units, which are fixed per metric.
                return action.metric_by_name(name).value(), _report_unit(name)

            nvtx = []
            try:
                state = action.nvtx_state()
                for domain_id in state.domains():
                    domain = state.domain_by_id(domain_id)
                    nvtx += list(domain.push_pop_ranges()) + list(domain.start_end_ranges())
            except Exception:  # noqa: BLE001 - profiles taken without --nvtx have no state
                nvtx = []
            kernel_id = get("ID")
            kernels.append(read_kernel(Reader(get, str(path)),
                                   index=len(kernels) if kernel_id is None else int(kernel_id[0]),
                                   demangled=action.name(module.IAction.NameBase_DEMANGLED),
                                   mangled=_mangled_name(action, module),
                                   nvtx="/".join(nvtx) or None, missing_cc=None))
    if not kernels:
        raise RooflineError(f"{path} holds no profiled kernel")
    checks = cross_checks(path, kernels, ends_with_newline=True)
    return NcuProfile(path=str(path), format="ncu-rep", kernels=tuple(kernels), checks=tuple(checks))
