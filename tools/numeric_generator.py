"""Random numeric functions with data-dependent control flow, for the traced
fuzzer (`tools.traced_fuzz`).

`generate(seed)` returns the source text of a module that imports numpy and
defines `f` taking one or two float64 arrays of shape `SHAPE` and/or a numpy
float64 scalar (`signature_for(seed)` names them). Functions mix

  * `if`/`else` on reductions and items (`x.sum() > 0`, `x[2] > t`),
    `and`/`or`/`not` of comparisons, conditional expressions;
  * `while` loops whose test joins a symbolic condition with a counter that
    the body increments first (`while w3 < 4 and a1 > 0.1:`), so every loop
    ends;
  * `for v in x` over arrays, `for k, v in enumerate(x)`, and
    `for i in range(n)` with a Python `n` (unrolled when traced);
  * `break`, `continue` and `return` inside loops and branches;
  * item updates `z[i] = ...` / `z[i] += ...` on arrays made inside the
    function, also of slices with constant bounds (`z[1:3]`, `z[::2]`),
    masks (`z[x > 0.5] = ...`) and index arrays (`z[np.arange(1, 4)]`).

What the tracer requires is respected by construction: every variable is
either a float64 array of shape `SHAPE` or a float64 scalar and keeps that
kind for its whole life; loop counters are Python ints that stay ints; a
variable assigned inside a branch or loop is only read afterwards when it
was defined before it (or in both branches of an `if`); every `return`
returns the same kind of value. Programs avoid NaN traps (divisions are by
`abs(...) + 1`, logs of `abs(...) + 1`, `sqrt` of `abs(...)`, products by
constants or by `tanh`), never update or augment-assign a caller's array,
and never make one array name an alias (or view) of another, so eager numpy
semantics and the tracer's functional updates agree.

`inputs_for(seed, count)` returns deterministic argument tuples of the
function's signature (numpy arrays and scalars).
"""

import random
import re

import numpy as np

__all__ = ["FEATURES", "SHAPE", "generate", "inputs_for", "signature_for"]

#: The shape of every array argument and array variable.
SHAPE = (5,)
N = SHAPE[0]

# Statement kinds by cumulative probability (see `_Gen.stmt`); any of them
# can be left out with `generate(..., exclude=(...))`.
_KINDS = [(0.30, "assign"), (0.40, "augassign"), (0.50, "setitem"), (0.66, "if"),
          (0.76, "while"), (0.84, "for_array"), (0.88, "enumerate"), (0.96, "for_range"),
          (1.01, "return")]
FEATURES = tuple(k for _, k in _KINDS) + ("break", "continue", "ifexp", "loop_in_python_loop")
# "loop_in_python_loop": any loop anywhere inside the body of a loop that may
# run as Python: `for i in range(n)`, or a `while` whose test turns out to be
# a Python bool (`while w < 3 and np.sin(0.5) > 0.1`). Converted code then
# crashes or silently returns wrong values when a `break`/`return` flag of the
# Python loop becomes symbolic (see tools.traced_fuzz's KNOWN_ISSUES);
# `generate(..., exclude=("loop_in_python_loop",))` leaves the pattern out.

_SIGNATURES = [("x",), ("x", "y"), ("x", "s"), ("x", "y", "s"), ("s", "x")]
_RETURN_KINDS = ["sc", "arr", "tuple", "sc", "arr"]


def _const(rng, lo=-2.0, hi=2.0):
    return repr(round(rng.uniform(lo, hi), 2))


class _Gen:
    """Recursive-descent generator of statements and expressions."""

    def __init__(self, rng, params, max_depth=3, max_stmts=4, exclude=(), tuple_returns=False, aux=None):
        self.rng = rng
        self.aux = aux or random.Random(0)
        self.tuple_returns = tuple_returns
        self.params = params
        self.exclude = frozenset(exclude)
        self.max_depth = max_depth
        self.max_stmts = max_stmts
        self.counter = 0
        self.lines = []
        self.return_kind = rng.choice(_RETURN_KINDS)

    # -- helpers ---------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def chance(self, p):
        return self.rng.random() < p

    def names(self, env, kind):
        return sorted(n for n, k in env["vars"].items() if k == kind)

    # -- expressions -----------------------------------------------------
    def index(self, env):
        """An in-range index: a constant, or a loop index in scope."""
        idx = sorted(env["indices"])
        if idx and self.chance(0.6):
            return self.rng.choice(idx)
        return str(self.rng.randint(-N, N - 1))

    def arr_atom(self, env):
        return self.rng.choice(self.names(env, "arr"))

    def sc_atom(self, env, const=True):
        r = self.rng.random()
        scalars = self.names(env, "sc")
        if r < 0.35 and scalars:
            return self.rng.choice(scalars)
        if r < 0.5 and const:
            return _const(self.rng)
        if r < 0.7:
            return f"{self.arr_atom(env)}[{self.index(env)}]"
        a = self.arr_atom(env)
        return self.rng.choice([f"{a}.sum()", f"np.sum({a})", f"{a}.max()", f"np.min({a})",
                                f"np.mean({a})", f"{a}.mean()", f"np.dot({a}, {self.arr_atom(env)})"])

    def sc_expr(self, env, depth=0, const=True):
        """A float64 scalar expression (`const=False`: not a bare constant)."""
        r = self.rng.random()
        if depth >= 2 or r < 0.3:
            return self.sc_atom(env, const)
        d = depth + 1
        if r < 0.5:
            op = self.rng.choice(["+", "-", "+", "-"])
            return f"({self.sc_expr(env, d)} {op} {self.sc_expr(env, d)})"
        if r < 0.58:
            return f"({self.sc_expr(env, d)} * {_const(self.rng, -1.5, 1.5)})"
        if r < 0.63:
            return f"({self.sc_expr(env, d)} * np.tanh({self.sc_expr(env, d)}))"
        if r < 0.68:
            return f"({self.sc_expr(env, d)} / (np.abs({self.sc_expr(env, d)}) + 1.0))"
        if r < 0.78:
            fn = self.rng.choice(["np.sin", "np.cos", "np.tanh", "np.abs", "-"])
            return f"{fn}({self.sc_expr(env, d)})"
        if r < 0.83:
            return self.rng.choice([
                f"np.sqrt(np.abs({self.sc_expr(env, d)}))",
                f"np.exp(-np.abs({self.sc_expr(env, d)}))",
                f"np.log(np.abs({self.sc_expr(env, d)}) + 1.0)",
                f"np.clip({self.sc_expr(env, d)}, -3.0, 3.0)"])
        if r < 0.88:
            fn = self.rng.choice(["np.maximum", "np.minimum"])
            return f"{fn}({self.sc_expr(env, d)}, {self.sc_expr(env, d)})"
        if r < 0.94 and "ifexp" not in self.exclude:
            return f"({self.sc_expr(env, d)} if {self.cond(env, d)} else {self.sc_expr(env, d)})"
        a = self.arr_expr(env, d)
        return self.rng.choice([f"np.sum({a})", f"np.max({a})", f"np.mean({a})",
                                f"{a}[{self.index(env)}]" if a.isidentifier() else f"np.min({a})"])

    def arr_expr(self, env, depth=0):
        """A float64[N] expression."""
        r = self.rng.random()
        if depth >= 2 or r < 0.25:
            return self.arr_atom(env)
        d = depth + 1
        if r < 0.42:
            op = self.rng.choice(["+", "-"])
            other = self.arr_expr(env, d) if self.chance(0.6) else self.sc_expr(env, d)
            return f"({self.arr_expr(env, d)} {op} {other})"
        if r < 0.5:
            return f"({self.arr_expr(env, d)} * {_const(self.rng, -1.5, 1.5)})"
        if r < 0.55:
            return f"({self.arr_expr(env, d)} * np.tanh({self.arr_expr(env, d)}))"
        if r < 0.6:
            return f"({self.arr_expr(env, d)} / (np.abs({self.arr_expr(env, d)}) + 1.0))"
        if r < 0.7:
            fn = self.rng.choice(["np.sin", "np.cos", "np.tanh", "np.abs", "-"])
            return f"{fn}({self.arr_expr(env, d)})"
        if r < 0.8:
            a = self.arr_expr(env, d)
            return self.rng.choice([
                f"np.cumsum({a})", f"np.sort({a})", f"np.roll({a}, {self.rng.randint(-2, 2)})",
                f"(np.flip({a}) + 0.0)", f"np.clip({a}, -2.5, 2.5)", f"np.sqrt(np.abs({a}))",
                f"np.exp(-np.abs({a}))", f"(np.zeros_like({a}) + {self.sc_expr(env, d)})"])
        if r < 0.87:
            fn = self.rng.choice(["np.maximum", "np.minimum"])
            other = self.arr_expr(env, d) if self.chance(0.5) else self.sc_expr(env, d)
            return f"{fn}({self.arr_expr(env, d)}, {other})"
        if r < 0.93:
            a = self.arr_expr(env, d)
            t = self.sc_expr(env, d) if self.chance(0.5) else _const(self.rng)
            return f"np.where({a} > {t}, {self.arr_expr(env, d)}, {self.arr_expr(env, d)})"
        if "ifexp" not in self.exclude:
            # Arms through `expr`: a bare name arm would make the result an
            # alias of that array.
            return f"({self.expr(env, 'arr', d)} if {self.cond(env, d)} else {self.expr(env, 'arr', d)})"
        return self.arr_atom(env)

    def expr(self, env, kind, depth=0):
        if kind == "sc":
            return self.sc_expr(env, depth)
        if kind == "arr":
            e = self.arr_expr(env, depth)
            # A bare name would alias another array (eager item updates
            # would then show through it, the tracer's do not).
            return f"({e} * 1.0)" if e.isidentifier() else e
        return f"({self.expr(env, 'arr', depth)}, {self.expr(env, 'sc', depth)})"

    def cond(self, env, depth=0):
        """A symbolic boolean (or, rarely, a Python one on a loop index)."""
        r = self.rng.random()
        if env["indices"] and r < 0.08:
            i = self.rng.choice(sorted(env["py_indices"] or env["indices"]))
            if i in env["py_indices"]:
                return self.rng.choice([f"{i} % 2 == 0", f"{i} > {self.rng.randint(0, 3)}"])
        if depth >= 2 or r < 0.55:
            op = self.rng.choice(["<", ">", "<=", ">="])
            right = self.sc_expr(env, 2) if self.chance(0.4) else _const(self.rng, -1.0, 1.0)
            return f"{self.sc_expr(env, depth + 1, const=False)} {op} {right}"
        d = depth + 1
        if r < 0.65:
            a = self.arr_atom(env)
            fn = self.rng.choice(["np.any", "np.all"])
            return f"{fn}({a} {self.rng.choice(['>', '<'])} {_const(self.rng, -1.0, 1.0)})"
        if r < 0.77:
            return f"({self.cond(env, d)} and {self.cond(env, d)})"
        if r < 0.89:
            return f"({self.cond(env, d)} or {self.cond(env, d)})"
        return f"not {self.cond(env, d)}"

    # -- statements ------------------------------------------------------
    def block(self, indent, env, depth, loop, min_stmts=1):
        n = self.rng.randint(min_stmts, self.max_stmts if depth < self.max_depth else 2)
        for _ in range(n):
            self.stmt(indent, env, depth, loop)
            if env["terminated"]:
                break

    def _assign_name(self, env, kind):
        existing = [n for n in self.names(env, kind) if n not in self.params]
        if existing and self.chance(0.7):
            return self.rng.choice(existing)
        return self.fresh("a" if kind == "sc" else "z")

    def stmt(self, indent, env, depth, loop):
        r = self.rng.random()
        kind = next(k for p, k in _KINDS if r < p)
        if kind in self.exclude or (depth >= self.max_depth and kind in (
                "if", "while", "for_array", "enumerate", "for_range")):
            kind = "assign"
        if env["python_loop"] and "loop_in_python_loop" in self.exclude and kind in (
                "while", "for_array", "enumerate", "for_range"):
            kind = "if"
        if kind == "setitem" and not env["bufs"] - env["iterating"]:
            kind = "assign"
        if loop and self.chance(0.18):
            self.jump(indent, env, loop)
            return
        getattr(self, "stmt_" + kind)(indent, env, depth, loop)

    def stmt_assign(self, indent, env, depth, loop):
        kind = "sc" if self.chance(0.55) else "arr"
        name = self._assign_name(env, kind)
        if kind == "arr" and self.chance(0.2):
            a = self.arr_atom(env)
            value = self.rng.choice([f"np.zeros_like({a})", f"np.ones_like({a})",
                                     f"{a}.copy()", f"np.copy({a})", f"{a} * 0.0"])
        else:
            value = self.expr(env, kind)
        self.emit(indent, f"{name} = {value}")
        env["vars"][name] = kind
        if kind == "arr":
            env["bufs"].add(name)

    def stmt_augassign(self, indent, env, depth, loop):
        # Scalars only, or arrays made inside the function (in-place on a
        # caller's array would change the caller's data between runs).
        pool = self.names(env, "sc") + sorted(env["bufs"] - env["iterating"])
        if not pool:
            return self.stmt_assign(indent, env, depth, loop)
        name = self.rng.choice(pool)
        kind = env["vars"][name]
        op = self.rng.choice(["+=", "-=", "*="])
        if op == "*=":
            value = _const(self.rng, -1.5, 1.5) if self.chance(0.6) else f"np.tanh({self.sc_expr(env, 1)})"
        else:
            value = self.sc_expr(env, 1) if kind == "sc" or self.chance(0.4) else self.arr_expr(env, 1)
        self.emit(indent, f"{name} {op} {value}")

    def stmt_setitem(self, indent, env, depth, loop):
        pool = sorted(env["bufs"] - env["iterating"])
        if not pool:
            return self.stmt_assign(indent, env, depth, loop)
        name = self.rng.choice(pool)
        op = self.rng.choice(["=", "=", "+="])
        index = self.target(env, name, op, self.index(env))
        self.emit(indent, f"{name}[{index}] {op} {self.sc_expr(env)}")

    def target(self, env, name, op, index):
        """The index of an item update: `index`, or (drawn from `self.aux`,
        so that the rest of the program is the one the seed always gave) a
        slice with constant bounds, a mask, or an index array."""
        r = self.aux.random()
        if r < 0.5:
            return index
        if r < 0.75:
            lo = self.aux.randint(-N, N - 2)
            return self.aux.choice([f"{lo}:{lo % N + 2}", "::2", f"{lo}:", "1::3"])
        if r < 0.9 and op == "=":
            other = self.aux.choice([name] + self.names(env, "arr"))
            return f"{other} {self.aux.choice(['>', '<'])} {_const(self.aux, -1.0, 1.0)}"
        lo = self.aux.randint(0, N - 2)
        return f"np.arange({lo}, {self.aux.randint(lo + 1, N)})"

    def stmt_if(self, indent, env, depth, loop):
        self.emit(indent, f"if {self.cond(env)}:")
        before = _copy_env(env)
        then_env = _copy_env(env)
        self.block(indent + 1, then_env, depth + 1, loop)
        if self.chance(0.7):
            self.emit(indent, "else:")
            else_env = _copy_env(env)
            self.block(indent + 1, else_env, depth + 1, loop)
        else:
            else_env = before
        _merge_into(env, then_env, else_env)

    def _loop_body(self, indent, env, depth, extra_indices=(), py_indices=(), python_loop=False):
        body_env = _copy_env(env)
        body_env["python_loop"] = body_env["python_loop"] or python_loop
        body_env["indices"] |= set(extra_indices)
        body_env["py_indices"] |= set(py_indices)
        self.block(indent, body_env, depth + 1, True)
        # The loop may run zero times: what it defines is not read after it;
        # arrays it (re)made stay updatable only if they were before.
        env["terminated"] = False

    def stmt_while(self, indent, env, depth, loop):
        w = self.fresh("w")
        limit = self.rng.randint(1, 6)
        self.emit(indent, f"{w} = 0")
        test = self.cond(env)
        if self.chance(0.7):
            self.emit(indent, f"while {w} < {limit} and {test}:")
        else:
            self.emit(indent, f"while {test} and {w} < {limit}:")
        self.emit(indent + 1, f"{w} += 1")
        self._loop_body(indent + 1, env, depth, python_loop=True)

    def stmt_for_array(self, indent, env, depth, loop):
        v = self.fresh("v")
        it = self.arr_atom(env) if self.chance(0.75) else self.arr_expr(env, 1)
        self.emit(indent, f"for {v} in {it}:")
        inner = _copy_env(env)
        inner["vars"][v] = "sc"
        # Updating the iterated array in place inside the loop: eager numpy
        # sees the new items, the tracer iterates a snapshot (see the report).
        inner["iterating"] |= {n for n in env["vars"] if re.search(rf"\b{n}\b", it)}
        self._loop_body(indent + 1, inner, depth)
        env["terminated"] = False

    def stmt_enumerate(self, indent, env, depth, loop):
        k, v = self.fresh("k"), self.fresh("v")
        it = self.arr_atom(env)
        self.emit(indent, f"for {k}, {v} in enumerate({it}):")
        inner = _copy_env(env)
        inner["vars"][v] = "sc"
        inner["iterating"].add(it)
        self._loop_body(indent + 1, inner, depth, extra_indices=[k])
        env["terminated"] = False

    def stmt_for_range(self, indent, env, depth, loop):
        i = self.fresh("i")
        n = self.rng.randint(1, N)
        self.emit(indent, f"for {i} in range({n}):")
        self._loop_body(indent + 1, env, depth, extra_indices=[i], py_indices=[i], python_loop=True)

    def stmt_return(self, indent, env, depth, loop):
        # An early `return` of a tuple under a symbolic `if` fails to trace
        # (BranchMismatchError on 'retval', see the report): tuples are
        # returned at the end only, unless `tuple_returns=True`.
        if depth == 0 or (self.return_kind == "tuple" and not self.tuple_returns):
            return self.stmt_assign(indent, env, depth, loop)
        self.emit(indent, f"if {self.cond(env)}:")
        self.emit(indent + 1, f"return {self.expr(env, self.return_kind)}")

    def jump(self, indent, env, loop):
        kinds = [k for k in ("break", "continue") if k not in self.exclude]
        if not kinds:
            return
        kind = self.rng.choice(kinds)
        if self.chance(0.85):
            self.emit(indent, f"if {self.cond(env)}:")
            self.emit(indent + 1, kind)
        else:
            self.emit(indent, kind)
            env["terminated"] = True

    def function(self):
        self.emit(0, f"def f({', '.join(self.params)}):")
        env = {"vars": {p: ("sc" if p == "s" else "arr") for p in self.params},
               "bufs": set(), "indices": set(), "py_indices": set(), "iterating": set(),
               "python_loop": False, "terminated": False}
        # Accumulators that loops and branches carry.
        if "s" not in self.params or self.chance(0.5):
            a = self.fresh("a")
            self.emit(1, f"{a} = np.float64({_const(self.rng)})")
            env["vars"][a] = "sc"
        if self.chance(0.6):
            z = self.fresh("z")
            init = self.rng.choice(["x * 0.0", "np.zeros_like(x)", "x.copy()", "np.ones_like(x)"])
            self.emit(1, f"{z} = {init}")
            env["vars"][z] = "arr"
            env["bufs"].add(z)
        self.block(1, env, 0, False, min_stmts=2)
        self.emit(1, f"return {self.expr(env, self.return_kind)}")
        return "\n".join(self.lines) + "\n"


def _copy_env(env):
    return {"vars": dict(env["vars"]), "bufs": set(env["bufs"]), "indices": set(env["indices"]),
            "py_indices": set(env["py_indices"]), "iterating": set(env["iterating"]),
            "python_loop": env["python_loop"], "terminated": env["terminated"]}


def _merge_into(env, a, b):
    """After an `if`: a variable is defined when both branches define it with
    the same kind (a branch that jumped away does not count)."""
    if a["terminated"] and b["terminated"]:
        env["terminated"] = True
        return
    live = [e for e in (a, b) if not e["terminated"]]
    names = set(live[0]["vars"])
    for e in live[1:]:
        names &= {n for n, k in e["vars"].items() if live[0]["vars"].get(n) == k}
    # A symbolic `if` needs the variable in both branches even when one
    # returns; keep only names defined in both.
    names &= set(a["vars"]) & set(b["vars"])
    names = {n for n in names if a["vars"][n] == b["vars"][n]}
    env["vars"] = {n: live[0]["vars"][n] for n in names}
    bufs = set(env["bufs"]) | a["bufs"] | b["bufs"]
    env["bufs"] = {n for n in bufs if env["vars"].get(n) == "arr"}


def signature_for(seed):
    """The parameter names of program `seed` ('x', 'y': arrays; 's': scalar)."""
    return random.Random(f"sig-{seed}").choice(_SIGNATURES)


def generate(seed, max_depth=3, max_stmts=4, exclude=(), tuple_returns=False):
    """Returns the source of a module defining `f` for `seed`. `exclude`
    names statement kinds (see FEATURES) to leave out; `tuple_returns=True`
    also puts early `return (array, scalar)` under symbolic conditions."""
    rng = random.Random(seed)
    gen = _Gen(rng, signature_for(seed), max_depth=max_depth, max_stmts=max_stmts,
               exclude=exclude, tuple_returns=tuple_returns, aux=random.Random(f"aux-{seed}"))
    return "import numpy as np\n\n\n" + gen.function()


def inputs_for(seed, count=3):
    """`count` deterministic argument tuples for program `seed`: float64
    arrays of shape SHAPE and np.float64 scalars, values in [-2, 2] (one
    tuple has small values, one mixed signs, ...)."""
    rng = np.random.default_rng([seed, 7919])
    params = signature_for(seed)
    out = []
    for k in range(count):
        scale = [2.0, 0.5, 1.0, 3.0][k % 4]
        args = []
        for p in params:
            if p == "s":
                args.append(np.float64(round(float(rng.uniform(-scale, scale)), 3)))
            else:
                args.append(np.round(rng.uniform(-scale, scale, SHAPE), 3).astype(np.float64))
        out.append(tuple(args))
    return out
