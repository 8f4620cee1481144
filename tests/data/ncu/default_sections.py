"""The metrics of Nsight Compute's default sections, and a profile cut down to them.

``ncu`` without ``--set`` or ``--section`` collects the ``basic`` set (Nsight Compute 2025.3):
LaunchStats, Occupancy, SpeedOfLight and WorkloadDistribution. The metric names, by source:

* SpeedOfLight (with every launch__ and device__ metric ncu always exports): the columns of
  ``torch_sol.raw.csv``, a real export taken with ``--section SpeedOfLight`` alone (README.md);
* Occupancy: the occupancy columns of ``user_kernels.raw.csv`` (taken with the Occupancy
  section among others): ``sm__warps_active.*``, ``sm__maximum_warps_*``, ``launch__occupancy_*``;
* WorkloadDistribution: the per-unit active and elapsed cycles its table shows (SM, SMSP,
  L1TEX, L2, DRAM; avg, max, min, sum), written out here: no committed export holds that
  section alone.

`cut_export` keeps these columns of a raw-page export; `cut_metrics` these keys of a
corpus launch's stored metrics. The test of the adapter's alternatives
(tests/roofline/test_ncu_default_sections.py) and benchmarks/ncu_default_sections.py use them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
_OCCUPANCY = re.compile(r"^(sm__warps_active\.|sm__maximum_warps_|launch__occupancy_)")
_UNITS = ("sm", "smsp", "l1tex", "lts", "dram")
WORKLOAD_DISTRIBUTION = frozenset(f"{unit}__cycles_{kind}.{stat}" for unit in _UNITS
                                  for kind in ("active", "elapsed") for stat in ("avg", "max", "min", "sum"))


def _header(path: Path) -> list[str]:
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    return next(csv.reader(io.StringIO(rows[0])))


def default_section_metrics() -> frozenset[str]:
    """Every metric name (and identifying column) a default-sections export holds."""
    sol = set(_header(HERE / "torch_sol.raw.csv"))
    occupancy = {name for name in _header(HERE / "user_kernels.raw.csv") if _OCCUPANCY.match(name)}
    return frozenset(sol | occupancy | WORKLOAD_DISTRIBUTION)


def cut_export(path: Path, keep: frozenset[str] | None = None) -> str:
    """The raw-page export at ``path`` with only the columns in ``keep`` (default: the default sections')."""
    keep = default_section_metrics() if keep is None else keep
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    columns = [i for i, name in enumerate(rows[0]) if name in keep]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in columns])
    return out.getvalue()


def cut_metrics(metrics: Mapping[str, object], keep: frozenset[str] | None = None) -> dict[str, object]:
    """A stored launch's metrics with only the keys in ``keep`` (default: the default sections')."""
    keep = default_section_metrics() if keep is None else keep
    return {name: value for name, value in metrics.items() if name in keep}


#: The default sections' metrics that only `roofline._ncu_metrics.ALTERNATIVES` read: without
#: them a cut export reads as it did before the alternatives.
READ_BY_ALTERNATIVES = frozenset({
    "dram__cycles_active.sum.pct_of_peak_sustained_elapsed", "device__attribute_global_memory_bus_width",
    "gpc__cycles_elapsed.avg.per_second", "l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed",
    "sm__inst_executed.sum.pct_of_peak_sustained_elapsed", "device__attribute_num_schedulers_per_multiprocessor",
})
