"""Static analysis of a function's tree: scopes, reads/writes, liveness and
definite assignment.

All of it works on the structured tree (no CFG is materialised): Python's
statements nest, and after the break/continue/return lowering that runs
before control-flow conversion, every loop and branch is single-entry,
single-exit. The analyses answer, for a converted statement, which variables
are its state:

  * `reads(node)` / `writes(node)`: function-local names a statement or an
    expression reads or writes, including free names of nested functions,
    lambdas and comprehensions, in order of first appearance;
  * `Liveness`: the set of names live after each statement, and at the
    header of each loop;
  * `definitely_assigned(stmts, before)`: names bound on every path through
    a block that completes normally.
"""

import contextlib
import threading

import gast

from autograph import builders

__all__ = ["memoized", "Scope", "reads", "writes", "reads_and_writes", "Liveness",
           "definitely_assigned", "all_identifiers", "walk_scope"]

_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


_local = threading.local()


@contextlib.contextmanager
def memoized():
    """Within this block, the names each statement reads and writes are
    computed once. Converters that rewrite a statement keep the names it
    reads and writes, so the memo stays valid while control flow is
    converted."""
    previous = getattr(_local, "memo", None)
    _local.memo = {}
    try:
        yield
    finally:
        _local.memo = previous


class _Collector(gast.NodeVisitor):
    """Collects the names read and written by a node in its own scope."""

    def __init__(self):
        self.reads = {}
        self.writes = {}

    def visit(self, node):
        memo = getattr(_local, "memo", None)
        method = _METHODS.get(node.__class__) or _method(node.__class__)
        if memo is None or not isinstance(node, gast.stmt):
            return method(self, node)
        entry = memo.get(node)
        if entry is None:
            inner = _Collector()
            method(inner, node)
            entry = memo[node] = (inner.reads, inner.writes)
        self.reads.update(dict.fromkeys(entry[0]))
        self.writes.update(dict.fromkeys(entry[1]))

    def generic_visit(self, node):
        """NodeVisitor.generic_visit, in a plain loop."""
        visit = self.visit
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, _AST):
                        visit(item)
            elif isinstance(value, _AST):
                visit(value)

    def visit_Constant(self, node):
        pass  # (NodeVisitor's own looks for the visit_Num/visit_Str methods of Python 3.7 first)

    def _read(self, name):
        self.reads.setdefault(name, None)

    def _write(self, name):
        self.writes.setdefault(name, None)

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load):
            self._read(node.id)
        elif isinstance(node.ctx, gast.Del):
            self._read(node.id)
            self._write(node.id)
        else:
            self._write(node.id)
        if getattr(node, "annotation", None) is not None:
            self.visit(node.annotation)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, gast.Name):
            self._read(node.target.id)
        self.visit(node.target)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
        elif not isinstance(node.target, gast.Name):
            self.visit(node.target)
        self.visit(node.annotation)

    def visit_Global(self, node):
        pass

    visit_Nonlocal = visit_Global

    def visit_Import(self, node):
        for alias in node.names:
            self._write((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            self.visit(node.type)
        if node.name is not None:
            self.visit(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_MatchAs(self, node):
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name is not None:
            self._write(node.name)

    def visit_MatchStar(self, node):
        if node.name is not None:
            self._write(node.name)

    def visit_MatchMapping(self, node):
        self.generic_visit(node)
        if node.rest is not None:
            self._write(node.rest)

    # Nested scopes: their free names are read here; `nonlocal` names they
    # assign are written here.

    def _nested(self, params, body_nodes):
        inner = _free_names(params, body_nodes)
        for name in inner.reads:
            self._read(name)
        for name in inner.writes:
            self._write(name)

    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._visit_arguments_outside(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._nested(node.args, node.body)
        self._write(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self._visit_arguments_outside(node.args)
        self._nested(node.args, [node.body])

    def _visit_arguments_outside(self, args):
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None and getattr(arg, "annotation", None) is not None:
                self.visit(arg.annotation)

    def visit_ClassDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        for base in node.bases:
            self.visit(base)
        for keyword in node.keywords:
            self.visit(keyword.value)
        self._nested(None, node.body)
        self._write(node.name)

    def _visit_comprehension(self, node, elements):
        self.visit(node.generators[0].iter)
        inner = _Collector()
        for index, generator in enumerate(node.generators):
            inner.visit(generator.target)
            if index:
                inner.visit(generator.iter)
            for condition in generator.ifs:
                inner.visit(condition)
        for element in elements:
            inner.visit(element)
        bound = set()
        for generator in node.generators:
            bound.update(writes(generator.target))
        for name in inner.reads:
            if name not in bound:
                self._read(name)
        # Walrus targets inside a comprehension bind in the enclosing scope.
        for name in inner.writes:
            if name not in bound:
                self._write(name)

    def visit_ListComp(self, node):
        self._visit_comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._visit_comprehension(node, [node.key, node.value])


_AST = gast.AST
# Node class -> the function of _Collector that visits it (NodeVisitor.visit
# looks the method up by name on every visit).
_METHODS = {}


def _method(node_class):
    method = getattr(_Collector, "visit_" + node_class.__name__, None)
    if method is None:
        # A node without fields (`Load`, an operator) holds nothing to visit.
        method = _Collector.generic_visit if node_class._fields else _nothing
    _METHODS[node_class] = method
    return method


def _nothing(collector, node):
    pass


def _free_names(params, body_nodes):
    """Free reads and nonlocal writes of a nested scope."""
    inner = _Collector()
    for node in body_nodes:
        inner.visit(node)
    bound = set(inner.writes)
    if params is not None:
        for arg in params.posonlyargs + params.args + params.kwonlyargs + [params.vararg, params.kwarg]:
            if arg is not None:
                bound.add(arg.id)
    declared_global, declared_nonlocal = _declarations(body_nodes)
    result = _Collector()
    for name in inner.reads:
        if name not in bound or name in declared_nonlocal:
            result._read(name)
    for name in declared_nonlocal:
        if name in inner.writes:
            result._write(name)
    for name in declared_global:
        result.reads.pop(name, None)
    return result


def _declarations(body_nodes):
    """Names declared `global` and `nonlocal` directly in a scope's body."""
    declared_global, declared_nonlocal = set(), set()
    stack = list(body_nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Global):
            declared_global.update(node.names)
        elif isinstance(node, gast.Nonlocal):
            declared_nonlocal.update(node.names)
        elif isinstance(node, _FUNCTIONS + (gast.ClassDef, gast.Lambda) + _COMPREHENSIONS):
            continue
        else:
            stack.extend(builders.children(node))
    return declared_global, declared_nonlocal


def reads_and_writes(node):
    collector = _Collector()
    if isinstance(node, list):
        for item in node:
            collector.visit(item)
    else:
        collector.visit(node)
    return collector.reads, collector.writes


def reads(node):
    """Names read by `node` (a node or a list of nodes), in order."""
    return list(reads_and_writes(node)[0])


def writes(node):
    """Names written (assigned, deleted, declared) by `node`, in order."""
    return list(reads_and_writes(node)[1])


def local_names(node):
    """The local variables of function `node` (parameters and names it
    binds, less those declared global or nonlocal)."""
    args = node.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
              if a is not None}
    body = node.body if isinstance(node.body, list) else [node.body]
    declared_global, declared_nonlocal = _declarations(body)
    return (params | set(writes(body))) - declared_global - declared_nonlocal


class Scope:
    """The local names of one function, and how nested scopes use them."""

    def __init__(self, node):
        args = node.args
        self.params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        self.params += [a.id for a in (args.vararg, args.kwarg) if a is not None]
        body = node.body if isinstance(node.body, list) else [node.body]
        self.globals, self.nonlocals = _declarations(body)
        assigned = writes(body)
        self.locals = set(self.params) | set(assigned)
        self.locals -= self.globals | self.nonlocals
        # Names that nested scopes read or assign: locals among them are
        # `captured`; the others may be locals whose bindings were dropped.
        self.deferred = self._deferred_free(body)
        self.captured = self.deferred & self.locals

    @staticmethod
    def _deferred_free(body):
        """Names that deferred nested scopes (functions, lambdas, classes,
        generator expressions) read or assign from this scope: their cells
        must stay shared, so they never travel as explicit state."""
        referenced = set()
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, _FUNCTIONS + (gast.Lambda, gast.ClassDef, gast.GeneratorExp)):
                if isinstance(node, gast.GeneratorExp):
                    free = _free_names(None, [node.elt] + node.generators)
                else:
                    inner_body = node.body if isinstance(node.body, list) else [node.body]
                    free = _free_names(getattr(node, "args", None), inner_body)
                referenced.update(free.reads)
                referenced.update(free.writes)
                if isinstance(node, gast.ClassDef):
                    stack.extend(node.bases + node.decorator_list)
                elif not isinstance(node, gast.GeneratorExp):
                    stack.extend(node.args.defaults + [d for d in node.args.kw_defaults if d])
                    stack.extend(getattr(node, "decorator_list", []))
                continue
            stack.extend(builders.children(node))
        return referenced

    def state_names(self, names):
        """The names, among `names`, that can travel as explicit state."""
        return [n for n in names if n in self.locals and n not in self.captured]


def walk_scope(node):
    """The nodes under `node` in its own scope: a nested function, lambda or
    class is given, but not what it holds. A list, in the order of a
    depth-first walk that takes the last child first (a generator cost a
    call per node)."""
    found = []
    append = found.append
    children = builders.children
    stack = children(node)
    while stack:
        current = stack.pop()
        append(current)
        if not isinstance(current, _SCOPES):
            stack.extend(children(current))
    return found


def all_identifiers(node):
    """Every identifier spelled in the tree: names, arguments, attributes,
    function and class names, keywords. Generated names avoid all of them."""
    found = set()
    for child in builders.nodes(node):
        if isinstance(child, gast.Name):
            found.add(child.id)
        elif isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            found.add(child.name)
        elif isinstance(child, gast.alias):
            found.add((child.asname or child.name).split(".")[0])
        elif isinstance(child, (gast.Global, gast.Nonlocal)):
            found.update(child.names)
        elif isinstance(child, (gast.MatchAs, gast.MatchStar)) and child.name:
            found.add(child.name)
        elif isinstance(child, gast.MatchMapping) and child.rest:
            found.add(child.rest)
    return found


class Liveness:
    """Backward liveness over a function body.

    `live_out[id(stmt)]` is the set of names live right after `stmt`;
    `header[id(loop)]` the set live at a loop's header (before its test or
    the fetch of its next item). Only names in `tracked` are considered.
    """

    def __init__(self, body, tracked):
        self.tracked = tracked
        self.live_out = {}
        self.live_in = {}
        self.header = {}
        self._extra = frozenset()
        self.block(body, frozenset())

    def _names(self, node):
        return frozenset(n for n in reads(node) if n in self.tracked)

    def _kills(self, node):
        return frozenset(n for n in writes(node) if n in self.tracked)

    def block(self, stmts, live):
        live = frozenset(live)
        for stmt in reversed(stmts):
            live = live | self._extra
            self.live_out[id(stmt)] = live
            live = self.stmt(stmt, live)
            self.live_in[id(stmt)] = live
        return live

    def stmt(self, s, live):
        if isinstance(s, gast.If):
            branches = self.block(s.body, live) | self.block(s.orelse, live)
            bound = frozenset(n for n in _test_writes(s.test) if n in self.tracked)
            return self._names(s.test) | (branches - bound)
        if isinstance(s, gast.While):
            exit_live = self.block(s.orelse, live)
            header = exit_live | self._names(s.test)
            while True:
                new = exit_live | self._names(s.test) | self.block(s.body, header)
                if new == header:
                    break
                header = new
            self.header[id(s)] = header
            return header
        if isinstance(s, (gast.For, gast.AsyncFor)):
            exit_live = self.block(s.orelse, live)
            target_reads = self._names(s.target)
            target_kills = self._kills(s.target)
            stops = frozenset(f for f in getattr(s, "stop_flags", ()) if f in self.tracked)
            exit_live |= stops
            header = exit_live
            while True:
                new = exit_live | target_reads | (self.block(s.body, header) - target_kills)
                if new == header:
                    break
                header = new
            self.header[id(s)] = header
            return header | self._names(s.iter)
        if isinstance(s, gast.Try) or type(s).__name__ == "TryStar":
            after = self.block(s.finalbody, live) if s.finalbody else live
            handlers = frozenset()
            for handler in s.handlers:
                caught = self._kills(handler.name) if handler.name is not None else frozenset()
                handlers |= self.block(handler.body, after) - caught
                if handler.type is not None:
                    handlers |= self._names(handler.type)
            orelse = self.block(s.orelse, after)
            saved = self._extra
            # Where the body raises, the finally clause runs and the
            # exception goes on: what it reads then is within `after`.
            self._extra = saved | handlers | (after if s.finalbody else frozenset())
            body = self.block(s.body, orelse | handlers)
            self._extra = saved
            return body | handlers | self._extra | (after if s.finalbody else frozenset())
        if isinstance(s, (gast.With, gast.AsyncWith)):
            # The context manager may swallow an exception raised anywhere
            # in the body: what is live after the `with` is live throughout.
            saved = self._extra
            self._extra = saved | live
            inner = self.block(s.body, live) | live
            self._extra = saved
            result = inner
            for item in reversed(s.items):
                if item.optional_vars is not None:
                    result = (result - self._kills(item.optional_vars)) | self._names(item.optional_vars)
                result = result | self._names(item.context_expr)
            return result
        if isinstance(s, gast.Match):
            result = live | self._names(s.subject)
            for case in s.cases:
                result |= self.block(case.body, live) | self._names(case.pattern)
                if case.guard is not None:
                    result |= self._names(case.guard)
            return result
        if isinstance(s, (gast.Return, gast.Raise)):
            return self._names(s)
        if isinstance(s, (gast.Break, gast.Continue)):
            return live
        return (live - self._kills(s)) | self._names(s)


def definitely_assigned(stmts, before):
    """Names bound after `stmts` on every path that completes normally,
    starting from the set `before`."""
    bound = set(before)
    for s in stmts:
        bound = _assigned_after(s, bound)
    return bound


def deleted(stmts):
    """Names that `del` statements or `except ... as name` clauses in
    `stmts` may leave unbound."""
    found = set()
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Delete):
            found.update(writes(node))
        elif isinstance(node, gast.ExceptHandler) and node.name is not None:
            found.update(writes(node.name))
        if isinstance(node, _FUNCTIONS + (gast.ClassDef, gast.Lambda) + _COMPREHENSIONS):
            continue
        stack.extend(builders.children(node))
    return found


def _terminates(stmts):
    """True if the block never completes normally (ends in return/raise/
    break/continue)."""
    return bool(stmts) and isinstance(stmts[-1], (gast.Return, gast.Raise, gast.Break, gast.Continue))


def _assigned_after(s, bound):
    if isinstance(s, gast.If):
        branches = [definitely_assigned(b, bound) for b in (s.body, s.orelse) if not _terminates(b)]
        result = set.intersection(*branches) if branches else set(bound)
        return result | set(_test_writes(s.test))
    if isinstance(s, (gast.While, gast.For, gast.AsyncFor)):
        extra = set(_test_writes(s.test)) if isinstance(s, gast.While) else set()
        return (bound - deleted(s.body)) | extra
    if isinstance(s, gast.Try) or type(s).__name__ == "TryStar":
        paths = [definitely_assigned(s.body + s.orelse, bound)]
        paths += [definitely_assigned(h.body, bound) - set(writes(h.name) if h.name else ())
                  for h in s.handlers if not _terminates(h.body)]
        result = set.intersection(*paths)
        return definitely_assigned(s.finalbody, result) if s.finalbody else result
    if isinstance(s, (gast.With, gast.AsyncWith)):
        for item in s.items:
            if item.optional_vars is not None:
                bound = bound | set(writes(item.optional_vars))
        return definitely_assigned(s.body, bound)
    if isinstance(s, gast.Match):
        irrefutable = any(_irrefutable(c) for c in s.cases)
        if not irrefutable:
            return bound | set(_test_writes(s.subject))
        paths = [definitely_assigned(c.body, bound | set(writes(c.pattern)))
                 for c in s.cases if not _terminates(c.body)]
        return set.intersection(*paths) if paths else set(bound)
    if isinstance(s, gast.Delete):
        return bound - set(writes(s))
    if isinstance(s, gast.AnnAssign) and s.value is None:
        return bound
    if isinstance(s, (gast.Global, gast.Nonlocal)):
        return bound
    return bound | set(writes(s))


def _test_writes(expr):
    """Walrus targets of an expression that are bound whenever it is
    evaluated: those outside short-circuit and conditional operands."""
    found = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, gast.NamedExpr):
            found.append(node.target.id)
            stack.append(node.value)
        elif isinstance(node, gast.BoolOp):
            stack.append(node.values[0])
        elif isinstance(node, gast.IfExp):
            stack.append(node.test)
        elif isinstance(node, (gast.Lambda,) + _COMPREHENSIONS):
            continue
        else:
            stack.extend(builders.children(node))
    return found


def _irrefutable(case):
    if case.guard is not None:
        return False
    pattern = case.pattern
    while isinstance(pattern, gast.MatchAs) and pattern.pattern is not None:
        pattern = pattern.pattern
    if isinstance(pattern, gast.MatchOr):
        return any(isinstance(p, gast.MatchAs) and p.pattern is None for p in pattern.patterns)
    return isinstance(pattern, gast.MatchAs) and pattern.pattern is None


_FRAME_SENSITIVE = frozenset({"super", "locals", "vars", "dir", "eval", "exec"})


def deferrable(node):
    """True if the expression `node` means the same inside `lambda: node`:
    it binds no name (walrus), does not yield or await, and does not
    inspect its frame (`super()`, `locals()`, ...)."""
    for child in builders.nodes(node):
        if isinstance(child, (gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)):
            return False
        if isinstance(child, gast.Call) and isinstance(child.func, gast.Name) \
                and child.func.id in _FRAME_SENSITIVE:
            return False
    return True
