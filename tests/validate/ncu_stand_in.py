"""A stand-in for ``subprocess.run`` under ``ncu``, for the probes that profile a child
(validate.probes._ncu_child.profile_child's ``runner``)."""

from __future__ import annotations

import subprocess


def ncu_runner(stdout: str = "", *, stderr: str = "", code: int = 0, seen: list | None = None):
    """A runner that prints ``stdout`` and ``stderr`` and exits with ``code``; each command it
    is given is appended to ``seen``."""
    def run(command, **kwargs):
        if seen is not None:
            seen.append(command)
        return subprocess.CompletedProcess(command, code, stdout, stderr)
    return run
