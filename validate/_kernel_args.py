"""Kernel arguments for `measure`, and the small text syntax the command line uses for them.

One argument per kernel parameter, in order:

============================  ==========================================================
``i32=1024``                  a scalar of that type (``i8 i16 i32 i64 u8 u16 u32 u64
                              f16 f32 f64``)
``f32[n]=random``             a device array of ``n`` elements, uploaded: ``random``
                              (uniform in [-1, 1), integers in [0, 100)), ``zeros``,
                              ``ones``, a number (every element), or a ``.npy`` file
``f32[n]``                    an output array of ``n`` elements, allocated and filled
                              with NaN (integers: 0xFF bytes) so that unwritten
                              elements show; downloaded for the check
============================  ==========================================================

Sizes are integer expressions of numbers, ``+ - * // **``, parentheses and the names
given in ``sizes`` (``f32[n*n]`` with ``sizes={"n": 4096}``). Everything here is plain
Python and numpy: it is tested without a GPU.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DTYPES", "KernelArg", "parse_kernel_arg", "parse_kernel_args"]

#: Type names of the syntax and the numpy types they stand for (read-only: shared by every caller).
DTYPES: Mapping[str, str] = MappingProxyType({
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
})

_FILLS = ("random", "zeros", "ones")
_SPEC = re.compile(r"^\s*(?P<type>[a-z]\w*)\s*(?:\[(?P<size>[^\]]*)\])?\s*(?:=\s*(?P<value>.*?))?\s*$")


class KernelArg(BaseModel):
    """One kernel argument: a scalar, an input array to upload, or an output to allocate.

    ``kind`` is "scalar" (``value`` holds it), "input" (``fill`` says how to make it:
    "random", "zeros", "ones", a number as text, or a ``.npy`` path) or "output"
    (``elements`` of ``dtype``, poisoned before the launch). ``text`` is the spec it was
    parsed from, for messages.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["scalar", "input", "output"]
    dtype: str = Field(description="numpy dtype name, e.g. 'float32'.")
    elements: int | None = Field(default=None, ge=1, description="Array length (arrays only).")
    value: float | int | None = None
    fill: str | None = None
    text: str = ""

    @property
    def nbytes(self) -> int:
        """Bytes of the array (0 for a scalar)."""
        return 0 if self.elements is None else self.elements * np.dtype(self.dtype).itemsize

    def scalar(self) -> np.generic:
        """The scalar as a numpy value of its type."""
        if self.kind != "scalar":
            raise ValueError(f"argument {self.text!r} is an array, not a scalar")
        return np.dtype(self.dtype).type(self.value)

    def host_array(self, rng: np.random.Generator) -> np.ndarray:
        """Make the host array of an input argument (fresh random numbers from ``rng``)."""
        if self.kind != "input" or self.elements is None:
            raise ValueError(f"argument {self.text!r} is not an input array")
        dtype = np.dtype(self.dtype)
        fill = self.fill or "random"
        if fill == "random":
            if dtype.kind == "f":
                return (rng.random(self.elements, dtype=np.float64) * 2 - 1).astype(dtype)
            return rng.integers(0, 100, self.elements).astype(dtype)
        if fill == "zeros":
            return np.zeros(self.elements, dtype)
        if fill == "ones":
            return np.ones(self.elements, dtype)
        if fill.endswith(".npy"):
            array = np.load(fill, allow_pickle=False).astype(dtype, copy=False).reshape(-1)
            if array.size != self.elements:
                raise ValueError(f"argument {self.text!r}: {fill} holds {array.size} elements, not {self.elements}")
            return array
        return np.full(self.elements, dtype.type(float(fill) if dtype.kind == "f" else int(fill)), dtype)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


def _size(text: str, sizes: Mapping[str, int], spec: str) -> int:
    """Evaluate an integer size expression without eval()."""

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in sizes:
                known = ", ".join(sorted(sizes)) or "none given"
                raise ValueError(f"argument {spec!r}: size name {node.id!r} is not defined (sizes: {known})")
            return int(sizes[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"argument {spec!r}: size {text!r} must use integers, names, + - * // ** and parentheses")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"argument {spec!r}: size {text!r} is not an expression") from None
    value = walk(tree.body)
    if value < 1:
        raise ValueError(f"argument {spec!r}: size {text!r} = {value} must be >= 1")
    return value


def parse_kernel_arg(text: str, sizes: Mapping[str, int] | None = None) -> KernelArg:
    """Parse one argument of the command-line syntax (see the module docstring).

    Parameters
    ----------
    text : str
        ``TYPE=VALUE`` (scalar), ``TYPE[SIZE]=FILL`` (input array) or ``TYPE[SIZE]`` (output).
    sizes : mapping, optional
        Names usable in SIZE.

    Returns
    -------
    KernelArg

    Raises
    ------
    ValueError
        Unknown type, a scalar without a value, a bad size or value; the message quotes the
        argument and lists what is allowed.

    Examples
    --------
    >>> parse_kernel_arg("i32=1024").scalar()
    np.int32(1024)
    >>> a = parse_kernel_arg("f32[n*2]=random", {"n": 8})
    >>> a.kind, a.dtype, a.elements
    ('input', 'float32', 16)
    >>> parse_kernel_arg("f32[16]").kind
    'output'
    """
    if not isinstance(text, str):
        raise TypeError(f"a kernel argument spec must be a str, not {type(text).__name__}")
    match = _SPEC.match(text)
    if not match:
        raise ValueError(f"argument {text!r} is not TYPE=VALUE, TYPE[SIZE]=FILL or TYPE[SIZE]")
    type_name, size, value = match.group("type"), match.group("size"), match.group("value")
    if type_name not in DTYPES:
        raise ValueError(f"argument {text!r}: type {type_name!r} is not one of {', '.join(DTYPES)}")
    dtype = np.dtype(DTYPES[type_name])
    if size is None:
        if value is None or value == "":
            raise ValueError(f"argument {text!r}: a scalar needs a value ({type_name}=VALUE)")
        try:
            number: float | int = float(value) if dtype.kind == "f" else int(value, 0)
        except ValueError:
            raise ValueError(f"argument {text!r}: {value!r} is not a {type_name} value") from None
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= number <= info.max:
                raise ValueError(f"argument {text!r}: {number} is outside {type_name} [{info.min}, {info.max}]")
        return KernelArg(kind="scalar", dtype=dtype.name, value=number, text=text)
    elements = _size(size, sizes or {}, text)
    if value is None:
        return KernelArg(kind="output", dtype=dtype.name, elements=elements, text=text)
    if value not in _FILLS and not value.endswith(".npy"):
        try:
            float(value) if dtype.kind == "f" else int(value, 0)
        except ValueError:
            raise ValueError(f"argument {text!r}: fill {value!r} is not {', '.join(_FILLS)}, a number or a .npy "
                             "file") from None
    if value.endswith(".npy") and not Path(value).is_file():
        raise ValueError(f"argument {text!r}: {value} does not exist")
    return KernelArg(kind="input", dtype=dtype.name, elements=elements, fill=value, text=text)


def parse_kernel_args(texts: Sequence[str], sizes: Mapping[str, int] | None = None) -> tuple[KernelArg, ...]:
    """Parse every argument, in order (`parse_kernel_arg` for each).

    Examples
    --------
    >>> [a.kind for a in parse_kernel_args(["f32[4]=ones", "f32[4]", "i32=4"])]
    ['input', 'output', 'scalar']
    """
    return tuple(parse_kernel_arg(t, sizes) for t in texts)


def _described(argument: Any) -> str:
    """How an argument of `measure` reads in a message."""
    if isinstance(argument, KernelArg):
        return argument.text or f"{argument.kind} {argument.dtype}"
    if isinstance(argument, np.ndarray):
        return f"array {argument.dtype}[{argument.size}]"
    if isinstance(argument, np.generic):
        return f"{argument.dtype.name}={argument.item()!r}"
    return repr(argument)
