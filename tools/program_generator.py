"""Random small Python programs for differential testing of the transpiler.

`generate(seed)` returns the source text of a module that defines a function
`f(a, b, c)` taking integers. Programs are deterministic and always
terminate: every `while` loop is bounded by a counter that the body
increments first, and `for` loops run over small finite iterables. They mix
nested if/elif/else, while/for with else, break, continue, return,
try/except/else/finally, with, comprehensions, match, walrus, closures
(including late-binding closures over loop variables), augmented assignment
on names, subscripts and attributes, conditional expressions, and/or/not
whose operands log to a list, and print calls.

`compile_program(source, name)` loads the source with a linecache entry so
`inspect.getsource` works on the function, and returns the function.
`observe(fn, args)` runs a function and records everything the differential
test compares: return value, exception type and message, printed output, the
side-effect log and the arguments after the call.
"""

import asyncio
import contextlib
import copy
import inspect
import io
import linecache
import random
import re
import signal
import sys

__all__ = [
    "PRELUDE", "generate", "compile_program", "make_function", "observe",
    "compare", "inputs_for", "Timeout",
]

# Helpers visible to every generated program (they are part of its source, so
# the transpiler sees them as user code and converts calls to them too).
PRELUDE = '''\
LOG = []


def t(tag, v):
    LOG.append((tag, v))
    return v


class Box:
    def __init__(self, a):
        self.a = a
        self.items = [a, 0, 0]


class CM:
    def __init__(self, tag, suppress=False):
        self.tag = tag
        self.suppress = suppress

    def __enter__(self):
        LOG.append(('enter', self.tag))
        return self.tag

    def __exit__(self, typ, val, tb):
        LOG.append(('exit', self.tag, typ.__name__ if typ else None))
        return self.suppress
'''

_ARGS = ("a", "b", "c")


# Statement kinds by cumulative probability (see `_Gen.stmt`); any of them
# can be left out with `generate(..., exclude=(...))`.
_KINDS = [(0.35, "simple"), (0.5, "if"), (0.6, "for"), (0.68, "while"), (0.74, "try"),
          (0.78, "with"), (0.83, "match"), (0.87, "walrus"), (0.91, "closure"),
          (0.94, "comprehension"), (0.97, "late_binding"), (1.01, "return")]
FEATURES = tuple(k for _, k in _KINDS)


class _Gen:
    """Recursive-descent generator of statements and expressions."""

    def __init__(self, rng, max_depth=3, max_stmts=4, exclude=()):
        self.rng = rng
        self.exclude = frozenset(exclude)
        self.max_depth = max_depth
        self.max_stmts = max_stmts
        self.counter = 0
        self.tag = 0
        self.no_return = 0
        self.lines = []

    # -- helpers ---------------------------------------------------------
    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def next_tag(self):
        self.tag += 1
        return self.tag

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def chance(self, p):
        return self.rng.random() < p

    # -- expressions -----------------------------------------------------
    def var(self, env):
        """A readable variable: usually a defined one, rarely a maybe-undefined one."""
        maybe = sorted(env["maybe"] - env["defined"])
        if maybe and self.chance(0.04):
            return self.rng.choice(maybe)
        return self.rng.choice(sorted(env["defined"]))

    def atom(self, env):
        r = self.rng.random()
        if r < 0.55:
            return self.var(env)
        if r < 0.8:
            return str(self.rng.randint(-3, 9))
        if r < 0.9:
            return "box.a"
        return f"arr[{self.rng.randint(0, 2)}]"

    def expr(self, env, depth=0):
        r = self.rng.random()
        if depth >= 2 or r < 0.3:
            return self.atom(env)
        if r < 0.55:
            op = self.rng.choice(["+", "-", "*", "+", "-", "//", "%"])
            left = self.expr(env, depth + 1)
            right = self.expr(env, depth + 1)
            if op == "*":
                return f"({left} * {right}) % 1009"
            return f"({left} {op} {right})"
        if r < 0.65:
            return (f"({self.expr(env, depth + 1)} if {self.cond(env, depth + 1)} "
                    f"else {self.expr(env, depth + 1)})")
        if r < 0.75:
            return f"t({self.next_tag()}, {self.expr(env, depth + 1)})"
        if r < 0.8:
            return f"len([{self.expr(env, depth + 1)}, {self.atom(env)}])"
        if r < 0.85:
            v = self.fresh("q")
            return (f"sum([{v} * 2 for {v} in range({self.atom(env)} % 4) "
                    f"if {v} != {self.atom(env)}])")
        if r < 0.9:
            return f"abs({self.expr(env, depth + 1)})"
        if r < 0.95:
            return f"max({self.expr(env, depth + 1)}, {self.atom(env)})"
        return f"(-{self.atom(env)})"

    def cond(self, env, depth=0):
        r = self.rng.random()
        if depth >= 2 or r < 0.35:
            op = self.rng.choice(["<", ">", "==", "!=", "<=", ">="])
            return f"{self.expr(env, 2)} {op} {self.expr(env, 2)}"
        if r < 0.5:
            return f"t({self.next_tag()}, {self.cond(env, depth + 1)})"
        if r < 0.62:
            return f"({self.cond(env, depth + 1)} and {self.cond(env, depth + 1)})"
        if r < 0.74:
            return f"({self.cond(env, depth + 1)} or {self.cond(env, depth + 1)})"
        if r < 0.82:
            return f"not {self.cond(env, depth + 1)}"
        if r < 0.9:
            # and/or returning non-boolean values.
            return (f"(t({self.next_tag()}, {self.atom(env)} % 3) "
                    f"{self.rng.choice(['and', 'or'])} t({self.next_tag()}, {self.atom(env)}))")
        return f"{self.atom(env)} % 2"

    # -- statements ------------------------------------------------------
    def block(self, indent, env, depth, loop, min_stmts=1):
        n = self.rng.randint(min_stmts, self.max_stmts if depth < self.max_depth else 2)
        for _ in range(n):
            self.stmt(indent, env, depth, loop)
            # Code after a jump is dead; keep a little of it, not much.
            if env["terminated"] and self.chance(0.85):
                break

    def assign_target(self, env):
        pool = ["x", "y", "z", "w"] + list(_ARGS)
        return self.rng.choice(pool)

    def simple(self, indent, env, loop):
        r = self.rng.random()
        if r < 0.35:
            name = self.assign_target(env)
            self.emit(indent, f"{name} = {self.expr(env)}")
            env["defined"].add(name)
            env["maybe"].add(name)
        elif r < 0.5:
            # Never touch a while-loop counter (names n<k>): loops must end.
            name = self.var(env)
            while name.startswith("n") and name[1:].isdigit():
                name = self.var(env)
            op = self.rng.choice(["+=", "-=", "*=", "+="])
            self.emit(indent, f"{name} {op} {self.expr(env)}")
            if op == "*=":
                self.emit(indent, f"{name} %= 1009")
        elif r < 0.58:
            self.emit(indent, f"arr[{self.expr(env)} % 3] += {self.expr(env)}")
        elif r < 0.64:
            self.emit(indent, f"box.a {self.rng.choice(['+=', '-='])} {self.expr(env)}")
        elif r < 0.68:
            self.emit(indent, f"box.items[{self.rng.randint(0, 2)}] += {self.atom(env)}")
        elif r < 0.8:
            self.emit(indent, f"print({self.next_tag()}, {self.expr(env)})")
        elif r < 0.86:
            self.emit(indent, f"t({self.next_tag()}, {self.cond(env)})")
        elif r < 0.92:
            name = self.assign_target(env)
            self.emit(indent, f"{name} = {self.cond(env)}")
            env["defined"].add(name)
            env["maybe"].add(name)
        else:
            first, second = self.assign_target(env), self.assign_target(env)
            self.emit(indent, f"{first}, {second} = {self.expr(env)}, {self.expr(env)}")
            env["defined"] |= {first, second}
            env["maybe"] |= {first, second}

    def stmt(self, indent, env, depth, loop):
        if depth >= self.max_depth:
            return self.simple_or_jump(indent, env, loop)
        r = self.rng.random()
        kind = next(k for bound, k in _KINDS if r < bound)
        if kind in self.exclude:
            return self.simple_or_jump(indent, env, loop)
        if r < 0.35:
            return self.simple_or_jump(indent, env, loop)
        if r < 0.5:
            return self.if_stmt(indent, env, depth, loop)
        if r < 0.6:
            return self.for_stmt(indent, env, depth)
        if r < 0.68:
            return self.while_stmt(indent, env, depth)
        if r < 0.74:
            return self.try_stmt(indent, env, depth, loop)
        if r < 0.78:
            return self.with_stmt(indent, env, depth, loop)
        if r < 0.83:
            return self.match_stmt(indent, env, depth, loop)
        if r < 0.87:
            return self.walrus_if(indent, env, depth, loop)
        if r < 0.91:
            return self.closure(indent, env)
        if r < 0.94:
            return self.comprehension(indent, env)
        if r < 0.97 or self.no_return:
            return self.late_binding(indent, env)
        return self.ret(indent, env)

    def simple_or_jump(self, indent, env, loop):
        r = self.rng.random()
        if loop and r < 0.12:
            self.emit(indent, "break")
            env["terminated"] = True
        elif loop and r < 0.22:
            self.emit(indent, "continue")
            env["terminated"] = True
        elif r < 0.27 and not self.no_return:
            self.ret(indent, env)
        else:
            self.simple(indent, env, loop)

    def ret(self, indent, env):
        if self.chance(0.3):
            self.emit(indent, "return")
        else:
            self.emit(indent, f"return {self.expr(env)}")
        env["terminated"] = True

    # Each compound statement works on copies of `env` for its branches and
    # merges: a name is definitely defined after the statement only if every
    # path that falls through defines it.
    @staticmethod
    def sub(env):
        return {"defined": set(env["defined"]), "maybe": set(env["maybe"]), "terminated": False}

    @staticmethod
    def merge(env, branches):
        live = [b for b in branches if not b["terminated"]]
        for b in branches:
            env["maybe"] |= b["maybe"]
        if live:
            env["defined"] = set.intersection(*[b["defined"] for b in live])
        else:
            env["terminated"] = True

    def if_stmt(self, indent, env, depth, loop):
        self.emit(indent, f"if {self.cond(env)}:")
        branches = []
        b = self.sub(env)
        self.block(indent + 1, b, depth + 1, loop)
        branches.append(b)
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            self.emit(indent, f"elif {self.cond(env)}:")
            b = self.sub(env)
            self.block(indent + 1, b, depth + 1, loop)
            branches.append(b)
        if self.chance(0.6):
            self.emit(indent, "else:")
            b = self.sub(env)
            self.block(indent + 1, b, depth + 1, loop)
            branches.append(b)
        else:
            branches.append(self.sub(env))
        self.merge(env, branches)

    def loop_else(self, indent, env, depth, loop, body_env):
        """Optional else clause; returns the env list for merging."""
        if self.chance(0.35):
            self.emit(indent, "else:")
            e = self.sub(env)
            e["defined"] = set(env["defined"])
            self.block(indent + 1, e, depth + 1, loop)
            return [e]
        return []

    def for_stmt(self, indent, env, depth):
        r = self.rng.random()
        v = self.fresh("i")
        targets = [v]
        if r < 0.4:
            it = f"range({self.atom(env)} % 5)"
            head = v
        elif r < 0.55:
            it = f"[{self.atom(env)}, {self.atom(env)}, {self.atom(env)}]"
            head = v
        elif r < 0.65:
            u = self.fresh("e")
            it = f"enumerate(range({self.atom(env)} % 4, 4))"
            head = f"{u}, {v}"
            targets.append(u)
        elif r < 0.75:
            u = self.fresh("z")
            it = f"zip(range(3), [{self.atom(env)}, {self.atom(env)}])"
            head = f"({u}, {v})"
            targets.append(u)
        elif r < 0.82:
            it = f"(k * 2 for k in range({self.atom(env)} % 4))"
            head = v
        elif r < 0.9:
            it = f"{{{self.rng.randint(0, 5)}: 1, {self.rng.randint(6, 9)}: 2}}"
            head = v
        else:
            u = self.fresh("s")
            it = f"[(1, 2, 3), ({self.atom(env)}, 5, 6)]"
            head = f"{v}, *{u}"
        self.emit(indent, f"for {head} in {it}:")
        body = self.sub(env)
        body["defined"] |= set(targets)
        body["maybe"] |= set(targets)
        self.block(indent + 1, body, depth + 1, True)
        env["maybe"] |= body["maybe"]
        env["maybe"] |= set(targets)
        self.loop_else(indent, env, depth, False, body)
        # After a loop, only names defined before it are definitely defined
        # (the body may run zero times; the else may be skipped by break).
        env["terminated"] = False

    def while_stmt(self, indent, env, depth):
        cnt = self.fresh("n")
        bound = self.rng.randint(1, 6)
        self.emit(indent, f"{cnt} = 0")
        self.emit(indent, f"while {cnt} < {bound} and {self.cond(env)}:")
        self.emit(indent + 1, f"{cnt} += 1")
        body = self.sub(env)
        body["defined"].add(cnt)
        self.block(indent + 1, body, depth + 1, True)
        env["maybe"] |= body["maybe"]
        env["defined"].add(cnt)
        self.loop_else(indent, env, depth, False, body)
        env["terminated"] = False

    def try_stmt(self, indent, env, depth, loop):
        self.emit(indent, "try:")
        body = self.sub(env)
        self.block(indent + 1, body, depth + 1, loop)
        exc = self.rng.choice(["ZeroDivisionError", "UnboundLocalError",
                               "(ZeroDivisionError, IndexError)", "Exception"])
        has_except = self.chance(0.8)
        if has_except:
            if self.chance(0.5):
                ename = self.fresh("err")
                self.emit(indent, f"except {exc} as {ename}:")
                h = self.sub(env)
                self.emit(indent + 1, f"print('caught', type({ename}).__name__)")
            else:
                self.emit(indent, f"except {exc}:")
                h = self.sub(env)
            self.block(indent + 1, h, depth + 1, loop)
            env["maybe"] |= h["maybe"]
            if self.chance(0.3):
                self.emit(indent, "else:")
                e = self.sub(body)
                self.block(indent + 1, e, depth + 1, loop)
                env["maybe"] |= e["maybe"]
        env["maybe"] |= body["maybe"]
        if not has_except or self.chance(0.4):
            self.emit(indent, "finally:")
            fin = self.sub(env)
            # No return/break/continue in `finally` (it would swallow
            # exceptions; the transpiler declines to convert it).
            self.no_return += 1
            self.block(indent + 1, fin, depth + 1, False)
            self.no_return -= 1
            env["maybe"] |= fin["maybe"]
        env["terminated"] = False

    def with_stmt(self, indent, env, depth, loop):
        suppress = self.chance(0.4)
        alias = self.fresh("cm")
        self.emit(indent, f"with CM({self.next_tag()}, {suppress}) as {alias}:")
        body = self.sub(env)
        body["defined"].add(alias)
        self.block(indent + 1, body, depth + 1, loop)
        env["maybe"] |= body["maybe"] | {alias}
        if not suppress:
            env["defined"] = set(body["defined"]) if not body["terminated"] else env["defined"]
        env["terminated"] = False

    def match_stmt(self, indent, env, depth, loop):
        subject = self.rng.choice(["int", "tuple", "list"])
        branches = []
        if subject == "int":
            self.emit(indent, f"match {self.expr(env)} % 5:")
            pats = [str(self.rng.randint(0, 4)), f"{self.rng.randint(0, 4)} | {self.rng.randint(0, 4)}"]
            cap = self.fresh("m")
            pats.append(f"{cap} if {cap} > {self.rng.randint(0, 4)}")
            self.rng.shuffle(pats)
            captures = [set() for _ in pats]
            for p, caps in zip(pats, captures):
                if p.startswith(cap):
                    caps.add(cap)
        elif subject == "tuple":
            self.emit(indent, f"match ({self.atom(env)} % 3, {self.atom(env)}):")
            m1, m2 = self.fresh("m"), self.fresh("m")
            pats = [f"(0, {m1})", f"({m1}, 1)", f"(1 | 2, {m1}) if {m1} > 0"]
            captures = [{m1}, {m1}, {m1}]
        else:
            self.emit(indent, f"match [k for k in range({self.atom(env)} % 4)]:")
            m1, m2 = self.fresh("m"), self.fresh("m")
            pats = ["[]", f"[{m1}]", f"[{m1}, *{m2}]"]
            captures = [set(), {m1}, {m1}]
        for p, caps in zip(pats, captures):
            self.emit(indent + 1, f"case {p}:")
            b = self.sub(env)
            b["defined"] |= caps
            b["maybe"] |= caps
            self.block(indent + 2, b, depth + 1, loop)
            branches.append(b)
        if self.chance(0.5):
            self.emit(indent + 1, "case _:")
            b = self.sub(env)
            self.block(indent + 2, b, depth + 1, loop)
            branches.append(b)
        else:
            branches.append(self.sub(env))
        self.merge(env, branches)

    def walrus_if(self, indent, env, depth, loop):
        name = self.fresh("wal")
        self.emit(indent, f"if ({name} := {self.expr(env)}) {self.rng.choice(['>', '<', '=='])} {self.atom(env)}:")
        env["defined"].add(name)
        env["maybe"].add(name)
        b = self.sub(env)
        self.block(indent + 1, b, depth + 1, loop)
        branches = [b]
        if self.chance(0.5):
            self.emit(indent, "else:")
            e = self.sub(env)
            self.block(indent + 1, e, depth + 1, loop)
            branches.append(e)
        else:
            branches.append(self.sub(env))
        self.merge(env, branches)

    def closure(self, indent, env):
        g = self.fresh("g")
        free = self.var(env)
        self.emit(indent, f"def {g}(p):")
        self.emit(indent + 1, f"if p > {free}:")
        self.emit(indent + 2, f"return p - {free}")
        self.emit(indent + 1, "return p + 1")
        target = self.assign_target(env)
        self.emit(indent, f"{target} = {g}({self.expr(env)})")
        env["defined"].add(target)
        env["maybe"].add(target)

    def comprehension(self, indent, env):
        target = self.assign_target(env)
        r = self.rng.random()
        k = self.fresh("k")
        if r < 0.3:
            wal = self.fresh("wc")
            self.emit(indent, f"{target} = sum([({wal} := {k} + {self.atom(env)}) for {k} in range(3)]) + 0")
            self.emit(indent, f"{target} += {wal}")
            env["defined"].add(wal)
            env["maybe"].add(wal)
        elif r < 0.55:
            self.emit(indent, f"{target} = len({{{k} % 3 for {k} in range({self.atom(env)} % 6)}})")
        elif r < 0.8:
            atom = self.atom(env)
            self.emit(indent, f"{target} = sum({{{k}: {k} * 2 for {k} in range(4) if {k} != {atom}}}.values())")
        else:
            self.emit(indent, f"{target} = sum(({k} if {k} % 2 else -{k}) for {k} in range({self.atom(env)} % 5))")
        env["defined"].add(target)
        env["maybe"].add(target)

    def late_binding(self, indent, env):
        fs = self.fresh("fs")
        k = self.fresh("lb")
        target = self.assign_target(env)
        self.emit(indent, f"{fs} = []")
        self.emit(indent, f"for {k} in range({self.atom(env)} % 4):")
        self.emit(indent + 1, f"{fs}.append(lambda: {k} * 10)")
        self.emit(indent, f"{target} = sum(h() for h in {fs})")
        env["defined"].add(target)
        env["maybe"] |= {target, k}

    def function(self):
        self.emit(0, "def f(a, b, c):")
        self.emit(1, "arr = [a, b, c]")
        self.emit(1, "box = Box(c)")
        env = {"defined": set(_ARGS) | {"x"}, "maybe": set(_ARGS) | {"x"}, "terminated": False}
        self.emit(1, "x = a + b")
        self.block(1, env, 0, False, min_stmts=2)
        names = sorted(n for n in env["defined"] if n in ("x", "y", "z", "w"))
        self.emit(1, f"return ({', '.join(names + ['arr', 'box.a', 'box.items'])},)")
        return "\n".join(self.lines) + "\n"


def generate(seed, max_depth=3, max_stmts=3, exclude=()):
    """Returns the source of a module defining `f(a, b, c)` for `seed`.
    `exclude` names statement kinds (see FEATURES) to leave out."""
    rng = random.Random(seed)
    gen = _Gen(rng, max_depth=max_depth, max_stmts=max_stmts, exclude=exclude)
    return PRELUDE + "\n\n" + gen.function()


def inputs_for(seed, count=4):
    """A few deterministic integer argument triples for the program `seed`."""
    rng = random.Random(f"inputs-{seed}")
    fixed = [(0, 0, 0), (1, 2, 3), (-2, 5, 1), (3, -1, 4)]
    extra = [tuple(rng.randint(-4, 8) for _ in range(3)) for _ in range(max(0, count - len(fixed)))]
    return (fixed + extra)[:count]


_loaded = 0


def compile_program(source, filename):
    """Executes `source` as a module named after `filename` and returns its
    namespace. The source is registered in linecache so that
    `inspect.getsource` works on functions it defines."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": filename.strip("<>").replace("-", "_"), "__file__": filename}
    code = compile(source, filename, "exec")
    exec(code, namespace)
    return namespace


def make_function(seed, **kwargs):
    """Generates, compiles and returns `(f, namespace, source)` for `seed`."""
    source = generate(seed, **kwargs)
    namespace = compile_program(source, f"<generated-{seed}>")
    return namespace["f"], namespace, source


# -- running and comparing --------------------------------------------------

class Timeout(Exception):
    """Raised inside a run that took too long (likely an infinite loop)."""


@contextlib.contextmanager
def _time_limit(seconds, cpu=False):
    """Raises Timeout in the block after `seconds` of wall-clock time, or with
    `cpu` after `seconds` of the process's CPU time (which a loaded machine
    does not stretch), and then after four times that of wall-clock time
    too (a block that waits)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Timeout(f"timed out after {seconds}s" + (" of CPU time" if signum == signal.SIGPROF else ""))

    timers = [(signal.SIGALRM, signal.ITIMER_REAL, seconds * 4 if cpu else seconds)]
    if cpu:
        timers.append((signal.SIGPROF, signal.ITIMER_PROF, seconds))
    old = [signal.signal(signum, handler) for signum, _, _ in timers]
    for _, timer, limit in timers:
        signal.setitimer(timer, limit)
    try:
        yield
    finally:
        for (signum, timer, _), previous in zip(timers, old, strict=True):
            signal.setitimer(timer, 0)
            signal.signal(signum, previous)


def _snapshot(value):
    try:
        return copy.deepcopy(value)
    except Exception:
        return repr(value)


def _describe_exc(exc):
    return (type(exc).__name__, str(exc))


#: How a converted function runs outside traces: its statements as written
#: (the default), or its converted code, whose operators then take their
#: Python paths (the paths a trace takes for its Python values).
MODES = (("as written", True), ("converted code", False))


@contextlib.contextmanager
def running(as_written):
    """Converted functions run in the mode `as_written` (see MODES)."""
    from autograph.runtime import run_as_written
    previous = run_as_written(as_written)
    try:
        yield
    finally:
        run_as_written(previous)


def observe(fn, args=(), kwargs=None, log=None, run_async=False, timeout=5.0):
    """Calls `fn(*args, **kwargs)` on deep copies of the arguments and returns
    a dict of everything observable: `ret`, `exc` (type name and message),
    `stdout`, `log` (a snapshot of the list `log`, cleared first) and `args`
    (the arguments after the call). Generators are drained (values and the
    exception that ends them); coroutines are run with asyncio.run."""
    args = _snapshot(tuple(args))
    kwargs = _snapshot(dict(kwargs or {}))
    if log is not None:
        del log[:]
    out = io.StringIO()
    ret = exc = None
    limit = sys.getrecursionlimit()
    try:
        with _time_limit(timeout), contextlib.redirect_stdout(out):
            try:
                result = fn(*args, **kwargs)
                if run_async or inspect.iscoroutine(result):
                    result = asyncio.run(result)
                if inspect.isgenerator(result):
                    items = []
                    try:
                        for item in result:
                            items.append(_snapshot(item))
                            if len(items) > 10000:
                                raise Timeout("generator too long")
                    except Timeout:
                        raise
                    except Exception as e:  # noqa: BLE001
                        items.append(("<raised>",) + _describe_exc(e))
                    result = ("<generator>", items)
                ret = _snapshot(result)
            except Timeout:
                raise
            except Exception as e:  # noqa: BLE001
                exc = _describe_exc(e)
    except Timeout as e:
        exc = ("<Timeout>", str(e))
    finally:
        sys.setrecursionlimit(limit)
    return {
        "ret": ret,
        "exc": exc,
        "stdout": out.getvalue(),
        "log": _snapshot(list(log)) if log is not None else None,
        "args": (args, kwargs),
    }


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _equal(a, b):
    """Equality, falling back to repr with memory addresses removed (two runs
    create distinct but equivalent objects, e.g. instances or closures)."""
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001
        pass
    return _ADDRESS.sub(" at 0x?", repr(a)) == _ADDRESS.sub(" at 0x?", repr(b))


def _short(value, limit=1500):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def compare(expected, actual):
    """Returns a list of human-readable differences (empty when equal)."""
    diffs = []
    for key in ("ret", "exc", "stdout", "log", "args"):
        if not _equal(expected[key], actual[key]):
            diffs.append(f"{key}: expected {_short(expected[key])}, got {_short(actual[key])}")
    return diffs
