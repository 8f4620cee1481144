"""The probe registry: every step `run_validation` runs in its loop, in run order (a probe comes
after those whose results it needs) and in the order `render_markdown` renders their sections.

The one place probes are made: adding a probe is a module in `validate.probes` (or `checks`,
`suite`) with its measurement, result model and a `validate.probes.Probe` subclass, exported by
its subpackage, and one line here (its result also needs a field, named as the probe, in
`ValidationReport`, which is what report.json's schema says).
"""

from __future__ import annotations

from ..checks import OccupancyCheckProbe
from ..probes import (
    CalibrationProbe,
    CeilingsProbe,
    ComputeProbe,
    EffectsProbe,
    GlobalCasProbe,
    L2WritesProbe,
    HostLinksProbe,
    LatencyProbe,
    LaunchProbe,
    MemoryTermsProbe,
    NsightLaunchProbe,
    OpenLinesProbe,
    PersistenceProbe,
    PredictionCheckProbe,
    Probe,
    ReferencesProbe,
    SharedAtomicsProbe,
    WorkingSetProbe,
)
from ..suite import FamiliesProbe, SuiteProbe

__all__ = ["PROBES"]

PROBES: tuple[Probe, ...] = (
    CeilingsProbe(),
    ReferencesProbe(),
    LaunchProbe(),
    NsightLaunchProbe(),
    LatencyProbe(),
    WorkingSetProbe(),
    HostLinksProbe(),
    PersistenceProbe(),
    OccupancyCheckProbe(),
    PredictionCheckProbe(),
    EffectsProbe(),
    ComputeProbe(),
    MemoryTermsProbe(),
    SharedAtomicsProbe(),
    GlobalCasProbe(),
    L2WritesProbe(),
    OpenLinesProbe(),
    CalibrationProbe(),
    SuiteProbe(),
    FamiliesProbe(),
)
