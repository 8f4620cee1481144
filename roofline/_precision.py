"""The precisions a peak can be asked for, and how they are spelled and labelled."""

from __future__ import annotations

from ._errors import RooflineError

__all__ = [
    "FP32_ACCUMULATE_PRECISIONS",
    "PRECISIONS",
    "PRECISION_LABELS",
    "SPARSE_PRECISIONS",
    "TENSOR_PRECISIONS",
    "check_precision",
]

#: Every precision, in display order (vector units first, then tensor cores).
PRECISIONS: tuple[str, ...] = (
    "fp64",
    "fp32",
    "fp16",
    "bf16",
    "fp64_tensor",
    "tf32_tensor",
    "fp16_tensor",
    "bf16_tensor",
    "fp8_tensor",
    "int8_tensor",
)

TENSOR_PRECISIONS: frozenset[str] = frozenset(p for p in PRECISIONS if p.endswith("_tensor"))

# 2:4 structured sparsity doubles these tensor rates (A100 whitepaper, "Fine-grained
# structured sparsity"); FP64 tensor math has no sparse mode.
SPARSE_PRECISIONS: frozenset[str] = TENSOR_PRECISIONS - {"fp64_tensor"}

# The tensor precisions that accumulate in FP32 and run at half rate on GeForce boards.
FP32_ACCUMULATE_PRECISIONS: frozenset[str] = frozenset(
    {"tf32_tensor", "fp16_tensor", "bf16_tensor", "fp8_tensor"}
)

PRECISION_LABELS: dict[str, str] = {
    "fp64": "FP64",
    "fp32": "FP32",
    "fp16": "FP16",
    "bf16": "BF16",
    "fp64_tensor": "FP64 tensor",
    "tf32_tensor": "TF32 tensor",
    "fp16_tensor": "FP16 tensor",
    "bf16_tensor": "BF16 tensor",
    "fp8_tensor": "FP8 tensor",
    "int8_tensor": "INT8 tensor",
}

_SPELLINGS = {
    "double": "fp64",
    "float64": "fp64",
    "single": "fp32",
    "float": "fp32",
    "float32": "fp32",
    "half": "fp16",
    "float16": "fp16",
    "bfloat16": "bf16",
    "tf32": "tf32_tensor",
    "fp8": "fp8_tensor",
    "int8": "int8_tensor",
}


def check_precision(precision: object) -> str:
    """Return the canonical spelling of `precision` or raise.

    Accepts the names in `PRECISIONS`, any case, with ``-`` or space for ``_``, and a few
    synonyms (``"float"``, ``"half"``, ``"bfloat16"``, ``"tf32"``, ``"fp8"``, ``"int8"``).

    Raises
    ------
    TypeError
        If `precision` is not a string.
    RooflineError
        If it names no known precision.
    """
    if not isinstance(precision, str):
        raise TypeError(f"precision must be a str, not {type(precision).__name__}")
    key = precision.strip().lower().replace("-", "_").replace(" ", "_")
    key = _SPELLINGS.get(key, key)
    if key not in PRECISIONS:
        raise RooflineError(
            f"precision={precision!r} is not known; expected one of {', '.join(PRECISIONS)}"
        )
    return key
