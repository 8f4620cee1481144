"""The `gpuroof` command line: the front door of occupancy, roofline and validate.

One module per group of subcommands (``_occupancy``, ``_resources``, ``_roofline``,
``_models``, ``_predict``, ``_ncu``, ``_measure``, ``_validate``, ``_calibrate``); each builds
its subcommands' parsers (its ``PARSERS``), makes one call into a library's public face and
prints. ``_main`` holds the subcommand table (``COMMANDS``: the module and one-line help of each),
imports only the chosen subcommand's module, and owns the error policy: bad input is one line on
stderr and exit 2, a missing GPU or cuda-python exit 3. ``python -m gpuroof`` is the same command.
A new subcommand is a parser-building function in its module's ``PARSERS`` and a row in ``COMMANDS``.
"""

from ._main import build_parser, main

__all__ = ["build_parser", "main"]
