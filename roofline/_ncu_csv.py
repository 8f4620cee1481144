"""The CSV route of `roofline.load_ncu`: the raw page ``ncu --import X.ncu-rep --csv --page raw`` prints.

Any ``--print-units``, and re-written by hand, a spreadsheet or pandas: columns are found by
name, each block with its units row (`_csv_rows`); each row goes through the one metric
reader, `roofline._ncu_metrics.read_kernel`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from ._errors import RooflineError
from ._ncu_metrics import Reader, read_kernel, unit_factor
from ._ncu_records import NcuProfile
from ._ncu_report import cross_checks

__all__ = ["load_csv"]

_NVTX_PUSH_POP = "thread Domain:Push/Pop_Range"
_NVTX_START_END = "Id:Domain:Start/Stop_Range"


def _nvtx_names(cell: str, skip: int) -> list[str]:
    """Range names in one NVTX cell: each quoted ``domain:range:6 more fields`` entry."""
    names = []
    for entry in re.findall(r'"([^"]*)"', cell):
        parts = entry.split(":")
        if len(parts) >= skip + 7:
            names.append(":".join(parts[skip:-6]))
    return names


def _cells(line: str) -> list[str]:
    """One line as CSV cells (a line that is not CSV, program output, gives what csv makes of it)."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return []


def _is_header(cells: list[str]) -> bool:
    names = {c.strip() for c in cells}
    return "ID" in names and "Kernel Name" in names


class _Table:
    """The rows of a raw-page export, each with the units its block declared, and what was checked."""

    def __init__(self) -> None:
        self.rows: list[tuple[dict[str, str], dict[str, str], int]] = []  # cells, units, line
        self.checks: list[str] = []
        self.header: list[str] = []


def _unit_of(units: dict[str, str] | None, name: str) -> str:
    return units.get(name, "") if units else ""


def _same_unit(a: str, b: str) -> bool:
    if a.strip() == b.strip():
        return True
    try:
        return unit_factor(a) == unit_factor(b) and bool(a.strip()) == bool(b.strip())
    except ValueError:
        return False


def _csv_rows(path: Path, text: str) -> _Table:
    """The table of a raw-page export, however it was re-written.

    Nsight writes every cell quoted, the "ID" and "Kernel Name" columns first and one
    units row; a file re-written by a spreadsheet or pandas may quote only where needed,
    reorder the columns, keep a subset of the rows, add an index column, or hold two
    exports one after the other (each with its header and units row). Columns are found
    by name in each block's header; a units row is the row whose ID and kernel name are
    empty. Two blocks that print one metric in different units are refused.
    """
    lines = text.splitlines()
    # A CSV printed while profiling (``ncu --csv ... > out.csv``) carries ==PROF== and the
    # program's own lines before the table; the table starts at the header naming "ID"
    # and "Kernel Name".
    start = next((i for i, line in enumerate(lines) if "ID" in line and "Kernel Name" in line
                  and _is_header(_cells(line))), None)
    if start is None:
        first = lines[0][:120] if lines else ""
        raise RooflineError(
            f"{path} is not an Nsight Compute CSV export (no \"ID\",\"Kernel Name\" header; first line: {first!r}); "
            "export one with: ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
    kept = [(n, line) for n, line in enumerate(lines[start:], start=start + 1) if not line.startswith("==")]
    # strict: a quoted cell left open at the end (a file cut inside it) is an error, not a short value
    reader = csv.reader(io.StringIO("\n".join(line for _, line in kept)), strict=True)
    table = _Table()
    header: list[str] = []
    units: dict[str, str] | None = None
    seen_units: dict[str, tuple[str, int]] = {}
    blocks = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            number = kept[min(reader.line_num, len(kept)) - 1][0]
            raise RooflineError(f"{path}: line {number} is not well-formed CSV ({exc}); "
                                "the file looks truncated or edited") from None
        number = kept[reader.line_num - 1][0] if reader.line_num - 1 < len(kept) else len(lines)
        if not row or (len(row) == len(header) and not any(cell.strip() for cell in row)):
            continue  # blank lines, and the empty rows a spreadsheet leaves
        if _is_header(row):
            header, units, blocks = [c.strip() for c in row], None, blocks + 1
            if "Metric Name" in header and "Metric Value" in header:
                raise RooflineError(
                    f"{path} is an Nsight Compute --page details export; gpuroof reads the raw page: "
                    "ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
            table.header = header
            continue
        if len(row) != len(header):
            raise RooflineError(
                f"{path}: line {number} has {len(row)} of the header's {len(header)} columns; "
                "the file looks truncated or edited")
        cells = dict(zip(header, row))
        if not cells["ID"].strip() and not cells["Kernel Name"].strip():
            units = cells
            for name, unit in cells.items():
                if name in ("ID", "Kernel Name"):
                    continue
                if name in seen_units and not _same_unit(seen_units[name][0], unit):
                    first, line = seen_units[name]
                    raise RooflineError(
                        f"{path} mixes units: {name} is in {first or 'no unit'!r} on line {line} and in "
                        f"{unit or 'no unit'!r} on line {number}; re-export the profile once with one "
                        "--print-units (ncu --import PROFILE.ncu-rep --csv --page raw --print-units base)")
                seen_units.setdefault(name, (unit, number))
            continue
        table.rows.append((cells, units or {}, number))
        if units is None and seen_units:
            raise RooflineError(
                f"{path}: the rows from line {number} have no units row, unlike those before; "
                "the file joins exports whose units cannot be told apart")
    if not table.rows:
        raise RooflineError(f"{path} holds no profiled kernel (a header and no rows)")
    if not seen_units:
        table.checks.append("no units row: every value read in base units (byte, second, hertz; "
                            "what --print-units base prints)")
    if blocks > 1:
        table.checks.append(f"{blocks} exports joined, in the same units")
    return table


def load_csv(path: Path) -> NcuProfile:
    data = path.read_bytes()
    if not data.strip():
        raise RooflineError(f"{path} is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RooflineError(f"{path} is not a text file; give an ncu --csv --page raw export or a .ncu-rep") from None
    table = _csv_rows(path, text)
    _check_metric_names(path, table.header)
    kernels = []
    for cells, units, number in table.rows:
        def get(name: str, cells: dict[str, str] = cells, units: dict[str, str] = units) -> tuple[str, str] | None:
            value = cells.get(name)
            return None if value is None else (value, _unit_of(units, name))

        index_text = cells["ID"]
        try:
            figure = float(index_text.replace(",", ""))
        except ValueError:
            figure = math.nan
        # "inf" or "1e400" overflowed int() (OverflowError); "1.5" read as kernel 1.
        if not (math.isfinite(figure) and figure.is_integer()):
            raise RooflineError(f"{path}: line {number}: kernel ID {index_text!r} is not an integer")
        index = int(figure)
        nvtx = []
        for column, skip in ((_NVTX_PUSH_POP, 1), (_NVTX_START_END, 2)):
            for name, cell in cells.items():
                if name.startswith(column):
                    nvtx += _nvtx_names(cell, skip)
        kernels.append(read_kernel(Reader(get, str(path)), index=index, demangled=cells["Kernel Name"],
                               nvtx="/".join(nvtx) or None, missing_cc=cells.get("CC")))
    checks = table.checks + cross_checks(path, kernels, ends_with_newline=text.endswith(("\n", "\r")))
    return NcuProfile(path=str(path), format="csv", kernels=tuple(kernels), checks=tuple(checks))


# Metrics every export of the sections gpuroof asks for holds, under Nsight Compute 2025.3's
# names; an export with none of them comes from a version that names them otherwise.
_CORE_METRICS = ("gpu__time_duration.sum", "launch__registers_per_thread", "launch__grid_size",
                 "launch__block_size", "sm__cycles_elapsed.avg.per_second", "dram__bytes.sum.per_second")


def _check_metric_names(path: Path, header: list[str]) -> None:
    metrics = [name for name in header if "__" in name]
    if metrics and not any(name in header for name in _CORE_METRICS):
        raise RooflineError(
            f"{path} holds {len(metrics)} metrics but none of those gpuroof reads "
            f"({', '.join(_CORE_METRICS[:3])}, ...): "
            "an export of another Nsight Compute version, which names them otherwise (gpuroof reads the names of "
            "Nsight Compute 2025.3, whose sections NCU_SECTIONS lists)")
