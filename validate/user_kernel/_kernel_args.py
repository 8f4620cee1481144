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
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

__all__ = ["DTYPES", "KernelArg", "parse_kernel_arg", "parse_kernel_args"]

#: Type names of the syntax and the numpy types they stand for (read-only: shared by every caller).
DTYPES: Mapping[str, str] = MappingProxyType({
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
})

_FILLS = ("random", "zeros", "ones")
#: Sizes and every step of their arithmetic stay below 2**63 (a 64-bit size_t and numpy's
#: int64): ``f32[10**10**10]`` is refused, not computed.
_MAX_SIZE = 2**63 - 1
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
            raise RooflineError(f"argument {self.text!r} is an array, not a scalar")
        return np.dtype(self.dtype).type(self.value)

    def host_array(self, rng: np.random.Generator) -> np.ndarray:
        """Make the host array of an input argument (fresh random numbers from ``rng``)."""
        if self.kind != "input" or self.elements is None:
            raise RooflineError(f"argument {self.text!r} is not an input array")
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
                raise RooflineError(f"argument {self.text!r}: {fill} holds {array.size} elements, not {self.elements}")
            return array
        return np.full(self.elements, dtype.type(float(fill) if dtype.kind == "f" else int(fill)), dtype)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


def _size(text: str, sizes: Mapping[str, int], spec: str) -> int:
    """Evaluate an integer size expression without eval(), every step below 2**63."""

    def checked(value: int) -> int:
        if abs(value) > _MAX_SIZE:
            raise RooflineError(f"argument {spec!r}: size {text!r} passes {_MAX_SIZE} (2**63 - 1)")
        return value

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return checked(node.value)
        if isinstance(node, ast.Name):
            if node.id not in sizes:
                known = ", ".join(sorted(sizes)) or "none given"
                raise RooflineError(f"argument {spec!r}: size name {node.id!r} is not defined (sizes: {known})")
            return checked(sizes[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.FloorDiv) and right == 0:
                raise RooflineError(f"argument {spec!r}: size {text!r} divides by zero")
            if isinstance(node.op, ast.Pow):
                if right < 0:
                    raise RooflineError(f"argument {spec!r}: size {text!r} has a negative exponent")
                if abs(left) > 1 and right > 63:  # 2**64 already passes the limit: refused before it is computed
                    raise RooflineError(f"argument {spec!r}: size {text!r} passes {_MAX_SIZE} (2**63 - 1)")
            return checked(_BINARY[type(node.op)](left, right))
        raise RooflineError(f"argument {spec!r}: size {text!r} must use integers, names, + - * // ** and parentheses")

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the text
        raise RooflineError(f"argument {spec!r}: size {text!r} is not an expression") from None
    except RecursionError:
        raise RooflineError(f"argument {spec!r}: size {text!r} is nested too deeply") from None
    value = walk(tree.body)
    if value < 1:
        raise RooflineError(f"argument {spec!r}: size {text!r} = {value} must be >= 1")
    return value


def _number(spec: str, text: str, type_name: str, what: str) -> float | int:
    """A scalar or fill value of type `type_name`: in the type's range, and finite."""
    dtype = np.dtype(DTYPES[type_name])
    try:
        number: float | int = float(text) if dtype.kind == "f" else int(text, 0)
    except ValueError:
        raise RooflineError(f"argument {spec!r}: {what} {text!r} is not a {type_name} value") from None
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    low, high = (float(info.min), float(info.max)) if dtype.kind == "f" else (int(info.min), int(info.max))
    if not low <= number <= high:  # NaN fails this too
        raise RooflineError(f"argument {spec!r}: {what} {number} is outside {type_name} [{info.min}, {info.max}]")
    return number


def _check_sizes(sizes: object) -> Mapping[str, int]:
    if sizes is None:
        return {}
    if not isinstance(sizes, Mapping):
        raise TypeError(f"sizes must be a mapping of names to ints, not {type(sizes).__name__}")
    for name, value in sizes.items():
        if not isinstance(name, str):
            raise TypeError(f"sizes must have str names, not {type(name).__name__}")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"sizes[{name!r}] must be an int, not {type(value).__name__}")
    return {name: int(value) for name, value in sizes.items()}


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
    roofline.RooflineError
        Unknown type, a scalar without a value, a bad size (past 2**63 - 1 at any step, a
        division by zero) or a value outside the type's range (or not finite); the message
        quotes the argument and lists what is allowed.
    TypeError
        When `text` is not a str or `sizes` not a mapping of names to ints.

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
    known_sizes = _check_sizes(sizes)
    match = _SPEC.match(text)
    if not match:
        raise RooflineError(f"argument {text!r} is not TYPE=VALUE, TYPE[SIZE]=FILL or TYPE[SIZE]")
    type_name, size, value = match.group("type"), match.group("size"), match.group("value")
    if type_name not in DTYPES:
        raise RooflineError(f"argument {text!r}: type {type_name!r} is not one of {', '.join(DTYPES)}")
    dtype = np.dtype(DTYPES[type_name])
    if size is None:
        if value is None or value == "":
            raise RooflineError(f"argument {text!r}: a scalar needs a value ({type_name}=VALUE)")
        return KernelArg(kind="scalar", dtype=dtype.name, value=_number(text, value, type_name, "value"), text=text)
    elements = _size(size, known_sizes, text)
    if value is None:
        return KernelArg(kind="output", dtype=dtype.name, elements=elements, text=text)
    if value.endswith(".npy"):
        if "\x00" in value or not Path(value).is_file():
            raise RooflineError(f"argument {text!r}: {value!r} does not exist")
    elif value not in _FILLS:
        try:
            _number(text, value, type_name, "fill")
        except RooflineError as exc:
            raise RooflineError(f"{exc}; a fill is {', '.join(_FILLS)}, a number or a .npy file") from None
    return KernelArg(kind="input", dtype=dtype.name, elements=elements, fill=value, text=text)


def parse_kernel_args(texts: Sequence[str], sizes: Mapping[str, int] | None = None) -> tuple[KernelArg, ...]:
    """Parse every argument, in order (`parse_kernel_arg` for each).

    Raises
    ------
    roofline.RooflineError, TypeError
        As `parse_kernel_arg`; TypeError also when `texts` is not a sequence of str.

    Examples
    --------
    >>> [a.kind for a in parse_kernel_args(["f32[4]=ones", "f32[4]", "i32=4"])]
    ['input', 'output', 'scalar']
    """
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise TypeError(f"texts must be a sequence of argument specs (str), not {type(texts).__name__}")
    return tuple(parse_kernel_arg(t, sizes) for t in texts)


def _described(argument: object) -> str:
    """How an argument of `measure` reads in a message."""
    if isinstance(argument, KernelArg):
        return argument.text or f"{argument.kind} {argument.dtype}"
    if isinstance(argument, np.ndarray):
        return f"array {argument.dtype}[{argument.size}]"
    if isinstance(argument, np.generic):
        return f"{argument.dtype.name}={argument.item()!r}"
    return repr(argument)
