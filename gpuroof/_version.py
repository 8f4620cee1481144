"""``gpuroof --version``: the installed package's version, in a module of its own that `_main`
imports only for ``--version`` (as it imports a subcommand's module only for that subcommand), so
that importlib.metadata adds nothing to the start-up of every other command."""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["installed_version"]


def installed_version() -> str:
    """The version of the installed ``gpuroof`` distribution (``0.1.0``)."""
    return version("gpuroof")
