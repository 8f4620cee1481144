"""The corpus predicted from its profiles cut to Nsight Compute's default sections, before and
after the adapter reads each count from the default sections' metric names too.

Each launch's stored metrics (corpus/measurements/<gpu>/*.json, ``ncu``) are cut to the default
sections' (tests/data/ncu/default_sections.py says where the list comes from). The stored
profiles hold counts, not SpeedOfLight's percent-of-peak breakdown, so the figures of it that
the adapter converts back are written as the default export would print them, rounded to
Nsight's two decimals: DRAM's share (the stored DRAM bytes over the bus width, read from a
committed export of the same GPU, over 4 bytes per DRAM cycle, times the launch's DRAM cycles)
and the SM issue share (the stored warp instructions over one per scheduler, per SM cycle; the
schedulers per SM from the same export), with SpeedOfLight's SM clock (the GPC clock: the stored SM clock). "before" leaves out every metric only the
alternatives read (the adapter as it was); "after" keeps them. Prints the median |error| against
the measured durations and the launches predicted, with the full profiles' figure beside them.

    python benchmarks/ncu_default_sections.py [GPU ...]     # default: h200 h100-sxm
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import roofline  # noqa: E402
from corpus import corpus_report, load_corpus  # noqa: E402

_NCU = ROOT / "tests" / "data" / "ncu"
_spec = importlib.util.spec_from_file_location("default_sections", _NCU / "default_sections.py")
assert _spec is not None and _spec.loader is not None
sections = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sections)

#: A committed export of each GPU, for its bus width and schedulers per SM (device attributes).
EXPORTS = {"h200": _NCU / "suite.raw_base.csv", "h100-sxm": _NCU / "templates.h100.function.csv"}
_SHARE = "dram__cycles_active.sum.pct_of_peak_sustained_elapsed"
_BUS = "device__attribute_global_memory_bus_width"
_ISSUE = "sm__inst_executed.sum.pct_of_peak_sustained_elapsed"
_SCHEDULERS = "device__attribute_num_schedulers_per_multiprocessor"
_GPC = "gpc__cycles_elapsed.avg.per_second"
_ADDED_UNITS = {_SHARE: "%", _BUS: "", _ISSUE: "%", _SCHEDULERS: "", _GPC: "hz"}


def _attribute(gpu: str, name: str) -> float:
    """A device attribute of the GPU, from the first launch of its committed export."""
    text = sections.cut_export(EXPORTS[gpu], frozenset({"ID", name})).splitlines()
    return float(text[2].split('","')[1].strip('"').replace(",", ""))


def _number(metrics: dict, units: dict, name: str) -> float | None:
    value = metrics.get(name)
    if value is None or str(value).strip() in ("", "n/a"):
        return None
    return float(str(value).replace(",", "")) * roofline._ncu_metrics.unit_factor(units.get(name, ""))


def _default_export(metrics: dict, units: dict, bus_bits: float, schedulers: float) -> dict:
    """The launch as a default-sections export holds it: the cut, SpeedOfLight's DRAM and issue shares."""
    out = sections.cut_metrics(metrics)
    get = {name: _number(metrics, units, name) for name in (
        "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__cycles_elapsed.avg.per_second",
        "gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__cycles_elapsed.avg.per_second", "launch__sm_count")}
    seconds, sm_clock = get["gpu__time_duration.sum"], get["sm__cycles_elapsed.avg.per_second"]
    if None not in (get["dram__bytes_read.sum"], get["dram__bytes_write.sum"], seconds):
        moved = get["dram__bytes_read.sum"] + get["dram__bytes_write.sum"]
        out[_SHARE] = f"{100 * moved / (bus_bits / 4 * get['dram__cycles_elapsed.avg.per_second'] * seconds):.2f}"
        out[_BUS] = bus_bits
    if None not in (get["smsp__inst_executed.sum"], sm_clock, get["launch__sm_count"], seconds):
        peak = schedulers * get["launch__sm_count"] * sm_clock * seconds
        out[_ISSUE] = f"{100 * get['smsp__inst_executed.sum'] / peak:.2f}"
        out[_SCHEDULERS], out[_GPC] = schedulers, sm_clock
    return out


def _cut(projects: list, gpu: str, keep_alternatives: bool) -> list:
    bus, schedulers = _attribute(gpu, _BUS), _attribute(gpu, _SCHEDULERS)
    out = []
    for p in projects:
        units = {**p.ncu_units, **_ADDED_UNITS}
        kernels = []
        for k in p.kernels:
            launches = []
            for launch in k.launches:
                metrics = _default_export(launch.ncu, p.ncu_units, bus, schedulers)
                if not keep_alternatives:
                    metrics = {n: v for n, v in metrics.items() if n not in sections.READ_BY_ALTERNATIVES}
                launches.append(launch.model_copy(update={"ncu": metrics}))
            kernels.append(k.model_copy(update={"launches": tuple(launches)}))
        out.append(p.model_copy(update={"kernels": tuple(kernels), "ncu_units": units}))
    return out


def _line(label: str, report) -> str:
    predicted = sum(1 for r in report.rows if r.error is not None)
    median = "-" if report.median_abs_error is None else f"{report.median_abs_error:.1%}"
    return f"  {label:<34} median |error| {median:>6}   {predicted} of {len(report.rows)} launches predicted"


def main(gpus: list[str]) -> int:
    for gpu in gpus:
        projects = list(load_corpus(gpu))
        print(f"{gpu}:")
        print(_line("full profiles", corpus_report(projects, gpu=gpu)))
        print(_line("default sections, before", corpus_report(_cut(projects, gpu, False), gpu=gpu)))
        print(_line("default sections, after", corpus_report(_cut(projects, gpu, True), gpu=gpu)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["h200", "h100-sxm"]))
