"""One probe per measured parameter of the time model, and the protocol they share.

Each probe module holds a measurement, its result model, its Markdown and a `Probe` subclass
(`Probe`, `RunContext`): the ceilings (tensor cores, library references), launch cost (with
events and under Nsight), the latency ladder, the working-set sweep, host links, L2
persistence, the copy sweep and its fit (`run_prediction_check`, `fit_to_measurements`), the
memory effects, compute terms, memory terms, shared atomics, global compare-and-swap, the written lines L2 keeps (under Nsight), and the calibration that gathers every
probe's figures. `validate.report`'s registry orders them.
"""

from ._calibration import CalibrationProbe, RunCalibration
from ._ceilings import Ceilings, CeilingsProbe
from ._compute import ComputeEffects, ComputeProbe
from ._fit import CALIBRATION_FIT_PARAMETERS, CalibrationFit, FitParameter, fit_to_measurements
from ._global_cas import GlobalCas, GlobalCasProbe
from ._hostlink import HostLinks, HostLinksProbe
from ._kept_writes import L2Writes, L2WritesProbe
from ._open_lines import OpenLines, OpenLinesProbe
from ._latency import LatencyLadder, LatencyProbe
from ._launch import LaunchOverhead, LaunchProbe, block_ramp_figure, measure_launch_overhead
from ._memory_effects import EffectsProbe, MemoryEffects
from ._memory_terms import MemoryTerms, MemoryTermsProbe
from ._nsight_launch import NsightLaunch, NsightLaunchProbe
from ._persistence import Persistence, PersistenceProbe
from ._prediction import PredictionCheck, PredictionCheckProbe, run_prediction_check
from ._probe import Probe, RunContext
from ._references import References, ReferencesProbe
from ._shared_atomics import SharedAtomics, SharedAtomicsProbe
from ._workingset import WorkingSet, WorkingSetProbe, plot_working_set

__all__ = [
    "CALIBRATION_FIT_PARAMETERS",
    "CalibrationFit",
    "CalibrationProbe",
    "Ceilings",
    "CeilingsProbe",
    "ComputeEffects",
    "ComputeProbe",
    "EffectsProbe",
    "FitParameter",
    "GlobalCas",
    "GlobalCasProbe",
    "HostLinks",
    "HostLinksProbe",
    "L2Writes",
    "L2WritesProbe",
    "LatencyLadder",
    "LatencyProbe",
    "LaunchOverhead",
    "LaunchProbe",
    "MemoryEffects",
    "MemoryTerms",
    "MemoryTermsProbe",
    "NsightLaunch",
    "NsightLaunchProbe",
    "OpenLines",
    "OpenLinesProbe",
    "Persistence",
    "PersistenceProbe",
    "PredictionCheck",
    "PredictionCheckProbe",
    "Probe",
    "References",
    "ReferencesProbe",
    "RunCalibration",
    "RunContext",
    "SharedAtomics",
    "SharedAtomicsProbe",
    "WorkingSet",
    "WorkingSetProbe",
    "block_ramp_figure",
    "fit_to_measurements",
    "measure_launch_overhead",
    "plot_working_set",
    "run_prediction_check",
]
