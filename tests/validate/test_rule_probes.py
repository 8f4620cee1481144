"""The rule probes (`validate.probes._rule_probes`): one kernel pair per corpus-argued rule, whose
counts and predictions build offline; the rule changes the prediction of the launch where its
effect is present and leaves the other alone. Marked ``gpu``: a probe timed on the device."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import occupancy
import pytest

from roofline._predict.rules import RULES
from validate.probes import _rule_probes
from validate.probes._rule_probes import RULE_PROBES, _measure_one, predictions, probe_resources

IDS = [f"{p.rule}-{p.variant}" for p in RULE_PROBES]


@pytest.fixture(scope="module", autouse=True)
def counts_once_per_probe():
    """Each probe's counts are built once for the file (their traffic is most of its CPU): a test
    reads them, `predictions` builds them again for the same probe and resources, and so does the
    load-count test. The counts are a frozen `Kernel` and `ProfileCounts`: sharing them changes
    nothing a test reads."""
    real = _rule_probes.probe_counts
    built: dict[tuple, tuple] = {}

    def counts(probe, resources):
        key = (id(probe), id(resources))
        if key not in built:
            built[key] = (real(probe, resources), probe, resources)  # both kept: their ids stay theirs
        return built[key][0]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_rule_probes, "probe_counts", counts)
        yield


@functools.lru_cache(maxsize=None)
def _resources(kernel: str) -> occupancy.KernelResources:
    probe = next(p for p in RULE_PROBES if p.kernel == kernel)
    try:
        return probe_resources(probe)
    except (occupancy.OccupancyError, ImportError) as exc:
        pytest.skip(f"the probe kernels do not compile here (NVRTC and nvdisasm): {exc}")


def test_every_corpus_rule_has_a_probe_with_the_effect_present_and_absent():
    # a corpus rule, or one its probe has since justified (its evidence names the probe)
    corpus = {name for name, rule in RULES.items() if rule.kind == "corpus" or rule.evidence.startswith("rule_probes")}
    probed = {p.rule for p in RULE_PROBES}
    assert corpus <= probed and probed <= set(RULES)
    for rule in probed:  # a launch with the effect present or more, and one without
        assert {p.present for p in RULE_PROBES if p.rule == rule} == {False, True}, rule
    assert len({(p.rule, p.variant) for p in RULE_PROBES}) == len(RULE_PROBES)


@pytest.mark.parametrize("probe", RULE_PROBES, ids=IDS)
def test_the_rule_changes_the_prediction_where_its_effect_is_present(probe):
    resources = _resources(probe.kernel)
    assert resources.sass is not None and resources.sass.loops
    kernel, _ = _rule_probes.probe_counts(probe, resources)
    assert kernel.dram_bytes > 0 and kernel.launch.resources is resources
    on, off = predictions(probe, "H100 SXM", resources)
    assert on > 0 and off > 0
    if probe.present:
        assert on != off
    else:
        assert on == off


#: The rule probes as measured on an H100 SXM (docs/results/h100-sxm/probes-2026-12-06).
MEASURED = Path(__file__).resolve().parents[2] / "docs/results/h100-sxm/probes-2026-12-06/rule_probes.json"


@pytest.mark.parametrize("variant", ["thread_0_of_grid"])
def test_one_lanes_loop_is_predicted_from_its_measured_latencies(variant):
    # docs/prediction.md 'One lane runs the loop': 256 trips each waiting a DRAM round trip and the
    # loop's issue, derived from the latency probe's figures with nothing fitted
    probe = next(p for p in RULE_PROBES if p.variant == variant)
    measured = next(row for line in MEASURED.read_text().splitlines()
                    if (row := json.loads(line))["variant"] == variant)["measured_seconds"]
    on, off = predictions(probe, "H100 SXM", _resources(probe.kernel))
    assert abs(on / measured - 1) < 0.1 < abs(off / measured - 1)


#: The probe of ``l1_resident_blocks`` as measured on an H100 SXM (docs/results/h100-sxm/probes-2026-12-07b).
RESIDENT = MEASURED.parents[1] / "probes-2026-12-07b/l1_resident.json"


@pytest.mark.parametrize("probe", [p for p in RULE_PROBES if p.rule == "l1_resident_blocks" and p.present],
                         ids=lambda p: p.variant)
def test_l1_keeps_the_rows_of_a_grids_few_blocks(probe):
    # docs/prediction.md 'The blocks an SM holds, for L1': with the grid's blocks an SM, the
    # window fits L1 and DRAM binds; with the occupancy's, every 4-byte step goes to L2
    measured = next(row for line in RESIDENT.read_text().splitlines()
                    if (row := json.loads(line))["variant"] == probe.variant)["measured_seconds"]
    on, off = predictions(probe, "H100 SXM", _resources(probe.kernel))
    assert abs(on / measured - 1) < 0.2 and off / measured - 1 > 0.5


@pytest.mark.parametrize("probe, warp_loads", [
    (p, p.loads_per_warp) for p in RULE_PROBES if p.loads_per_warp is not None], ids=lambda v: getattr(v, "variant", ""))
def test_a_profiles_load_count_is_the_source_loops_trips(probe, warp_loads):
    scalars = [int(a.split("=")[1]) for a in probe.args[2:4]]
    if probe.kernel == "vector_passes":
        # `passes` vectors of `len` floats, a stride loop of len / 256 trips each
        passes, length = scalars
        assert warp_loads == passes * length // probe.block[0]
    else:
        # load_then_store: the load loop's `trips`, whatever the store loop's passes
        assert probe.kernel == "load_then_store" and warp_loads == scalars[0]
    _, measured = _rule_probes.probe_counts(probe, _resources(probe.kernel))
    assert measured.global_load_instructions == probe.grid[0] * probe.block[0] // 32 * warp_loads


@pytest.mark.gpu
def test_a_probe_is_timed_and_predicted_on_the_gpu(gpu_session):
    probe = next(p for p in RULE_PROBES if p.rule == "nest_trips" and p.present)
    row = _measure_one(probe, "H100 SXM", gpu_session, 0.1)
    assert row["measured_seconds"] > 0 and row["predicted_on"] != row["predicted_off"]
