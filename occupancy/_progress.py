"""Progress of long library work: the one callback protocol of every package.

A long function takes ``progress``, a callable that receives one message (a ``str``) per step,
as `validate.run_validation` always has. A message may be a `ProgressStep`: still a ``str``
(a callback that prints messages keeps working), that also says how far the work is, so that
a caller can draw a bar (the command line's, on a terminal). The library never draws anything.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "ProgressStep", "no_progress", "step"]

#: A progress callback: called with one message per step.
Progress = Callable[[str], None]


class ProgressStep(str):
    """A progress message that also says how far the work is: `done` of `total` steps.

    Examples
    --------
    >>> s = ProgressStep("kernel copy", done=3, total=19)
    >>> s, s.done, s.total
    ('kernel copy', 3, 19)
    """

    done: int
    total: int

    def __new__(cls, text: str, done: int, total: int) -> ProgressStep:
        message = super().__new__(cls, text)
        message.done = max(0, min(int(done), int(total)))
        message.total = max(int(total), 0)
        return message


def no_progress(message: str) -> None:
    """The default progress callback: says nothing."""


def step(progress: Progress, text: str, done: int, total: int) -> None:
    """Report `text` as step `done` of `total` to `progress`.

    Raises
    ------
    TypeError
        When `progress` is not callable (checked by the caller's first report, before its work).
    """
    if not callable(progress):
        raise TypeError(f"progress must be callable, not {type(progress).__name__}")
    progress(ProgressStep(text, done, total))
