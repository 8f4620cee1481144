"""What each built-in model is: its parameters, its formula and an example call."""

from __future__ import annotations

import inspect
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from occupancy.common import Progress, no_progress, progress_step

from .._errors import RooflineError
from ._registry import _MODELS, get, names
from ._reduction import REDUCTION_VARIANTS
from ._transpose import TRANSPOSE_VARIANTS

__all__ = ["ModelInfo", "ModelParameter", "catalog", "describe"]

# An example call of each model (small sizes: building one takes milliseconds). Its formula
# is the model's; a test checks that every model has one.
_EXAMPLES: dict[str, dict[str, object]] = {
    "aos": {"n": 1 << 20},
    "blur": {"width": 1024, "height": 1024},
    "copy": {"n": 1 << 20},
    "matmul_naive": {"m": 1024},
    "matmul_register_tiled": {"m": 1024},
    "matmul_tiled": {"m": 1024},
    "offset_read": {"n": 1 << 20, "offset": 11},
    "offset_write": {"n": 1 << 20, "offset": 11},
    "reduction": {"n": 1 << 20},
    "soa": {"n": 1 << 20},
    "strided_read": {"n": 1 << 20, "stride": 2},
    "strided_write": {"n": 1 << 20, "stride": 2},
    "transpose": {"rows": 1024},
    "triad": {"n": 1 << 20},
    "vector_add": {"n": 1 << 20},
}

# Parameters that choose between kernels with different code, and their choices.
_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("reduction", "variant"): REDUCTION_VARIANTS,
    ("transpose", "variant"): TRANSPOSE_VARIANTS,
}


class ModelParameter(BaseModel):
    """One parameter of a model function."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    required: bool = Field(description="True when the call must give it.")
    default: Any = Field(default=None, description="The default when not required (JSON-able).")
    annotation: str = Field(default="", description='Its type as written, e.g. "int".')
    description: str = Field(default="", description="From the model's docstring.")
    choices: tuple[str, ...] = Field(default=(), description="The values it takes, when a fixed set.")


class ModelInfo(BaseModel):
    """A built-in kernel model: what it computes and how to call it.

    Examples
    --------
    >>> from roofline import models
    >>> info = models.describe("copy")
    >>> info.formula, [p.name for p in info.parameters]
    ('if (i < n) y[i] = x[i];', ['n', 'block'])
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    summary: str = Field(description="The first paragraph of its docstring.")
    parameters: tuple[ModelParameter, ...]
    formula: str = Field(description="What each thread does, C-like (at the default variant).")
    variants: dict[str, str] = Field(
        default_factory=dict, description="Formula of each variant, for models with a variant parameter."
    )
    example: dict[str, Any] = Field(description="Parameters of an example call of `models.get`.")


def _literals(text: str) -> str:
    """reST ``literals`` as `literals`."""
    return re.sub(r"``(.*?)``", r"`\1`", text, flags=re.S)


def _paragraphs(doc: str) -> list[str]:
    """The docstring's paragraphs, each on one line."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", _literals(inspect.cleandoc(doc))) if p.strip()]


def _parameter_docs(doc: str) -> dict[str, str]:
    """numpydoc ``Parameters`` section: name -> its description, one line."""
    lines = _literals(inspect.cleandoc(doc)).splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Parameters"), None)
    out: dict[str, str] = {}
    if start is None:
        return out
    current = None
    for i in range(start + 2, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        if not line.startswith(" "):
            if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
                break  # the next section
            current = [name.strip() for name in line.split(":")[0].split(",")]  # "width, height : int"
            out.update(dict.fromkeys(current, ""))
        elif current is not None:
            for name in current:
                out[name] = f"{out[name]} {line.strip()}".strip()
    return out


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def describe(name: str) -> ModelInfo:
    """The parameters, formula and an example call of one built-in model.

    Parameters
    ----------
    name : str
        One of `names`.

    Returns
    -------
    ModelInfo

    Raises
    ------
    TypeError
        If `name` is not a str.
    RooflineError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> from roofline import models
    >>> models.describe("transpose").variants["naive_row"]
    'if (ix < nx && iy < ny) out[ix*ny + iy] = in[iy*nx + ix];'
    """
    if not isinstance(name, str) or name not in _MODELS:
        get(name)  # raises the registry's error (TypeError, or the known names)
    function = _MODELS[name]
    doc = function.__doc__ or ""
    described = _parameter_docs(doc)
    parameters = tuple(
        ModelParameter(
            name=p.name,
            required=p.default is inspect.Parameter.empty,
            default=None if p.default is inspect.Parameter.empty else _plain(p.default),
            annotation=str(p.annotation) if p.annotation is not inspect.Parameter.empty else "",
            description=described.get(p.name, ""),
            choices=_CHOICES.get((name, p.name), ()),
        )
        for p in inspect.signature(function).parameters.values()
    )
    example = _EXAMPLES.get(name)
    if example is None:
        raise RooflineError(f"model {name!r} has no example call in the catalog")
    variants = {}
    for (model, parameter), choices in _CHOICES.items():
        if model == name:
            variants = {choice: get(name, **example, **{parameter: choice}).formula for choice in choices}
    return ModelInfo(
        name=name,
        summary=(_paragraphs(doc) or [""])[0],
        parameters=parameters,
        formula=get(name, **example).formula,
        variants=variants,
        example={k: _plain(v) for k, v in example.items()},
    )


def catalog(*, progress: Progress = no_progress) -> tuple[ModelInfo, ...]:
    """Every built-in model, described (`describe`), in name order.

    Parameters
    ----------
    progress : callable
        Receives one message per model, an `occupancy.common.ProgressStep` (done of total):
        describing one builds its example kernel.

    Examples
    --------
    >>> from roofline import models
    >>> [m.name for m in models.catalog()] == list(models.names())
    True
    """
    known = names()
    described = []
    for done, name in enumerate(known):
        progress_step(progress, f"model {name}", done, len(known))
        described.append(describe(name))
    return tuple(described)
