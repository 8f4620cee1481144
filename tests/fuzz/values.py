"""Domain values for the fuzz registry: mostly valid arguments with odd ones mixed in, and
corrupted copies of every kind of data file gpuroof reads."""

from __future__ import annotations

import itertools
import json
import re
import types
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

import occupancy
import roofline
import roofline._export  # a private module: loaded by name (roofline loads its names lazily)
from fuzzlib import SCRATCH, maybe, odd, odd_floats, odd_ints
from roofline import models

TMP = SCRATCH
_counter = itertools.count()


def fresh(suffix: str = "") -> Path:
    """A new file name in the run's scratch folder."""
    return TMP / f"f{next(_counter)}{suffix}"


# ------------------------------------------------------------------ occupancy

ARCH_SPECS = ("sm_90", "9.0", "90", "sm_90a", (9, 0), "sm_50", "sm_53", "sm_61", "sm_80", "sm_86", "sm_89",
              "sm_100", "sm_121", "compute_75", "cc8.6")
arch_spec = maybe(st.one_of(st.sampled_from(ARCH_SPECS), st.sampled_from(occupancy.architectures())), 4)
threads = maybe(st.one_of(st.integers(1, 1024), st.sampled_from((32, 64, 128, 256, 512, 1024))), 5)
registers = maybe(st.integers(0, 255), 5)
static_smem = maybe(st.one_of(st.integers(0, 48 * 1024), st.just(0)), 5)
dynamic_smem = maybe(st.one_of(st.just(0), st.integers(0, 232448)), 5)
max_dynamic = maybe(st.one_of(st.none(), st.integers(0, 232448)), 4)
carveout = maybe(st.one_of(st.none(), st.integers(0, 100)), 4)
barriers = maybe(st.integers(0, 16), 5)
max_threads = maybe(st.one_of(st.none(), st.integers(1, 1024)), 4)
gc_mode = maybe(st.sampled_from(("off", "on", "strict", True, False, None, "ON")), 4)

LAUNCH_KW = dict(
    static_shared_memory=static_smem, dynamic_shared_memory=dynamic_smem,
    max_dynamic_shared_memory=max_dynamic, carveout=carveout, block_barriers=barriers,
    max_threads_per_block=max_threads, partitioned_global_caching=gc_mode,
)


def small_int_arrays(low: int, high: int) -> st.SearchStrategy[Any]:
    """Scalars or small integer arrays (of shape (k,), (k, 1) or (1, k)) within a range."""
    return st.one_of(
        st.integers(low, high),
        st.lists(st.integers(low, high), min_size=0, max_size=5).map(np.array).map(
            lambda a: a.astype(np.int64)),
        st.lists(st.integers(low, high), min_size=1, max_size=4).map(lambda v: np.array(v)[:, None]),
    )


# ------------------------------------------------------------------ roofline

GPU_NAMES = tuple(g.name for g in roofline.gpus()) + ("A100", "H100", "h100 sxm", "NVIDIA H100 80GB HBM3", "a100 pcie",
                                                     "rtx 4090", "H1OO", "", " ", "GH200 Grace Hopper Superchip")
gpu_name = maybe(st.sampled_from(GPU_NAMES), 4)
gpu_object = st.sampled_from(roofline.gpus())
gpu_any = st.one_of(gpu_name, gpu_object)
precision = maybe(st.sampled_from(roofline.PRECISIONS + ("float", "half", "FP32", "fp-16", "int8", "fp128")), 3)
level = maybe(st.sampled_from(("dram", "l2", "l1", "HBM", "shared", "L3")), 3)
# Dictionary keys must hash: names and odd but hashable keys.
name_key = st.one_of(st.sampled_from(roofline.PRECISIONS + roofline.MEMORY_LEVELS + ("fp128", "HBM", "")),
                     st.text(max_size=6), st.integers(), st.none(), st.just(1.5))

count = maybe(st.one_of(st.floats(0, 1e15), st.integers(0, 2**40), st.sampled_from((0, 1, 1e-300, 1e300))), 3)


def kernel_counts() -> st.SearchStrategy[Any]:
    return st.builds(
        lambda f, d, l2, l1: roofline.Kernel(flops=f, dram_bytes=d, l2_bytes=l2, l1_bytes=l1),
        st.floats(0, 1e13), st.floats(1, 1e12), st.one_of(st.none(), st.floats(0, 1e12)),
        st.one_of(st.none(), st.floats(0, 1e12)),
    )


SMALL_MODELS = (models.copy(1000), models.vector_add(1 << 16), models.matmul_tiled(64, tile=16),
                models.transpose(100, 60, variant="shared_padded"), models.reduction(5000),
                models.blur(33, 17, radius=2), models.strided_read(4096, 3), models.aos(999))
kernel_model = st.sampled_from(SMALL_MODELS)
duck_kernel = st.builds(lambda f, d: types.SimpleNamespace(flops=f, dram_bytes=d, name="duck"), odd(), odd())
kernel_like = st.one_of(kernel_model, kernel_counts(), duck_kernel, odd())

grid3 = st.tuples(st.integers(1, 4096), st.integers(1, 4), st.integers(1, 2))
block3 = st.sampled_from(((256, 1, 1), (1024, 1, 1), (32, 32, 1), (16, 16, 1), (64, 1, 1), (8, 8, 8)))


def launches() -> st.SearchStrategy[Any]:
    return st.builds(
        lambda g, b, r, s, d, e: occupancy.Launch(grid=g, block=b, registers_per_thread=r, static_shared_memory=s,
                                               dynamic_shared_memory=d, elements_per_thread=e),
        grid3, block3, st.one_of(st.none(), st.integers(0, 255)), st.integers(0, 48 * 1024),
        st.integers(0, 200_000), st.integers(1, 16),
    )


launch_like = st.one_of(
    launches(), st.none(),
    st.builds(lambda g, b: types.SimpleNamespace(grid=g, block=b, registers_per_thread=32, static_shared_memory=0,
                                                 dynamic_shared_memory=0, elements_per_thread=1), odd(), odd()),
    odd(),
)


def calibrations() -> st.SearchStrategy[Any]:
    base = roofline.calibration("H100-SXM")
    return st.one_of(
        st.just(base), st.just(roofline.calibration("H200")),
        st.builds(lambda v: base.model_copy(update={"gpu": v}), st.sampled_from(("generic", "H200", "nope", "h100 sxm"))),
        odd(),
    )


def charts() -> st.SearchStrategy[Any]:
    return st.sampled_from((
        roofline.chart.roofline_chart("H100-SXM", SMALL_MODELS[:3]),
        roofline.chart.roofline_chart("L4", [], precisions=["fp32"], levels=["dram"]),
        roofline.chart.roofline_chart("H200", SMALL_MODELS, measured=roofline.chart.Measurements(ceilings={"dram": 4e12, "fp32": 6e13})),
    ))


# ------------------------------------------------------------------ data files


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def arch_toml(arch: occupancy.Architecture) -> str:
    data = arch.model_dump()
    return "[architecture]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in data.items())


def first_gpu_toml() -> str:
    # a GPU's facts file: load_gpu reads its [gpu] section
    return (Path(roofline.__file__).parent / "data" / "gpus" / "v100-sxm2.toml").read_text("utf-8")


ROOT = Path(__file__).resolve().parents[2]
VALID_FILES: dict[str, tuple[str, bytes]] = {
    "arch_json": (".json", json.dumps(occupancy.architecture("sm_90").model_dump(), indent=2).encode()),
    "arch_toml": (".toml", arch_toml(occupancy.architecture("sm_86")).encode()),
    "gpu_toml": (".toml", first_gpu_toml().encode()),
    "gpu_json": (".json", json.dumps(roofline.gpu("H200").model_dump(mode="json"), indent=2).encode()),
    "calibration_json": (".json", (ROOT / "docs/results/h200/calibration.json").read_bytes()),
    "report_json": (".json", (ROOT / "docs/results/h200/report.json").read_bytes()),
    # a records file of a few launches (the recorded H200 file holds 122; predicting them all
    # for every corrupted copy would take seconds each)
    "families_json": (".json", json.dumps({**(_families := json.loads((ROOT / "tests/data/families_h200.json")
                                                                       .read_text())),
                                           "records": _families["records"][::15]}, indent=1).encode()),
    "chart_json": (".json", roofline._export.chart_to_json(roofline.chart.roofline_chart("H100-SXM", SMALL_MODELS[:2])).encode()),
    "chart_csv": (".csv", roofline._export.chart_to_csv(roofline.chart.roofline_chart("H100-SXM", SMALL_MODELS[:2])).encode()),
    "ncu_csv": (".csv", (ROOT / "tests/data/ncu/details_page_head.csv").read_bytes()),
    "ncu_raw_csv": (".csv", (ROOT / "tests/data/ncu/user_kernels.raw.csv").read_bytes()),
}

NUMBER = re.compile(rb"(?<![\w.])-?\d+\.?\d*(e[-+]?\d+)?(?![\w.])")


def corrupted(valid: bytes) -> st.SearchStrategy[bytes]:
    """A valid file cut short, bit-flipped, made non-UTF-8, non-finite, nested deep or emptied."""
    lines = [i + 1 for i, b in enumerate(valid) if b == ord("\n")]
    numbers = [m.span() for m in NUMBER.finditer(valid)]

    def replace_number(i: int, new: bytes) -> bytes:
        if not numbers:
            return valid + new
        start, end = numbers[i % len(numbers)]
        return valid[:start] + new + valid[end:]

    return st.one_of(
        st.just(valid),
        st.integers(0, len(valid) - 1).map(lambda i: valid[:i]),
        st.sampled_from(lines or [0]).map(lambda i: valid[:i]),
        st.tuples(st.integers(0, len(valid) - 1), st.integers(0, 255)).map(
            lambda t: valid[: t[0]] + bytes([t[1]]) + valid[t[0] + 1:]),
        st.integers(0, len(valid)).map(lambda i: valid[:i] + b"\xff\xfe" + valid[i:]),
        st.tuples(st.integers(0, 10_000), st.sampled_from((b"NaN", b"Infinity", b"-Infinity", b"1e400", b"nan",
                                                              b"inf", b"-1", b"0", b"1e-400", b"99999999999999999999",
                                                              b'"x"', b"null", b"true", b"[]", b"{}"))).map(
            lambda t: replace_number(*t)),
        st.sampled_from((b"", b"\n", b"   ", b"\xef\xbb\xbf" + valid, valid.decode("utf-8", "replace").encode("utf-16"),
                         b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
                         b"a = [" * 3000 + b"]" * 3000, b"[]", b"1", b'"text"', b"null", b"\x00\x00")),
    )


def file_case(kinds: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """A drawn data file: ``{"kind", "suffix", "content", "valid"}``."""
    return st.sampled_from(kinds).flatmap(
        lambda kind: st.builds(
            lambda content, suffix: {"kind": kind, "suffix": suffix, "content": content,
                                     "valid": VALID_FILES[kind][1]},
            corrupted(VALID_FILES[kind][1]),
            st.one_of(st.just(VALID_FILES[kind][0]), st.sampled_from((".txt", "", ".JSON", ".toml", ".csv"))),
        )
    )


def write_case(case: dict[str, Any]) -> Path:
    from fuzzlib import STATS

    STATS["file_cases"] += 1
    path = fresh(case["suffix"])
    path.write_bytes(case["content"])
    return path


def strict_prefix(case: dict[str, Any]) -> bool:
    """Whether the drawn file is the valid one cut short by more than whitespace."""
    content, valid = case["content"], case["valid"]
    return len(content) < len(valid) and valid.startswith(content) and valid[len(content):].strip() != b""


# ------------------------------------------------------------------ paths to write

def out_paths(suffixes: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """Where to write: fresh files, existing folders, unwritable places, odd names."""
    blocker = TMP / "a-file"
    blocker.write_text("x")
    return st.one_of(
        st.sampled_from(suffixes).map(fresh),
        st.sampled_from(suffixes).map(lambda s: str(fresh(s))),
        st.sampled_from((str(TMP), str(blocker / "under-a-file.png"), "/proc/no/such/x.png", "", "\x00.png",
                         str(fresh(".exe")), str(fresh("")), str(TMP / "new" / "deeper" / "x.png"),
                         # issue 21: a name past 255 bytes, in the folder part and in the file's own name
                         str(TMP / ("a" * 300) / "x.png"), str(TMP / ("b" * 300 + ".png")))),
        odd(),
    )


def out_folders() -> st.SearchStrategy[Any]:
    blocker = TMP / "a-file-too"
    blocker.write_text("x")
    return st.one_of(
        st.builds(lambda: str(fresh())), st.just(str(TMP)), st.just(str(blocker)), st.just(str(blocker / "sub")),
        st.just("/proc/no/such/folder"), st.just(""), st.just(str(TMP / ("c" * 300))), odd(),
    )


# ------------------------------------------------------------------ generic numbers for free-form fields

any_number = st.one_of(odd_ints(), odd_floats())
