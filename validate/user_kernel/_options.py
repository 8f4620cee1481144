"""`MeasureOptions`: how `measure` compiles, checks, times and predicts a user's kernel."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import occupancy
import roofline
from occupancy.common import CheckedModel, integer
from pydantic import ConfigDict, Field
from roofline import RooflineError

from ..device import CompileOptions, StopRules

__all__ = ["CodeType", "MeasureOptions"]

CodeType = Literal["cuda", "ptx", "cubin", "fatbin"]

_CODE_TYPES = ("cuda", "ptx", "cubin", "fatbin")
_COMPILE = tuple(CompileOptions.model_fields)
_TIMING = tuple(StopRules.model_fields)


class MeasureOptions(CheckedModel):
    """Every option of `measure` but the kernel, its launch and its data, checked once at construction.

    The compile fields are `validate.device.CompileOptions`' and the timing fields `StopRules`'
    (checked by them, with their messages); `compile_options` and `stop_rules` hand them on.

    Attributes
    ----------
    code_type : {"cuda", "ptx", "cubin", "fatbin"} or None
        What the code is, when neither its suffix nor its content tells.
    compiler : {"auto", "nvcc", "nvrtc"}
        What builds a ``.cu`` file: "auto" is nvcc where one is found (the file's host code and
        its project's headers compile as its build compiles them), else NVRTC, as
        `occupancy.kernel_resources` builds it; source text and PTX always go through NVRTC.
    std, defines, include_paths, max_register_count
        Compile options for source (`CompileOptions`; nvcc's flags for a file nvcc builds): C++
        dialect, ``-D`` macros (a mapping), ``-I`` folders, ``-maxrregcount`` (1 to 255).
    sizes : dict of str to int, optional
        Names usable in spec-string sizes (``"f32[n]"``).
    tolerance : float
        Largest ``||out - ref|| / ||ref||`` of the output check, >= 0.
    gpu : roofline.GPU or None
        The database GPU of the prediction (a name is looked up); None: the device's entry.
    l2 : {"flush", "warm"}
        Cold L2 before each timed launch (events around one launch), or warm L2 (a CUDA graph
        of back-to-back launches between one pair of events).
    warmup, repetitions, max_repetitions, target_spread, budget_seconds
        The timing loop's stop rules (`StopRules`): 3 warm-ups, rounds of 10 until the spread is
        2 % or 1 s of device time is spent, at most 1000.
    seed : int or None
        Seed of the random inputs, >= 0.
    device : int
        CUDA device index, >= 0 (ignored when `measure` is given a session).

    Examples
    --------
    >>> options = MeasureOptions(defines={"TILE": 32}, budget_seconds=0.1, l2="warm")
    >>> options.compile_options.defines, options.stop_rules.budget_seconds
    ((('TILE', '32'),), 0.1)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error: ClassVar[type[Exception]] = RooflineError

    code_type: CodeType | None = Field(default=None, description="cuda, ptx, cubin or fatbin; None: from the code.")
    compiler: str = Field(default="auto", description="What builds a .cu file: auto (nvcc where found), nvcc, nvrtc.")
    std: str | None = Field(default=None, description="C++ dialect; None: c++17.")
    defines: tuple[tuple[str, str], ...] = Field(default=(), description="-D macros as (name, value).")
    include_paths: tuple[str, ...] = Field(default=(), description="-I folders.")
    max_register_count: int | None = Field(default=None, description="-maxrregcount.")
    sizes: dict[str, int] | None = Field(default=None, description="Names usable in spec-string sizes.")
    tolerance: float = Field(default=1e-5, description="Largest ||out - ref|| / ||ref||.")
    gpu: roofline.GPU | None = Field(default=None, description="Database GPU of the prediction; None: the device's.")
    l2: Literal["flush", "warm"] = Field(default="flush", description="Cold L2 before each launch, or warm.")
    warmup: int = Field(default=3, description="Untimed runs first.")
    repetitions: int = Field(default=10, description="Timed runs per round.")
    max_repetitions: int = Field(default=1000, description="Cap on timed runs.")
    target_spread: float | None = Field(default=0.02, description="Spread (iqr / median) at which to stop.")
    budget_seconds: float | None = Field(default=1.0, description="Device time to spend on timed runs, seconds.")
    seed: int | None = Field(default=None, description="Seed of the random inputs.")
    device: int = Field(default=0, description="CUDA device index.")

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Each field checked; the compile and timing fields by the models they build."""
        out = dict(data)
        defaults = {name: field.default for name, field in cls.model_fields.items()}
        compile_options = CompileOptions(**{k: out[k] for k in _COMPILE if k in out})
        rules = StopRules(**{k: out.get(k, defaults[k]) for k in _TIMING})
        out.update({k: getattr(compile_options, k) for k in _COMPILE if k in out})
        out.update({k: getattr(rules, k) for k in _TIMING})
        if "compiler" in out and out["compiler"] not in occupancy.COMPILERS:
            raise RooflineError(f"compiler={out['compiler']!r} is not one of {', '.join(occupancy.COMPILERS)}")
        if out.get("code_type") is not None and out["code_type"] not in _CODE_TYPES:
            raise RooflineError(f"code_type={out['code_type']!r} is not one of {', '.join(_CODE_TYPES)}")
        if "l2" in out and out["l2"] not in ("flush", "warm"):
            raise RooflineError(f"l2={out['l2']!r} must be 'flush' or 'warm'")
        if "tolerance" in out:
            out["tolerance"] = _tolerance(out["tolerance"])
        if out.get("sizes") is not None:
            out["sizes"] = _sizes(out["sizes"])
        if isinstance(out.get("gpu"), str):
            out["gpu"] = roofline.gpu(out["gpu"])
        for name in ("seed", "device"):
            if out.get(name) is not None and integer(name, out[name]) < 0:
                raise RooflineError(f"{name}={out[name]} must be >= 0")
        return out

    @property
    def compile_options(self) -> CompileOptions:
        """The NVRTC options of these options."""
        return CompileOptions(**{k: getattr(self, k) for k in _COMPILE})

    @property
    def stop_rules(self) -> StopRules:
        """The timing loop's stop rules of these options."""
        return StopRules(**{k: getattr(self, k) for k in _TIMING})


def _tolerance(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"tolerance must be a number, not {type(value).__name__}")
    if not value >= 0:  # NaN too; an infinite tolerance accepts any output
        raise RooflineError(f"tolerance={value!r} must be >= 0")
    return float(value)


def _sizes(value: object) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise TypeError(f"sizes must be a mapping of names to ints, not {type(value).__name__}")
    for name, size in value.items():
        if not isinstance(name, str):
            raise TypeError(f"sizes must have str names, not {type(name).__name__}")
        integer(f"sizes[{name!r}]", size)
    return {name: int(size) for name, size in value.items()}
