"""Launch: the fixed cost of one launch, added to the rest."""

from __future__ import annotations

from ._term import Setting, Term

__all__ = ["launch_term"]


def launch_term(setting: Setting) -> Term:
    """The calibration's ``launch_overhead_seconds`` (what CUDA events around one launch see
    beyond the kernel's own work)."""
    seconds = setting.calibration.launch_overhead_seconds
    return Term(name="launch", side="overhead", seconds=seconds, limiter="launch",
                inputs={"launch_overhead_seconds": seconds})
