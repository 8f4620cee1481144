"""Error by kernel family, on the CPU: the specs, the report on the recorded H200 data
(tests/data/families_h200.json), its Markdown and families.png, and re-prediction from
every kind of source."""

import json
import os
import statistics
from pathlib import Path

import numpy as np
import pytest

import roofline
import validate
from validate.device import _timing
from validate.report import _report
from validate.suite import _family_report, _kernels, _suite
from roofline import models
from validate.suite._families import (
    OFFSETS,
    SHARED_STRIDES,
    STRIDES,
    SUITE_FAMILY,
    TRANSPOSE_TILES,
    _matching_spec,
    family_specs,
)

DATA = Path(__file__).parents[1] / "data" / "families_h200.json"
# measure_families reads each launch's SASS (NVRTC, then nvdisasm: about a second of CPU each).
# The default suite reads it for a fixed sample, the suite's row and a family launch with
# global loads in flight; the others get None, the documented "not read here" outcome.
# GPUROOF_TEST_FULL=1 (make test-full) reads every launch's.
FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"
SASS_SAMPLE = ("suite", "grid_stride_copy(blocks_per_sm=1, ept=16)")


@pytest.fixture(scope="module")
def recorded():
    return validate.family_report(DATA)


# ------------------------------------------------------------------ the launches

EXPECTED = {
    "streaming": 3, "strided_read": len(STRIDES), "strided_write": len(STRIDES), "offset": 2 * len(OFFSETS),
    "aos_soa": 2, "transpose": len(models.TRANSPOSE_VARIANTS) + 2 * len(TRANSPOSE_TILES), "blur": 4,
    "reduction": 2 * len(models.REDUCTION_VARIANTS), "matmul": 3, "divergence": 2, "grid_stride_low_occupancy": 15,
    "shared_stride": len(SHARED_STRIDES),
}


@pytest.mark.parametrize("family", validate.FAMILIES, ids=str)
def test_every_family_has_its_launches(family):
    specs = [s for s in family_specs(132) if s.family == family]
    assert len(specs) == EXPECTED[family]
    quick = [s for s in family_specs(132, quick=True) if s.family == family]
    assert 1 <= len(quick) <= 4


def test_labels_are_unique_and_every_transpose_variant_is_there():
    specs = family_specs(132)
    assert len({s.label for s in specs}) == len(specs) == sum(EXPECTED.values())
    variants = {s.arguments["variant"] for s in specs if s.family == "transpose"}
    assert variants == set(models.TRANSPOSE_VARIANTS)
    assert [s.family for s in family_specs(132, families=["blur", "matmul"])] == ["blur"] * 4 + ["matmul"] * 3


def test_every_suite_kernel_belongs_to_a_family_and_most_are_not_run_twice():
    """Each suite kernel maps to a family; all but the suite's own reduction kernel (suite.cu's,
    beside families.cu's four) are family launches, whose measurement the family run reuses."""
    specs = family_specs(132)
    unmatched = []
    for model in models.suite():
        assert SUITE_FAMILY[model.name] in validate.FAMILIES
        grid = tuple((tuple(model.launch.grid) + (1, 1))[:3])  # what build_case launches
        block = tuple((tuple(model.launch.block) + (1, 1))[:3])
        row = _suite.KernelValidation(name=model.name, label=model.label, parameters=dict(model.parameters),
                                        status="ok", flops=1.0, dram_bytes=1.0, predicted_seconds=None, grid=grid,
                                        block=block, function=model.name)
        spec = _matching_spec(row, specs)
        if spec is None:
            unmatched.append(model.label)
        else:
            assert spec.family == SUITE_FAMILY[model.name] and spec.model == model.name
    assert unmatched == ["reduction"]


@pytest.mark.parametrize("label", ["reduction(interleaved, block=256)", "shared_stride(stride=32)",
                                   "branches(lane)", "grid_stride_copy(blocks_per_sm=1, ept=16)"], ids=str)
def test_family_cases_verify_their_own_reference(label):
    spec = next(s for s in family_specs(4, quick=True) if s.label == label)
    case = spec.case(np.random.default_rng(0))
    reference = case.reference(case.inputs)
    outputs = {key: np.asarray(reference[key], dtype) for key, (_, dtype) in case.outputs.items()}
    assert _kernels.check_outputs(case, outputs).ok
    kernel = spec.kernel()
    assert kernel.launch.grid[0] == case.grid[0] and kernel.launch.block[0] == case.block[0]


@pytest.mark.parametrize(
    "model, arguments, error",
    [("nope", {}, roofline.RooflineError), ("shared_stride", {"grid": 8}, roofline.RooflineError),
     ("copy", {"n": float("nan")}, roofline.RooflineError), ("copy", {"x": 1}, roofline.RooflineError),
     (3, {}, TypeError), ("copy", [1], TypeError)],
    ids=["unknown", "missing-argument", "nan", "unknown-argument", "name-not-str", "arguments-not-mapping"],
)
def test_family_model_refuses(model, arguments, error):
    with pytest.raises(error):
        validate.family_model(model, arguments)


@pytest.mark.parametrize("families, error", [(["nope"], roofline.RooflineError), ("blur", TypeError), ([3], TypeError)],
                         ids=["unknown", "a-string", "not-a-name"])
def test_family_selection_refuses(families, error):
    with pytest.raises(error):
        family_specs(132, families=families)


# ------------------------------------------------------------------ the recorded H200 report


def test_recorded_report_covers_every_family(recorded):
    assert [s.family for s in recorded.families] == list(validate.FAMILIES)
    assert recorded.overall.launches == len(recorded.rows) == 122
    assert recorded.gpu == "H200" and recorded.device == "NVIDIA H200"
    assert all(r.error is None and r.predict_seconds > 0 and r.roofline_seconds > 0 for r in recorded.rows)
    assert all(r.record.relative_error < 1e-4 for r in recorded.rows)  # every launch verified
    assert recorded.calibration_source == "packaged: roofline.calibration('H200')"
    assert recorded.calibration == roofline.calibration("H200").model_dump(mode="json")


def test_each_row_is_predict_and_analyze_themselves(recorded):
    """Differential: the report's columns are `roofline.predict` and `roofline.analyze` on the
    model rebuilt from the record and the launch as measured."""
    import occupancy

    gpu = roofline.gpu("H200")
    for row in recorded.rows[::9]:
        rec = row.record
        kernel = validate.family_model(rec.model, rec.arguments)
        launch = occupancy.Launch.model_validate({**kernel.launch.model_dump(), "grid": rec.grid, "block": rec.block,
                                                  "registers_per_thread": rec.registers_per_thread,
                                                  "static_shared_memory": rec.static_shared_memory,
                                                  **({"loads_in_flight_per_thread": rec.loads_in_flight_per_thread}
                                                     if rec.loads_in_flight_per_thread else {})})
        if rec.sass is not None:
            # the SASS rides with the launch's resources: predict reads its loops and issue slots there
            launch = launch.model_copy(update={"resources": occupancy.KernelResources(
                kernel=rec.function, architecture=rec.sass.architecture, registers_per_thread=rec.registers_per_thread,
                static_shared_memory=rec.static_shared_memory or 0, sass=rec.sass)})
        p = roofline.predict(gpu, kernel, launch, after_l2_flush=rec.l2_flushed)
        assert row.predict_seconds == p.seconds
        # the plain roofline of the bytes the prediction moves: its own bound, never above it
        bound = roofline.analyze(gpu, roofline.terms.bound_counts(kernel, p.terms)).time_lower_bound_seconds
        assert row.roofline_seconds == bound == pytest.approx(p.roofline_seconds, rel=1e-12)
        assert row.roofline_seconds <= row.predict_seconds
        assert row.predict_error_percent == pytest.approx(
            100 * (row.predict_seconds - rec.measured_seconds) / rec.measured_seconds)


def test_summaries_recomputed_by_hand(recorded):
    for summary in (*recorded.families, recorded.overall):
        rows = [r for r in recorded.rows if summary.family in ("all", r.record.family)]
        for key in ("predict", "roofline"):
            errors = {r.record.label: abs(getattr(r, f"{key}_seconds") / r.record.measured_seconds - 1) * 100
                      for r in rows}
            assert getattr(summary, f"{key}_median_abs_percent") == pytest.approx(statistics.median(errors.values()))
            assert getattr(summary, f"{key}_worst_abs_percent") == pytest.approx(max(errors.values()))
            assert errors[getattr(summary, f"{key}_worst_label")] == pytest.approx(max(errors.values()))
        signed = [r.predict_error_percent for r in rows]
        assert summary.predict_median_percent == pytest.approx(statistics.median(signed))
        assert summary.predict_within_tolerance == sum(abs(e) <= 20 for e in signed)


def test_recorded_effects_the_model_misses(recorded):
    """The measured effects issue 11 names, as recorded (the next model's targets)."""
    t = {r.record.label: r.record.measured_seconds for r in recorded.rows}
    assert t["branches(lane)"] / t["branches(warp)"] > 1.5  # the two sides serialize
    assert t["shared_stride(stride=32)"] / t["shared_stride(stride=1)"] > 10  # 32-way conflicts
    assert t["reduction(interleaved_compact, block=256)"] > t["reduction(warp_shuffle, block=256)"] * 1.5


def test_every_source_gives_the_same_report(recorded, tmp_path):
    files = validate.write_family_report(recorded, tmp_path)
    assert set(files) == {"json", "markdown", "plot"}
    records = list(recorded.records)
    again = [
        validate.family_report(files["json"]),
        validate.family_report(recorded),
        validate.family_report(records, "H200"),
        validate.family_report([json.loads(r.model_dump_json()) for r in records], roofline.gpu("H200")),
    ]
    for report in again:
        assert report.rows == recorded.rows and report.families == recorded.families


def test_a_calibration_changes_predict_only(recorded):
    slow = roofline.calibration("H200").model_copy(update={"launch_overhead_seconds": 1e-3})
    report = validate.family_report(DATA, calibration=slow)
    assert report.calibration_source.startswith("given")
    for a, b in zip(report.rows, recorded.rows):
        assert a.predict_seconds > b.predict_seconds + 9e-4 and a.roofline_seconds == b.roofline_seconds


def test_a_launch_without_a_time_is_listed_not_counted(recorded):
    broken = recorded.records[0].model_copy(update={"measured_seconds": None, "error": "verify_error: boom"})
    report = validate.family_report([broken, *recorded.records[1:]], "H200")
    assert report.overall.launches == recorded.overall.launches - 1
    assert report.rows[0].error == "not measured: verify_error: boom" and report.rows[0].predict_seconds is None
    text = _family_report.render_family_markdown(report)
    assert "Launches without a prediction" in text and "boom" in text


@pytest.mark.parametrize(
    "source, kwargs, error, message",
    [([], {}, roofline.RooflineError, "gpu= is needed"),
     ("no-such-file.json", {}, FileNotFoundError, "^source=.no-such-file.json. cannot be read: no such file or folder$"),
     (3.0, {}, TypeError, "source must be"),
     ([object()], {"gpu": "H200"}, TypeError, "FamilyRecord"),
     ([{"family": "x"}], {"gpu": "H200"}, roofline.RooflineError, r"source\[0\] is not a family record"),
     (DATA, {"calibration": "H200"}, TypeError, "calibration must be"),
     (DATA, {"calibration": roofline.calibration("H100 SXM")}, roofline.RooflineError, "not 'H200'")],
    ids=["no-gpu", "missing-file", "a-number", "not-a-record", "invalid-record", "calibration-name",
         "calibration-of-another-gpu"],
)
def test_family_report_refuses(source, kwargs, error, message):
    with pytest.raises(error, match=message):
        validate.family_report(source, **kwargs)


def test_a_file_without_families_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"something": 1}))
    with pytest.raises(roofline.RooflineError, match="neither a report.json"):
        validate.family_report(path)
    path.write_text(json.dumps({"records": [{"family": 1}], "gpu": "H200"}))
    with pytest.raises(roofline.RooflineError, match=r"records\[0\] is not a family record: family"):
        validate.family_report(path)


# ------------------------------------------------------------------ Markdown and the plot


def test_markdown_holds_every_family_and_launch(recorded):
    text = _family_report.render_family_markdown(recorded, plot="families.png")
    for s in recorded.families:
        assert f"| {s.family} | {s.launches} | {s.predict_median_abs_percent:.0f}% |" in text
    assert f"| **all** | {recorded.overall.launches} |" in text
    assert "Issue 11's targets for `roofline.predict`" in text and "![predicted against measured" in text
    launches = text.split("## Every launch")[1]
    assert launches.count("\n| ") == len(recorded.rows) + 2  # the header and its rule too
    assert "copy (suite)" in launches and "transpose(shared, block=32x32) (suite)" in launches


def test_recorded_markdown_is_current(recorded):
    """docs/results/h200/repredicted/families.md is what `gpuroof families tests/data/families_h200.json`
    writes with today's model (regenerate it when the model changes)."""
    committed = (Path(__file__).parents[2] / "docs/results/h200/repredicted/families.md").read_text()
    assert committed.splitlines()[:2] == _family_report.render_family_markdown(recorded).splitlines()[:2]
    assert "| **all** | 122 |" in committed


def test_plot_is_written_and_spans_every_launch(recorded, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seen = {}
    original = plt.Figure.savefig

    def capture(fig, *args, **kwargs):
        seen["axes"] = fig.axes
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = capture
    try:
        path = _family_report.plot_families(recorded, tmp_path / "families.png")
    finally:
        plt.Figure.savefig = original
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    left, right = seen["axes"][:2]
    lo, hi = left.get_xlim()
    for r in recorded.rows:
        for value in (r.record.measured_seconds, r.predict_seconds, r.roofline_seconds):
            assert lo < value < hi
    points = sum(len(c.get_offsets()) for c in left.collections if hasattr(c, "get_offsets")
                 and c.get_label() != "within 20%")
    assert points == len(recorded.rows)
    assert len({c.get_label() for c in left.collections if c.get_label().split(" (")[0] in validate.FAMILIES}) == 12


# ------------------------------------------------------------------ in the validation report


def test_the_validation_report_carries_the_families(recorded, make_report, tmp_path):
    report = make_report().model_copy(update={"families": recorded})
    text = validate.render_markdown(report)
    assert "Kernel families: roofline.predict and the plain roofline, by family" in text
    assert "model (ms)" not in text  # the model's errors are in one table: the family report's
    assert "model (ms)" in validate.render_markdown(make_report())
    files = _report.write_report(report, tmp_path)
    assert files["families_plot"].exists()
    loaded = validate.load_report_set(tmp_path / "report.json").reports[0]
    assert loaded.families == recorded
    again = validate.family_report(tmp_path)  # the folder's report.json, on the CPU
    assert again.rows == recorded.rows  # the same packaged calibration the recorded report used


def test_a_report_without_families_says_why(make_report):
    report = make_report().model_copy(update={"families_error": "DeviceError: boom"})
    assert "Not measured: DeviceError: boom" in validate.render_markdown(report)
    with pytest.raises(roofline.RooflineError, match="holds no family measurements .DeviceError: boom"):
        validate.family_report(report)


def test_a_set_of_two_devices_must_be_split(recorded, make_report):
    one = make_report().model_copy(update={"families": recorded})
    pair = validate.ReportSet(created_utc="t", reports=(one, one))
    with pytest.raises(roofline.RooflineError, match="holds 2 devices"):
        validate.family_report(pair)
    assert validate.family_report(validate.ReportSet(created_utc="t", reports=(one,))).rows == recorded.rows


# ------------------------------------------------------------------ the command


def test_cli_families(capsys, tmp_path):
    from gpuroof import main

    assert main(["families", str(DATA)]) == 0
    out = capsys.readouterr().out
    assert "122 launches predicted for the H200" in out and "grid_stride_low_occupancy" in out
    assert main(["families", str(DATA), "--json", "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["launches"] == 122 and (tmp_path / "families.png").exists()
    assert main(["families", str(tmp_path / "families.json"), "--gpu", "H200"]) == 0
    capsys.readouterr()
    assert main(["families", str(tmp_path / "nope.json")]) == 2
    assert main(["families", str(DATA), "--gpu", "H100 SXM"]) == 0  # predicted for another GPU: allowed
    capsys.readouterr()
    assert main(["validate", "--families", "nope"]) == 2
    assert "not a family" in capsys.readouterr().err


# ------------------------------------------------------------------ the measuring loop, on a fake device


class _FakeSession(validate.Session):
    """Buffers are numpy arrays; a launch writes what the numpy reference says (a correct
    kernel), or garbage for the labels in `wrong`; the timer returns a fixed time. A Session
    subclass (the functions that take one check its type) whose __init__ opens no device."""

    def __init__(self, wrong=()):
        self.cases = {}
        self.wrong = set(wrong)
        self.launched = []
        self.timer = lambda launch: (launch(), 1e-4)[1]

    def upload(self, array):
        return np.array(array, copy=True)

    def allocate(self, nbytes):
        return np.empty(nbytes, np.uint8)

    def poison(self, buffer, nbytes):
        buffer.view(np.float32)[:] = np.nan

    def launcher(self, kernel, grid, block, args, shared=0):
        label, case = kernel

        def run():
            self.launched.append(label)
            named = dict(zip(case.args, args))
            inputs = {k: named[k] for k in case.inputs}
            for key, value in case.reference(inputs).items():
                rows = case.rows.get(key)
                out = named[key].view(np.float32).reshape(case.outputs[key][0])
                data = np.asarray(value, np.float64)
                if label in self.wrong:
                    data = data + 1.0
                if rows is None:
                    out[...] = data.reshape(out.shape)
                else:  # only the sampled rows are checked; the others must merely be written
                    out[...] = 0.0
                    out[rows] = data

        return run

    def synchronize(self):
        pass

    def download(self, buffer, shape, dtype):
        return buffer.view(dtype).reshape(shape).copy()

    def flush_l2(self):
        pass


@pytest.fixture
def fake_device(monkeypatch, make_report):
    """measure_families on a fake session: no compiler, kernels are (label, case) pairs."""
    import occupancy

    import validate.suite._families as families_module

    session = _FakeSession()
    built = {}
    original = families_module.family_specs

    def specs(*args, **kwargs):
        out = []
        for spec in original(*args, **kwargs):
            def case(rng, spec=spec):
                built["current"] = (spec.label, spec.case(rng))
                return built["current"][1]
            out.append(families_module.FamilySpec(spec.family, spec.label, spec.model, spec.arguments, spec.source,
                                                  case))
        return tuple(out)

    def compile_kernels(source, names, *, arch, name=""):
        if "blur" in built["current"][0]:
            raise validate.DeviceError("compiling: a planted failure")
        return {names[0]: built["current"]}

    real_sass_summary = families_module.sass_summary
    session.sass_reads = []  # (label, function, arch, read for real)

    def sass_summary(source, function, arch):
        label = built.get("current", ("suite",))[0]  # the suite's row is read before any family case is built
        real = FULL or label in SASS_SAMPLE
        session.sass_reads.append((label, function, arch, real))
        return real_sass_summary(source, function, arch) if real else None

    monkeypatch.setattr(families_module, "family_specs", specs)
    monkeypatch.setattr(families_module, "compile_kernels", compile_kernels)
    monkeypatch.setattr(families_module, "sass_summary", sass_summary)
    monkeypatch.setattr(families_module, "kernel_resources",
                        lambda kernel, name=None: occupancy.KernelResources(kernel=name, architecture="sm_90",
                                                                            registers_per_thread=16))
    info = validate.DeviceInfo(**{**make_report().device.model_dump(), "sm_count": 4})
    return session, info


def test_measure_families_checks_times_and_reuses(fake_device):
    session, info = fake_device
    session.wrong = {"strided_write(stride=8)"}
    suite_model = models.copy(1 << 20)
    suite_row = _suite.KernelValidation(
        name="copy", label="copy", parameters=dict(suite_model.parameters), status="ok", flops=0.0, dram_bytes=8.0,
        predicted_seconds=None, grid=(4096, 1, 1), block=(256, 1, 1), function="copy", measured_seconds=2e-5,
        timing=_timing.summarize([2e-5, 2e-5]), relative_error=0.0,
        resources=__import__("occupancy").KernelResources(kernel="copy", architecture="sm_90", registers_per_thread=10))
    lines = []
    records = validate.measure_families(session, info, quick=True, suite_rows=[suite_row],
                                        rng=np.random.default_rng(3), progress=lines.append)
    labels = [s.label for s in family_specs(4, quick=True)]
    assert [r.label for r in records] == labels
    by_label = {r.label: r for r in records}
    copy = by_label["copy"]
    assert copy.origin == "suite" and copy.measured_seconds == 2e-5 and copy.registers_per_thread == 10
    assert "copy" not in session.launched  # reused, not run again
    wrong = by_label["strided_write(stride=8)"]
    assert wrong.measured_seconds is None and wrong.error.startswith("verify_error")
    assert all(by_label[b].error == "compiling: a planted failure" for b in labels if b.startswith("blur"))
    timed = [r for r in records if r.error is None and r.origin == "families"]
    assert len(timed) == len(labels) - 1 - 1 - 2
    assert all(r.measured_seconds == 1e-4 and r.relative_error < 1e-6 and r.registers_per_thread == 16 for r in timed)
    assert lines[-1].startswith(f"families: {len(labels)} launches, {len(labels) - 1} run here")
    # the SASS is read for every launch that compiled (the suite's too), for the device's architecture
    reads = {("copy" if label == "suite" else label): (function, arch, real)
             for label, function, arch, real in session.sass_reads}
    assert len(reads) == len(session.sass_reads) and set(reads) == {b for b in labels if not b.startswith("blur")}
    assert all(reads[r.label][:2] == (r.function, info.arch) for r in records if r.label in reads)
    for r in records:
        if r.label in reads and reads[r.label][2]:
            assert r.sass is not None and r.loads_in_flight_per_thread == (
                r.sass.global_loads_in_flight_per_thread or None), r.label
        else:
            assert r.sass is None and r.loads_in_flight_per_thread is None, r.label
    assert by_label["grid_stride_copy(blocks_per_sm=1, ept=16)"].loads_in_flight_per_thread > 1
    report = validate.family_report(list(records), "H200")
    assert report.overall.launches == len(labels) - 3
    assert {r.record.label for r in report.rows if r.error} == {"strided_write(stride=8)", "blur(radius=1)",
                                                                 "blur(radius=3)"}
