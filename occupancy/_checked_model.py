"""`CheckedModel`, the base of the value objects checked once at construction, and
`pydantic_error`, a pydantic ``ValidationError`` as one line of the caller's error
(`occupancy.common` re-exports both for every package)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import ValidationError, model_validator

from ._arguments import short_repr
from ._real_numbers import RealNumbers

__all__ = ["CheckedModel", "pydantic_error"]

E = TypeVar("E", bound=Exception)


def pydantic_error(
    exc: ValidationError, error: type[E], what: str, *, show_value: bool = True, unwrap: bool = False
) -> E:
    """A pydantic ``ValidationError`` as one `error`: ``what: field=value: reason``.

    The first error is told (pydantic lists them all, many lines each); ``show_value``
    False leaves the value out (``what: field: reason``). With ``unwrap``, an `error` that
    a validator raised itself (pydantic wraps it) comes back as it was raised: for models
    whose checks already name the field.
    """
    err = exc.errors()[0]
    raised = (err.get("ctx") or {}).get("error")
    if unwrap and isinstance(raised, error):
        return raised
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    # A key read from a file may hold a newline ("host_link.l\nes"): shown as its repr, on one line.
    where = ".".join(str(p) if str(p).isprintable() else repr(p) for p in err.get("loc", ()))
    if not where:
        return error(f"{what}: {message}")
    value = err.get("input")
    shown = "" if isinstance(value, dict) or not show_value else f"={short_repr(value)}"
    return error(f"{what}: {where}{shown}: {message}")


M = TypeVar("M", bound="CheckedModel")


class CheckedModel(RealNumbers):
    """A value object checked and normalised once, at construction (cuda.core's ``LaunchConfig``).

    Subclasses set `error` (their package's error type) and override `normalise` (the one place
    their input is checked) and, where an update makes other fields stale, `copy_fields`.
    Construction runs `normalise`; a pydantic error becomes one line of `error`; `model_copy`
    with an update builds a new instance, so a copy is checked like one.
    """

    error: ClassVar[type[Exception]] = ValueError

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The checked, normalised fields of a new instance (raises `error` or TypeError)."""
        return data

    def copy_fields(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """The fields a copy starts from before `update` is applied (all of them here)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: object) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__} fields must come as a mapping, not {type(data).__name__}")
        return cls.normalise(dict(data))

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise pydantic_error(exc, self.error, type(self).__name__, unwrap=True) from None

    def model_copy(self: M, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> M:
        """A copy with `update` applied and checked like a new instance."""
        if not update:
            return super().model_copy(deep=deep)
        data = self.copy_fields(update)
        data.update(update)
        return type(self)(**data)
