"""How the messages that name a missing optional dependency say to install it."""

from __future__ import annotations

__all__ = ["install_extra"]


def install_extra(extra: str) -> str:
    """The command that installs gpuroof's optional dependencies `extra` (``gpu``, ``compile``,
    ``test``, pyproject.toml's ``[project.optional-dependencies]``): gpuroof is not on a package
    index, so pip installs it from its checkout, in the checkout's root folder.

    Examples
    --------
    >>> install_extra("gpu")
    "pip install -e '.[gpu]' (in gpuroof's checkout)"
    """
    return f"pip install -e '.[{extra}]' (in gpuroof's checkout)"
