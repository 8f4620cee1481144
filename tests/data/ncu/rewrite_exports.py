"""Re-write a raw-page export as a user might (tests of roofline.load_ncu on re-written files).

``python tests/data/ncu/rewrite_exports.py`` writes, from ``user_kernels.raw.csv`` and the
two unit variants of ``torch_roofline``, keeping the columns gpuroof reads:

* ``user_kernels.requoted.csv``: quoted only where needed, an index column first (pandas'
  ``to_csv``), numbers without thousands separators;
* ``user_kernels.reordered.csv``: the columns in reverse order, the rows too;
* ``user_kernels.subset.csv``: the kernels with IDs 1 and 3 only;
* ``torch_mixed_units.csv``: two kernels of the default-units export followed by two of
  the base-units export, each with its header and units row (two exports joined).
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

import roofline  # noqa: E402
from roofline import _ncu_metrics  # noqa: E402


def _read(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    rows = list(csv.reader(path.open(newline="")))
    return rows[0], rows[1], rows[2:]


def _read_columns(path: Path) -> list[str]:
    """The columns load_ncu asks for (and the identifying ones), in the file's order."""
    asked: set[str] = set()
    original = _ncu_metrics.Reader.__init__

    def spy(self, get, where):
        def recording(name):
            asked.add(name)
            return get(name)
        original(self, recording, where)

    _ncu_metrics.Reader.__init__ = spy
    try:
        roofline.load_ncu(path)
    finally:
        _ncu_metrics.Reader.__init__ = original
    header = _read(path)[0]
    keep = {"ID", "Kernel Name", "CC", "Block Size", "Grid Size"} | asked
    return [h for h in header if h in keep or h.startswith(("thread Domain", "Id:Domain"))]


def _project(path: Path, columns: list[str]) -> tuple[list[str], list[str], list[list[str]]]:
    header, units, body = _read(path)
    index = [header.index(c) for c in columns]
    return columns, [units[i] for i in index], [[r[i] for i in index] for r in body]


def _text(rows: list[list[str]], quoting: int = csv.QUOTE_ALL) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=quoting, lineterminator="\n").writerows(rows)
    return out.getvalue()


def main() -> None:
    user = HERE / "user_kernels.raw.csv"
    header, units, body = _project(user, _read_columns(user))

    plain = [[c.replace(",", "") if c.replace(",", "").replace(".", "", 1).isdigit() else c for c in r] for r in body]
    requoted = [["", *header], ["", *units]] + [[str(i), *r] for i, r in enumerate(plain)]
    (HERE / "user_kernels.requoted.csv").write_text(_text(requoted, csv.QUOTE_MINIMAL))

    reordered = [header[::-1], units[::-1]] + [r[::-1] for r in body[::-1]]
    (HERE / "user_kernels.reordered.csv").write_text(_text(reordered))

    subset = [header, units] + [r for r in body if r[header.index("ID")] in ("1", "3")]
    (HERE / "user_kernels.subset.csv").write_text(_text(subset))

    torch, base = HERE / "torch_roofline.raw.csv", HERE / "torch_roofline.raw_base.csv"
    columns = _read_columns(torch)
    a_header, a_units, a_body = _project(torch, columns)
    b_header, b_units, b_body = _project(base, columns)
    mixed = [a_header, a_units, *a_body[:2], b_header, b_units, *b_body[2:4]]
    (HERE / "torch_mixed_units.csv").write_text(_text(mixed))


if __name__ == "__main__":
    main()
