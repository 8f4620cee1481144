"""The `GPU` record: datasheet facts and the peaks derived from them (the database is `_facts`)."""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

import occupancy
from occupancy.common import RealNumbers, as_path, pydantic_error, read_json, read_toml, short_repr

from ._errors import RooflineError
from ._precision import (
    FP32_ACCUMULATE_PRECISIONS,
    PRECISIONS,
    SPARSE_PRECISIONS,
    TENSOR_PRECISIONS,
    check_precision,
)

__all__ = [
    "DEFAULT_GPU",
    "GPU",
    "ArchRates",
    "Derivation",
    "HostLink",
    "MEMORY_LEVELS",
    "arch_rates",
    "check_level",
    "custom_gpu",
    "load_gpu",
    "make_gpu",
    "translate_validation_error",
]

#: The GPU the CLI and the demo use when none is named.
DEFAULT_GPU = "H100-SXM"

#: Memory levels, slowest first: DRAM, the L2 cache, and L1/shared memory.
MEMORY_LEVELS: tuple[str, ...] = ("dram", "l2", "l1")

_LEVEL_SPELLINGS = {
    "dram": "dram",
    "hbm": "dram",
    "gmem": "dram",
    "global": "dram",
    "l2": "l2",
    "l1": "l1",
    "shared": "l1",
    "smem": "l1",
    "l1shared": "l1",
}

# PCIe per-lane signalling rate (transfers/s) and line-code efficiency, per generation
# (PCI-SIG base specifications: 8b/10b up to Gen2, 128b/130b Gen3-5, FLIT 242/256 on Gen6).
_PCIE = {
    1: (2.5e9, 8 / 10),
    2: (5.0e9, 8 / 10),
    3: (8.0e9, 128 / 130),
    4: (16.0e9, 128 / 130),
    5: (32.0e9, 128 / 130),
    6: (64.0e9, 242 / 256),
}

# Figures are finite: an infinite peak or NaN bandwidth would turn every time into NaN.
_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


def check_level(level: object) -> str:
    """Return the canonical memory level ("dram", "l2" or "l1") for `level`, or raise."""
    if not isinstance(level, str):
        raise TypeError(f"level must be a str, not {type(level).__name__}")
    key = re.sub(r"[^a-z0-9]", "", level.lower())
    if key not in _LEVEL_SPELLINGS:
        raise RooflineError(f"level={level!r} is not known; expected one of dram, l2, l1")
    return _LEVEL_SPELLINGS[key]


class HostLink(RealNumbers):
    """The GPU's link to the host CPU.

    ``bytes_per_second`` is per direction. For PCIe it is derived when omitted:
    lanes x transfer rate x line-code efficiency / 8 (Gen4 x16: 31.5e9 bytes/s).
    """

    model_config = _FROZEN

    kind: Literal["pcie", "nvlink-c2c"]
    generation: int | None = Field(default=None, ge=1, le=6)
    lanes: int | None = Field(default=None, ge=1, le=32)
    bytes_per_second: float = Field(gt=0)

    @model_validator(mode="before")
    @classmethod
    def _derive_pcie_rate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == "pcie" and "bytes_per_second" not in data:
            generation, lanes = data.get("generation"), data.get("lanes")
            # A list or a table for the generation (a hand-written TOML) is unhashable: the field check refuses it.
            if isinstance(generation, (int, float)) and generation in _PCIE and isinstance(lanes, int) and lanes > 0:
                rate, efficiency = _PCIE[generation]
                data = {**data, "bytes_per_second": lanes * rate * efficiency / 8}
        return data

    def describe(self) -> str:
        """A short human description, e.g. ``"PCIe Gen5 x16 (63.0 GB/s per direction)"``."""
        rate = f"{self.bytes_per_second / 1e9:.1f} GB/s per direction"
        if self.kind == "pcie":
            return f"PCIe Gen{self.generation} x{self.lanes} ({rate})"
        return f"NVLink-C2C ({rate})"


class ArchRates(RealNumbers):
    """Per-SM, per-clock throughput of one compute capability (dense, FMA = 2 flops)."""

    model_config = _FROZEN

    compute_capability: str
    name: str
    flops_per_clock_per_sm: dict[str, float]
    l2_bytes_per_clock_per_sm: float = Field(gt=0)
    shared_memory_bytes_per_clock_per_sm: float = Field(gt=0)
    source: str = Field(min_length=1)


class Derivation(BaseModel):
    """A derived ceiling: its value, the arithmetic that produced it, and the sources."""

    model_config = _FROZEN

    quantity: str
    value: float
    unit: str
    formula: str
    source: str


@functools.lru_cache(maxsize=1)
def _arch_table() -> dict[str, ArchRates]:
    text = resources.files("roofline").joinpath("data/arch_rates.toml").read_text("utf-8")
    raw = tomllib.loads(text)["arch"]
    table = {}
    for cc, entry in raw.items():
        entry = dict(entry)
        name, source = entry.pop("name"), entry.pop("source")
        l2 = entry.pop("l2_bytes_per_clock_per_sm")
        smem = entry.pop("shared_memory_bytes_per_clock_per_sm")
        table[cc] = ArchRates(
            compute_capability=cc,
            name=name,
            flops_per_clock_per_sm={check_precision(k): float(v) for k, v in entry.items()},
            l2_bytes_per_clock_per_sm=l2,
            shared_memory_bytes_per_clock_per_sm=smem,
            source=source,
        )
    return table


def _normalize_cc(value: object) -> str:
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]}.{value[1]}"
    if not isinstance(value, str):
        raise TypeError(f"compute_capability must be a str like '9.0', not {type(value).__name__}")
    text = value.strip().lower().removeprefix("sm_").removeprefix("sm")
    match = re.fullmatch(r"(\d+)\.(\d)|(\d+)(\d)", text)
    if not match:
        raise RooflineError(
            f"compute_capability={value!r} is not of the form '9.0', '90' or 'sm_90'"
        )
    major, minor = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
    return f"{int(major)}.{int(minor)}"


def arch_rates(compute_capability: str | tuple[int, int]) -> ArchRates:
    """Per-SM per-clock rates of a compute capability ("9.0", "90", "sm_90" or (9, 0)).

    Raises
    ------
    RooflineError
        If the compute capability has no rate table; the message lists the known ones.

    Examples
    --------
    >>> arch_rates("sm_90").flops_per_clock_per_sm["fp32"]
    256.0
    """
    cc = _normalize_cc(compute_capability)
    table = _arch_table()
    if cc not in table:
        raise RooflineError(
            f"compute_capability={cc!r} has no per-SM rate table; known: {', '.join(table)}"
        )
    return table[cc]


class GPU(RealNumbers):
    """One GPU product: the datasheet facts and the ceilings derived from them.

    Peaks are derived, never stored: ``sm_count x clock x flops per clock per SM`` with the
    per-SM rate of the compute capability (`arch_rates`); DRAM bandwidth is
    ``memory_bus_width_bits / 8 x memory_data_rate_hz``. ``datasheet`` keeps the vendor's
    quoted figures (dense flops/s, bytes/s) so the derivation can be checked against them.
    ``peak_overrides`` (precision -> flops/s) and ``dram_bytes_per_second`` replace the
    derivation for custom or measured GPUs.

    Examples
    --------
    >>> import roofline
    >>> h100 = roofline.gpu("H100-SXM")
    >>> round(h100.peak_flops("fp32") / 1e12, 1)
    66.9
    >>> round(h100.memory_bandwidth / 1e12, 2)
    3.35
    """

    model_config = _FROZEN

    name: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    compute_capability: str
    sm_count: int = Field(gt=0, le=1024)
    boost_clock_hz: float = Field(gt=0, le=10e9)
    base_clock_hz: float | None = Field(default=None, gt=0, le=10e9)
    tensor_clock_hz: float | None = Field(default=None, gt=0, le=10e9)
    tensor_fp32_accumulate_rate: float = Field(default=1.0, gt=0, le=1)
    memory_type: str = ""
    memory_bus_width_bits: int | None = Field(default=None, gt=0, le=65536)
    memory_data_rate_hz: float | None = Field(default=None, gt=0, le=1e12)
    dram_bytes_per_second: float | None = Field(default=None, gt=0)
    memory_size_bytes: int | None = Field(default=None, gt=0)
    l2_cache_bytes: int | None = Field(default=None, gt=0)
    l2_bytes_per_clock: float | None = Field(default=None, gt=0)
    host_link: HostLink | None = None
    peak_overrides: dict[str, float] = Field(default_factory=dict)
    datasheet: dict[str, float] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise translate_validation_error(exc, f"GPU {short_repr(data.get('name', '?'))}") from None

    @field_validator("compute_capability", mode="before")
    @classmethod
    def _cc(cls, value: object) -> str:
        return _normalize_cc(value)

    @field_validator("peak_overrides", "datasheet")
    @classmethod
    def _precision_keys(cls, value: dict[str, float]) -> dict[str, float]:
        out = {}
        for key, figure in value.items():
            canonical = key if key == "memory_bandwidth" else check_precision(key)
            if not figure > 0:
                raise RooflineError(f"{key}={figure!r} must be > 0")
            out[canonical] = float(figure)
        return out

    @model_validator(mode="after")
    def _memory_known(self) -> GPU:
        if self.dram_bytes_per_second is None and (
            self.memory_bus_width_bits is None or self.memory_data_rate_hz is None
        ):
            raise RooflineError(
                f"GPU {self.name!r} needs memory_bus_width_bits and memory_data_rate_hz "
                "(or dram_bytes_per_second) to know its DRAM bandwidth"
            )
        return self

    # -- rates -------------------------------------------------------------------------

    @property
    def rates(self) -> ArchRates | None:
        """The per-SM rate table of this GPU's compute capability (None if unknown)."""
        return _arch_table().get(self.compute_capability)

    @property
    def architecture(self) -> occupancy.Architecture:
        """The `occupancy.Architecture` (occupancy rules) of this compute capability."""
        return occupancy.architecture(self.compute_capability)

    def supported_precisions(self) -> tuple[str, ...]:
        """Precisions with a peak on this GPU, in display order."""
        table = self.rates.flops_per_clock_per_sm if self.rates else {}
        return tuple(p for p in PRECISIONS if p in table or p in self.peak_overrides)

    def _clock_for(self, precision: str) -> float:
        if precision in TENSOR_PRECISIONS and precision != "fp64_tensor" and self.tensor_clock_hz:
            return self.tensor_clock_hz
        return self.boost_clock_hz

    def peak_derivation(self, precision: str = "fp32", sparse: bool = False) -> Derivation:
        """How `peak_flops` arrives at its figure: value, formula and source.

        Raises
        ------
        RooflineError
            If the precision is unknown or not supported on this GPU, or `sparse` is asked
            for a precision without 2:4 sparsity.
        """
        p = check_precision(precision)
        if not isinstance(sparse, bool):
            raise TypeError(f"sparse must be a bool, not {type(sparse).__name__}")
        if sparse and p not in SPARSE_PRECISIONS:
            raise RooflineError(
                f"sparse=True applies to {', '.join(sorted(SPARSE_PRECISIONS))}, "
                f"not precision={p!r}"
            )
        factor = 2.0 if sparse else 1.0
        unit = "ops/s" if p == "int8_tensor" else "flops/s"
        if p in self.peak_overrides:
            return Derivation(
                quantity=p,
                value=self.peak_overrides[p] * factor,
                unit=unit,
                formula=f"given ({self.peak_overrides[p]:.4g} {unit})" + (" x 2 (sparse)" if sparse else ""),
                source=self.sources.get(p, "peak_overrides"),
            )
        rates = self.rates
        if rates is None:
            known = ", ".join(_arch_table())
            raise RooflineError(
                f"compute_capability={self.compute_capability!r} of {self.name} has no per-SM "
                f"rate table (known: {known}); give peak_overrides={{'{p}': flops_per_second}}"
            )
        if p not in rates.flops_per_clock_per_sm:
            raise RooflineError(
                f"precision={p!r} is not supported on {self.name} (compute capability "
                f"{self.compute_capability}); supported: {', '.join(self.supported_precisions())}"
            )
        per_sm = rates.flops_per_clock_per_sm[p]
        clock = self._clock_for(p)
        value = self.sm_count * clock * per_sm
        formula = f"{self.sm_count} SMs x {clock / 1e6:.0f} MHz x {per_sm:g} /clk/SM"
        source = rates.source
        if clock == self.tensor_clock_hz and clock != self.boost_clock_hz:
            formula += " (tensor clock)"
            source += "; " + self.sources.get("tensor_clock_hz", "tensor_clock_hz")
        if p in FP32_ACCUMULATE_PRECISIONS and self.tensor_fp32_accumulate_rate != 1.0:
            value *= self.tensor_fp32_accumulate_rate
            formula += f" x {self.tensor_fp32_accumulate_rate:g} (FP32 accumulate)"
            source += "; " + self.sources.get(
                "tensor_fp32_accumulate_rate", "tensor_fp32_accumulate_rate"
            )
        if sparse:
            value *= factor
            formula += " x 2 (2:4 sparse)"
        return Derivation(quantity=p, value=value, unit=unit, formula=formula, source=source)

    def peak_flops(self, precision: str = "fp32", sparse: bool = False) -> float:
        """Peak arithmetic throughput in flops/s (ops/s for ``"int8_tensor"``).

        Parameters
        ----------
        precision
            One of ``roofline.PRECISIONS`` ("fp64", "fp32", "fp16", "bf16", "fp64_tensor",
            "tf32_tensor", "fp16_tensor", "bf16_tensor", "fp8_tensor", "int8_tensor").
        sparse
            Tensor precisions only: the 2:4 structured-sparsity rate (2x dense).

        Raises
        ------
        RooflineError
            Unknown or unsupported precision.

        Examples
        --------
        >>> import roofline
        >>> round(roofline.gpu("A100-SXM4-40GB").peak_flops("fp16_tensor") / 1e12)
        312
        """
        return self.peak_derivation(precision, sparse).value

    # -- bandwidths --------------------------------------------------------------------

    @property
    def memory_bandwidth(self) -> float:
        """DRAM bandwidth in bytes/s: bus width / 8 x data rate per pin."""
        return self.bandwidth_derivation("dram").value

    @property
    def l2_bandwidth(self) -> float:
        """Theoretical L2 bandwidth in bytes/s (rule in `bandwidth_derivation`)."""
        return self.bandwidth_derivation("l2").value

    @property
    def shared_memory_bandwidth(self) -> float:
        """Theoretical L1/shared-memory bandwidth in bytes/s: 128 B/clk/SM x SMs x clock."""
        return self.bandwidth_derivation("l1").value

    def bandwidth(self, level: str = "dram") -> float:
        """Bandwidth of a memory level ("dram", "l2", "l1") in bytes/s."""
        return self.bandwidth_derivation(level).value

    def bandwidth_derivation(self, level: str = "dram") -> Derivation:
        """How the bandwidth of `level` is derived: value, formula and source.

        Rules: DRAM = bus width / 8 x data rate per pin. L2 = the published bytes per clock
        (V100, A100) x boost clock, otherwise 32 bytes (one sector) per SM per clock x SMs x
        boost clock, an assumption. L1/shared = 32 banks x 4 bytes = 128 bytes per SM per
        clock x SMs x boost clock (CUDA C++ Programming Guide, shared memory banks).
        """
        lvl = check_level(level)
        clock_mhz = self.boost_clock_hz / 1e6
        if lvl == "dram":
            if self.dram_bytes_per_second is not None:
                return Derivation(
                    quantity="dram", value=self.dram_bytes_per_second, unit="bytes/s",
                    formula=f"given ({self.dram_bytes_per_second / 1e9:.1f} GB/s)",
                    source=self.sources.get("dram_bytes_per_second", "dram_bytes_per_second"),
                )
            assert self.memory_bus_width_bits is not None and self.memory_data_rate_hz is not None
            value = self.memory_bus_width_bits / 8 * self.memory_data_rate_hz
            return Derivation(
                quantity="dram", value=value, unit="bytes/s",
                formula=(
                    f"{self.memory_bus_width_bits} bits / 8 x "
                    f"{self.memory_data_rate_hz / 1e9:g} Gb/s per pin"
                ),
                source=self.sources.get("memory", "memory_bus_width_bits, memory_data_rate_hz"),
            )
        rates = self.rates
        if lvl == "l2":
            if self.l2_bytes_per_clock is not None:
                return Derivation(
                    quantity="l2", value=self.l2_bytes_per_clock * self.boost_clock_hz,
                    unit="bytes/s",
                    formula=f"{self.l2_bytes_per_clock:g} B/clk x {clock_mhz:.0f} MHz",
                    source=self.sources.get("l2_bytes_per_clock", "l2_bytes_per_clock"),
                )
            per_sm = rates.l2_bytes_per_clock_per_sm if rates else 32.0
            return Derivation(
                quantity="l2", value=per_sm * self.sm_count * self.boost_clock_hz,
                unit="bytes/s",
                formula=f"{per_sm:g} B/clk/SM x {self.sm_count} SMs x {clock_mhz:.0f} MHz",
                source=(
                    "assumption: one 32-byte L2 sector per SM per clock "
                    "(no published L2 bandwidth for this GPU)"
                ),
            )
        per_sm = rates.shared_memory_bytes_per_clock_per_sm if rates else 128.0
        return Derivation(
            quantity="l1", value=per_sm * self.sm_count * self.boost_clock_hz, unit="bytes/s",
            formula=f"{per_sm:g} B/clk/SM x {self.sm_count} SMs x {clock_mhz:.0f} MHz",
            source="CUDA C++ Programming Guide, Shared Memory: 32 banks, 4 bytes per bank per clock",
        )

    def derivations(self) -> tuple[Derivation, ...]:
        """Every ceiling of this GPU with its formula and source: the supported precisions'
        peaks, then the DRAM, L2 and L1/shared bandwidths."""
        peaks = tuple(self.peak_derivation(p) for p in self.supported_precisions())
        return peaks + tuple(self.bandwidth_derivation(lvl) for lvl in MEMORY_LEVELS)

    def ridge_point(self, precision: str = "fp32", level: str = "dram", sparse: bool = False) -> float:
        """Arithmetic intensity (flop/byte) where the `level` roof meets the compute roof.

        Examples
        --------
        >>> import roofline
        >>> round(roofline.gpu("H100-SXM").ridge_point("fp32"), 1)
        20.0
        """
        return self.peak_flops(precision, sparse) / self.bandwidth(level)


# -- the database ------------------------------------------------------------------------


def translate_validation_error(exc: ValidationError, what: str) -> RooflineError:
    """A pydantic ValidationError as one RooflineError line: ``what: field=value: reason``."""
    return pydantic_error(exc, RooflineError, what)


def make_gpu(entry: Mapping[str, Any], what: str) -> GPU:
    """A `GPU` from its fields, any invalid field raised as one RooflineError that names `what`."""
    try:
        return GPU(**entry)
    except RooflineError as exc:
        raise RooflineError(f"{what}: {exc}") from None


def custom_gpu(**fields: Any) -> GPU:
    """Build a GPU from keywords (the `GPU` fields), validated like database entries.

    Examples
    --------
    >>> g = custom_gpu(name="toy", compute_capability="8.0", sm_count=10,
    ...                boost_clock_hz=1e9, dram_bytes_per_second=100e9)
    >>> g.peak_flops("fp32")
    1280000000000.0
    """
    return make_gpu(fields, "custom_gpu")


def load_gpu(path: str | Path) -> GPU:
    """Read one GPU from a TOML or JSON file (the `GPU` fields; TOML may put them in ``[gpu]``,
    as a facts file of ``roofline/data/gpus/`` does, or ``[[gpu]]``).

    Raises
    ------
    RooflineError
        If the file is not TOML/JSON (truncated, not UTF-8, non-finite numbers, nested
        too deeply), holds not exactly one GPU, or a field is invalid; the message names
        the file.
    OSError
        If the file cannot be read.
    """
    path = as_path(path, RooflineError)
    where = f"path={str(path)!r}"
    data: Any = (
        read_json(path, RooflineError) if path.suffix.lower() == ".json" else read_toml(path, RooflineError)
    )
    if isinstance(data, dict) and "gpu" in data:
        entries = data["gpu"] if isinstance(data["gpu"], list) else [data["gpu"]]
        if len(entries) != 1:
            raise RooflineError(f"{where} holds {len(entries)} GPUs; expected exactly 1")
        data = entries[0]
    if not isinstance(data, dict):
        raise RooflineError(f"{where} must hold a table of GPU fields")
    return make_gpu(data, str(path))
