"""The registry covers every public name, and the names it cannot call are checked otherwise.

When someone adds a public name (a function, a class, a constant, a submodule) to a
package's ``__all__``, `test_every_public_name_has_a_fuzz_entry` fails until the name has
an entry in `registry.py`: new API is fuzzed from the day it lands.
"""

from __future__ import annotations

import importlib
import types

import pydantic
import pytest

import validate
from registry import REGISTRY

PACKAGES = ("occupancy", "roofline", "validate", "corpus")


def public_names() -> set[str]:
    """Every name in the packages' ``__all__``, following public submodules (roofline.models...)."""
    found: set[str] = set()
    pending = list(PACKAGES)
    while pending:
        module_name = pending.pop()
        module = importlib.import_module(module_name)
        for name in module.__all__:
            qualified = f"{module_name}.{name}"
            found.add(qualified)
            if isinstance(getattr(module, name), types.ModuleType):
                pending.append(qualified)
    return found


def test_every_public_name_has_a_fuzz_entry():
    missing = sorted(public_names() - set(REGISTRY))
    assert missing == [], f"add a fuzz entry in tests/fuzz/registry.py for: {', '.join(missing)}"


def test_no_entry_outlives_its_name():
    stale = sorted(set(REGISTRY) - public_names())
    assert stale == [], f"these entries name nothing public any more: {', '.join(stale)}"


def _resolve(qualified):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("qualified", sorted(q for q, e in REGISTRY.items() if e.kind == "constant"))
def test_public_constants_cannot_be_changed_in_place(qualified):
    """A constant a caller could mutate (a list, a dict) would change the library for everyone."""
    value = _resolve(qualified)

    def frozen(v) -> bool:
        if isinstance(v, (int, float, str, bytes, bool, type(None))):
            return True
        if isinstance(v, (tuple, frozenset)):
            return all(frozen(x) for x in v)
        if isinstance(v, types.MappingProxyType):
            return all(frozen(k) and frozen(x) for k, x in v.items())
        if isinstance(v, pydantic.BaseModel):  # a frozen model of frozen fields (validate.FitParameter)
            return bool(v.model_config.get("frozen")) and all(frozen(getattr(v, k)) for k in type(v).model_fields)
        return isinstance(v, type)  # a Protocol or class used as a type

    assert frozen(value), f"{qualified} is a mutable {type(value).__name__}"


@pytest.mark.parametrize("qualified", sorted(q for q, e in REGISTRY.items() if e.kind == "error"))
def test_error_types_are_what_callers_catch(qualified):
    error = _resolve(qualified)
    assert issubclass(error, (ValueError, RuntimeError)) and error.__name__ != "ValidationError"
    assert error.__doc__, f"{qualified} has no docstring saying when it is raised"


@pytest.mark.parametrize("qualified", sorted(q for q, e in REGISTRY.items() if e.kind == "module"))
def test_public_submodules_are_walked(qualified):
    module = _resolve(qualified)
    assert isinstance(module, types.ModuleType) and module.__all__
    assert all(f"{qualified}.{name}" in REGISTRY for name in module.__all__)


@pytest.mark.parametrize("qualified", sorted(q for q, e in REGISTRY.items() if e.reason))
def test_gpu_only_names_say_why_and_fail_cleanly_without_a_gpu(qualified):
    """They take an open session (test_fuzz_api gives them anything else, which they refuse);
    without a GPU none can be had, and asking for one is a DeviceError (exit code 3 from the
    command line)."""
    entry = REGISTRY[qualified]
    assert callable(_resolve(qualified)) and entry.reason
    try:
        validate.open_session(0)
    except validate.DeviceError:
        return
    pytest.skip("a GPU is present: tests/validate/test_gpu.py runs these on it")
