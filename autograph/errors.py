"""Errors raised by the conversion pipeline."""

__all__ = ["ConversionError"]


class ConversionError(Exception):
    """A function could not be converted. The message names the function and
    says why, and what to do."""
