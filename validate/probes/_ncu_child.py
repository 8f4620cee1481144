"""A probe's own launches profiled by Nsight Compute: ``ncu`` on a child Python process (``python
-m validate.probes.<module> ARGS``) that launches the probe's kernels through the one compile path
and session, its raw page read with `roofline.load_ncu`. One place for the command, the
timeout and the reasons a profile is not taken (no ncu, counters blocked, a failed run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import roofline

__all__ = ["Runner", "profile_child"]

Runner = Callable[..., "subprocess.CompletedProcess[str]"]
# ncu starts in seconds and replays a probe's few dozen launches in seconds more; minutes mean it hangs.
_TIMEOUT_SECONDS = 300


def profile_child(module: str, args: Sequence[str], *, metrics: Sequence[str], kernel_name: str,
                  ncu: str | None = None, cache_control: str | None = None, launch_skip: int = 0,
                  runner: Runner = subprocess.run) -> tuple[roofline.NcuProfile | None, str, str | None]:
    """Run ``ncu`` on ``python -m module args`` and read the profiled launches.

    Parameters
    ----------
    module : str
        The child's module (``validate.probes._nsight_launch``).
    args : sequence of str
        The child's arguments.
    metrics : sequence of str
        The metrics collected (``--metrics``), at real clocks (``--clock-control none``).
    kernel_name : str
        ``--kernel-name`` (a name, or ``regex:...``).
    ncu : str, optional
        The ncu to run; default the one on PATH.
    cache_control : str, optional
        ``--cache-control`` (``all``: caches flushed before each launch, ncu's default).
    launch_skip : int
        ``--launch-skip``: the child's first launches of the kernel left unprofiled (its warm-up).
    runner : callable
        `subprocess.run`, or a stand-in in tests.

    Returns
    -------
    (NcuProfile or None, str, str or None)
        The profile, the command as shown (``ncu ...``), and why there is no profile (None when
        there is one).
    """
    ncu = ncu or shutil.which("ncu")
    if ncu is None:
        return None, "", "ncu (Nsight Compute) is not on PATH"
    command = [ncu, "--clock-control", "none", *(["--cache-control", cache_control] if cache_control else []),
               "--metrics", ",".join(metrics), "--kernel-name", kernel_name,
               *(["--launch-skip", str(launch_skip)] if launch_skip else []), "--csv", "--page", "raw",
               "--print-units", "base", sys.executable, "-m", module, *args]
    shown = " ".join(["ncu", *command[1:]])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                                       os.environ.get("PYTHONPATH")]))}
    try:
        done = runner(command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, shown, f"ncu did not run: {exc}"
    text = (done.stdout or "") + "\n" + (done.stderr or "")
    if "ERR_NVGPUCTRPERM" in text:
        return None, shown, ("ncu cannot read the GPU's performance counters here "
                             "(ERR_NVGPUCTRPERM: profiling is restricted to admin users)")
    if done.returncode != 0:
        last = [line for line in text.splitlines() if line.strip()][-1:] or [""]
        return None, shown, f"ncu exited with {done.returncode}: {last[0][:200]}"
    with tempfile.TemporaryDirectory(prefix="gpuroof-ncu-child-") as folder:
        export = Path(folder) / "profile.csv"
        export.write_text(done.stdout)
        try:
            return roofline.load_ncu(export), shown, None
        except roofline.RooflineError as exc:
            return None, shown, f"ncu's output could not be read: {exc}"
