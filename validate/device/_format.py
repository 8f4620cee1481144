"""Number formatting shared by the Markdown of the probes and the report (SI units in, text out)."""

from __future__ import annotations

__all__ = ["format_mhz", "format_ns", "format_rate", "format_size"]


def format_rate(value: float | None, unit: str) -> str:
    """A rate in GB/s (``bytes_per_second``), TOP/s (``ops_per_second``) or TFLOP/s; "-" for None."""
    if value is None:
        return "-"
    if unit == "bytes_per_second":
        return f"{value / 1e9:,.1f} GB/s"
    return f"{value / 1e12:,.1f} T{'OP' if unit == 'ops_per_second' else 'FLOP'}/s"


def format_mhz(hz: float | None) -> str:
    """A clock in whole MHz; "-" for None."""
    return "-" if hz is None else f"{hz / 1e6:.0f}"


def format_ns(seconds: float | None) -> str:
    """A latency in whole nanoseconds; "-" for None."""
    return "-" if seconds is None else f"{seconds * 1e9:,.0f} ns"


def format_size(nbytes: float) -> str:
    """A size in the largest binary unit it reaches (``"16 KiB"``, ``"1.5 MiB"``)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes:.0f} B"
