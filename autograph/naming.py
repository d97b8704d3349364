"""Hygienic names for generated code.

Generated helpers are named for what they are (`if_body`, `loop_body`, ...).
A `Namer` knows every identifier spelled in the user's function and never
hands out one of them, so generated names cannot clash with or shadow user
names: a user variable called `if_body` makes the helper `if_body_1`.
"""

__all__ = ["Namer"]


class Namer:
    def __init__(self, user_names):
        self._user = frozenset(user_names)
        self._taken = set()
        self._fixed = {}
        self._next = {}

    def _candidates(self, base, index=0):
        if not index:
            yield base
            index = 1
        while True:
            yield f"{base.rstrip('_')}_{index}"
            index += 1

    def helper(self, base):
        """A name for a helper function that is defined and used at once
        (`if_body`, `loop_test`, ...). Helpers may share a name: each
        definition is consumed before the next one is made."""
        for candidate in self._candidates(base):
            if candidate not in self._user and candidate not in self._taken:
                return candidate

    def new(self, base):
        """A name used by no user code and no other `new` or `fixed` name
        (for example a flag variable)."""
        # Taken names stay taken: the search for the next one of `base`
        # starts after the last (2,000 helpers of one base, not 2,000**2 tries).
        start = self._next.get(base, 0)
        name = next(c for c in self._candidates(base, start) if c not in self._user and c not in self._taken)
        self._taken.add(name)
        if name != base:
            self._next[base] = int(name.rsplit("_", 1)[1]) + 1
        return name

    def is_generated(self, identifier):
        """True for names handed out by `new` or `fixed` (flags and the like)."""
        return identifier in self._taken

    def fixed(self, base):
        """The same fresh name every time (for example the runtime's `ag__`)."""
        if base not in self._fixed:
            self._fixed[base] = self.new(base)
        return self._fixed[base]
