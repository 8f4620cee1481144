"""Subcommands of the `gpuroof` console command for this package."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this package's subcommands to the `gpuroof` parser."""
