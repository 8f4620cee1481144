"""The facts files (roofline/data/gpus/<gpu>.toml): every file validates, every entry names its
source, the figures derived from them are consistent, and a new file is a new GPU."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

import occupancy
import roofline
from roofline import RooflineError, _facts
from roofline._calibration import CALIBRATION_FIGURES, CALIBRATION_PARAMETERS, Calibration, calibration_defaults

FOLDER = Path(roofline.__file__).parent / "data" / "gpus"
FACTS = _facts.read_facts()
IDS = [f.gpu.name for f in FACTS]
LOCALITY_KEYS = {"l1_combine_sectors", "page_window_threads", "dram_page_bytes", "source"}


def test_one_file_per_gpu_named_after_it_in_listing_order():
    assert sorted(p.name for p in FOLDER.glob("*.toml")) == sorted(f"{f.gpu.name.lower()}.toml" for f in FACTS)
    assert [f.path for f in FACTS] == [f"roofline/data/gpus/{f.gpu.name.lower()}.toml" for f in FACTS]
    orders = [f.listing_order for f in FACTS]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert [g.name for g in roofline.gpus()] == IDS


def test_the_calibration_model_names_its_parameters_and_figures():
    fields = set(Calibration.model_fields) - {"gpu", "sources"}
    assert set(CALIBRATION_PARAMETERS) | set(CALIBRATION_FIGURES) == fields
    assert not set(CALIBRATION_PARAMETERS) & set(CALIBRATION_FIGURES)
    assert CALIBRATION_PARAMETERS[0] == "idle_latency_seconds" and "dram_latency_seconds" in CALIBRATION_FIGURES
    # the generic defaults give every parameter, and no measured figure
    assert set(calibration_defaults()) == set(CALIBRATION_PARAMETERS)


@pytest.mark.parametrize("facts", FACTS, ids=IDS)
def test_every_entry_names_its_source(facts):
    g = facts.gpu
    for key in ("sm_count", "boost_clock_hz", "memory", "l2_cache_bytes", "host_link", "datasheet"):
        assert g.sources.get(key), f"{g.name} lacks a source for {key}"
    cal = facts.calibration
    assert cal.gpu == g.name
    given = [k for k in (*CALIBRATION_PARAMETERS, *CALIBRATION_FIGURES) if getattr(cal, k) is not None]
    for key in given:
        assert cal.sources[key].startswith(("measured: ", "default: ")), (g.name, key)
    for ceiling in facts.ceilings.values():
        assert ceiling.source.startswith("measured: ") and "gpuroof validate" in ceiling.source
    for kinds in facts.host_links.values():
        for link in kinds.values():
            assert link.source.startswith("measured: ")
    if facts.gpc_layout is not None:
        assert ("Assumption, not measured" in facts.gpc_layout.source) is (not facts.gpc_layout.measured)
    assert facts.locality is not None and set(facts.locality) == LOCALITY_KEYS
    measured_here = facts.locality["source"].startswith("measured")
    assert measured_here or facts.locality["source"].startswith("the H200's measured figures, assumed")


@pytest.mark.parametrize("facts", FACTS, ids=IDS)
def test_the_lookups_return_the_facts(facts):
    name = facts.gpu.name
    assert roofline.gpu(name) is facts.gpu and roofline.calibration(name) is facts.calibration
    assert roofline.measured_ceilings(name) == facts.ceilings
    if facts.gpc_layout is not None:
        assert roofline.gpc_layout(name) is facts.gpc_layout


@pytest.mark.parametrize("facts", FACTS, ids=IDS)
def test_derived_figures(facts):
    g = facts.gpu
    rates = roofline.arch_rates(g.compute_capability)
    # peak = SMs x clock x per-SM rate of the architecture
    assert g.peak_flops("fp32") == g.sm_count * g.boost_clock_hz * rates.flops_per_clock_per_sm["fp32"]
    # DRAM bandwidth = bus width / 8 x data rate, where the datasheet gives both
    if g.memory_bus_width_bits is not None and g.memory_data_rate_hz is not None:
        assert g.memory_bandwidth == g.memory_bus_width_bits / 8 * g.memory_data_rate_hz
    # what was measured stays under what the datasheet allows (measured ceilings name a
    # precision, "*_fma" the plain one, or a memory level)
    level = {"dram": g.memory_bandwidth, "l2": g.l2_bandwidth, "shared": g.shared_memory_bandwidth}
    for name, ceiling in facts.ceilings.items():
        bound = level.get(name.split("_")[0]) or g.peak_flops(name.removesuffix("_fma"))
        assert ceiling.value <= bound, (g.name, name, ceiling.value, bound)
        assert ceiling.value == max(ceiling.ours, ceiling.reference_value or 0)
    # a GPC layout splits the SMs of the GPU
    if facts.gpc_layout is not None:
        assert sum(facts.gpc_layout.sms_per_gpc) == g.sm_count == facts.gpc_layout.sm_count
        assert (facts.gpc_layout.name, facts.gpc_layout.aliases) == (g.name, g.aliases)
    loc = facts.locality
    assert loc is not None and all(isinstance(loc[k], int) and loc[k] > 0 for k in LOCALITY_KEYS - {"source"})


def test_the_h200_locality_is_measured_and_the_others_say_it_is_assumed():
    sources = {f.gpu.name: f.locality["source"] for f in FACTS if f.locality}
    assert sources.pop("H200").startswith("measured")
    assert all(s.startswith("the H200's measured figures, assumed: not measured on this GPU")
               for s in sources.values())


# ------------------------------------------------------------------ lookups


@pytest.mark.parametrize("spelling", ["H200", "nvidia h200", "NVIDIA H200", "h200 sxm", "H100 SXM", "h100-sxm",
                                      "NVIDIA H100 80GB HBM3", "H100", "gh200"])
def test_layout_lookup_accepts_the_gpu_spellings(spelling):
    assert roofline.gpc_layout(spelling) is _facts.gpu_facts(spelling).gpc_layout
    assert roofline.gpc_layout(spelling).name in ("H200", "H100-SXM", "GH200")
    assert roofline.gpc_layout(roofline.gpu(spelling)) is roofline.gpc_layout(spelling)


def test_a_gpu_without_a_layout_lists_the_known_ones():
    with pytest.raises(RooflineError, match="'A100-SXM4-40GB' has no packaged GPC layout; known: H100-SXM, H100-NVL"):
        roofline.gpc_layout("A100")
    with pytest.raises(TypeError):
        roofline.gpc_layout(3)
    layout = roofline.gpc_layout("H200")
    assert roofline.gpc_layout(layout) is layout
    assert [g.name for g in roofline.gpc_layouts()] == ["H100-SXM", "H100-NVL", "H200", "GH200"]


def test_a_custom_gpu_gets_the_generic_calibration_and_no_measurements():
    toy = roofline.custom_gpu(name="toy", compute_capability="9.0", sm_count=10, boost_clock_hz=1e9,
                              dram_bytes_per_second=1e11)
    cal = roofline.calibration(toy)
    assert cal.gpu == "toy" and cal.measured == () and cal.dram_latency_seconds is None
    assert roofline.measured_ceilings(toy) == {}
    with pytest.raises(RooflineError, match="'toy' has no packaged GPC layout"):
        roofline.gpc_layout(toy)


# ------------------------------------------------------------------ adding a GPU

NEW_GPU = '''
listing_order = 1000

[gpu]
name = "X-Test"
aliases = ["NVIDIA X Test"]
compute_capability = "9.0"
sm_count = 20
boost_clock_hz = 1.5e9
memory_bus_width_bits = 1024
memory_data_rate_hz = 2e9
l2_cache_bytes = 8388608
host_link = { kind = "pcie", generation = 4, lanes = 16 }
[gpu.sources]
sm_count = "a test"

[calibration.launch_overhead_seconds]
value = 3e-6
source = "measured: a test"

[gpc_layout]
sms_per_gpc = [16, 4]
max_blocks_per_sm_in_cluster = 8
max_cluster_size = 8
max_nonportable_cluster_size = 16
measured = false
source = "Assumption, not measured: a test"
'''


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A copy of the packaged facts files that the lookups read instead."""
    shutil.copytree(FOLDER, tmp_path / "gpus")
    monkeypatch.setattr(_facts, "_DIRECTORY", tmp_path / "gpus")
    return tmp_path / "gpus"


def test_adding_a_file_adds_a_gpu(folder):
    (folder / "x-test.toml").write_text(NEW_GPU)
    g = roofline.gpu("nvidia x-test")
    assert g.name == "X-Test" and roofline.gpus()[-1] is g and len(roofline.gpus()) == len(FACTS) + 1
    assert g.memory_bandwidth == 1024 / 8 * 2e9
    cal = roofline.calibration("X-Test")
    assert cal.launch_overhead_seconds == 3e-6 and cal.measured == ("launch_overhead_seconds",)
    assert cal.idle_latency_seconds == calibration_defaults()["idle_latency_seconds"]["value"]
    assert roofline.measured_ceilings(g) == {}
    layout = roofline.gpc_layout("x test")
    assert layout.sm_count == 20 and layout in roofline.gpc_layouts()
    r = occupancy.max_active_clusters(layout, cluster_size=8, threads_per_block=128, registers_per_thread=32)
    assert r.gpu == "X-Test" and r.clusters_per_gpc[0] > 0
    assert roofline.transfer.transfer_time(g, 1 << 20).source.startswith("model")
    # load_gpu reads the [gpu] section of a facts file as it stands
    assert roofline.load_gpu(folder / "x-test.toml") == g


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (NEW_GPU + "\n[tuning]\nx = 1\n", "unknown sections \\['tuning'\\]"),
        (NEW_GPU.replace('source = "measured: a test"', ""), "name no source"),
        (NEW_GPU.replace("sms_per_gpc = [16, 4]", "sms_per_gpc = [16, 2]"), "add up to sm_count=20"),
        (NEW_GPU.replace("sm_count = 20", "sm_count = 0"), "sm_count"),
        (NEW_GPU + "\n[calibration.speed]\nvalue = 1\nsource = 'x'\n", "unknown entries \\['speed'\\]"),
        ("[gpu\n", "not TOML"),
    ],
    ids=["section", "source", "gpc-sum", "sm-count", "calibration-entry", "toml"],
)
def test_a_bad_file_is_refused_with_its_name(folder, text, message):
    (folder / "x-test.toml").write_text(text)
    with pytest.raises(RooflineError, match=message) as info:
        _facts.read_facts(folder)
    assert "x-test.toml" in str(info.value)


# ------------------------------------------------------------------ writing the measured sections

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("facts_sections", ROOT / "scripts" / "facts_sections.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_validate_report_gives_the_measured_sections(tmp_path):
    # scripts/facts_sections.py turns the H200's report into the sections of its facts file:
    # they validate, and give back the calibration that the same run wrote (calibration.json).
    script = _script()
    report = json.loads((ROOT / "docs/results/h200/report.json").read_text())["reports"][0]
    layout = json.loads((ROOT / "tests/data/gpc_layout_h200.json").read_text())
    packaged_text = (FOLDER / "h200.toml").read_text()
    head = packaged_text[: re.search(r"(?m)^\[(?!gpu[.\]])", packaged_text).start()]
    locality = packaged_text[packaged_text.index("[locality]"):]  # not in a validate report
    # the standalone probes' figures (scripts/*_probe.py) follow it: the packaged file's, not the report's
    standalone = set(re.findall(r"(?m)^\[calibration\.(\w+)\]", locality))
    text = "\n".join((head, script.sections(report),
                      script.gpc_layout_section(layout, measured_on="an NVIDIA H200"), locality))
    (tmp_path / "h200.toml").write_text(text)
    (made,) = _facts.read_facts(tmp_path)
    packaged = roofline.load_calibration(ROOT / "docs/results/h200/calibration.json")
    assert made.calibration.measured == packaged.measured
    for name in (*CALIBRATION_PARAMETERS, *CALIBRATION_FIGURES):
        expected = getattr(packaged, name)  # None: a figure this report's run did not measure
        if name in standalone:
            expected = getattr(roofline.calibration("H200"), name)
        assert getattr(made.calibration, name) == (expected if expected is None else pytest.approx(expected, rel=1e-3)), name
    assert set(made.ceilings) == set(roofline.measured_ceilings("H200"))
    assert {(m, d) for m, kinds in made.host_links.items() for d in kinds} == {
        (m, d) for m in ("pinned", "pageable", "mapped", "managed") for d in ("h2d", "d2h")}
    assert made.gpc_layout.sms_per_gpc == roofline.gpc_layout("H200").sms_per_gpc
    test_every_entry_names_its_source(made)
    test_derived_figures(made)
