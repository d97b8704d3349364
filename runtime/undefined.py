"""The marker for a variable that may be undefined, and the checked read.

Generated code needs a value for a variable that Python would leave unbound
only where it passes that variable as branch or loop state, for example a
variable defined in one branch of an `if`. Reading the marker must fail the
way reading the unbound variable fails in Python, which `ld` does.
"""

import sys

__all__ = ["Undefined", "ld", "unbound_error"]


class Undefined:
    """Stands for the value of the unbound local variable `name`."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"

    def __bool__(self):
        raise unbound_error(self.name)


if sys.version_info >= (3, 11):
    _MESSAGE = "cannot access local variable '{}' where it is not associated with a value"
else:
    _MESSAGE = "local variable '{}' referenced before assignment"


def unbound_error(name):
    """The exception Python raises when reading the unbound local `name`."""
    return UnboundLocalError(_MESSAGE.format(name))


def ld(value):
    """Reads a variable that may hold the `Undefined` marker: means `value`,
    or raises UnboundLocalError as reading the unbound variable would."""
    if type(value) is Undefined:
        raise unbound_error(value.name)
    return value
