"""Help texts that are built when help is shown, so that parsing a command line stays cheap."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["HelpFormatter", "LazyHelp"]


class LazyHelp(str):
    """A help text built when help is shown, not when the parser is built.

    The GPU, architecture and GPC-layout lists read the packaged tables; a parsed command line
    (``gpuroof occupancy --arch sm_90 ...``) need not pay for them. `HelpFormatter` builds it.
    """

    build: Callable[[], str]

    def __new__(cls, build: Callable[[], str]) -> LazyHelp:
        text = super().__new__(cls, "(built when shown)")
        text.build = build
        return text


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, building `LazyHelp` texts (``_get_help_string`` is the hook that
    argparse's own ``ArgumentDefaultsHelpFormatter`` overrides)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # The examples that end a help are command lines to copy: kept as written.
        if text.startswith(("Example:", "Examples:")):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        return text.build() if isinstance(text, LazyHelp) else super()._get_help_string(action)
