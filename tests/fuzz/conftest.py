"""The fuzz suite's setup: its helper modules on the path, hypothesis profiles, the summary.

Default (CI): a fixed number of examples per entry, derandomized so a CI run is
reproducible. ``FUZZ_EXAMPLES=N`` runs N examples per entry with fresh randomness, for
deeper local runs (``FUZZ_EXAMPLES=2000 make test``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import fuzzlib  # noqa: E402

settings.register_profile(
    "gpuroof-fuzz",
    deadline=None,
    database=None,
    derandomize=not fuzzlib.DEEP,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """Under pytest-xdist (`make test`): add each worker's counters to the summary's."""
    fuzzlib.STATS.update(getattr(node, "workeroutput", {}).get("fuzz_stats", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = fuzzlib.STATS
    if not stats:
        return
    terminalreporter.write_sep("-", "fuzz")
    terminalreporter.write_line(
        f"API: {stats['calls']} calls ({stats['results']} results, {stats['library_errors']} library errors), "
        f"{stats['other_exceptions']} other exceptions, {stats['nan']} non-finite results, "
        f"{stats['hangs']} hangs; "
        f"CLI: {stats['cli_runs']} runs ({stats['cli_exit_0']} exit 0, {stats['cli_exit_2']} exit 2, "
        f"{stats['cli_exit_3']} exit 3), {stats['cli_tracebacks']} tracebacks, {stats['cli_wrong_exit']} wrong exit codes; "
        f"files: {stats['file_cases']} corrupted-file cases"
    )
    if out := os.environ.get("FUZZ_STATS"):
        import json

        # Every counter, the zeros too: a report says "0 tracebacks", not nothing.
        names = ("calls", "results", "library_errors", "other_exceptions", "nan", "hangs", "cli_runs", "cli_exit_0",
                 "cli_exit_2", "cli_exit_3", "cli_tracebacks", "cli_wrong_exit", "file_cases")
        Path(out).write_text(json.dumps({**{n: stats[n] for n in names}, **stats}, indent=2) + "\n")


def pytest_sessionfinish(session, exitstatus):
    from values import TMP

    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker hands its counters on
        session.config.workeroutput["fuzz_stats"] = dict(fuzzlib.STATS)

    shutil.rmtree(TMP, ignore_errors=True)
    fuzzlib.HANG_LOG.unlink(missing_ok=True)  # the run ended: nothing hung
