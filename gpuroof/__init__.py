"""The `gpuroof` command line: the front door of occupancy, roofline and validate.

One module per group of subcommands (``_occupancy``, ``_roofline``, ``_predict``,
``_validate``); each parses its arguments, makes one call into a library's public face and
prints. The error policy lives in ``_main``: bad input is one line on stderr and exit 2, a
missing GPU or cuda-python exit 3. ``python -m gpuroof`` is the same command.
"""

from ._main import build_parser, main

__all__ = ["build_parser", "main"]
