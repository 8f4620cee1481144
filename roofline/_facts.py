"""The facts of each GPU: one TOML file per GPU, read once, and the one forgiving name lookup.

Every GPU has one file, ``roofline/data/gpus/<name in lower case>.toml``; adding a GPU is
adding a file. Its sections, each entry with its source (units are SI: hertz, bytes, bits,
seconds, bytes/s, flops/s):

``listing_order``
    Where the GPU appears in listings (``gpuroof gpus``): data-center parts by generation,
    then workstation and consumer parts.
``[gpu]``, ``[gpu.sources]``, ``[gpu.datasheet]``
    The `GPU` fields: the datasheet facts. Peaks are NOT stored as facts to use: they are
    derived (SMs x clock x per-SM rate of ``arch_rates.toml``; DRAM bandwidth = bus width / 8
    x data rate per pin). ``[gpu.datasheet]`` keeps the figures the vendor quotes (dense,
    i.e. sparse figures halved; flops/s, int8 in ops/s; ``memory_bandwidth`` in bytes/s) so
    the tests check the derivation. ``tensor_clock_hz``: where the datasheet's tensor peaks
    imply a lower clock than the boost clock (Hopper and Blackwell data-center parts), the
    clock of its low-precision tensor figures (FP64 and FP64-tensor use the boost clock).
    ``tensor_fp32_accumulate_rate``: GeForce boards run TF32/FP16/BF16/FP8 tensor math with
    FP32 accumulation at half rate (the whitepapers' "with FP32 accumulate" rows). Memory
    sizes are GiB (2**30 bytes) as marketed; L2 sizes MiB. `roofline.load_gpu` reads this
    section of a facts file as it stands.
``[calibration.<parameter>]``
    ``value`` and ``source`` of the time model's parameters and measured figures
    (`roofline.Calibration`): ``"measured: ..."`` where `gpuroof validate` measured it on
    this GPU, ``"default: ..."`` otherwise; each entry replaces the generic one of
    ``roofline/data/calibration_defaults.toml``.
``[ceilings.<name>]``
    Ceilings `gpuroof validate` measured (`roofline.MeasuredCeiling`): value = the higher of
    ours (gpuroof's kernel) and the best independent library figure of the same session
    (reference: cuBLAS through PyTorch, CuPy's and PyTorch's copies); throttled: NVML reported
    a power, thermal or hardware slowdown reason while it ran.
``[host_links.<memory>.<direction>]``
    Host-link transfers `gpuroof validate` measured, read by `roofline.transfer.transfer_time`:
    ``seconds = latency_seconds + bytes / bytes_per_second`` fitted to 1 MiB to 1 GiB
    (`roofline._measured.MeasuredLink`). Managed = first touch (the pages migrate). Pageable
    copies depend on the host (its memory, its load): two runs on the same H200 host gave
    12 to 17 GB/s host to device below 64 MiB.
``[gpc_layout]``
    How many SMs each GPC has, as thread-block-cluster scheduling sees them (the
    `occupancy.GpcLayout` fields less those of ``[gpu]``: name, aliases, compute capability,
    SM count). The blocks of a cluster run inside one GPC, so resident clusters depend on
    this split, which differs between SKUs of one architecture (floor-sweeping). ``measured =
    true``: read off a lent GPU with `validate.measure_gpc_layout` and checked against the
    driver's ``cuOccupancyMaxActiveClusters`` (`validate.check_clusters`); ``false``: an
    assumption, said in the source. ``max_blocks_per_sm_in_cluster``: a cluster launch keeps
    at most this many blocks on one SM, whatever the per-SM occupancy.
``[locality]``
    The constants of the locality heuristics: ``l1_combine_sectors`` (sectors of one warp
    store whose pieces L1 still combines with the next warps'), ``page_window_threads``
    (threads of the window of consecutive blocks whose requests to one DRAM page one opening
    serves), ``dram_page_bytes`` (the row one activation opens), and their ``source``.
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from occupancy import GpcLayout

from ._calibration import Calibration, calibration_defaults, make_calibration
from ._errors import RooflineError
from ._gpu import GPU, make_gpu, translate_validation_error
from ._measured import MeasuredCeiling, MeasuredLink

__all__ = [
    "FACTS_SECTIONS",
    "GpuFacts",
    "calibration",
    "facts_of",
    "gpc_layout",
    "gpc_layouts",
    "gpu",
    "gpu_facts",
    "gpus",
    "measured_ceilings",
    "measured_link",
    "measured_link_gpus",
    "read_facts",
]

#: The top-level keys of a facts file; only ``listing_order`` and ``gpu`` are required.
FACTS_SECTIONS = ("listing_order", "gpu", "calibration", "ceilings", "host_links", "gpc_layout", "locality")

# The folder of the facts files the lookups read; None: the packaged ones. A test points it
# at a folder with one more file to see a GPU appear.
_DIRECTORY: Path | None = None


class GpuFacts(BaseModel):
    """Everything known about one GPU, read from its facts file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="The facts file, for messages.")
    listing_order: int = Field(description="Position in listings, smallest first.")
    gpu: GPU
    calibration: Calibration = Field(description="The generic defaults overridden by the GPU's entries.")
    ceilings: dict[str, MeasuredCeiling] = Field(default_factory=dict)
    host_links: dict[str, dict[str, MeasuredLink]] = Field(
        default_factory=dict, description="Measured transfers by memory kind, then direction."
    )
    gpc_layout: GpcLayout | None = None
    locality: dict[str, int | str] | None = Field(
        default=None, description="The [locality] section, as `roofline.memory.locality` reads it."
    )


def _parse_facts(path: str, raw: Mapping[str, Any]) -> GpuFacts:
    unknown = sorted(set(raw) - set(FACTS_SECTIONS))
    if unknown or "gpu" not in raw or "listing_order" not in raw:
        raise RooflineError(
            f"{path}: needs listing_order and [gpu]; unknown sections {unknown}; known: {', '.join(FACTS_SECTIONS)}"
        )
    record = make_gpu(raw["gpu"], path)
    layout = raw.get("gpc_layout")
    try:
        calibration = make_calibration(record.name, {**calibration_defaults(), **raw.get("calibration", {})})
    except RooflineError as exc:
        raise RooflineError(f"{path}: {exc}") from None
    try:
        return GpuFacts(
            path=path,
            listing_order=raw["listing_order"],
            gpu=record,
            calibration=calibration,
            ceilings={name: {"name": name, **entry} for name, entry in raw.get("ceilings", {}).items()},
            host_links=raw.get("host_links", {}),
            gpc_layout=None if layout is None else GpcLayout(
                name=record.name, aliases=record.aliases, compute_capability=record.compute_capability,
                sm_count=record.sm_count, **layout,
            ),
            locality=raw.get("locality"),
        )
    except ValidationError as exc:
        raise translate_validation_error(exc, path) from None


def read_facts(directory: Traversable | Path | None = None) -> tuple[GpuFacts, ...]:
    """The facts of every ``*.toml`` file of `directory` (default: the packaged ones), in
    listing order; read once per directory.

    Raises
    ------
    RooflineError
        If a file is not TOML, misses ``[gpu]`` or ``listing_order``, has an unknown section,
        or an entry is invalid; the message names the file.
    """
    return _read(directory)


@functools.cache  # one key per folder: read_facts() and read_facts(None) share it
def _read(directory: Traversable | Path | None) -> tuple[GpuFacts, ...]:
    folder = resources.files("roofline").joinpath("data", "gpus") if directory is None else directory
    facts = []
    for item in sorted(folder.iterdir(), key=lambda f: f.name):
        if not item.name.endswith(".toml"):
            continue
        where = f"roofline/data/gpus/{item.name}" if directory is None else str(item)
        try:
            raw = tomllib.loads(item.read_text("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise RooflineError(f"{where}: not TOML: {exc}") from None
        facts.append(_parse_facts(where, raw))
    return tuple(sorted(facts, key=lambda f: f.listing_order))


def _key(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    for prefix in ("nvidia", "tesla", "geforce"):
        key = key.removeprefix(prefix)
    return key


def _database() -> tuple[GpuFacts, ...]:
    return read_facts(_DIRECTORY)


@functools.cache
def _index(directory: Path | None) -> dict[str, GpuFacts]:
    index: dict[str, GpuFacts] = {}
    for entry in read_facts(directory):
        for spelling in (entry.gpu.name, *entry.gpu.aliases):
            index.setdefault(_key(spelling), entry)
    return index


def facts_of(gpu: GPU | str) -> GpuFacts | None:
    """The facts of a name (forgiving, see `gpu_facts`) or of the packaged GPU named exactly
    as a `GPU` record; None for a record not in the database (a `custom_gpu`)."""
    if isinstance(gpu, GPU):
        return next((f for f in _database() if f.gpu.name == gpu.name), None)
    return gpu_facts(gpu)


def gpu_facts(name: str) -> GpuFacts:
    """The facts of a GPU found by name or alias, forgiving case, spaces and punctuation.

    ``"a100 pcie 40gb"``, ``"A100-PCIe-40GB"`` and the driver's ``"NVIDIA A100-PCIE-40GB"``
    all find the same entry; a leading NVIDIA/Tesla/GeForce is ignored. An alias the database
    gives wins (``"H100"`` is the H100-SXM's, as ``gpu_info`` lists it); a prefix that several
    entries share and no alias claims (``"A100-SXM4"``) is refused with the candidates listed,
    rather than one picked silently.

    Raises
    ------
    RooflineError
        If nothing matches, or several entries do; the message lists the candidates, or
        close matches and the known names.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str or GPU, not {type(name).__name__}")
    database = _database()
    index = _index(_DIRECTORY)
    key = _key(name)
    for entry in database:
        if _key(entry.gpu.name) == key:
            return entry
    if key in index:  # a name or an alias the database gives (``H100`` is the H100-SXM's)
        return index[key]
    # a family prefix that no alias claims: refused rather than one of them picked silently
    family = [f.gpu.name for f in database if _key(f.gpu.name).startswith(key)] if key else []
    if len(family) > 1:
        raise RooflineError(f"GPU {name!r} matches {len(family)} GPUs: {', '.join(family)}; name one of them")
    close = difflib.get_close_matches(key, list(index), n=8, cutoff=0.6)
    names = list(dict.fromkeys(index[k].gpu.name for k in close))
    known = ", ".join(f.gpu.name for f in database)
    hint = f"; close matches: {', '.join(names)}" if names else ""
    raise RooflineError(f"unknown GPU {name!r}{hint}; known: {known}")


def gpus(matching: str | None = None) -> tuple[GPU, ...]:
    """The GPUs in the packaged database, in listing order; with `matching`, those whose
    name or an alias starts with it (forgiving case and punctuation, as `gpu` does).

    Examples
    --------
    >>> import roofline
    >>> "H100-SXM" in [g.name for g in roofline.gpus()]
    True
    >>> [g.name for g in roofline.gpus("A100 PCIe")]
    ['A100-PCIe-40GB', 'A100-PCIe-80GB']
    """
    records = tuple(f.gpu for f in _database())
    if matching is None:
        return records
    if not isinstance(matching, str):
        raise TypeError(f"matching must be a str, not {type(matching).__name__}")
    key = _key(matching)
    return tuple(g for g in records if any(_key(s).startswith(key) for s in (g.name, *g.aliases)))


def gpu(name: str | GPU) -> GPU:
    """Look up a GPU by name or alias, forgiving case, spaces and punctuation.

    The spellings `gpu_facts` accepts; a `GPU` is returned unchanged.

    Raises
    ------
    RooflineError
        If nothing matches, or several entries do; the message lists the candidates, or
        close matches and the known names.

    Examples
    --------
    >>> import roofline
    >>> roofline.gpu("a100 pcie 40gb").name
    'A100-PCIe-40GB'
    >>> roofline.gpu("NVIDIA H100 80GB HBM3").name
    'H100-SXM'
    """
    if isinstance(name, GPU):
        return name
    return gpu_facts(name).gpu


def calibration(gpu: GPU | str) -> Calibration:
    """Return the packaged calibration for `gpu`, falling back per parameter to generic defaults.

    Parameters
    ----------
    gpu : GPU or str
        A GPU record or a name `roofline.gpu` understands.

    Returns
    -------
    Calibration
        Its ``sources`` say, for each parameter, whether it was measured on that GPU model or
        is the generic default.

    Examples
    --------
    >>> import roofline
    >>> roofline.calibration("H100 SXM").idle_latency_seconds > 0
    True
    """
    entry = facts_of(gpu)
    if entry is None:  # a custom GPU: the generic defaults
        return make_calibration(gpu.name if isinstance(gpu, GPU) else str(gpu), calibration_defaults())
    return entry.calibration


def measured_ceilings(gpu: GPU | str) -> dict[str, MeasuredCeiling]:
    """The measured ceilings of `gpu` by name; empty when it was never measured.

    Examples
    --------
    >>> import roofline
    >>> c = roofline.measured_ceilings("H200")["bf16_tensor"]
    >>> c.value >= c.ours and c.unit
    'flops_per_second'
    >>> roofline.measured_ceilings("A100-SXM4-40GB")
    {}
    """
    entry = facts_of(gpu)
    return {} if entry is None else dict(entry.ceilings)


def measured_link(name: str, memory: str, direction: str) -> MeasuredLink | None:
    """The measured host-link fit of the GPU named exactly `name` (a record's ``name``) for
    one memory kind and direction; None where there is none."""
    for entry in _database():
        if entry.gpu.name == name:
            return entry.host_links.get(memory, {}).get(direction)
    return None


def measured_link_gpus(memory: str) -> tuple[str, ...]:
    """Names of the GPUs with a measured host link of memory kind `memory`."""
    return tuple(f.gpu.name for f in _database() if memory in f.host_links)


def gpc_layouts() -> tuple[GpcLayout, ...]:
    """Every packaged GPC layout, in listing order.

    Examples
    --------
    >>> import roofline
    >>> "H200" in [g.name for g in roofline.gpc_layouts()]
    True
    """
    return tuple(f.gpc_layout for f in _database() if f.gpc_layout is not None)


def gpc_layout(gpu: GPU | str | GpcLayout) -> GpcLayout:
    """The GPC layout of a GPU (`occupancy.GpcLayout`), which the cluster functions of
    `occupancy` take.

    Parameters
    ----------
    gpu : GPU, str or occupancy.GpcLayout
        A GPU or a name `roofline.gpu` understands (``"H200"``, ``"NVIDIA H200"``,
        ``"h100 sxm"``); a `GpcLayout` (e.g. one measured on the device) is returned unchanged.

    Raises
    ------
    RooflineError
        For a GPU with no packaged layout; the message lists the GPUs with one.
    TypeError
        For a value of another type.

    Examples
    --------
    >>> import roofline
    >>> g = roofline.gpc_layout("nvidia h200")
    >>> g.name, g.sm_count, max(g.sms_per_gpc), g.measured
    ('H200', 132, 18, True)
    """
    if isinstance(gpu, GpcLayout):
        return gpu
    if not isinstance(gpu, (str, GPU)):
        raise TypeError(f"gpu must be a GPU name such as 'H200', a GPU or a GpcLayout, not {type(gpu).__name__}")
    entry = facts_of(gpu)
    if entry is None or entry.gpc_layout is None:
        known = ", ".join(g.name for g in gpc_layouts())
        name = entry.gpu.name if entry is not None else getattr(gpu, "name", gpu)
        raise RooflineError(
            f"gpu={name!r} has no packaged GPC layout; known: {known}. Pass an occupancy.GpcLayout "
            f"with the SMs of each GPC (validate.measure_gpc_layout measures them on the device)"
        )
    return entry.gpc_layout
