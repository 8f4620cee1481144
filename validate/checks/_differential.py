"""The harness of the differential checks: the calculators (occupancy, clusters, resources)
against the driver's own answers on the device.

One way to compile the generated probe kernels, to ask the driver (a count, or the text of
its refusal), and to decide that a driver answer and a calculated one agree; each check
(`_occupancy`, `_clusters`, `_resources`) keeps only its query grid and its
mismatch record.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from occupancy.common import sequence
from roofline import RooflineError

from ..device import DeviceError, DeviceInfo, compile_kernels, kernel_source

if TYPE_CHECKING:
    from cuda.core import Kernel

__all__ = ["ProbeVariant", "ask", "counts_agree", "error_text", "load_probe_kernels", "probe_source"]


@dataclass(frozen=True)
class ProbeVariant:
    """One generated kernel: live float values, static shared bytes, barriers, register cap."""

    live: int
    static_shared_memory: int
    barriers: int
    max_register_count: int | None = None

    @property
    def name(self) -> str:
        """The kernel's C name, unique per variant."""
        cap = self.max_register_count or 0
        return f"probe_l{self.live}_s{self.static_shared_memory}_b{self.barriers}_r{cap}"


def probe_source(variants: Sequence[ProbeVariant]) -> str:
    """CUDA C for the given variants, from the ``occupancy_probe.cu`` template.

    Examples
    --------
    >>> src = probe_source([ProbeVariant(4, 1024, 3)])
    >>> "__shared__ float s_static[256];" in src and "bar.sync 2;" in src
    True
    """
    variants = sequence("variants", variants, "a sequence of ProbeVariant")
    template = string.Template(kernel_source("occupancy_probe.cu"))
    parts = []
    for v in variants:
        if not isinstance(v, ProbeVariant):
            raise TypeError(f"variants must hold ProbeVariant, not {type(v).__name__}")
        for name in ("live", "static_shared_memory", "barriers"):
            value = getattr(v, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        cap = v.max_register_count
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int)):
            raise TypeError(f"max_register_count must be an int, not {type(cap).__name__}")
        if not 1 <= v.live <= 4096:
            raise RooflineError(f"live={v.live} must be between 1 and 4096 floats")
        # Static shared memory is at most 48 KiB per block on every architecture.
        if not 0 <= v.static_shared_memory <= 49152 or v.static_shared_memory % 4:
            raise RooflineError(
                f"static_shared_memory={v.static_shared_memory} must be a multiple of 4 bytes from 0 to 49152"
            )
        if not 1 <= v.barriers <= 16:
            raise RooflineError(f"barriers={v.barriers} must be between 1 and 16")
        words = v.static_shared_memory // 4
        has_static = words > 0
        parts.append(template.substitute(
            name=v.name,
            live=v.live,
            static_declaration=f"__shared__ float s_static[{words}];" if has_static else "",
            static_store=f"s_static[threadIdx.x % {words}] = acc;" if has_static else "",
            static_load=f"acc += s_static[(threadIdx.x + 1) % {words}];" if has_static else "",
            barrier_statement=f'asm volatile("bar.sync {v.barriers - 1};" ::: "memory");' if v.barriers > 1 else "",
        ))
    return "\n".join(parts)


def error_text(exc: BaseException) -> str:
    """A refusal as an answer: ``"error: "`` and the first line of the message (or the type's name)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"error: {text}"


def ask(query: Callable[[], object]) -> int | str:
    """One driver answer: the count it returns, or `error_text` of its refusal."""
    try:
        return int(query())  # type: ignore[call-overload]
    except Exception as exc:  # noqa: BLE001 - a refused launch is an answer to compare
        return error_text(exc)


def counts_agree(driver: int | str, calculated: int | str) -> bool:
    """Whether a driver count and a calculated one agree; a refusal on either side (the
    driver's error, the calculator's ``"error: ..."``) means "cannot launch" and counts as 0."""
    d = driver if isinstance(driver, int) else 0
    c = calculated if isinstance(calculated, int) else (0 if calculated.startswith("error") else int(calculated))
    return d == c


def load_probe_kernels(info: DeviceInfo, variants: Sequence[ProbeVariant],
                       name: str) -> tuple[dict[ProbeVariant, Kernel], dict[str, str]]:
    """Compile the probe kernels of `variants` for the device, one program per register cap.

    Returns the loaded kernels by variant, and the compile error of each variant that failed
    (the check goes on with the others). ``name`` prefixes the program names in messages.
    """
    by_cap: dict[int | None, list[ProbeVariant]] = {}
    for v in variants:
        by_cap.setdefault(v.max_register_count, []).append(v)
    kernels: dict[ProbeVariant, Kernel] = {}
    errors: dict[str, str] = {}
    for cap, group in by_cap.items():
        try:
            loaded = compile_kernels(probe_source(group), [v.name for v in group], arch=info.arch,
                                     max_register_count=cap, name=f"{name}_r{cap or 0}")
        except DeviceError as exc:
            errors.update({v.name: str(exc) for v in group})
            continue
        kernels.update({v: loaded[v.name] for v in group})
    return kernels, errors
