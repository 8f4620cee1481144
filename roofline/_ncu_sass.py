"""Each profiled kernel's SASS, for `load_ncu`: from the profile or from a binary the user names.

Three sources, tried in this order, all read by the one SASS reader of the source path
(`occupancy.read_sass` / `occupancy.all_kernel_resources`, whose `occupancy.SassSummary`
`predict` takes through the launch's resources):

* a binary named with ``binary=`` (an executable, shared library, fatbin or cubin):
  `occupancy.all_kernel_resources` reads its cubin for the profiled architecture with
  nvdisasm, and each profiled kernel takes its function (`roofline._ncu_binary`);
* the ``.ncu-rep`` (the file given, or the report of the same name beside a CSV export):
  Nsight Compute's source page, ``ncu --import R.ncu-rep --page source --print-source sass
  --csv``, one table of ``Address`` and ``Source`` per profiled kernel, in the profile's
  order (Nsight keeps the SASS of every profiled kernel in the report);
* none: the kernel's ``sass`` is None and ``sass_source`` says why.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from pathlib import Path

import occupancy
from occupancy import SassSummary

from ._errors import RooflineError

__all__ = ["SOURCE_PAGE_COMMAND", "report_sass", "source_page_sass"]

#: The command that prints a report's SASS (the report's path follows ``--import``).
SOURCE_PAGE_COMMAND = ("ncu", "--import", "{report}", "--page", "source", "--print-source", "sass", "--csv")
# Reading a report's source page takes seconds; minutes mean ncu hangs.
_TIMEOUT_SECONDS = 300
_HEX = re.compile(r"^(?:0x)?([0-9a-fA-F]+)$")
_ADDRESS_OPERAND = re.compile(r"\b0x([0-9a-fA-F]+)\b")


def source_page_sass(text: str, architectures: dict[int, str | None], where: str) -> dict[int, SassSummary]:
    """The SASS of the kernels of a source-page export (``--page source --print-source sass --csv``).

    Each kernel's table starts at a header naming the ``Address`` and ``Source`` columns, in
    the report's order (the n-th table is the kernel of ID n); addresses are absolute
    (hexadecimal), and so are branch targets: both are taken from the table's first
    address, and the table is handed to `occupancy.read_sass` as a ``cuobjdump -sass``
    listing.

    Parameters
    ----------
    text : str
        What ncu printed.
    architectures : dict
        Kernel ID -> its SASS architecture (``"sm_90"``), for the kernels wanted.
    where : str
        The report, for messages.

    Raises
    ------
    RooflineError
        When the export holds no table for a kernel wanted.
    """
    tables: list[list[tuple[int, str]]] = []
    columns: tuple[int, int] | None = None
    for line in text.splitlines():
        if line.startswith("=="):
            continue
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:
            continue
        # "Address" or "# Address", and "Source": the columns are found by name
        names = [c.strip().lstrip("#").strip().lower() for c in cells]
        if "address" in names and "source" in names:
            columns = (names.index("address"), names.index("source"))
            tables.append([])
            continue
        if columns is None or len(cells) <= max(columns):
            continue
        address = _HEX.match(cells[columns[0]].strip())
        if address and cells[columns[1]].strip():
            tables[-1].append((int(address[1], 16), cells[columns[1]].strip()))
    wanted = sorted(architectures)
    if not tables or not wanted or wanted[-1] >= len(tables) or not all(tables[i] for i in wanted):
        raise RooflineError(f"{where}: the source page holds SASS for {len(tables)} kernels, not for kernel IDs "
                            f"{wanted[0] if wanted else '-'}-{wanted[-1] if wanted else '-'} (read as Nsight Compute "
                            "2025.3 prints it: a table with 'Address' and 'Source' columns per kernel)")
    out = {}
    for i in wanted:
        rows, arch = tables[i], architectures[i]
        if arch is None:
            raise RooflineError(f"{where}: kernel {i} has no architecture in the profile to read its SASS for")
        base, last = rows[0][0], rows[-1][0]

        def relative(match: re.Match[str], base: int = base, last: int = last) -> str:
            value = int(match[1], 16)
            return f"0x{value - base:x}" if base <= value <= last + 16 else match[0]

        listing = [f"Function : kernel{i}"]
        for address, source in rows:
            body = source.rstrip(" ;")
            words = body.split()
            opcode = words[1] if body.startswith("@") and len(words) > 1 else words[0]
            if opcode.split(".", 1)[0] in ("BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "BSSY", "CALL"):
                body = _ADDRESS_OPERAND.sub(relative, body)
            listing.append(f"/*{address - base:04x}*/ {body} ;")
        out[i] = occupancy.read_sass("\n".join(listing), arch, tool="Nsight Compute source page")[f"kernel{i}"]
    return out


def report_sass(report: Path, architectures: dict[int, str | None]) -> tuple[dict[int, SassSummary] | None, str]:
    """Each kernel's SASS from a report's source page through ``ncu``; (None, why) where it cannot be had."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return None, f"no SASS: reading {report.name}'s source page needs ncu on PATH"
    command = [ncu if part == "ncu" else str(report) if part == "{report}" else part for part in SOURCE_PAGE_COMMAND]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"no SASS: {' '.join(command[1:])} failed ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [f"exit {done.returncode}"]
        return None, f"no SASS: ncu could not print {report.name}'s source page ({last[0][:200]})"
    try:
        found = source_page_sass(done.stdout, architectures, str(report))
    except RooflineError as exc:  # a page laid out otherwise: no SASS, said, rather than no profile
        return None, f"no SASS: {exc}"
    return found, f"{report.name} (Nsight Compute source page)"
