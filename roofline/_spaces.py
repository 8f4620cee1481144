"""The CUDA memory spaces as data: where each lives, its caching, scope and lifetime."""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._errors import RooflineError

__all__ = ["MemorySpace", "memory_space", "memory_spaces"]


class MemorySpace(BaseModel):
    """One row of the Best Practices Guide's "Salient Features of Device Memory" table.

    Examples
    --------
    >>> from roofline._spaces import memory_space
    >>> memory_space("shared").location
    'on-chip'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description='"register", "local", "shared", "constant", "texture" or "global".')
    location: Literal["on-chip", "off-chip"]
    cached: str = Field(description='"n/a" for on-chip spaces, else which caches serve it.')
    access: Literal["read/write", "read-only"]
    scope: str = Field(description="Who can see it.")
    lifetime: str = Field(description='"thread", "block" or "host allocation".')
    host_access: bool = Field(description="Whether the host can read or write it.")
    declaration: str = Field(description="How CUDA code gets memory in this space.")
    latency_cycles: tuple[int, int] = Field(description="Typical (low, high) latency in SM cycles.")
    bandwidth: str = Field(description="What limits its bandwidth.")
    source: str = Field(min_length=1)
    latency_source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> MemorySpace:
        low, high = self.latency_cycles
        if not 0 < low <= high:
            raise ValueError(f"latency_cycles={self.latency_cycles} must satisfy 0 < low <= high")
        return self


@functools.cache
def memory_spaces() -> tuple[MemorySpace, ...]:
    """The six CUDA memory spaces, from ``roofline/data/memory_spaces.toml``.

    Returns
    -------
    tuple of MemorySpace
        register, local, shared, constant, texture, global (the Best Practices Guide's order).

    Examples
    --------
    >>> from roofline._spaces import memory_spaces
    >>> [s.name for s in memory_spaces() if s.location == "on-chip"]
    ['register', 'shared']
    """
    text = resources.files("roofline").joinpath("data/memory_spaces.toml").read_text("utf-8")
    return tuple(MemorySpace(**entry) for entry in tomllib.loads(text)["space"])


def memory_space(name: str) -> MemorySpace:
    """One memory space by name.

    Raises
    ------
    RooflineError
        Unknown name; the message lists the known ones.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    for space in memory_spaces():
        if space.name == name:
            return space
    known = ", ".join(s.name for s in memory_spaces())
    raise RooflineError(f"unknown memory space {name!r}; known: {known}")
