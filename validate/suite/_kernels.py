"""CUDA implementations of the roofline.models kernels: source, launch, inputs, reference.

`build_case` turns a `roofline.Kernel` of `roofline.models` (its ``name`` and ``parameters``) into
a `KernelCase`: which function of ``kernels/suite.cu`` to compile with which macros, the
grid and block, fresh random inputs, the output buffers (poisoned before the checked
launch) and a numpy reference. Everything here is plain Python and numpy, so it is
tested without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import roofline
from roofline import Kernel, RooflineError, models

from ..device import Session

__all__ = ["CaseLaunch", "KernelCase", "VerificationResult", "build_case", "case_buffers", "check_outputs",
           "launch_case", "supported_kernels"]

F32 = np.float32

#: Host bytes a case may hold (inputs and outputs; the validation suite's largest uses 768 MiB).
MAX_CASE_BYTES = 4 * 2**30


@dataclass(frozen=True)
class KernelCase:
    """One kernel ready to compile, launch and check.

    ``args`` lists the kernel's parameters in order: a string names a buffer of
    ``inputs`` or ``outputs``, anything else is passed as is (numpy scalars).
    """

    name: str
    function: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    inputs: Mapping[str, np.ndarray]
    outputs: Mapping[str, tuple[tuple[int, ...], type[np.generic]]]
    args: tuple[object, ...]
    reference: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]
    defines: Mapping[str, int] = field(default_factory=dict)
    dynamic_shared_memory: int = 0
    tolerance: float = 0.0
    """Largest allowed ||out - ref|| / ||ref|| (0: exact up to float32 rounding of one op)."""
    rows: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Output -> row indices the reference covers (large products are checked on a random
    sample of rows; every element is still checked for being written)."""

    @property
    def working_set_bytes(self) -> int:
        """Bytes of every input and output array: what would have to fit in L2."""
        total = sum(a.nbytes for a in self.inputs.values())
        for shape, dtype in self.outputs.values():
            total += math.prod(shape) * np.dtype(dtype).itemsize
        return total


@dataclass(frozen=True)
class VerificationResult:
    """Outcome of comparing a kernel's outputs with the reference."""

    ok: bool
    relative_error: float
    unwritten: int
    message: str


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


_POOL_ELEMENTS = 1 << 27
_POOLS: dict[int, tuple[np.random.Generator, np.ndarray]] = {}


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Random float32 in [-1, 1): random signs and magnitudes.

    Large inputs are windows at random offsets of one pool drawn fresh from ``rng`` per
    run (drawing 2**26 numbers for each of twenty arrays would dominate a run's time);
    small ones are drawn directly.
    """
    size = math.prod(shape)
    if size < (1 << 20) or size > _POOL_ELEMENTS:
        out = rng.random(shape, dtype=F32)
        out *= 2
        out -= 1
        return out
    entry = _POOLS.get(id(rng))
    if entry is None or entry[0] is not rng:
        pool = rng.random(_POOL_ELEMENTS, dtype=F32)
        pool *= 2
        pool -= 1
        _POOLS.clear()
        _POOLS[id(rng)] = entry = (rng, pool)
    offset = int(rng.integers(0, _POOL_ELEMENTS - size + 1))
    return entry[1][offset : offset + size].reshape(shape)


def _launch(model: roofline.Kernel) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    return model.launch.grid, model.launch.block  # occupancy.Launch keeps them as (x, y, z)


def _elementwise(model: roofline.Kernel, rng: np.random.Generator) -> KernelCase:
    name, p = model.name, model.parameters
    grid, block = _launch(model)
    n = int(p["n"])
    nn = np.int32(n)
    if name == "copy":
        x = _normal(rng, n)
        return KernelCase(name, "copy", grid, block, {"x": x}, {"y": ((n,), F32)}, ("x", "y", nn),
                          lambda i: {"y": i["x"]})
    if name == "vector_add":
        a, b = _normal(rng, n), _normal(rng, n)
        return KernelCase(name, "vector_add", grid, block, {"a": a, "b": b}, {"c": ((n,), F32)},
                          ("a", "b", "c", nn), lambda i: {"c": i["a"] + i["b"]})
    if name == "triad":
        scalar = F32(p.get("scalar", 3.0))
        b, c = _normal(rng, n), _normal(rng, n)
        return KernelCase(name, "triad", grid, block, {"b": b, "c": c}, {"a": ((n,), F32)},
                          ("a", "b", "c", scalar, nn), lambda i: {"a": i["b"] + scalar * i["c"]},
                          tolerance=1e-6)
    if name in ("offset_read", "offset_write"):
        offset = int(p["offset"])
        a, b = _normal(rng, n), _normal(rng, n)

        def reference(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            c = np.full(n, np.nan, F32)
            if name == "offset_read":
                c[: n - offset] = i["a"][offset:] + i["b"][offset:]
            else:
                c[offset:] = i["a"][: n - offset] + i["b"][: n - offset]
            return {"c": c}

        return KernelCase(name, name, grid, block, {"a": a, "b": b}, {"c": ((n,), F32)},
                          ("a", "b", "c", nn, np.int32(offset)), reference)
    if name in ("strided_read", "strided_write"):
        stride = int(p["stride"])
        m = _ceil_div(n, stride)
        if name == "strided_read":
            x = _normal(rng, n)
            return KernelCase(name, name, grid, block, {"x": x}, {"y": ((m,), F32)},
                              ("x", "y", nn, np.int32(stride)), lambda i: {"y": i["x"][::stride].copy()})
        x = _normal(rng, m)

        def scatter(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            y = np.full(n, np.nan, F32)
            y[::stride] = i["x"]
            return {"y": y}

        return KernelCase(name, name, grid, block, {"x": x}, {"y": ((n,), F32)},
                          ("x", "y", nn, np.int32(stride)), scatter)
    if name == "aos":
        data = _normal(rng, n, 2)
        return KernelCase(name, "aos", grid, block, {"data": data}, {"result": ((n, 2), F32)},
                          ("data", "result", nn),
                          lambda i: {"result": i["data"] + np.array([10, 20], F32)})
    if name == "soa":
        x, y = _normal(rng, n), _normal(rng, n)
        return KernelCase(name, "soa", grid, block, {"x": x, "y": y},
                          {"out_x": ((n,), F32), "out_y": ((n,), F32)}, ("x", "y", "out_x", "out_y", nn),
                          lambda i: {"out_x": i["x"] + F32(10), "out_y": i["y"] + F32(20)})
    if name == "reduction":
        if p.get("variant", "sequential") != "sequential":  # suite.cu holds the sequential tree only
            raise KeyError(f"reduction variant {p['variant']!r}: see validate/kernels/families.cu")
        x = _normal(rng, n)
        blocks = grid[0]
        width = block[0]

        def partials(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            padded = np.zeros(blocks * width, np.float64)
            padded[:n] = i["x"]
            return {"partial": padded.reshape(blocks, width).sum(axis=1)}

        return KernelCase(name, "reduction", grid, block, {"x": x}, {"partial": ((blocks,), F32)},
                          ("x", "partial", nn), partials, defines={"BLOCK": width}, tolerance=1e-5)
    raise KeyError(name)


def box_mean(image: np.ndarray, radius: int) -> np.ndarray:
    """Mean of the in-image pixels of each (2r+1)^2 window (float64), by summed-area tables.

    Examples
    --------
    >>> box_mean(np.arange(4.0).reshape(2, 2), 1).tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    h, w = image.shape
    r = radius

    def window_sums(a: np.ndarray) -> np.ndarray:
        table = np.zeros((h + 1, w + 1), np.float64)
        table[1:, 1:] = a.cumsum(0).cumsum(1)
        rows, cols = np.arange(h), np.arange(w)
        r0, r1 = np.clip(rows - r, 0, h), np.clip(rows + r + 1, 0, h)
        c0, c1 = np.clip(cols - r, 0, w), np.clip(cols + r + 1, 0, w)
        return table[r1][:, c1] - table[r0][:, c1] - table[r1][:, c0] + table[r0][:, c0]

    return window_sums(image.astype(np.float64)) / window_sums(np.ones((h, w)))


def _blur(model: roofline.Kernel, rng: np.random.Generator) -> KernelCase:
    p = model.parameters
    w, h, r = int(p["width"]), int(p["height"]), int(p.get("radius", 1))
    grid, block = _launch(model)
    image = rng.random((h, w), dtype=F32)
    return KernelCase("blur", "blur", grid, block, {"image": image}, {"out": ((h, w), F32)},
                      ("image", "out", np.int32(w), np.int32(h), np.int32(r)),
                      lambda i: {"out": box_mean(i["image"], r)}, tolerance=1e-6)


def _matmul(model: roofline.Kernel, rng: np.random.Generator) -> KernelCase:
    p = model.parameters
    m = int(p["m"])
    k = int(p.get("k") or m)
    n = int(p.get("n") or m)
    a, b = _normal(rng, m, k), _normal(rng, k, n)
    sample = np.sort(rng.choice(m, size=min(m, 256), replace=False))
    defines: dict[str, int] = {}
    if model.name == "matmul_tiled":
        tile = int(p.get("tile", 16))
        defines["TILE"] = tile
        block = (tile, tile, 1)
        grid = (_ceil_div(n, tile), _ceil_div(m, tile), 1)
    else:
        grid, block = _launch(model)
    return KernelCase(model.name, model.name, grid, block, {"A": a, "B": b}, {"C": ((m, n), F32)},
                      ("A", "B", "C", np.int32(m), np.int32(k), np.int32(n)),
                      lambda i: {"C": i["A"][sample].astype(np.float64) @ i["B"].astype(np.float64)},
                      defines=defines, tolerance=1e-4, rows={"C": sample})


TRANSPOSE_VARIANTS = (
    "copy_row", "copy_column", "naive_row", "naive_column", "unroll4_row", "unroll4_column",
    "diagonal_row", "diagonal_column", "shared", "shared_padded",
)


def transpose_reference(variant: str, matrix: np.ndarray) -> np.ndarray:
    """What each transpose variant writes, for an input of ny rows x nx columns.

    Copies reproduce the input; "row" and shared variants write the transpose (nx x ny);
    "column" variants read ``in[ix * ny + iy]``, i.e. the input's memory seen as nx x ny,
    and write it transposed as ny x nx (the same as the transpose when square).

    Examples
    --------
    >>> m = np.arange(6.0).reshape(2, 3)
    >>> transpose_reference("naive_row", m).shape, transpose_reference("naive_column", m).shape
    ((3, 2), (2, 3))
    """
    ny, nx = matrix.shape
    if variant.startswith("copy"):
        return matrix
    if variant.endswith("column"):
        return np.ascontiguousarray(matrix.reshape(nx, ny).T)
    return np.ascontiguousarray(matrix.T)


def _transpose(model: roofline.Kernel, rng: np.random.Generator) -> KernelCase:
    p = model.parameters
    rows = int(p["rows"])
    cols = int(p.get("cols") or rows)
    variant = str(p.get("variant", "naive_row"))
    if variant not in TRANSPOSE_VARIANTS:
        raise KeyError(f"transpose variant {variant!r}")
    grid, block = _launch(model)
    bx, by = block[0], block[1]
    x = _normal(rng, rows, cols)
    function = "transpose_shared" if variant.startswith("shared") else f"transpose_{variant}"
    defines = {"BDIMX": bx, "BDIMY": by, "PAD": int(p.get("pad", 0) or 0)}
    shape = (rows, cols) if variant.startswith("copy") or variant.endswith("column") else (cols, rows)
    return KernelCase(f"transpose_{variant}", function, grid, block, {"in": x}, {"out": (shape, F32)},
                      ("in", "out", np.int32(rows), np.int32(cols)),
                      lambda i: {"out": transpose_reference(variant, i["in"])}, defines=defines)


_BUILDERS: dict[str, Callable[[Kernel, np.random.Generator], KernelCase]] = {
    **{n: _elementwise for n in ("copy", "vector_add", "triad", "offset_read", "offset_write",
                                 "strided_read", "strided_write", "aos", "soa", "reduction")},
    "blur": _blur,
    "matmul_naive": _matmul,
    "matmul_tiled": _matmul,
    "transpose": _transpose,
}


def supported_kernels() -> tuple[str, ...]:
    """Model names with a CUDA implementation, sorted."""
    return tuple(sorted(_BUILDERS))


def build_case(model: roofline.Kernel, rng: np.random.Generator) -> KernelCase:
    """Build the launchable case of a kernel model, with fresh random inputs from ``rng``.

    Parameters
    ----------
    model : roofline.Kernel
        Uses ``name``, ``parameters`` and ``launch``.
    rng : numpy.random.Generator
        Source of the inputs.

    Raises
    ------
    roofline.RooflineError
        When the model has no CUDA implementation here, or its arrays would take more
        than `MAX_CASE_BYTES` of host memory.
    TypeError
        When `model` is not a kernel model or `rng` not a numpy Generator.
    """
    name = getattr(model, "name", None)
    builder = _BUILDERS.get(name) if isinstance(name, str) else None
    if builder is None:
        shown = repr(name) if isinstance(name, str) else f"a {type(model).__name__}"
        raise RooflineError(f"no CUDA implementation of {shown}; implemented: {', '.join(supported_kernels())}")
    if not isinstance(model, Kernel):
        raise TypeError(f"model must be a roofline.Kernel, not {type(model).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    # The builders read `parameters`: a hand-made model must be one its function gives; the
    # caller's launch stays (a changed grid is what a test of the output check launches).
    rebuilt = models.get(model.name, **model.parameters)
    model = rebuilt if model.launch is None else rebuilt.model_copy(update={"launch": model.launch})
    if model.dram_bytes > MAX_CASE_BYTES:
        raise RooflineError(
            f"{model.label} moves {model.dram_bytes} bytes; its inputs and reference would need more than "
            f"{MAX_CASE_BYTES} bytes of host memory"
        )
    return builder(model, rng)


#: Elements compared at a time: a chunk's float64 temporaries (64 KiB each) stay in the
#: CPU's caches; whole 2**26-element arrays took 5 to 8 s per output, 8192-element chunks
#: 0.4 s (a copy's output, on the 2-core CI machine).
_CHUNK = 1 << 13


@dataclass(frozen=True)
class _Comparison:
    stray: int
    """Elements written where the reference holds NaN (they must keep the poison)."""
    missing: int
    """NaN elements where the reference holds a value (unwritten)."""
    live: int
    """Elements where the reference holds a value."""
    relative_error: float
    bad: int
    """Elements beyond one float32 rounding (counted for exact cases only)."""
    first_bad: int | None
    """Index of the first among the live elements."""


def _compare(got: np.ndarray, want: np.ndarray, tolerance: float) -> _Comparison:
    """`check_outputs`' comparison of two flat arrays, a chunk at a time, in float64."""
    stray = missing = live_total = bad = 0
    first_bad = None
    squared_diff = squared_want = 0.0
    eps = 2 * np.finfo(np.float32).eps
    for start in range(0, want.size, _CHUNK):
        g = got[start:start + _CHUNK].astype(np.float64)
        w = want[start:start + _CHUNK].astype(np.float64)
        keep = np.isnan(w)
        if keep.any():
            stray += int(np.count_nonzero(~np.isnan(g[keep])))
            g, w = g[~keep], w[~keep]
        holes = int(np.count_nonzero(np.isnan(g)))
        missing += holes
        if missing:  # no error is computed once an element is missing
            live_total += g.size
            continue
        diff = g - w
        squared_diff += float(np.dot(diff, diff))
        squared_want += float(np.dot(w, w))
        if tolerance == 0:
            threshold = np.abs(w)
            np.maximum(threshold, 1e-30, out=threshold)
            threshold *= eps
            beyond = np.abs(diff) > threshold
            count = int(np.count_nonzero(beyond))
            if count and first_bad is None:
                first_bad = live_total + int(np.flatnonzero(beyond)[0])
            bad += count
        live_total += g.size
    norm, norm_diff = math.sqrt(squared_want), math.sqrt(squared_diff)
    error = norm_diff / norm if norm > 0 else norm_diff
    return _Comparison(stray, missing, live_total, error, bad, first_bad)


def check_outputs(case: KernelCase, outputs: Mapping[str, np.ndarray]) -> VerificationResult:
    """Compare device outputs with the case's numpy reference.

    NaN in the reference marks an element the kernel must leave untouched (it keeps the
    poison); anywhere else a NaN is an unwritten element. Exact cases (tolerance 0) allow
    one float32 rounding per element; others bound ||out - ref|| / ||ref||.
    """
    if not isinstance(case, KernelCase):
        raise TypeError(f"case must be a KernelCase, not {type(case).__name__}")
    if not isinstance(outputs, Mapping):
        raise TypeError(f"outputs must be a mapping of output name to array, not {type(outputs).__name__}")
    expected = case.reference(case.inputs)
    worst = 0.0
    unwritten = 0
    problems = []
    for key, got in outputs.items():
        if key not in expected:
            problems.append(f"{key}: not an output of {case.function} (outputs: {', '.join(map(str, expected))})")
            continue
        want = np.asarray(expected[key])
        got = np.asarray(got)
        if got.dtype.kind not in "biuf":
            try:
                got = np.asarray(got, dtype=np.float64)
            except (TypeError, ValueError):
                problems.append(f"{key}: not an array of numbers")
                continue
        size = want.size if key not in case.rows else math.prod(case.outputs[key][0])
        if got.size != size:
            problems.append(f"{key}: {got.size} elements, expected {size}")
            continue
        if key in case.rows:
            missing = int(np.sum(np.isnan(got))) if got.dtype.kind == "f" else 0
            if missing:
                unwritten += missing
                problems.append(f"{key}: {missing} of {got.size} elements unwritten (still NaN)")
                continue
            got = got.reshape(case.outputs[key][0])[case.rows[key]]
        if got.size != want.size:
            problems.append(f"{key}: {got.size} elements checked, the reference has {want.size}")
            continue
        compared = _compare(got.reshape(-1), want.reshape(-1), case.tolerance)
        if compared.stray:
            problems.append(f"{key}: {compared.stray} elements written that must not be")
        unwritten += compared.missing
        if compared.missing:
            problems.append(f"{key}: {compared.missing} of {compared.live} elements unwritten (still NaN)")
            continue
        error = compared.relative_error
        worst = max(worst, error)
        if case.tolerance == 0:
            if compared.bad:
                problems.append(f"{key}: {compared.bad} elements differ, first at flat index {compared.first_bad}")
        elif not error <= case.tolerance:
            problems.append(f"{key}: relative error {error:.3g} exceeds {case.tolerance:.0e}")
    ok = not problems
    return VerificationResult(ok, worst, unwritten, "ok" if ok else "; ".join(problems))


@dataclass(frozen=True)
class CaseLaunch:
    """One launch of a case's kernel on its device buffers, which it holds while it is timed."""

    run: Callable[[], None]
    buffers: Mapping[str, object]

    def __call__(self) -> None:
        self.run()


def case_buffers(session: Session, case: KernelCase) -> dict[str, object]:
    """`case`'s device buffers by name: its inputs uploaded, its outputs allocated and poisoned
    (so that an output the kernel leaves unwritten fails `check_outputs`).

    Raises
    ------
    validate.DeviceError
        Where an upload or an allocation fails.
    """
    buffers = {key: session.upload(array) for key, array in case.inputs.items()}
    for key, (shape, dtype) in case.outputs.items():
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        buffers[key] = session.allocate(nbytes)
        session.poison(buffers[key], nbytes)
    return buffers


def launch_case(session: Session, kernel: object, case: KernelCase) -> tuple[CaseLaunch, dict[str, np.ndarray]]:
    """Launch `kernel` once on `case`'s buffers (`case_buffers`) and read the outputs back.

    Returns
    -------
    (CaseLaunch, dict)
        The launch, to time, and the outputs by name, for `check_outputs`.

    Raises
    ------
    validate.DeviceError
        Where an allocation, the launch or the kernel fails.
    """
    buffers = case_buffers(session, case)
    args = tuple(buffers[a] if isinstance(a, str) else a for a in case.args)
    launch = CaseLaunch(session.launcher(kernel, case.grid, case.block, args, case.dynamic_shared_memory), buffers)
    launch()
    session.synchronize()
    outputs = {key: session.download(buffers[key], shape, dtype) for key, (shape, dtype) in case.outputs.items()}
    return launch, outputs
