"""The probe registry: every measurement `run_validation` runs in its loop, in run and report order.

Adding a probe: a module with its measurement, result model and a `validate._probe.Probe`
(``PROBE``), and one line here (its result also needs a field, named as the probe, in
`ValidationReport`, which is what report.json's schema says).
"""

from __future__ import annotations

from . import _effects, _hostlink, _latency, _launch, _persistence, _workingset
from ._probe import Probe

__all__ = ["PROBES"]

PROBES: tuple[Probe, ...] = (
    _launch.PROBE,
    _latency.PROBE,
    _workingset.PROBE,
    _hostlink.PROBE,
    _persistence.PROBE,
    _effects.PROBE,
)
