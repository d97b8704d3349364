"""Verbosity and logging.

`set_verbosity(level)` or the AUTOGRAPH_VERBOSITY environment variable set
how much the pipeline logs (to the standard `logging` logger "autograph"):
level 1 and up logs each conversion, level 3 and up also logs the generated
code. Warnings (a function that cannot be converted, a function retraced
too often) are always logged.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_verbosity", "get_verbosity", "log", "warning"]

logger = logging.getLogger("autograph")

_verbosity: int | None = None


def set_verbosity(level: int | None, alsologtostdout: bool = False) -> None:
    """Sets the verbosity level (0 = quiet; None = back to the environment
    variable). With `alsologtostdout`, messages also go to standard output."""
    global _verbosity
    _verbosity = None if level is None else int(level)
    if alsologtostdout and not any(getattr(h, "_autograph", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler._autograph = True  # type: ignore[attr-defined]  # marks autograph's own handler
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def get_verbosity() -> int:
    """The level set with `set_verbosity`, else AUTOGRAPH_VERBOSITY, else 0."""
    if _verbosity is not None:
        return _verbosity
    try:
        return int(os.environ.get("AUTOGRAPH_VERBOSITY", "0"))
    except ValueError:
        return 0


def log(level: int, message: str, *args: object) -> None:
    """Logs at INFO when the verbosity is at least `level`. With nothing
    configured to show INFO records, they go to standard error."""
    if get_verbosity() < level:
        return
    if not logger.isEnabledFor(logging.INFO):
        logger.setLevel(logging.INFO)
    if not logger.handlers and not logging.getLogger().handlers:
        logger.addHandler(logging.StreamHandler())
    logger.info(message, *args)


def warning(message: str, *args: object) -> None:
    logger.warning(message, *args)
