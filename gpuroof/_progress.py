"""The command line's progress: a bar on stderr while a long command works.

`progress_bar` gives the callback the libraries take (``progress=``, messages as ``str``,
`occupancy.common.ProgressStep` where they say how far they are). It draws only when stderr is
a terminal and ``--quiet`` was not given; piped, a command's stderr holds its errors alone.
The bar is one line redrawn in place (``\\r``) and erased when the work ends, so what the
command prints afterwards starts on a clean line.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
from collections.abc import Iterator
from typing import TextIO

__all__ = ["ProgressBar", "progress_bar"]

_WIDTH = 24  # characters of the bar itself


class ProgressBar:
    """A progress callback that draws ``label [#####.......] 5/19 message`` on a terminal.

    Parameters
    ----------
    label : str
        What is working (the subcommand's name).
    stream : file, optional
        Where to draw (default stderr); nothing is drawn unless it is a terminal.
    quiet : bool
        Draw nothing (``--quiet``).
    lines : bool
        Off a terminal, write each message as a line instead of nothing (a log: validate and
        calibrate, whose steps are their record of a GPU run).
    """

    def __init__(self, label: str, stream: TextIO | None = None, *, quiet: bool = False, lines: bool = False) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        try:
            terminal = self.stream.isatty()
        except (AttributeError, ValueError, OSError):  # a closed or odd stream: no terminal
            terminal = False
        self.drawing = terminal and not quiet
        self.logging = lines and not terminal and not quiet
        self.done: int | None = None
        self.total: int | None = None
        self._shown = 0

    def __call__(self, message: str) -> None:
        """Show one progress message (the libraries' callback)."""
        text = " ".join(str(message).split())
        if isinstance(getattr(message, "total", None), int) and message.total > 0:
            self.done, self.total = message.done, message.total
        if self.logging:
            print(f"gpuroof {self.label}: {text}", file=self.stream, flush=True)
        if not self.drawing:
            return
        if self.total:
            filled = round(_WIDTH * self.done / self.total)
            head = f"{self.label} [{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done}/{self.total} "
        else:
            head = f"{self.label}: "
        width = shutil.get_terminal_size((80, 24)).columns - 1
        line = (head + text)[:width]
        self._write("\r" + line.ljust(self._shown))
        self._shown = len(line)

    def close(self) -> None:
        """Erase the bar (when one was drawn)."""
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on without a bar
            self.drawing = False


@contextlib.contextmanager
def progress_bar(args: argparse.Namespace, label: str | None = None, *, lines: bool = False) -> Iterator[ProgressBar]:
    """The progress bar of the parsed command `args` (its ``--quiet``, which `build_parser` gives
    every subcommand), erased when the block ends."""
    bar = ProgressBar(label or args.command, quiet=bool(getattr(args, "quiet", False)), lines=lines)
    try:
        yield bar
    finally:
        bar.close()
