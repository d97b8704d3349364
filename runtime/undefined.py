"""The marker for a variable that may be undefined, and the checked read.

Generated code needs a value for a variable that Python would leave unbound
only where it passes that variable as branch or loop state, for example a
variable defined in one branch of an `if`. Reading the marker must fail the
way reading the unbound variable fails in Python, which `ld` does.
"""

import sys

__all__ = ["Undefined", "UndefinedReturnValue", "UNDEFINED_RETURN_VALUE", "ld", "ld_free", "return_value",
           "unbound_error"]


class Undefined:
    """Stands for the value of the unbound local variable `name`."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"

    def __bool__(self):
        raise unbound_error(self.name)


class UndefinedReturnValue(Undefined):
    """The value of a function's lowered `return` before any `return` ran.
    Code reads it only once the function has returned (`do_return` is set),
    so a backend may stand a placeholder of the right type for it where a
    branch or loop iteration has not returned."""

    __slots__ = ()

    def __init__(self):
        super().__init__("<return value>")


# The one instance the inlined code that runs (converters/fast_paths.py)
# starts a function with, instead of building one per call: code reads the
# marker only by its type, never by identity.
UNDEFINED_RETURN_VALUE = UndefinedReturnValue()


def return_value(value):
    """What the function returns: `value`, or None if no `return` ran."""
    return None if type(value) is UndefinedReturnValue else value


if sys.version_info >= (3, 11):
    _MESSAGE = "cannot access local variable '{}' where it is not associated with a value"
    _FREE_MESSAGE = "cannot access free variable '{}' where it is not associated with a value in enclosing scope"
else:
    _MESSAGE = "local variable '{}' referenced before assignment"
    _FREE_MESSAGE = "free variable '{}' referenced before assignment in enclosing scope"


def unbound_error(name):
    """The exception Python raises when reading the unbound local `name`."""
    return UnboundLocalError(_MESSAGE.format(name))


def ld_free(value):
    """`ld` for a read inside a nested scope (a lambda, a comprehension that
    Python runs as a nested function): fails as reading an unbound free
    variable does."""
    if type(value) is Undefined:
        raise NameError(_FREE_MESSAGE.format(value.name))
    return value


def ld(value):
    """Reads a variable that may hold the `Undefined` marker: means `value`,
    or raises UnboundLocalError as reading the unbound variable would."""
    if type(value) is Undefined:
        raise unbound_error(value.name)
    return value
