"""Fixtures shared by the tests of the command line and of the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def in_a_clone(tmp_path, monkeypatch) -> Path:
    """A scratch working folder that sees the repository's folders, as a clone's root does: the
    repository paths of the docs and `--help` examples resolve, and the files a command writes
    (``--plot saxpy3.png``, ``--out merged``) land in the scratch folder."""
    for folder in ("docs", "tests", "benchmarks", "validate"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path
