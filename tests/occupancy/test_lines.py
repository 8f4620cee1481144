"""`--lines` (occupancy.source_lines) on our own kernels (tests/occupancy/lines_kernels.cu): a
per-thread array in local memory is not a spill, spills count on the lines whose values they
hold and add up to what ptxas reports (nvcc --resource-usage, run here), and a header's inlined
code counts on the kernel's line that calls it unless its rows are asked for."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy import _lines
from occupancy._nvcc import find_nvcc
from occupancy._nvdisasm import nvdisasm_candidates

SOURCE = Path(__file__).with_name("lines_kernels.cu")
HEADER = SOURCE.with_suffix(".cuh")
NVCC = find_nvcc()

pytestmark = pytest.mark.skipif(NVCC is None or not nvdisasm_candidates(), reason="needs nvcc and nvdisasm")


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


@pytest.fixture(scope="module")
def ptxas() -> dict[str, tuple[int, int, int]]:
    """kernel -> (stack frame, spill store, spill load bytes) as nvcc --resource-usage prints them."""
    done = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "--resource-usage", str(SOURCE), "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    found = re.findall(r"Function properties for _Z\d+(\w+?)P\w*\s+(\d+) bytes stack frame, (\d+) bytes spill "
                       r"stores, (\d+) bytes spill loads", done.stdout + done.stderr)
    return {name: (int(frame), int(stores), int(loads)) for name, frame, stores, loads in found}


@pytest.fixture(scope="module")
def found() -> dict[str, occupancy.KernelLines]:
    kernels = occupancy.source_lines(SOURCE, arch="sm_90")
    return {k.demangled.split("(")[0]: k for k in kernels.values()}


@pytest.fixture(scope="module")
def marked(found):
    if not found["spills"].spills_told:
        pytest.skip(f"{found['spills'].tool} marks no spill instruction (nvdisasm 13.x and later do)")
    return found


def _total(k: occupancy.KernelLines, field: str) -> int:
    return sum(getattr(r, field) for r in k.lines)


def test_the_kernels_are_what_they_claim(ptxas):
    """The oracle: ptxas spills for `spills` and none for `local_array`, whose 64-float array is its stack frame."""
    assert ptxas["local_array"] == (64 * 4, 0, 0)
    assert ptxas["spills"][1] > 0 and ptxas["spills"][2] > 0


@pytest.mark.parametrize("kernel", ["spills", "local_array"], ids=["spilling", "local-array"])
def test_spill_bytes_add_up_to_ptxas(marked, ptxas, kernel):
    k = marked[kernel]
    assert (_total(k, "spill_store_bytes"), _total(k, "spill_load_bytes")) == ptxas[kernel][1:]


def test_a_local_array_is_local_memory_not_a_spill(found, ptxas):
    k = found["local_array"]
    assert k.spills_told  # ptxas reports no spill for it: told apart whatever nvdisasm marks
    assert _total(k, "spill_stores") == _total(k, "spill_loads") == 0
    # the array is zeroed (64 floats stored once) and then read and incremented at run-time indices
    assert _total(k, "local_store_bytes") >= ptxas["local_array"][0] and _total(k, "local_load_bytes") > 0


def test_spills_count_on_the_lines_whose_values_they_hold(marked):
    k = marked["spills"]
    heaviest = max(k.lines, key=lambda r: r.spill_store_bytes + r.spill_load_bytes)
    assert heaviest.line == _line_of(SOURCE, "// the loop body")
    opening = next(r for r in k.lines if r.line == _line_of(SOURCE, "spills(const float*"))
    assert opening.spill_store_bytes == opening.spill_load_bytes == 0
    assert _total(k, "local_stores") == _total(k, "local_loads") == 0


@pytest.mark.parametrize("kernel", ["spills", "local_array"], ids=["spilling", "local-array"])
def test_a_headers_code_counts_on_the_line_that_calls_it(found, kernel):
    k = found[kernel]
    assert {Path(r.file).name for r in k.lines} == {SOURCE.name}
    with_headers = occupancy.source_lines(SOURCE, arch="sm_90", kernel=kernel, headers=True)
    (h,) = with_headers.values()
    rows = {(Path(r.file).name, r.line) for r in h.lines}
    assert (HEADER.name, _line_of(HEADER, "return a * b")) in rows
    # the same instructions and bytes, grouped by their own lines
    for field in ("instructions", "spill_store_bytes", "spill_load_bytes", "local_store_bytes", "local_load_bytes"):
        assert _total(h, field) == _total(k, field), field


def test_without_spill_marks_local_memory_is_not_called_spills(monkeypatch, ptxas):
    """An nvdisasm that marks no spill (13.1's, say): the spilling kernel's STL/LDL are local,
    not told apart; the kernel ptxas says spills nothing is still told (all local is its array)."""
    listings = _lines._listings
    monkeypatch.setattr(_lines, "_listings", lambda cubin: tuple(
        text.replace(_lines._SPILL_MARK, "") for text in listings(cubin)))
    kernels = {k.demangled.split("(")[0]: k for k in occupancy.source_lines(SOURCE, arch="sm_90").values()}
    assert not kernels["spills"].spills_told and kernels["local_array"].spills_told
    assert _total(kernels["spills"], "spill_store_bytes") == 0
    assert _total(kernels["spills"], "local_store_bytes") == ptxas["spills"][1]


def test_cli_lines_show_spills_and_local_memory_apart(capsys):
    from gpuroof import main

    code = main(["resources", str(SOURCE), "--arch", "sm_90", "--lines", "--kernel", "local_array"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "spill st/ld B" in out and "local st/ld B" in out
    assert HEADER.name not in out
    code = main(["resources", str(SOURCE), "--arch", "sm_90", "--headers"])
    _, err = capsys.readouterr()
    assert code == 2 and "--headers applies to --lines" in err
