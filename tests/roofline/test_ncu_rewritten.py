"""roofline.load_ncu on exports a user re-wrote (tests/data/ncu/rewrite_exports.py made the
fixtures from the real H200 exports), on files cut at every line, and its cross-checks."""

from __future__ import annotations

from pathlib import Path

import pytest

import roofline
from roofline import RooflineError

DATA = Path(__file__).parents[1] / "data" / "ncu"
USER = DATA / "user_kernels.raw.csv"
TORCH = DATA / "torch_roofline.raw.csv"


def _by_id(profile: roofline.NcuProfile) -> dict[int, dict]:
    return {k.id: k.model_dump(exclude={"sass_source"}) for k in profile.kernels}


@pytest.fixture(scope="module")
def original():
    return _by_id(roofline.load_ncu(USER))


@pytest.mark.parametrize("name, ids", [
    ("user_kernels.requoted.csv", [0, 1, 2, 3, 4]),   # minimal quoting, an index column, plain numbers
    ("user_kernels.reordered.csv", [4, 3, 2, 1, 0]),  # columns and rows reversed
    ("user_kernels.subset.csv", [1, 3]),              # two of the five rows
], ids=["requoted", "reordered", "subset"])
def test_a_rewritten_export_reads_as_the_original(original, name, ids):
    profile = roofline.load_ncu(DATA / name)
    assert [k.id for k in profile.kernels] == ids
    for k in profile.kernels:
        assert _same(k.model_dump(exclude={"sass_source"}), original[k.id])


def _same(a: dict, b: dict) -> bool:
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float):
            assert a[key] == pytest.approx(b[key], rel=1e-12), key
        elif isinstance(a[key], dict):  # flops by precision, the measured counts, Nsight's block limits
            _same(a[key], b[key])
        else:
            assert a[key] == b[key], key
    return True


def test_the_checks_say_what_was_found():
    assert "kernel IDs 0-4 without a gap" in roofline.load_ncu(USER).checks
    subset = roofline.load_ncu(DATA / "user_kernels.subset.csv").checks
    assert any("a subset of the profile's launches" in c and "1, 3" in c for c in subset)
    reordered = roofline.load_ncu(DATA / "user_kernels.reordered.csv").checks
    assert any("not in kernel ID order" in c for c in reordered)


def test_an_export_mixing_units_is_refused_naming_the_metric_and_both_units():
    with pytest.raises(RooflineError, match=r"torch_mixed_units\.csv mixes units: dram__bytes\.sum\.per_second "
                                            r"is in 'Tbyte/s' on line 2 and in 'byte/s' on line 6"):
        roofline.load_ncu(DATA / "torch_mixed_units.csv")


def test_two_exports_in_the_same_units_join(tmp_path):
    lines = USER.read_text().splitlines(keepends=True)
    joined = tmp_path / "joined.csv"
    joined.write_text("".join(lines[:4]) + "".join(lines[:2]) + "".join(lines[4:]))
    profile = roofline.load_ncu(joined)
    assert [k.id for k in profile.kernels] == [0, 1, 2, 3, 4]
    assert "2 exports joined, in the same units" in profile.checks


def test_a_repeated_kernel_id_is_refused(tmp_path):
    lines = USER.read_text().splitlines(keepends=True)
    doubled = tmp_path / "doubled.csv"
    doubled.write_text("".join(lines) + lines[3])
    with pytest.raises(RooflineError, match=r"doubled\.csv: kernel ID 1 appears twice"):
        roofline.load_ncu(doubled)


def _cuts(path: Path) -> list[tuple[int, str]]:
    lines = path.read_text().splitlines(keepends=True)
    return [(n, "".join(lines[:n])) for n in range(1, len(lines))]


@pytest.mark.parametrize("path", [USER, TORCH], ids=["user", "torch"])
def test_a_file_cut_at_any_line_boundary_raises_or_says_it_may_be_cut(tmp_path, monkeypatch, path):
    """Before: 11 of torch's 13 cut points loaded as a shorter profile with nothing said."""
    full = len(roofline.load_ncu(path).kernels)
    for n, text in _cuts(path):
        cut = tmp_path / f"cut{n}.csv"
        cut.write_text(text)
        try:
            profile = roofline.load_ncu(cut)
        except RooflineError as exc:
            assert cut.name in str(exc)
            continue
        assert len(profile.kernels) < full
        assert any("cut after a whole row" in c for c in profile.checks)
        # without the final line break, the cut is named
        cut.write_text(text.rstrip("\n"))
        assert any(f"may be cut after kernel ID {profile.kernels[-1].id}" in c for c in roofline.load_ncu(cut).checks)
        # with the report beside it, the count is checked: every cut raises
        (tmp_path / f"cut{n}.ncu-rep").write_bytes(b"\0")
        monkeypatch.setattr("roofline._ncu_report.report_count", lambda report, full=full: full)
        with pytest.raises(RooflineError, match=rf"cut{n}\.csv holds {len(profile.kernels)} kernels, "
                                                rf"cut{n}\.ncu-rep beside it {full}: the CSV is cut"):
            roofline.load_ncu(cut)
        monkeypatch.undo()


def test_a_cut_inside_a_row_raises_at_every_sampled_byte(tmp_path):
    text = USER.read_text()
    last = text.rstrip("\n").rfind("\n") + 1
    for i, position in enumerate(range(last + 1, len(text) - 2, max(1, (len(text) - last) // 25))):
        cut = tmp_path / f"mid{i}.csv"
        cut.write_text(text[:position])
        with pytest.raises(RooflineError, match=r"the file looks truncated or edited"):
            roofline.load_ncu(cut)


def test_an_export_of_another_nsight_version_is_one_clear_error(tmp_path):
    lines = USER.read_text().splitlines(keepends=True)
    renamed = lines[0].replace('"gpu__', '"gpu_v2__').replace('"launch__', '"launch_v2__').replace(
        '"sm__', '"sm_v2__').replace('"dram__', '"dram_v2__')
    other = tmp_path / "other_version.csv"
    other.write_text(renamed + "".join(lines[1:]))
    with pytest.raises(RooflineError, match=r"other_version\.csv .* none of those gpuroof reads .* another "
                                            r"Nsight Compute version"):
        roofline.load_ncu(other)
