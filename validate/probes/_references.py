"""Independent figures measured in the same session: cuBLAS GEMMs and library copies.

A ceiling is only as good as the best kernel anyone runs on the card. Where PyTorch or
CuPy is importable, the run also times what their libraries reach: large cuBLAS GEMMs on
random data (never zeros: they run faster than real data) and device-to-device copies.
`apply_references` sets each ceiling to the higher of ours and theirs and names which.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from ..device import StopRules, Timer, benchmark
from ._ceilings import Ceilings
from ._probe import Probe, RunContext

__all__ = ["REFERENCE_FOR", "Reference", "References", "ReferencesProbe", "apply_references", "measure_references"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Which independent figures bound which ceiling.
REFERENCE_FOR: dict[str, tuple[str, ...]] = {
    "bf16_tensor": ("cublas_bf16_gemm",),
    "fp16_tensor": ("cublas_fp16_gemm",),
    "tf32_tensor": ("cublas_tf32_gemm",),
    "int8_tensor": ("cublas_int8_gemm",),
    "fp64_tensor": ("cublas_dgemm",),
    "dram_copy": ("cupy_memcpy_d2d", "cupy_elementwise_copy", "torch_copy"),
}


class Reference(BaseModel):
    """One independent figure: what a library reached on this device."""

    model_config = _FROZEN

    name: str
    value: float = Field(gt=0, description="flops/s (ops/s for int8) or bytes/s.")
    unit: str
    library: str = Field(description="Library and version, e.g. 'cuBLAS via torch 2.11.0+cu130'.")
    description: str
    median_seconds: float = Field(gt=0)
    repetitions: int = Field(gt=0)


class References(BaseModel):
    """Every independent figure of the run, and why the others are missing."""

    model_config = _FROZEN

    items: tuple[Reference, ...] = ()
    errors: dict[str, str] = Field(default_factory=dict)

    def get(self, name: str) -> Reference | None:
        """The figure called `name`, None when not measured."""
        return next((r for r in self.items if r.name == name), None)


def apply_references(ceilings: Ceilings, references: References) -> Ceilings:
    """Return `ceilings` with each one's best independent figure and the higher of the two.

    Parameters
    ----------
    ceilings : Ceilings
    references : References

    Returns
    -------
    Ceilings
        Each ceiling named in `REFERENCE_FOR` gets ``reference_name``, ``reference_value``,
        ``reference_library``, and ``value``/``value_source`` set to the higher figure.

    Raises
    ------
    TypeError
        If `ceilings` is not a `Ceilings` or `references` not a `References`.
    """
    if not isinstance(ceilings, Ceilings):
        raise TypeError(f"ceilings must be a Ceilings (from measure_ceilings), not {type(ceilings).__name__}")
    if not isinstance(references, References):
        raise TypeError(f"references must be a References (from measure_references), not {type(references).__name__}")
    items = []
    for item in ceilings.items:
        found = [references.get(name) for name in REFERENCE_FOR.get(item.name, ())]
        found = [r for r in found if r is not None]
        if not found:
            items.append(item)
            continue
        best = max(found, key=lambda r: r.value)
        higher = best.value > item.measured
        items.append(item.model_copy(update={
            "reference_name": best.name, "reference_value": best.value, "reference_library": best.library,
            "value": best.value if higher else item.measured,
            "value_source": f"{best.name} ({best.library})" if higher else "gpuroof kernel",
        }))
    return ceilings.model_copy(update={"items": tuple(items)})


def _median_seconds(run: Callable[[], object], timer: Timer, repetitions: int) -> float:
    """The median of `repetitions` timed runs after 3 warm-ups, through the one timing loop."""
    return benchmark(run, timer=timer, rules=StopRules(warmup=3, repetitions=repetitions)).median_seconds


def _torch_references(index: int, quick: bool, n: int) -> tuple[list[Reference], dict[str, str]]:
    import torch

    device = torch.device(f"cuda:{index}")
    library = f"cuBLAS via torch {torch.__version__}"
    stream = torch.cuda.current_stream(device)

    def timer(run: Callable[[], object]) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        run()
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) * 1e-3  # milliseconds, converted once here

    items, errors = [], {}
    repetitions = 5 if quick else 10
    generator = torch.Generator(device=device).manual_seed(1234)
    cases = [
        ("cublas_bf16_gemm", torch.bfloat16, "bf16 GEMM, f32 accumulate"),
        ("cublas_fp16_gemm", torch.float16, "fp16 GEMM, f32 accumulate"),
        ("cublas_tf32_gemm", torch.float32, "fp32 GEMM with TF32 tensor cores allowed"),
        ("cublas_dgemm", torch.float64, "DGEMM"),
    ]
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, dtype, what in cases:
            try:
                torch.backends.cuda.matmul.allow_tf32 = name == "cublas_tf32_gemm"
                a = torch.randn(n, n, device=device, dtype=dtype, generator=generator)
                b = torch.randn(n, n, device=device, dtype=dtype, generator=generator)
                c = torch.empty(n, n, device=device, dtype=dtype)
                seconds = _median_seconds(lambda: torch.matmul(a, b, out=c), timer, repetitions)
                items.append(Reference(name=name, value=2.0 * n**3 / seconds, unit="flops_per_second",
                                       library=library, description=f"{n}^3 {what} on random data",
                                       median_seconds=seconds, repetitions=repetitions))
                del a, b, c
            except (RuntimeError, TypeError) as exc:  # a dtype or kernel this build or GPU lacks
                errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        try:
            a = torch.randint(-128, 127, (n, n), device=device, dtype=torch.int8, generator=generator)
            b = torch.randint(-128, 127, (n, n), device=device, dtype=torch.int8, generator=generator).t()
            seconds = _median_seconds(lambda: torch._int_mm(a, b), timer, repetitions)
            items.append(Reference(name="cublas_int8_gemm", value=2.0 * n**3 / seconds, unit="ops_per_second",
                                   library=f"cuBLASLt via torch {torch.__version__} (torch._int_mm)",
                                   description=f"{n}^3 int8 GEMM, int32 accumulate, on random data",
                                   median_seconds=seconds, repetitions=repetitions))
            del a, b
        except (RuntimeError, TypeError, AttributeError) as exc:  # _int_mm is private and optional
            errors["cublas_int8_gemm"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        copy_bytes = (256 if quick else 1024) << 20
        x = torch.rand(copy_bytes // 4, device=device, generator=generator)
        y = torch.empty_like(x)
        seconds = _median_seconds(lambda: y.copy_(x), timer, 10 if quick else 30)
        items.append(Reference(name="torch_copy", value=2.0 * copy_bytes / seconds, unit="bytes_per_second",
                               library=f"torch {torch.__version__}",
                               description=f"Tensor.copy_ of {copy_bytes >> 20} MiB (bytes read + written)",
                               median_seconds=seconds, repetitions=10 if quick else 30))
        del x, y
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
    return items, errors


def _cupy_references(index: int, quick: bool) -> list[Reference]:
    import cupy

    items = []
    copy_bytes = (256 if quick else 1024) << 20
    repetitions = 10 if quick else 30
    with cupy.cuda.Device(index):
        stream = cupy.cuda.Stream(non_blocking=True)

        def timer(run: Callable[[], object]) -> float:
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            run()
            end.record(stream)
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end) * 1e-3  # milliseconds, converted once here

        with stream:
            x = cupy.random.default_rng(1234).random(copy_bytes // 4, dtype=cupy.float32)
            y = cupy.empty_like(x)
            kinds = [
                ("cupy_memcpy_d2d", lambda: cupy.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, copy_bytes,
                                                                          cupy.cuda.runtime.memcpyDeviceToDevice,
                                                                          stream.ptr),
                 f"cudaMemcpyAsync device to device of {copy_bytes >> 20} MiB (bytes read + written)"),
                ("cupy_elementwise_copy", lambda: cupy.copyto(y, x),
                 f"cupy.copyto of {copy_bytes >> 20} MiB float32 (bytes read + written)"),
            ]
            for name, run, what in kinds:
                seconds = _median_seconds(run, timer, repetitions)
                items.append(Reference(name=name, value=2.0 * copy_bytes / seconds, unit="bytes_per_second",
                                       library=f"CuPy {cupy.__version__}", description=what,
                                       median_seconds=seconds, repetitions=repetitions))
            del x, y
        stream.synchronize()
        cupy.get_default_memory_pool().free_all_blocks()
    return items


def measure_references(index: int, *, quick: bool = False, gemm_size: int = 8192,
                       progress: Callable[[str], None] = lambda message: None) -> References:
    """Time cuBLAS GEMMs (through PyTorch) and library copies (CuPy, PyTorch) on device `index`.

    A library that is not installed is recorded in ``errors`` and skipped.

    Parameters
    ----------
    index : int
        CUDA device index (the same numbering as cuda.core's).
    quick : bool
        Fewer repetitions and a smaller copy.
    gemm_size : int
        n of the n x n x n GEMMs.
    progress : callable
        One line per figure.
    """
    items: list[Reference] = []
    errors: dict[str, str] = {}
    for label, measure in (("torch", lambda: _torch_references(index, quick, gemm_size)),
                           ("cupy", lambda: (_cupy_references(index, quick), {}))):
        try:
            found, failed = measure()
        except ImportError as exc:
            errors[label] = f"not installed: {exc}"
            continue
        items += found
        errors.update(failed)
    for item in items:
        scale, unit = (1e12, "TFLOP/s") if item.unit != "bytes_per_second" else (1e9, "GB/s")
        progress(f"reference {item.name}: {item.value / scale:,.1f} {unit} ({item.library})")
    return References(items=tuple(items), errors=errors)


class ReferencesProbe(Probe[References]):
    """cuBLAS and library copies in the same session (`measure_references`), full runs only; they
    refine the ceilings: the run's ``"ceilings"`` result becomes `apply_references`' (what the
    report, L2 persistence and the kernel suite use)."""

    name = "references"
    step = "references"
    needs = ("ceilings",)

    def applies(self, ctx: RunContext) -> bool:
        return not ctx.quick and super().applies(ctx)

    def run(self, ctx: RunContext) -> References:
        references = measure_references(ctx.session.index, progress=ctx.progress)
        ceilings = ctx.result("ceilings", Ceilings)
        if ceilings is not None:
            ctx.results["ceilings"] = apply_references(ceilings, references)
        return references
