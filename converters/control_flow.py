"""Converts `if`, `while` and `for` statements into functional operators.

Branch and loop bodies become local functions that take their state as
parameters and return it; the statement becomes one operator call:

    if x > 0:                          def if_body(x):
        x = x * x                          x = x * x
    else:                                  return x
        x = 0.0              -->       def else_body(x):
                                           x = 0.0
                                           return x
                                       x = ag__.if_stmt(x > 0, if_body, else_body, (x,), ('x',))

    while n != 1:                      def loop_test(n, steps):
        n = f(n)                           return n != 1
        steps += 1           -->       def loop_body(n, steps):
                                           n = f(n)
                                           steps += 1
                                           return n, steps
                                       n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps), ('n', 'steps'))

Which variables are state comes from static analysis (see
autograph.analysis): a branch's outputs are the variables it writes that are
live after the `if`; its inputs are those it reads before writing, plus the
outputs it may leave unchanged. A loop's state is what its body writes that
is live at its header. Variables that nested functions capture are never
state: bodies declare them `nonlocal`, so closures keep sharing one cell
(where the statement is staged, the runtime carries the cell's value as
state: runtime/staging/places.py).

A variable passed as state while it may be unbound gets the marker
`ag__.Undefined('x')` (only where analysis finds it unbound on every path)
and reads that may meet the marker become `ag__.ld(x)`, which raises
UnboundLocalError as Python would.
"""

import sys

import gast
from autograph.converters import base

from autograph import analysis, builders

__all__ = ["transform", "Rerun"]


class Rerun(Exception):
    """Convert again from the source, with these names marked from the
    start (see `_Converter.hoisted`)."""

    def __init__(self, names):
        super().__init__(sorted(names))
        self.names = set(names)


class _Flow:
    """Per-function-scope facts during the forward walk.

    bound:    names certainly bound here in the converted code (a value or
              the Undefined marker);
    possibly: names that may be bound here;
    assigned: names certainly assigned here in the original program.
    """

    __slots__ = ("bound", "possibly", "assigned")

    def __init__(self, bound, possibly, assigned):
        self.bound, self.possibly, self.assigned = set(bound), set(possibly), set(assigned)

    def copy(self):
        return _Flow(self.bound, self.possibly, self.assigned)


class _Converter:
    def __init__(self, node, ctx):
        self.ctx = ctx
        self.ag = ctx.ag
        self.scope = ctx.scope
        self.tracked = self.scope.locals - self.scope.captured
        self.liveness = analysis.Liveness(node.body, self.tracked)
        self.order = _first_appearance(node)
        self.nonlocal_needed = set()
        self.depth = 0
        self.returns = {}  # `_always_returns` of the `if`s met
        # Names given the marker at the top; a read of one of them that was
        # walked before the decision and left unchecked makes the pipeline
        # convert again, with the names known from the start (`Rerun`).
        self.hoisted = set(ctx.premarked)
        self.marked = set(ctx.premarked)
        self.unchecked = set()
        self.bound_outside = _bound_outside_control_flow(node.body)
        self.with_return = _with_return(node.body)
        # Locals of the original function (before dead code was dropped)
        # that can hold the marker: not captured by nested functions (also
        # those whose every binding was dead code: their cells stay empty).
        self.unbindable = (ctx.original_locals | self.scope.locals) - self.scope.deferred \
            - self.scope.globals - self.scope.nonlocals - set(self.scope.params)

    # Helpers -------------------------------------------------------------

    def _sorted(self, names):
        return sorted(set(names), key=lambda n: self.order.get(n, (1 << 30, 0, 0)) + (n,))

    def _live_in(self, stmts, live_out):
        return self.liveness.live_in[id(stmts[0])] if stmts else live_out

    def _wrap_reads(self, node, flow):
        """Replaces reads of names that may hold the marker with ag__.ld().

        A local read while it may be unbound inside a body function, or
        whose every binding was dead code, would fail as a free or global
        name: such names get the marker at the top of the function, so
        that the read fails with Python's own UnboundLocalError."""
        if node is None:
            return node
        risky = self.marked - flow.assigned
        read = analysis.reads(node)
        unbound = [n for n in read
                   if n in self.unbindable and n not in flow.assigned
                   and (self.depth or n not in self.bound_outside)]
        if unbound:
            self.hoisted.update(unbound)
            self.marked.update(unbound)
            risky = risky | set(unbound)
        self.unchecked.update(n for n in read if n in self.unbindable and n not in flow.assigned
                              and n not in risky)
        if not risky:
            return node
        return _ReadWrapper(risky, self.ag).visit(node)

    def _declarations(self, stmts):
        """global/nonlocal statements a body function needs for the names
        it writes that are not its own."""
        written = set(analysis.writes(stmts))
        declarations = []
        globals_ = sorted(written & self.scope.globals)
        nonlocals = sorted((written & self.scope.nonlocals) | (written & self.scope.captured))
        self.nonlocal_needed.update(written & self.scope.captured)
        if globals_:
            declarations.append(gast.Global(names=globals_))
        if nonlocals:
            declarations.append(gast.Nonlocal(names=nonlocals))
        return declarations

    def _bind(self, names, flow, origin):
        """Statements that make `names` bound before they are passed as
        state: the marker where they are certainly unbound, a guarded read
        where they may be."""
        result = []
        for name in names:
            if name in flow.bound:
                continue
            marker = builders.assign(builders.store(name), builders.call(
                builders.attr(self.ag, "Undefined"), builders.const(name)))
            if name in flow.possibly:
                result.append(gast.Try(
                    body=[builders.expr_stmt(builders.name(name))],
                    handlers=[gast.ExceptHandler(type=builders.name("NameError"), name=None, body=[marker])],
                    orelse=[], finalbody=[]))
            else:
                result.append(marker)
            self.marked.add(name)
            flow.bound.add(name)
            flow.possibly.add(name)
            if not self.depth:
                self.bound_outside.add(name)
        return builders.located(result, origin)

    def _body_function(self, function_name, params, stmts, outputs, flow, origin, keep_returns=False):
        inner = _Flow(params, params, flow.assigned)
        self.depth += 1
        body, inner = self.block(stmts, inner)
        self.depth -= 1
        body = self._declarations(stmts) + [s for s in body if not isinstance(s, gast.Pass)]
        if not keep_returns and outputs:
            body += self._bind(outputs, inner, origin)
            body.append(builders.ret(builders.values(outputs)))
        return builders.located(builders.function(function_name, params, body), origin), inner

    # Walk ---------------------------------------------------------------

    def block(self, stmts, flow):
        result = []
        for stmt in stmts:
            result.extend(self.statement(stmt, flow))
        return result, flow

    def statement(self, stmt, flow):
        if isinstance(stmt, gast.If):
            return self.if_statement(stmt, flow)
        if isinstance(stmt, gast.While):
            return self.while_statement(stmt, flow)
        if isinstance(stmt, gast.For):
            return self.for_statement(stmt, flow)
        if isinstance(stmt, (gast.Global, gast.Nonlocal)):
            return []  # hoisted to the top of the function
        if isinstance(stmt, gast.Try) or type(stmt).__name__ == "TryStar":
            return self.try_statement(stmt, flow)
        if isinstance(stmt, (gast.With, gast.AsyncWith)):
            for item in stmt.items:
                item.context_expr = self._wrap_reads(item.context_expr, flow)
                if item.optional_vars is not None:
                    self._assign(analysis.writes(item.optional_vars), flow)
            before = set(flow.assigned)
            stmt.body, _ = self.block(stmt.body, flow)
            # The context manager may swallow an exception: what the body
            # assigns is not certain after it (reads of markers stay checked).
            flow.assigned &= before
            return [stmt]
        if isinstance(stmt, gast.Match):
            return self.match_statement(stmt, flow)
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            self._assign([stmt.name], flow)
            return [stmt]
        if self._dead_flag(stmt) or self._dead_constant_store(stmt):
            return []
        original = getattr(stmt, "original", None)
        if original is not None and original.targets[0].value.id not in flow.assigned:
            stmt = original
        prefix = []
        if isinstance(stmt, (gast.AugAssign, gast.Delete)):
            risky = [n for n in analysis.reads(stmt) if n in self.marked and n not in flow.assigned]
            targets = stmt.targets if isinstance(stmt, gast.Delete) else [stmt.target]
            checked = [n for n in risky if any(isinstance(t, gast.Name) and t.id == n for t in targets)]
            prefix = builders.located([builders.expr_stmt(builders.call(
                builders.attr(self.ag, "ld"), builders.name(n))) for n in checked], stmt)
        stmt = self._wrap_reads(stmt, flow)
        written = analysis.writes(stmt)
        if isinstance(stmt, gast.Delete):
            for name in written:
                flow.bound.discard(name)
                flow.assigned.discard(name)
        elif not (isinstance(stmt, gast.AnnAssign) and stmt.value is None):
            self._assign(written, flow)
        return prefix + [stmt]

    def _dead_flag(self, stmt):
        """An assignment to a generated flag that nothing reads afterwards
        (such as `do_return = True` before the function's last return)."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Constant)):
            return False
        target = stmt.targets[0].id
        return self.ctx.namer.is_generated(target) and target not in self.liveness.live_out[id(stmt)]

    def _dead_constant_store(self, stmt):
        """`v = 1` in a body function where nothing reads `v` afterwards:
        Python would keep it in the one scope where `v` is read elsewhere;
        split into a body function it is a store nobody reads. It goes only
        if the function binds `v` outside branches and loops too, so that
        `v` stays a local of the function."""
        return (self.depth and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Constant)
                and stmt.targets[0].id in self.tracked and stmt.targets[0].id in self.bound_outside
                and stmt.targets[0].id not in self.liveness.live_out[id(stmt)])

    def _assign(self, names, flow):
        flow.bound.update(names)
        flow.possibly.update(names)
        flow.assigned.update(names)

    # if -----------------------------------------------------------------

    def if_statement(self, stmt, flow):
        test_writes = analysis._test_writes(stmt.test)
        test = self._wrap_reads(stmt.test, flow)
        self._assign(test_writes, flow)
        live_out = self.liveness.live_out[id(stmt)]
        returns = id(stmt) in self.with_return
        written = analysis.writes(stmt.body + stmt.orelse)
        outputs = [] if returns else self._sorted(n for n in written if n in live_out and n in self.tracked)
        inputs = set()
        for branch in (stmt.body, stmt.orelse):
            branch_writes = set(analysis.writes(branch))
            live_in = self._live_in(branch, live_out)
            inputs.update(n for n in live_in if n in self.tracked and (n in branch_writes or n in outputs))
        inputs = self._sorted(inputs)
        result = self._bind(inputs, flow, stmt)

        # A branch that leaves the state unchanged is passed as None (the
        # operator's meaning), where the state is the outputs or there are
        # none. A function that falls off its end after `if c: return v`
        # returns None: that `else` is kept.
        may_drop = not returns and (not outputs or inputs == outputs)
        functions, branch_flows = [], []
        for kind, branch in (("if_body", stmt.body), ("else_body", stmt.orelse)):
            if not branch and may_drop:
                functions.append(builders.const(None))
                branch_flows.append(_Flow((), (), flow.assigned))
                continue
            origin = branch[0] if branch and kind == "else_body" else stmt
            body, body_flow = self._body_function(self.ctx.namer.helper(kind), inputs, branch, outputs, flow,
                                                  origin, keep_returns=returns)
            if returns and not branch:
                body.body = builders.located([builders.ret(builders.const(None))], origin)
            branch_flows.append(body_flow)
            if may_drop and _passes_through(body, outputs):
                functions.append(builders.const(None))
                continue
            result.append(body)
            functions.append(builders.name(body.name))

        names = ("return",) if returns else outputs
        operator = builders.call(builders.attr(self.ag, "if_stmt"), test, *functions,
                                 builders.names_tuple(inputs), builders.strings_tuple(names))
        if returns:
            result.append(builders.ret(operator))
        elif outputs:
            result.append(builders.assign(builders.targets(outputs), operator))
        else:
            result.append(builders.expr_stmt(operator))

        terminated = [_always_returns(stmt.body, self.returns), _always_returns(stmt.orelse, self.returns)]
        assigned = [f.assigned for f, t in zip(branch_flows, terminated) if not t]
        flow.assigned = set.intersection(*assigned) if assigned else set(flow.assigned)
        flow.assigned.update(test_writes)
        flow.bound.update(outputs)
        flow.possibly.update(outputs)
        flow.possibly.update(written)
        if not self.depth:
            self.bound_outside.update(outputs)
        self.marked.update(n for n in outputs if n not in flow.assigned)
        return builders.located(result, stmt)

    # loops --------------------------------------------------------------

    def _loop_state(self, stmt, extra_writes=()):
        header = self.liveness.header[id(stmt)]
        written = list(extra_writes) + analysis.writes(stmt.body)
        return self._sorted(n for n in written if n in header and n in self.tracked)

    def _options(self, stmt):
        keywords = getattr(stmt, "loop_options", None)
        if not keywords:
            return []
        return [gast.Dict(keys=[builders.const(k.arg) for k in keywords], values=[k.value for k in keywords])]

    def _finish_loop(self, state, flow, written, body):
        if not self.depth:
            self.bound_outside.update(state)
        flow.assigned -= analysis.deleted(body)
        flow.bound.update(state)
        flow.possibly.update(state)
        flow.possibly.update(written)
        self.marked.update(n for n in state if n not in flow.assigned)

    def while_statement(self, stmt, flow):
        state = self._loop_state(stmt, analysis._test_writes(stmt.test))
        result = self._bind(state, flow, stmt)
        # Reads in the loop may meet the marker on the first iteration.
        loop_flow = _Flow(state, state, flow.assigned)
        test_fn = self.ctx.namer.helper("loop_test")
        test = self._wrap_reads(stmt.test, loop_flow)
        result.append(builders.function(test_fn, state, [builders.ret(test)]))
        body_fn = self.ctx.namer.helper("loop_body")
        body, _ = self._body_function(body_fn, state, stmt.body, state, flow, stmt)
        result.append(body)
        operator = builders.call(builders.attr(self.ag, "while_stmt"), builders.name(test_fn),
                                  builders.name(body_fn), builders.names_tuple(state),
                                  builders.strings_tuple(state), *self._options(stmt))
        result.append(builders.assign(builders.targets(state), operator) if state
                      else builders.expr_stmt(operator))
        self._finish_loop(state, flow, analysis.writes(stmt.body), stmt.body)
        return builders.located(result, stmt)

    def for_statement(self, stmt, flow):
        target_names = analysis.writes(stmt.target)
        state = self._loop_state(stmt, target_names)
        iterable = self._wrap_reads(stmt.iter, flow)
        result = self._bind(state, flow, stmt)
        target = stmt.target
        body_stmts = stmt.body
        if isinstance(target, gast.Name) and target.id in self.tracked and target.id not in state:
            item = target.id
        else:
            item = self.ctx.namer.helper("itr")
            unpack = builders.assign(target, builders.name(item))
            body_stmts = [builders.located(unpack, stmt)] + body_stmts
        test_arg = builders.const(None)
        flags = getattr(stmt, "stop_flags", [])
        if flags:
            test_fn = self.ctx.namer.helper("extra_test")
            test_flow = _Flow(state, state, flow.assigned)
            conditions = [builders.call(builders.attr(self.ag, "not_"),
                                         self._wrap_reads(builders.name(f), test_flow))
                          for f in flags]
            test = conditions[0]
            if len(conditions) > 1:
                test = builders.call(builders.attr(self.ag, "and_"), conditions[0],
                                      *[builders.lambda_(c) for c in conditions[1:]])
            result.append(builders.function(test_fn, state, [builders.ret(test)]))
            test_arg = builders.name(test_fn)
        body_fn = self.ctx.namer.helper("loop_body")
        inner_params = [item] + [n for n in state]
        inner = _Flow(inner_params, inner_params, flow.assigned | set(target_names))
        self.depth += 1
        body, inner = self.block(body_stmts, inner)
        self.depth -= 1
        body = self._declarations(body_stmts) + [s for s in body if not isinstance(s, gast.Pass)]
        if state:
            body += self._bind(state, inner, stmt)
            body.append(builders.ret(builders.values(state)))
        result.append(builders.function(body_fn, inner_params, body))
        operator = builders.call(builders.attr(self.ag, "for_stmt"), iterable, test_arg,
                                  builders.name(body_fn), builders.names_tuple(state),
                                  builders.strings_tuple(state), *self._options(stmt))
        result.append(builders.assign(builders.targets(state), operator) if state
                      else builders.expr_stmt(operator))
        self._finish_loop(state, flow, analysis.writes(stmt.body) + target_names, stmt.body)
        return builders.located(result, stmt)

    # statements that stay Python ----------------------------------------

    def try_statement(self, stmt, flow):
        before = flow.copy()
        stmt.body, _ = self.block(stmt.body, flow)
        stmt.orelse, _ = self.block(stmt.orelse, flow)
        paths = [flow]
        for handler in stmt.handlers:
            handler_flow = before.copy()
            handler_flow.possibly |= flow.possibly
            if handler.name is not None:
                self._assign(analysis.writes(handler.name), handler_flow)
            handler.body, _ = self.block(handler.body, handler_flow)
            if handler.name is not None:  # Python deletes it when the clause ends
                for name in analysis.writes(handler.name):
                    handler_flow.bound.discard(name)
                    handler_flow.assigned.discard(name)
            if not _always_returns(handler.body):
                paths.append(handler_flow)
        merged = _Flow(set.intersection(*[p.bound for p in paths]),
                       set.union(*[p.possibly for p in paths]),
                       set.intersection(*[p.assigned for p in paths]))
        if stmt.finalbody:
            final_flow = before.copy()
            final_flow.possibly |= merged.possibly
            stmt.finalbody, final_flow = self.block(stmt.finalbody, final_flow)
            merged.bound |= final_flow.bound - before.bound
            merged.assigned |= final_flow.assigned - before.assigned
            merged.possibly |= final_flow.possibly
        flow.bound, flow.possibly, flow.assigned = merged.bound, merged.possibly, merged.assigned
        return [stmt]

    def match_statement(self, stmt, flow):
        stmt.subject = self._wrap_reads(stmt.subject, flow)
        self._assign(analysis._test_writes(stmt.subject), flow)
        before = flow.copy()
        paths = []
        irrefutable = False
        for case in stmt.cases:
            case_flow = before.copy()
            case_flow.possibly |= flow.possibly
            self._assign(analysis.writes(case.pattern), case_flow)
            if case.guard is not None:
                case.guard = self._wrap_reads(case.guard, case_flow)
            case.body, _ = self.block(case.body, case_flow)
            flow.possibly |= case_flow.possibly
            if not _always_returns(case.body):
                paths.append(case_flow)
            irrefutable = irrefutable or analysis._irrefutable(case)
        if not irrefutable:
            paths.append(before)
        if paths:
            flow.bound = set.intersection(*[p.bound for p in paths])
            flow.assigned = set.intersection(*[p.assigned for p in paths])
        return [stmt]


# Comprehensions run as nested functions before Python 3.12 (PEP 709).
_NESTED_COMPREHENSIONS = (gast.GeneratorExp,) if sys.version_info >= (3, 12) else (
    gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


class _ReadWrapper(base.Transformer):
    """Wraps reads of `names` in ag__.ld (ag__.ld_free in nested scopes,
    where Python's error is the one of a free variable)."""

    expressions = True

    def __init__(self, names, ag):
        self.names, self.ag = names, ag
        self.nested = 0

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.names:
            check = "ld_free" if self.nested else "ld"
            return builders.located(builders.call(builders.attr(self.ag, check), node), node)
        return node

    def visit_Lambda(self, node):
        if getattr(node, "generated", False):
            node.body = self.visit(node.body)
            return node
        node.args = self.visit(node.args)
        self.nested += 1
        node.body = self.visit(node.body)
        self.nested -= 1
        return node

    def _comprehension(self, node):
        if not isinstance(node, _NESTED_COMPREHENSIONS):
            return self.generic_visit(node)
        first = node.generators[0]
        first.iter = self.visit(first.iter)  # evaluated in the enclosing scope
        self.nested += 1
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                setattr(node, field, self.visit(getattr(node, field)))
        for index, generator in enumerate(node.generators):
            if index:
                generator.iter = self.visit(generator.iter)
            generator.ifs = [self.visit(condition) for condition in generator.ifs]
        self.nested -= 1
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _with_return(body):
    """ids of the statements of this scope that contain a `return`: one walk,
    so that asking at every level of nested statements stays linear."""
    parent = {}
    returns = []
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Return):
            returns.append(node)
        for child in builders.children(node):
            if isinstance(child, (gast.stmt, gast.excepthandler, gast.match_case)) and not \
                    isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                parent[id(child)] = node
                stack.append(child)
    found = set()
    for node in returns:
        while node is not None and id(node) not in found:
            found.add(id(node))
            node = parent.get(id(node))
    return found


def _passes_through(function, outputs):
    """True if body function `function` only returns its state `outputs`."""
    body = [s for s in function.body if not isinstance(s, (gast.Global, gast.Nonlocal, gast.Pass))]
    if not body:
        return True
    if len(body) != 1 or not isinstance(body[0], gast.Return) or not outputs:
        return False
    value = body[0].value
    returned = [value] if isinstance(value, gast.Name) else getattr(value, "elts", None)
    return returned is not None and [getattr(n, "id", None) for n in returned] == list(outputs)


def _always_returns(stmts, known=None):
    """True if the block `stmts` ends in a `return` or `raise` on every path
    through its last `if`s. `known` (id -> (if node, result)) holds the
    results for `if` nodes asked about before: an `elif` chain is asked
    about at each of its levels, which without it costs its length squared."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    if isinstance(last, gast.If):
        if known is not None and id(last) in known:
            return known[id(last)][1]
        result = _always_returns(last.body, known) and _always_returns(last.orelse, known)
        if known is not None:
            known[id(last)] = (last, result)  # (the node kept: its id is not reused meanwhile)
        return result
    return False


def _walk_same_scope(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in builders.children(current):
            if not isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
                stack.append(child)


def _first_appearance(node):
    """name -> (line, column, rank) of its first appearance, to order state
    (rank: source order among nodes that share a position)."""
    order = {}
    stack = [node]
    rank = 0
    while stack:
        child = stack.pop()
        if isinstance(child, gast.Name):
            position = (getattr(child, "lineno", None) or 0, getattr(child, "col_offset", None) or 0, rank)
            if child.id not in order or position < order[child.id]:
                order[child.id] = position
        rank += 1
        stack.extend(reversed(builders.children(child)))
    return order


def transform(node, ctx):
    with analysis.memoized():
        return _transform(node, ctx)


def _transform(node, ctx):
    converter = _Converter(node, ctx)
    params = ctx.scope.params
    flow = _Flow(params, params, params)
    declarations = [s for s in _walk_same_scope(node) if isinstance(s, (gast.Global, gast.Nonlocal))]
    body, flow = converter.block(node.body, flow)
    late = (converter.hoisted & converter.unchecked) - ctx.premarked
    if late:
        raise Rerun(late)
    hoisted = []
    global_names = sorted({n for s in declarations if isinstance(s, gast.Global) for n in s.names})
    nonlocal_names = sorted({n for s in declarations if isinstance(s, gast.Nonlocal) for n in s.names})
    if global_names:
        hoisted.append(gast.Global(names=global_names))
    if nonlocal_names:
        hoisted.append(gast.Nonlocal(names=nonlocal_names))
    # A captured variable that only body functions assign (as `nonlocal`)
    # still needs a binding in the function itself.
    direct = set(params) | {n for s in body for n in _direct_bindings(s)}
    # Locals whose every binding was dead code, read by a nested function:
    # still locals (cells) of the function, unbound as in Python.
    lost = (ctx.original_locals - ctx.scope.locals) & ctx.scope.deferred
    unbound = sorted((converter.nonlocal_needed | lost) - direct - converter.hoisted)
    if unbound:
        # `x: object` makes x a local (cell) of the function without binding
        # it, so the closures that read it fail as in Python until it is set.
        hoisted += [gast.AnnAssign(target=builders.store(n), annotation=builders.name("object"),
                                   value=None, simple=1) for n in unbound]
    hoisted += [builders.assign(builders.store(n), builders.call(
        builders.attr(ctx.ag, "Undefined"), builders.const(n))) for n in converter._sorted(converter.hoisted)]
    node.body = builders.located(hoisted, node.body[0] if node.body else node) + body
    if not node.body:
        node.body = [gast.Pass()]
    return node


def _bound_outside_control_flow(stmts):
    """Names bound by statements that stay in the function's own scope
    (not inside an `if`, `while` or `for`, whose bodies become functions)."""
    found = set()
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            found.update(n.target.id for n in builders.nodes(head) if isinstance(n, gast.NamedExpr))
            continue
        blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", [])] + [c.body for c in getattr(stmt, "cases", [])]
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            found.add(stmt.name)
            continue
        nested = [b for b in blocks if isinstance(b, list)]
        if nested:
            for block in nested:
                found |= _bound_outside_control_flow(block)
            continue
        found.update(analysis.writes(stmt))
    return found


def _direct_bindings(stmt):
    """Names a statement binds in the function's own scope."""
    if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return [stmt.name]
    found = []
    for child in _walk_same_scope(stmt):
        if isinstance(child, gast.Name) and not isinstance(child.ctx, gast.Load):
            found.append(child.id)
        elif isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) and child is not stmt:
            found.append(child.name)
    return found
