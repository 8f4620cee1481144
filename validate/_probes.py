"""The probe registry: every step `run_validation` runs in its loop, in run order (a probe comes
after those whose results it needs) and in the order `render_markdown` renders their sections.

Adding a probe: a module with its measurement, result model and a `validate._probe.Probe`
(``PROBE``), and one line here (its result also needs a field, named as the probe, in
`ValidationReport`, which is what report.json's schema says).
"""

from __future__ import annotations

from . import (
    _calibration,
    _ceilings,
    _compute,
    _effects,
    _family_report,
    _hostlink,
    _latency,
    _launch,
    _memory_terms,
    _nsight_launch,
    _occupancy_check,
    _persistence,
    _prediction,
    _reference,
    _suite,
    _workingset,
)
from ._probe import Probe

__all__ = ["PROBES"]

PROBES: tuple[Probe, ...] = (
    _ceilings.PROBE,
    _reference.PROBE,
    _launch.PROBE,
    _nsight_launch.PROBE,
    _latency.PROBE,
    _workingset.PROBE,
    _hostlink.PROBE,
    _persistence.PROBE,
    _occupancy_check.PROBE,
    _prediction.PROBE,
    _effects.PROBE,
    _compute.PROBE,
    _memory_terms.PROBE,
    _calibration.PROBE,
    _suite.PROBE,
    _family_report.PROBE,
)
