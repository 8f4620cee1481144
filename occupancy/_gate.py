"""A regression gate: a build's kernel resources against a baseline, per kernel and architecture.

The records are those ``gpuroof resources --json`` prints (``arch``, ``resources``,
``occupancy``), so a CI run keeps one file as the baseline and compares each build with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from ._errors import OccupancyError
from ._names import stable_symbol

__all__ = ["GATE_FIELDS", "ResourceChange", "ResourceComparison", "compare_resources"]

# Tolerance name -> what it bounds: a rise above the tolerance is a regression (a drop, for occupancy).
GATE_FIELDS = MappingProxyType({
    "registers": "registers per thread",
    "spills": "spill store + load bytes",
    "shared": "static shared memory, bytes",
    "stack": "local memory (stack frame), bytes",
    "occupancy": "occupancy at the block size of the run, a fraction (0.05 = 5 points)",
})


class ResourceChange(BaseModel):
    """One figure of one kernel on one architecture that differs from the baseline."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    kernel: str = Field(description="The kernel's symbol.")
    name: str = Field(description="Its demangled name, else the symbol.")
    arch: str
    field: str = Field(description="A key of GATE_FIELDS, or 'kernel' for one added or removed.")
    baseline: int | float | str | None
    current: int | float | str | None
    regression: bool = Field(description="Worse than the baseline by more than the tolerance.")
    note: str = Field(default="", description="The occupancy limiters, or why the change is not a regression.")


class ResourceComparison(BaseModel):
    """Every change from the baseline; ``regressed`` when one of them is a regression, or
    when no kernel and architecture pair is in both (a gate that compares nothing fails)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    changes: tuple[ResourceChange, ...]
    compared: int = Field(description="Kernel and architecture pairs found in both.")
    tolerance: dict[str, float]

    @property
    def regressed(self) -> bool:
        return self.compared == 0 or any(c.regression for c in self.changes)

    def __str__(self) -> str:
        lines = []
        for c in self.changes:
            tag = "REGRESSION" if c.regression else "changed"
            if c.field == "kernel":
                lines.append(f"{tag:<10}  {c.name} ({c.arch}): {c.note}")
                continue
            if c.field == "occupancy":
                before = "-" if c.baseline is None else f"{float(c.baseline):.0%}"
                after = "-" if c.current is None else f"{float(c.current):.0%}"
            else:
                before, after = c.baseline, c.current
            lines.append(f"{tag:<10}  {c.name} ({c.arch}): {c.field} {before} -> {after}"
                         + (f" ({c.note})" if c.note else ""))
        if self.compared == 0:
            lines.append(f"0 kernel/architecture pairs compared: {_nothing_compared(self.changes)}; the gate "
                         "fails, since it checked nothing")
            return "\n".join(lines)
        verdict = (f"{sum(c.regression for c in self.changes)} regression(s)" if self.regressed
                   else "no regression")
        lines.append(f"{self.compared} kernel/architecture pairs compared: {verdict}")
        return "\n".join(lines)


def _nothing_compared(changes: Sequence[ResourceChange]) -> str:
    """Why a comparison compared no pair: which side holds nothing, or that no kernel name
    (and architecture) of the baseline is in the build."""
    before = {(stable_symbol(c.kernel), c.arch) for c in changes if c.baseline is not None}
    after = {(stable_symbol(c.kernel), c.arch) for c in changes if c.current is not None}
    if not before and not after:
        return "neither the baseline nor this build holds a kernel"
    if not before:
        return "the baseline holds no kernel"
    if not after:
        return "this build holds no kernel"
    if {k for k, _ in before} & {k for k, _ in after}:
        shown = ", ".join(sorted({a for _, a in before})) + " against " + ", ".join(sorted({a for _, a in after}))
        return f"no architecture matched ({shown})"
    return "no kernel names matched (the baseline's are not this build's: another file, or renamed kernels?)"


def _number(value: object, what: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OccupancyError(f"{what}={value!r} is not a number")
    return value


def _figures(row: Mapping[str, object], where: str) -> tuple[str, str, str, dict[str, int | float | None], str]:
    """(kernel, name, arch, figures, limiters) of one ``gpuroof resources --json`` record."""
    r = row.get("resources") if isinstance(row, Mapping) else None
    if not isinstance(r, Mapping) or "arch" not in row:
        raise OccupancyError(f"{where}: not a record of `gpuroof resources --json` (arch, resources, occupancy)")
    try:
        kernel = str(r["kernel"])
        figures: dict[str, int | float | None] = {
            "registers": _number(r["registers_per_thread"], f"{where} registers_per_thread"),
            "shared": _number(r.get("static_shared_memory", 0), f"{where} static_shared_memory"),
            "stack": _number(r.get("local_memory", 0), f"{where} local_memory"),
            "spills": None if r.get("spill_store_bytes") is None else
            _number(r["spill_store_bytes"], f"{where} spill_store_bytes")
            + _number(r.get("spill_load_bytes") or 0, f"{where} spill_load_bytes"),
        }
    except KeyError as exc:
        raise OccupancyError(f"{where}: the record has no {exc.args[0]!r}") from None
    occ = row.get("occupancy")
    limiters = ""
    if isinstance(occ, Mapping):
        figures["occupancy"] = _number(occ.get("occupancy"), f"{where} occupancy")
        limiters = f"{occ.get('threads_per_block')} threads, limited by " + ", ".join(occ.get("limiters") or ())
    else:
        figures["occupancy"] = 0.0  # no block size can launch
    name = str(r.get("demangled") or kernel)
    return kernel, name, str(row["arch"]), figures, limiters


def compare_resources(
    baseline: Sequence[Mapping[str, object]],
    current: Sequence[Mapping[str, object]],
    tolerance: Mapping[str, float] | None = None,
) -> ResourceComparison:
    """Compare a build's kernel resources with a baseline, per kernel and architecture.

    Parameters
    ----------
    baseline, current : list of dict
        Records as ``gpuroof resources --json`` prints them.
    tolerance : dict, optional
        How much worse each figure of `GATE_FIELDS` may get before it is a regression:
        registers, spills (bytes), shared (bytes), stack (bytes), occupancy (a fraction).
        Default 0 for each: any rise in registers, spills, shared memory or stack, and any
        drop in occupancy, is a regression.

    Returns
    -------
    ResourceComparison
        Every changed figure (improvements too); a kernel added or removed is listed, not a
        regression.

    Raises
    ------
    OccupancyError
        When a record is not one of ``gpuroof resources --json`` or a tolerance is unknown
        or negative.

    Examples
    --------
    >>> row = {"arch": "sm_90", "resources": {"kernel": "k", "registers_per_thread": 32},
    ...        "occupancy": {"occupancy": 1.0, "threads_per_block": 256, "limiters": ["warps"]}}
    >>> worse = {**row, "resources": {"kernel": "k", "registers_per_thread": 40}}
    >>> result = compare_resources([row], [worse])
    >>> result.regressed, result.changes[0].field, result.changes[0].current
    (True, 'registers', 40)
    """
    if tolerance is not None and not isinstance(tolerance, Mapping):
        raise TypeError(f"tolerance must be a dict such as {{'registers': 0}}, not {type(tolerance).__name__}")
    for what, records in (("baseline", baseline), ("current", current)):
        if not isinstance(records, (list, tuple)):
            raise OccupancyError(f"{what}: a list of `gpuroof resources --json` records, not {type(records).__name__}")
    limits = dict.fromkeys(GATE_FIELDS, 0.0)
    for key, value in (tolerance or {}).items():
        if key not in GATE_FIELDS:
            raise OccupancyError(f"tolerance {key!r} is not one of {', '.join(GATE_FIELDS)}")
        if _number(value, f"tolerance {key}") < 0:
            raise OccupancyError(f"tolerance {key}={value} is negative")
        limits[key] = float(value)
    # Keyed by the symbol less what changes at every compile (stable_symbol): a kernel
    # instantiated with a `static` function is the same kernel in the baseline and the build.
    before = {(stable_symbol(k), a): (k, n, f, lim) for k, n, a, f, lim in
              (_figures(row, f"baseline record {i}") for i, row in enumerate(baseline))}
    after = {(stable_symbol(k), a): (k, n, f, lim) for k, n, a, f, lim in
             (_figures(row, f"record {i}") for i, row in enumerate(current))}
    changes = []
    for key in sorted(before.keys() | after.keys(), key=lambda k: (k[1], k[0])):
        arch = key[1]
        kernel = (after.get(key) or before[key])[0]
        if key not in after or key not in before:
            name = (before.get(key) or after[key])[1]
            changes.append(ResourceChange(kernel=kernel, name=name, arch=arch, field="kernel",
                                          baseline=kernel if key in before else None,
                                          current=kernel if key in after else None, regression=False,
                                          note="removed" if key in before else "added"))
            continue
        _, name, old, _ = before[key]
        _, _, new, limiters = after[key]
        for field in GATE_FIELDS:
            a, b = old.get(field), new.get(field)
            if a == b or a is None or b is None:
                continue
            worse = a - b if field == "occupancy" else b - a
            changes.append(ResourceChange(kernel=kernel, name=name, arch=arch, field=field, baseline=a, current=b,
                                          regression=worse > limits[field] + 1e-9,
                                          note=limiters if field == "occupancy" else ""))
    return ResourceComparison(changes=tuple(changes), compared=len(before.keys() & after.keys()), tolerance=limits)
