"""Every public name, fuzzed: odd, extreme and wrong-typed arguments never crash.

One test per entry of `registry.REGISTRY`; `fuzzlib.outcome` holds the rules. Every entry
runs: there is no list of names expected to fail or left out because they hang (a call
slower than ``FUZZ_SLOW_SECONDS`` fails its test).
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings

import fuzzlib
from registry import INTERNAL, REGISTRY

ENTRIES = {**REGISTRY, **INTERNAL}
CALLS = sorted(name for name, entry in ENTRIES.items() if entry.kind == "call")


def resolve(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("qualified", CALLS)
def test_public_name_survives_odd_input(qualified):
    entry = ENTRIES[qualified]
    target = resolve(qualified)

    @settings(settings.get_profile("gpuroof-fuzz"), max_examples=fuzzlib.examples(entry.cost))
    @given(entry.strategy)
    def run(drawn):
        fuzzlib.outcome(entry, target, drawn)

    run()
