"""The registry covers every public name, each with a strategy of its own.

`registry.REGISTRY` is generated from the packages' ``__all__``: a name added to one is
fuzzed from the day it lands. A callable nobody wrote a strategy for is still fuzzed, from
its signature or fields alone; `test_every_public_callable_has_its_own_strategy` fails
until one is written, since odd values for every argument rarely get past the first check.
"""

from __future__ import annotations

import dataclasses
import types

import pydantic
import pytest
from hypothesis import given, settings

import validate
from registry import REGISTRY, WRITTEN, by_rule, needs_gpu, public_names, resolve


def test_the_registry_is_every_public_name():
    assert sorted(REGISTRY) == public_names()


def test_every_public_callable_has_its_own_strategy():
    generic = sorted(q for q, e in REGISTRY.items() if e.generic)
    assert generic == [], (
        "write a fuzz strategy in tests/fuzz/registry.py for (each is drawn from its signature or "
        f"fields alone): {', '.join(generic)}")


def test_no_written_entry_outlives_its_name():
    stale = sorted(set(WRITTEN) - set(public_names()))
    assert stale == [], f"these entries name nothing public any more: {', '.join(stale)}"


def _added(x, y=1, *, z):
    """A public function as it lands, with no strategy written for it."""
    return x


class _Added(pydantic.BaseModel):
    value: float


@settings(max_examples=5, database=None)
@given(drawn=by_rule(_added).strategy)
def test_a_new_public_function_is_fuzzed_from_its_signature(drawn):
    """What `by_rule` gives a name nobody wrote an entry for: each required argument, and
    sometimes the optional one, drawn."""
    assert len(drawn["args"]) == 1 and "z" in drawn["kwargs"] and set(drawn["kwargs"]) <= {"y", "z"}


def test_by_rule_knows_each_kind_of_name():
    assert by_rule(_added).generic and by_rule(_Added).generic and by_rule(_Added).pydantic
    assert [by_rule(x).kind for x in (3, ValueError, types, validate.query_device)] == [
        "constant", "error", "module", "call"]
    assert by_rule(validate.query_device).reason and not by_rule(validate.query_device).generic


@pytest.mark.parametrize("qualified", sorted(q for q in REGISTRY if callable(resolve(q))))
def test_the_functions_that_need_a_gpu_are_found_by_their_session_parameter(qualified):
    """Each function whose first parameter is ``session`` says why it is not called here."""
    if needs_gpu(resolve(qualified)):
        assert REGISTRY[qualified].reason, qualified


_resolve = resolve


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
        if dataclasses.is_dataclass(v) and not isinstance(v, type):  # a frozen dataclass of frozen fields
            return v.__dataclass_params__.frozen and all(frozen(getattr(v, f.name)) for f in dataclasses.fields(v))
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
