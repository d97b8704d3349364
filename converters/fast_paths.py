"""Inlines the Python meaning of each control-flow operator into the code that
runs, so converted code costs little more than the original on Python values.

`to_code` shows the functional form that control_flow.py produces. What is
compiled and run is that same code after this pass, which adds, around each
operator call, the Python branch of the operator's docstring, guarded by a
check that the value deciding the branch is a Python value:

    def if_body(x):                     cond = x > 0
        x = x * x                       if cond is True or cond is False or ag__.is_python(cond):
        return x                            if cond:
    def else_body(x):                           x = x * x
        x = 0.0              -->            else:
        return x                                x = 0.0
    x = ag__.if_stmt(x > 0, if_body,    else:
        else_body, (x,), ('x',))            def if_body(x): ...
                                            def else_body(x): ...
                                            x = ag__.if_stmt(cond, if_body, else_body, (x,), ('x',))

Inlining is exact because body functions take and return their state under
the variables' own names: inlining `if_body(x)` into the enclosing scope and
dropping its final `return x` leaves `x` as the operator would have assigned
it. Loops keep their body functions, defined once before the loop, to hand
over to the operator when the test (or the break flag) turns symbolic in the
middle of a loop, with the state of that moment.

An augmented assignment to a name (`x = ag__.iadd(x, v)`, item_updates.py)
runs as Python's `x += v` when `x` is of a type no backend claims; an item
read (`ag__.getitem(x, i, 'x')`, item_reads.py) as `x[i]` when `i` is an
int.
"""

import copy

import gast
from autograph.converters import static_ranges
from autograph.converters.item_updates import OPERATORS

from autograph import analysis, builders

__all__ = ["transform"]

_CONTROL_FLOW = ("if_stmt", "while_stmt", "for_stmt")


# Each inlined statement (or conditional expression, `and`, `or`) also keeps
# its functional form (the fallback), which holds everything nested in it:
# inlining every level of `d` nested ones would cost O(d**2) code. Those
# nested deeper than this stay operator calls, so the cost stays linear.
MAX_INLINED_DEPTH = 8


def _with_fields(node, changes):
    """`node`, or a copy of it with the fields of `changes` ({field: value})
    replaced: the functional tree, which to_code shows, is never changed."""
    if not changes:
        return node
    new = copy.copy(node)
    for field, value in changes.items():
        setattr(new, field, value)
    return new


class _Inliner:
    """Builds the inlined tree without changing the functional one (which
    to_code shows): new statements, shared expressions."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.ag = ctx.ag
        self.fast = _FastExpressions(ctx.ag, ctx.namer.fixed("value"), ctx.namer)
        self.depth = 0  # statements inlined around the current one

    # Recognising generated code -----------------------------------------

    def _operator(self, stmt):
        """(name, call) if `stmt` assigns, returns or evaluates an operator
        call made by control_flow, else (None, None)."""
        value = getattr(stmt, "value", None)
        if not isinstance(stmt, (gast.Assign, gast.Expr, gast.Return)) or not isinstance(value, gast.Call):
            return None, None
        func = value.func
        if (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                and func.value.id == self.ag and func.attr in _CONTROL_FLOW):
            return func.attr, value
        return None, None

    def _is_python(self, name):
        """`name is True or name is False or ag__.is_python(name)`."""
        return gast.BoolOp(op=gast.Or(), values=[
            gast.Compare(left=builders.name(name), ops=[gast.Is()], comparators=[builders.const(True)]),
            gast.Compare(left=builders.name(name), ops=[gast.Is()], comparators=[builders.const(False)]),
            builders.call(builders.attr(self.ag, "is_python"), builders.name(name)),
        ])

    @staticmethod
    def _with_args(stmt, call, args):
        """(a copy of operator statement `stmt`, its call) whose call takes `args`."""
        new_call = copy.copy(call)
        new_call.args = args
        new_stmt = copy.copy(stmt)
        new_stmt.value = new_call
        return new_stmt, new_call

    def _with_first_arg(self, stmt, call, first):
        """A copy of operator statement `stmt` whose call takes `first` as
        its first argument."""
        return self._with_args(stmt, call, [builders.located(first, call)] + call.args[1:])[0]

    # Walk ------------------------------------------------------------------

    def block(self, stmts):
        helpers = self._helpers(stmts)
        result = []
        for stmt in stmts:
            operator, call = self._operator(stmt)
            if operator is not None and self.depth < MAX_INLINED_DEPTH \
                    and not (operator == "if_stmt" and self._long_chain(result, call)):
                definitions = self._take_definitions(result, call)
                if definitions is not None:
                    result.extend(getattr(self, operator)(stmt, call, definitions))
                    continue
            augmented = self._augmented(stmt) or self._setitem(stmt)
            if augmented is not None:
                result.append(augmented)
                continue
            # Body functions stay functional: the operator runs them only
            # when a value is symbolic. The fast path inlines copies.
            result.append(stmt if id(stmt) in helpers else self._expressions(self._descend(stmt)))
        return result

    def _augmented(self, stmt):
        """`x = ag__.iadd(x, v)` (item_updates) as Python's own statement
        for a value of a Python type, else None:

            if x.__class__ in python_types:     # ag__.PYTHON_TYPES, through the closure
                x += v
            else:
                x = ag__.iadd(x, v)

        (`__class__`, which a local cannot shadow as one named `type` can)."""
        value = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(value.func, gast.Attribute)
                and isinstance(value.func.value, gast.Name) and value.func.value.id == self.ag
                and value.func.attr in OPERATORS and len(value.args) == 2 and not value.keywords
                and isinstance(value.args[0], gast.Name) and value.args[0].id == stmt.targets[0].id):
            return None
        name, update = stmt.targets[0].id, self.fast(value.args[1])
        python = gast.Compare(left=builders.attr(builders.name(name), "__class__"), ops=[gast.In()],
                              comparators=[self.fast.runtime_value("PYTHON_TYPES")])
        inline = gast.AugAssign(target=builders.store(name), op=OPERATORS[value.func.attr](), value=update)
        fallback = copy.copy(stmt)
        fallback.value = copy.copy(value)
        fallback.value.args = [value.args[0], update]
        return builders.located(gast.If(test=python, body=[inline], orelse=[fallback]), stmt)

    def _setitem(self, stmt):
        """`x = ag__.setitem(x, i, v)` (item_updates) as Python's own
        statement for a list or dict and an int or str key, else None:

            if (key := i).__class__ in item_keys and x.__class__ in item_types:
                x[key] = v
            else:
                x = ag__.setitem(x, key, v)

        and `x = ag__.setitem(x, i, ag__.iadd(x[i], v))` (`x[i] += v`) as
        `item = x[key]; item += v; x[key] = item` where the item is of a
        Python type too (`+=` on a backend's value is the backend's)."""
        value = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
                and self._is_runtime_call(value, "setitem") and len(value.args) == 3 and not value.keywords
                and isinstance(value.args[0], gast.Name) and value.args[0].id == stmt.targets[0].id):
            return None
        name, index, update = stmt.targets[0].id, value.args[1], value.args[2]
        key = self.ctx.namer.helper("key")
        test = [gast.Compare(left=builders.attr(gast.NamedExpr(target=builders.store(key), value=self.fast(index)),
                                                "__class__"),
                             ops=[gast.In()], comparators=[self.fast.runtime_value("ITEM_KEYS")]),
                gast.Compare(left=builders.attr(builders.name(name), "__class__"), ops=[gast.In()],
                             comparators=[self.fast.runtime_value("ITEM_TYPES")])]
        target = gast.Subscript(value=builders.name(name), slice=builders.name(key), ctx=gast.Store())
        augmented = next((op for op in OPERATORS if self._is_runtime_call(update, op)), None) \
            if len(getattr(update, "args", ())) == 2 else None
        if augmented is None:
            inline = [gast.Assign(targets=[target], value=self.fast(update), type_comment=None)]
            fallback_update = update
        else:
            item = self.ctx.namer.helper("item")
            read = gast.Subscript(value=builders.name(name), slice=builders.name(key), ctx=gast.Load())
            test.append(gast.Compare(
                left=builders.attr(gast.NamedExpr(target=builders.store(item), value=read), "__class__"),
                ops=[gast.In()], comparators=[self.fast.runtime_value("PYTHON_TYPES")]))
            inline = [gast.AugAssign(target=builders.store(item), op=OPERATORS[augmented](),
                                     value=self.fast(update.args[1])),
                      gast.Assign(targets=[copy.deepcopy(target)], value=builders.name(item), type_comment=None)]
            fallback_update = copy.copy(update)
            fallback_update.args = [_with_index(update.args[0], key), update.args[1]]
        fallback = copy.copy(stmt)
        fallback.value = copy.copy(value)
        fallback.value.args = builders.located([value.args[0], builders.name(key), fallback_update], stmt)
        return builders.located(gast.If(test=gast.BoolOp(op=gast.And(), values=test), body=inline,
                                        orelse=[fallback]), stmt)

    def _is_runtime_call(self, node, attribute):
        return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and isinstance(node.func.value, gast.Name) and node.func.value.id == self.ag
                and node.func.attr == attribute)

    def _helpers(self, stmts):
        """ids of the body-function definitions an operator call uses."""
        helpers = set()
        pending = []
        for stmt in stmts:
            if isinstance(stmt, gast.FunctionDef):
                pending.append(stmt)
                continue
            operator, call = self._operator(stmt)
            if operator is not None:
                used = {arg.id for arg in call.args[:3] if isinstance(arg, gast.Name)}
                helpers.update(id(d) for d in pending if d.name in used)
            pending = []
        return helpers

    def _long_chain(self, result, call):
        """True if the `if` of `call` is the head of more `elif`s than
        MAX_INLINED_DEPTH: inlined, each level would keep all those below it
        in its fallback. Such a chain runs through the operators, whose
        Python path takes an `elif` in a loop (runtime.operators.elif_stmt)."""
        count, body, name = 0, result, getattr(call.args[2], "id", None)
        while count <= MAX_INLINED_DEPTH:
            function = next((s for s in reversed(body) if isinstance(s, gast.FunctionDef) and s.name == name), None)
            if function is None or not function.body:
                return False
            inner = [s.value for s in function.body[-2:] if isinstance(s, (gast.Assign, gast.Return))]
            calls = [c for c in inner if self._operator(gast.Expr(value=c))[0] == "if_stmt"]
            if not calls:
                return False
            count, body, name = count + 1, function.body, getattr(calls[-1].args[2], "id", None)
        return True

    def _take_definitions(self, result, call):
        """Removes from the end of `result` the body functions the call uses
        (control_flow defines them right before it); returns them by name."""
        names = {arg.id for arg in call.args[:3] if isinstance(arg, gast.Name)}
        definitions = {}
        while result and isinstance(result[-1], gast.FunctionDef) and result[-1].name in names:
            definition = result.pop()
            definitions[definition.name] = definition
        return definitions or None

    def _expressions(self, stmt):
        """`stmt` with fast expressions in its own expression fields."""
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return stmt
        changed = {}
        for field, value in gast.iter_fields(stmt):
            if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            new_value = self.fast(value)
            if new_value is not value:
                changed[field] = new_value
        return _with_fields(stmt, changed)

    def _descend(self, stmt):
        if isinstance(stmt, _LATER) and self.fast.hooks is not _HOOKS:
            return self.fast.later(self._descend, stmt)
        fields = [f for f in ("body", "orelse", "finalbody") if isinstance(getattr(stmt, f, None), list)]
        handlers = getattr(stmt, "handlers", None)
        cases = getattr(stmt, "cases", None)
        if not fields and not handlers and not cases:
            return stmt
        new = copy.copy(stmt)
        for field in fields:
            block = getattr(stmt, field)
            if block and isinstance(block[0], gast.stmt):
                setattr(new, field, self.block(block))
        if handlers:
            new.handlers = [self._descend_clause(h) for h in handlers]
        if cases:
            new.cases = [self._descend_clause(c) for c in cases]
        return new

    def _descend_clause(self, clause):
        new = copy.copy(clause)
        new.body = self.block(clause.body)
        return new

    def _inline(self, function, keep_return):
        """The body of a body function, to run in the enclosing scope."""
        body = [s for s in function.body if not isinstance(s, (gast.Global, gast.Nonlocal))]
        if not keep_return and body and isinstance(body[-1], gast.Return):
            body = body[:-1]
        self.depth += 1
        try:
            return self.block(body)
        finally:
            self.depth -= 1

    def _compute(self, target, expr):
        """Statements that set `target` to `expr`, with the Python meaning of
        `ag__.and_`, `ag__.or_` and `ag__.not_` at its top inlined for bool
        operands (other operands go through the operator)."""
        operator = self._logical(expr)
        if operator == "not_":
            operand = expr.args[0]
            flip = gast.IfExp(test=self._is_bool(target), body=builders.not_(builders.name(target)),
                              orelse=builders.call(builders.attr(self.ag, "not_"), builders.name(target)))
            general = self._compute(target, operand) + [builders.assign(builders.store(target), flip)]
            if isinstance(operand, gast.Name):  # a stop flag: False until the loop ends
                return [gast.If(test=gast.Compare(left=operand, ops=[gast.Is()], comparators=[builders.const(False)]),
                                body=[builders.assign(builders.store(target), builders.const(True))], orelse=[
                                    gast.If(test=gast.Compare(left=operand, ops=[gast.Is()],
                                                              comparators=[builders.const(True)]),
                                            body=[builders.assign(builders.store(target), builders.const(False))],
                                            orelse=general)])]
            return general
        if operator == "and_" and self._logical(expr.args[0]) == "not_" and isinstance(
                expr.args[0].args[0], gast.Name):
            # `not flag and test` (a loop's test with a stop flag, see
            # return_statements.stop_when): while the flag is False, only
            # the test runs; once it is set (or symbolic), the operator.
            flag = expr.args[0].args[0].id
            rest = [arg.body for arg in expr.args[1:]]
            return [gast.If(
                test=gast.Compare(left=builders.name(flag), ops=[gast.Is()], comparators=[builders.const(False)]),
                body=self._short_circuit(target, operator, rest[0], rest[1:], expr.keywords),
                orelse=[gast.If(
                    test=gast.Compare(left=builders.name(flag), ops=[gast.Is()], comparators=[builders.const(True)]),
                    body=[builders.assign(builders.store(target), builders.const(False))],
                    orelse=[builders.assign(builders.store(target), expr)])])]
        if operator in ("and_", "or_"):
            return self._short_circuit(target, operator, expr.args[0], [arg.body for arg in expr.args[1:]],
                                       expr.keywords)
        return [builders.assign(builders.store(target), self.fast(expr))]

    def _short_circuit(self, target, operator, first, rest, keywords, inlined=0):
        """`target = first and rest[0] and ...` (or `or`), one operand at a
        time; past MAX_INLINED_DEPTH operands, the rest through the operator
        (each step's fallback holds the rest: inlining all would be O(n**2)).
        `keywords` are the operator call's (`pure=True`)."""
        result = self._compute(target, first)
        if not rest:
            return result
        go_on = operator == "and_"  # the value that makes the chain continue
        value = builders.name(target)

        def remaining():
            call = builders.call(builders.attr(self.ag, operator), builders.name(target),
                                 *[builders.lambda_(operand) for operand in rest])
            call.keywords = list(keywords)
            return call
        undecided = gast.Compare(left=value, ops=[gast.IsNot()], comparators=[builders.const(not go_on)])
        is_python = builders.call(builders.attr(self.ag, "is_python"), value)
        # The chain goes on for `go_on` itself, or for any Python value whose
        # truth says so; other values (symbolic ones) go to the operator.
        truth = value if go_on else builders.not_(value)
        goes_on = gast.BoolOp(op=gast.Or(), values=[
            gast.Compare(left=value, ops=[gast.Is()], comparators=[builders.const(go_on)]),
            gast.BoolOp(op=gast.And(), values=[undecided, is_python, truth])])
        fallback = gast.If(test=gast.BoolOp(op=gast.And(), values=[undecided, builders.not_(is_python)]),
                           body=[builders.assign(builders.store(target), remaining())], orelse=[])
        if inlined + 1 >= MAX_INLINED_DEPTH:
            following = [builders.assign(builders.store(target), self.fast(remaining()))]
        else:
            following = self._short_circuit(target, operator, rest[0], rest[1:], keywords, inlined + 1)
        result.append(gast.If(test=goes_on, body=following, orelse=[fallback]))
        return result

    def _logical(self, expr):
        if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute)
                and isinstance(expr.func.value, gast.Name) and expr.func.value.id == self.ag
                and expr.func.attr in ("and_", "or_", "not_") and _only_pure(expr.keywords)):
            if expr.func.attr == "not_" or all(isinstance(a, gast.Lambda) for a in expr.args[1:]):
                return expr.func.attr
        return None

    def _is_bool(self, name):
        return gast.BoolOp(op=gast.Or(), values=[
            gast.Compare(left=builders.name(name), ops=[gast.Is()], comparators=[builders.const(True)]),
            gast.Compare(left=builders.name(name), ops=[gast.Is()], comparators=[builders.const(False)]),
        ])

    def _hand_over(self, flag, stmt, definitions=()):
        """Inside a fast loop: once `flag` is not a Python value, the operator
        takes over from the current state (with the body functions
        `definitions`, defined only then); a false flag ends the loop."""
        # Inside `if flag is not True:`, the test of a Python value is
        # `flag is False`, or of a type that dispatch need not be asked about
        # on each iteration (`while n:` on an int: ag__.LOOP_TEST_TYPES).
        python = gast.BoolOp(op=gast.Or(), values=[
            gast.Compare(left=builders.name(flag), ops=[gast.Is()], comparators=[builders.const(False)]),
            gast.Compare(left=builders.attr(flag, "__class__"), ops=[gast.In()], comparators=[gast.Subscript(
                value=self.fast.runtime_value("LOOP_TEST_TYPES"), slice=builders.const(0), ctx=gast.Load())]),
            builders.call(builders.attr(self.ag, "is_python"), builders.name(flag)),
        ])
        return [gast.If(test=gast.Compare(left=builders.name(flag), ops=[gast.IsNot()],
                                          comparators=[builders.const(True)]), orelse=[], body=[
            gast.If(test=builders.not_(python), body=[*definitions, stmt, gast.Break()], orelse=[]),
            gast.If(test=builders.not_(builders.name(flag)), body=[gast.Break()], orelse=[]),
        ])]

    # Operators ---------------------------------------------------------------

    def if_stmt(self, stmt, call, definitions):
        cond = self.ctx.namer.helper("cond")
        keep_return = isinstance(stmt, gast.Return)
        if_body, else_body = (self._inline(definitions[arg.id], keep_return) if isinstance(arg, gast.Name) else []
                              for arg in call.args[1:3])
        test, first = call.args[0], builders.name(cond)
        if self._logical(test) == "not_":
            # `if not v:` runs as `if v: <else> else: <body>`: one truth
            # test, as Python's; a symbolic `v` goes on as `ag__.not_(v)`.
            test, first = test.args[0], builders.call(builders.attr(self.ag, "not_"), builders.name(cond))
            if_body, else_body = else_body, if_body
        if if_body:
            fast = gast.If(test=builders.name(cond), body=if_body, orelse=else_body)
        else:  # `if not cond:` asks the value's truth once, as `if cond:` does
            fast = gast.If(test=builders.not_(builders.name(cond)), body=else_body or [gast.Pass()], orelse=[])
        fallback = list(definitions.values())[::-1] + [self._with_first_arg(stmt, call, first)]
        guarded = gast.If(test=self._is_python(cond), body=[fast], orelse=fallback)
        return builders.located(self._compute(cond, test) + [guarded], stmt)

    def _own_names(self, stmt, call, functions):
        """Copies of the loop's body functions under names of their own, and
        the operator statement calling them: the inlined body defines the
        helpers of its own statements (under the helper names) in the same
        scope, which must not replace these before a hand-over."""
        renamed = {}
        for function in functions:
            if function is not None:
                copy_ = copy.copy(function)
                copy_.name = self.ctx.namer.new(function.name)
                while copy_.name == function.name:  # never the helper name itself
                    copy_.name = self.ctx.namer.new(function.name)
                renamed[function.name] = copy_
        new_call = copy.copy(call)
        new_call.args = [builders.located(builders.name(renamed[a.id].name), a)
                         if isinstance(a, gast.Name) and a.id in renamed else a for a in call.args]
        new_stmt = copy.copy(stmt)
        new_stmt.value = new_call
        return new_stmt, new_call, [renamed.get(getattr(f, "name", None)) for f in functions]

    def while_stmt(self, stmt, call, definitions):
        if _sets_option(call, 4, "maximum_iterations"):
            # The operator counts the iterations that run as Python before a
            # backend takes the loop over.
            return builders.located(list(definitions.values())[::-1] + [stmt], stmt)
        test_fn, body_fn = definitions[call.args[0].id], definitions[call.args[1].id]
        cond = self.ctx.namer.helper("loop_cond")
        # The operator takes over with the test's value: evaluating the test
        # again would leave unused operations in a tracer's graph.
        hand_over = copy.copy(stmt)
        hand_over.value = copy.copy(call)
        hand_over.value.keywords = list(call.keywords) + [builders.located(
            gast.keyword(arg="first_test", value=builders.name(cond)), stmt)]
        loop = gast.While(test=builders.const(True), orelse=[], body=(
            self._compute(cond, test_fn.body[-1].value) + self._hand_over(cond, hand_over, [test_fn, body_fn])
            + self._inline(body_fn, keep_return=False)))
        return builders.located([loop], stmt)

    def _stageable_range(self, stmt, call, body_fn):
        """(stmt, call) with the option `stageable` (converters/static_ranges.py)
        for a `for` over `range(...)` whose body only computes, else None."""
        found = static_ranges.stageable(call, body_fn, self.ag, self.ctx.scope.locals)
        if found is None:
            return None
        options = gast.Dict(keys=[builders.const("stageable")], values=[builders.const(found)])
        return self._with_args(stmt, call, call.args + [builders.located(options, call)])

    def for_stmt(self, stmt, call, definitions):
        if _sets_option(call, 5, "unroll"):
            # `set_loop_options(unroll=...)`: the operator decides how to run it.
            return builders.located(list(definitions.values())[::-1] + [stmt], stmt)
        test_fn = definitions.get(getattr(call.args[1], "id", None))
        body_fn = definitions[call.args[2].id]
        if test_fn is not None:  # names of their own: see _own_names
            stmt, call, (test_fn, body_fn) = self._own_names(stmt, call, [test_fn, body_fn])
        iterable = self.ctx.namer.helper("iterable")
        item = body_fn.args.args[0].id
        # Python's iteration binds `item`: where the body binds it nowhere
        # else, no staged statement makes it a traced number in this path.
        python = self.fast.python_names
        if not any(isinstance(n, gast.Name) and n.id == item and isinstance(n.ctx, gast.Store)
                   for n in builders.nodes(body_fn)):
            self.fast.python_names = python | {item}
        try:
            body = self._inline(body_fn, keep_return=False)
        finally:
            self.fast.python_names = python
        check = builders.call(builders.attr(self.ag, "is_python"), builders.name(iterable))
        source = builders.name(iterable)
        staged = self._stageable_range(stmt, call, body_fn) if test_fn is None else None
        if staged is not None:
            # A long range whose body only computes goes to the operator while
            # a backend traces (`ag__.unrolled`), which may stage it as one loop.
            stmt, call = staged
            check = gast.BoolOp(op=gast.And(), values=[check, builders.call(
                builders.attr(self.ag, "unrolled"), builders.name(iterable))])
        if test_fn is not None:
            # The extra test (no break flag set) runs before each item is
            # fetched, as in for_stmt; when a flag turns symbolic, for_stmt
            # goes on with the rest of the same iterator. While every flag
            # is False the test holds: only then is it computed.
            test = test_fn.body[-1].value
            iterator = self.ctx.namer.new("iterator")
            flag = self.ctx.namer.helper("loop_cond")
            source = builders.name(iterator)
            after = self._compute(flag, test)
            after += self._hand_over(flag, self._with_first_arg(stmt, call, builders.name(iterator)),
                                     [test_fn, body_fn])
            flags = _flags(test, self.ag)
            if flags:
                any_set = gast.BoolOp(op=gast.Or(), values=[gast.Compare(
                    left=builders.name(f), ops=[gast.IsNot()], comparators=[builders.const(False)]) for f in flags])
                after = [gast.If(test=_single(any_set), body=after, orelse=[])]
                unset = [gast.Compare(left=builders.name(f), ops=[gast.Is()], comparators=[builders.const(False)])
                         for f in flags]
            else:
                unset = [gast.Compare(left=test, ops=[gast.Is()], comparators=[builders.const(True)])]
            body += after
            check = gast.BoolOp(op=gast.And(), values=[check] + unset)
        loop = gast.For(target=builders.store(item), iter=source, body=body or [gast.Pass()], orelse=[],
                        type_comment=None)
        fast = [loop]
        if test_fn is not None:
            fast.insert(0, builders.assign(builders.store(iterator), builders.call(
                builders.attr(self.ag, "iterate"), builders.name(iterable))))
        fallback = [self._with_first_arg(stmt, call, builders.name(iterable))]
        # The body functions are defined only where the operator needs
        # them: where the iterable is symbolic, and where a flag turns
        # symbolic in the middle of the loop (a call builds no closure
        # before it knows it needs one).
        fallback[:0] = [f for f in (test_fn, body_fn) if f is not None]
        return builders.located([
            builders.assign(builders.store(iterable), self.fast(call.args[0])),
            gast.If(test=check, body=fast, orelse=fallback),
        ], stmt)


def _with_index(read, key):
    """`read` (`x[i]`, or its `ag__.getitem(x, i, 'x')`) reading index `key` instead."""
    read, name = copy.copy(read), builders.located(builders.name(key), read)
    if isinstance(read, gast.Subscript):
        read.slice = name
    else:
        read.args = [read.args[0], name, *read.args[2:]]
    return read


def _flags(test, ag):
    """The flags of a loop's extra test `ag__.not_(f)`, or `ag__.and_` of
    such tests (see control_flow's for loops), else None."""
    def flag(node):
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "not_"
                and isinstance(node.func.value, gast.Name) and node.func.value.id == ag
                and len(node.args) == 1 and isinstance(node.args[0], gast.Name)):
            return node.args[0].id
        return None
    if flag(test) is not None:
        return [flag(test)]
    if (isinstance(test, gast.Call) and isinstance(test.func, gast.Attribute) and test.func.attr == "and_"
            and isinstance(test.func.value, gast.Name) and test.func.value.id == ag and test.args):
        found = [flag(test.args[0])] + [flag(a.body) if isinstance(a, gast.Lambda) else None for a in test.args[1:]]
        if None not in found:
            return found
    return None


def _only_pure(keywords):
    """True for no keywords, or `pure=True` of an `and_` or `or_`
    (logical_expressions.py): the operator's Python meaning is the same."""
    return all(k.arg == "pure" for k in keywords)


def _single(bool_op):
    """`bool_op`, or its one operand."""
    return bool_op.values[0] if len(bool_op.values) == 1 else bool_op


_COMPARE_OPS = {"==": gast.Eq, "!=": gast.NotEq, "<": gast.Lt, "<=": gast.LtE, ">": gast.Gt, ">=": gast.GtE,
                "is": gast.Is, "is not": gast.IsNot, "in": gast.In, "not in": gast.NotIn}


def _compare_ops(ops):
    """The operator strings of `ag__.compare`'s tuple, or None."""
    if isinstance(ops, gast.Tuple) and all(isinstance(e, gast.Constant) and e.value in _COMPARE_OPS
                                           for e in ops.elts):
        return [e.value for e in ops.elts]
    return None


def _index_names(index):
    """The names of an index made of names and constants (`i`, `i, 0`), in
    order; None for another index."""
    items = index.elts if isinstance(index, gast.Tuple) else [index]
    if not all(isinstance(e, (gast.Name, gast.Constant)) for e in items):
        return None
    return list(dict.fromkeys(e.id for e in items if isinstance(e, gast.Name))) or None


def _sets_option(call, position, name):
    """True if the loop's options (a dict literal, argument `position` of
    the operator call) set `name`."""
    options = call.args[position] if len(call.args) > position else None
    return isinstance(options, gast.Dict) and any(
        isinstance(k, gast.Constant) and k.value == name for k in options.keys)


#: The most nodes (contexts and operators included) that the arguments of
#: a method call written twice (the
#: direct form of a call site) may have: a copy of each stays small, and
#: nested calls cannot double the code at each level.
DIRECT_CALL_MAX_NODES = 40


def _small(call):
    """True if the arguments of `call` have at most DIRECT_CALL_MAX_NODES
    nodes."""
    count = 0
    for _ in gast.walk(gast.Tuple(elts=call.args + [k.value for k in call.keywords], ctx=gast.Load())):
        count += 1
        if count > DIRECT_CALL_MAX_NODES + 1:
            return False
    return True


_HOOKS = ("call_site", "call_method")
# The call sites of a function's statements as written (`transform`'s
# `written`), which run outside every trace: a converted callee runs as
# written too (runtime/calls.py). Not in what may run later, inside a trace:
# a nested function, a lambda, a generator expression.
_WRITTEN_HOOKS = ("written_call_site", "written_call_method")
_LATER = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda, gast.GeneratorExp)
_ABSENT = object()


class _FastExpressions:
    """Inlines the Python meaning of `ag__.if_exp`, `and_`, `or_` and `not_`
    into expressions, copy-on-write (shared subtrees are never changed):

        ag__.if_exp(c, lambda: a, lambda: b)
          -> (a if (value := c) is True or (value is not False and
                    ag__.is_python(value) and value)
              else b if value is False or ag__.is_python(value)
              else ag__.if_exp(value, lambda: a, lambda: b))

    One temporary serves every expression: each use reads it right after it
    is assigned, before any other operand runs."""

    _EXPRESSION_OPERATORS = ("if_exp", "and_", "or_", "not_", "compare", "getitem")

    def __init__(self, ag, temporary, namer):
        self.ag, self.temporary, self.namer = ag, temporary, namer
        # The names the closure binds: a call site's (None: a fresh
        # `runtime.calls.new_site()`) and a runtime value's (its attribute of ag__).
        self.sites = {}
        self.bound = {}  # attribute of ag__ -> the name in self.sites that holds it
        self.python_names = frozenset()  # hold Python values here: the variables of Python `for` loops
        self.depth = 0  # operators inlined around the current expression
        self.in_iterable = 0  # inside a comprehension's iterable: no `:=`
        self.hooks = _HOOKS  # what a call site calls on a new callee: (for a function, for a method)

    def __call__(self, node):
        return self.visit(node)

    def later(self, visit, node):
        """`visit(node)` with the hooks of converted code: `node` (a nested
        function, a lambda, a generator expression) may run later, inside a
        trace, though the statements around it run as written."""
        self.hooks = _HOOKS
        try:
            return visit(node)
        finally:
            self.hooks = _WRITTEN_HOOKS

    def runtime_value(self, attribute):
        """A name that the closure binds to `ag__.<attribute>`: code that runs
        on every iteration reads a free variable faster than an attribute of
        ag__ (`+=` on an int: 28 ns against 48, the original's 18)."""
        name = self.bound.get(attribute)
        if name is None:
            name = self.bound[attribute] = self.namer.new(attribute.lower())
            self.sites[name] = attribute
        return builders.name(name)

    def visit(self, node):
        if isinstance(node, list):
            items = [self.visit(item) for item in node]
            return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
        if not isinstance(node, gast.AST):
            return node
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return node
        if isinstance(node, gast.comprehension):
            # Python forbids `:=` in a comprehension's iterable: only the
            # call sites' forms there, which need none.
            ifs = self.visit(node.ifs)
            self.in_iterable += 1
            iterable = self.visit(node.iter)
            self.in_iterable -= 1
            if ifs is node.ifs and iterable is node.iter:
                return node
            new = copy.copy(node)
            new.ifs, new.iter = ifs, iterable
            return new
        if isinstance(node, _LATER) and self.hooks is not _HOOKS:
            return self.later(self.visit, node)
        fields = node._fields
        if not fields:  # a context or an operator
            return node
        original = node
        # Only a call is an operator, a call site or a return marker.
        is_call = node.__class__ is gast.Call
        inlines = is_call and self._operator(node) is not None
        if inlines and self.depth >= MAX_INLINED_DEPTH:
            return node  # as deep as statements are inlined; see MAX_INLINED_DEPTH
        self.depth += inlines
        changed = None
        visit = self.visit
        for field in fields:
            value = getattr(node, field, _ABSENT)
            if value is _ABSENT or value is None or value.__class__ is str:
                continue
            new_value = visit(value)
            if new_value is not value:
                if changed is None:
                    changed = {}
                changed[field] = new_value
        self.depth -= inlines
        if changed:
            node = copy.copy(node)
            for field, value in changed.items():
                setattr(node, field, value)
        if not is_call:
            return node
        operator = self._operator(node)
        if operator is not None:
            # The fallback (the operator itself, for symbolic values) keeps
            # the original operands: with the inlined ones, each level of
            # nesting would double the code.
            return builders.located(getattr(self, operator)(node, original), node)
        callee = self._hooked_callee(node)
        if callee is not None:
            return builders.located(self._call_site(node, callee), node)
        marker = self._return_marker(node)
        if marker is not None:
            return builders.located(marker, node)
        return node

    def _return_marker(self, node):
        """The lowered `return`'s calls (return_statements.py) without a
        call: `ag__.UndefinedReturnValue()` as the one shared instance (its
        readers test its type only), `ag__.return_value(retval)` as

            None if retval.__class__ is ag__.UndefinedReturnValue else retval
        """
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and isinstance(node.func.value, gast.Name) and node.func.value.id == self.ag
                and not node.keywords):
            return None
        marker = builders.attr(self.ag, "UndefinedReturnValue")
        if node.func.attr == "UndefinedReturnValue" and not node.args:
            return builders.attr(self.ag, "UNDEFINED_RETURN_VALUE")
        if node.func.attr == "return_value" and len(node.args) == 1 and isinstance(node.args[0], gast.Name):
            value = node.args[0].id
            return gast.IfExp(test=gast.Compare(left=builders.attr(builders.name(value), "__class__"),
                                                ops=[gast.Is()], comparators=[marker]),
                              body=builders.const(None), orelse=builders.name(value))
        return None

    # Call sites: `ag__.call(f)(args)` remembers, per call site, the callee
    # it resolved last, so that the next call with the same callee skips the
    # hook (an identity check instead of a function call):
    #
    #   f(x)        -> (site[1] if f is site[0] else ag__.call_site(site, f))(x)
    #   len(x)      -> len(value) if ((value := x).__class__ in sized_types
    #                  or value.__class__ is plain_list and (not value
    #                  or value[0].__class__ is not appended))
    #                  and len is builtin_len else (... as f(x) ...)(value)
    #   obj.m(x)    -> (obj.m if obj.__class__ is site[0]
    #                   else ag__.call_method(site, obj, obj.m))(x)
    #   obj.m(x)    -> obj.m(x) if obj.__class__ is site[0]
    #                  else ag__.call_method(site, obj, obj.m)(x)
    #
    # The second and third forms hold for methods of C types, which the hook
    # passes through unchanged whatever the instance. The third calls the
    # method as Python does (no bound method is made: 30 ns a call against
    # 74, the original's 17); it writes the arguments twice, so it is used
    # where they are small (`_small`).

    def _len(self, node, callee, resolved):
        """`len(x)` (see above): the builtin on a value of a plain type, with
        no call of the hook (of a backend's override: 116 ns against 29);
        else the call site's form `resolved`, on the value read once."""
        value = builders.name(self.temporary)
        listed = gast.BoolOp(op=gast.And(), values=[
            gast.Compare(left=builders.attr(value, "__class__"), ops=[gast.Is()],
                         comparators=[self.runtime_value("PLAIN_LIST")]),
            gast.BoolOp(op=gast.Or(), values=[builders.not_(value), gast.Compare(
                left=builders.attr(gast.Subscript(value=value, slice=builders.const(0), ctx=gast.Load()), "__class__"),
                ops=[gast.IsNot()], comparators=[self.runtime_value("APPENDED")])])])
        plain = gast.BoolOp(op=gast.And(), values=[
            gast.BoolOp(op=gast.Or(), values=[
                gast.Compare(left=builders.attr(self._assign(node.args[0]), "__class__"), ops=[gast.In()],
                             comparators=[self.runtime_value("SIZED_TYPES")]),
                listed]),
            gast.Compare(left=callee, ops=[gast.Is()], comparators=[self.runtime_value("BUILTIN_LEN")])])
        return gast.IfExp(test=plain, body=builders.call(callee, builders.name(self.temporary)),
                          orelse=builders.call(resolved, builders.name(self.temporary)))

    def _hooked_callee(self, node):
        if not isinstance(node, gast.Call):
            return None
        func = node.func
        if (isinstance(func, gast.Call) and len(func.args) == 1
                and not func.keywords and isinstance(func.func, gast.Attribute)
                and isinstance(func.func.value, gast.Name) and func.func.value.id == self.ag
                and func.func.attr == "call"):
            return func.args[0]
        return None

    def _call_site(self, node, callee):
        site = self.namer.new("call_site")
        self.sites[site] = None
        first, second = (gast.Subscript(value=builders.name(site), slice=builders.const(i), ctx=gast.Load())
                         for i in (0, 1))
        if isinstance(callee, gast.Name):
            resolved = gast.IfExp(
                test=gast.Compare(left=callee, ops=[gast.Is()], comparators=[first]), body=second,
                orelse=builders.call(builders.attr(self.ag, self.hooks[0]), builders.name(site), callee))
            if callee.id == "len" and len(node.args) == 1 and not node.keywords and not self.in_iterable \
                    and not isinstance(node.args[0], gast.Starred):
                return self._len(node, callee, builders.located(resolved, node))
        elif isinstance(callee, gast.Attribute) and isinstance(callee.value, gast.Name) and _small(node):
            receiver = callee.value
            fallback = copy.copy(node)
            fallback.func = builders.located(builders.call(builders.attr(self.ag, self.hooks[1]), builders.name(site),
                                                           receiver, callee), node)
            direct = copy.copy(node)
            direct.func = callee
            return gast.IfExp(
                test=gast.Compare(left=builders.attr(receiver, "__class__"), ops=[gast.Is()], comparators=[first]),
                body=direct, orelse=fallback)
        elif isinstance(callee, gast.Attribute) and isinstance(callee.value, gast.Name):
            receiver = callee.value
            resolved = gast.IfExp(
                test=gast.Compare(left=builders.attr(receiver, "__class__"), ops=[gast.Is()], comparators=[first]),
                body=callee,
                orelse=builders.call(builders.attr(self.ag, self.hooks[1]), builders.name(site), receiver, callee))
        elif self.hooks is _WRITTEN_HOOKS and not self.in_iterable:
            # Outside every trace, a method of a C type (`s.lower().split`,
            # `d[k].append`) is what the hook would give: called as it is;
            # another callee through the site, which remembers a function's
            # (or a method's) statements as written.
            value = builders.name(self.temporary)
            resolved = gast.IfExp(
                test=gast.Compare(left=builders.attr(self._assign(callee), "__class__"), ops=[gast.Is()],
                                  comparators=[self.runtime_value("BUILTIN_METHOD")]),
                body=value, orelse=builders.call(builders.attr(self.ag, "written_call"), builders.name(site), value))
        else:
            del self.sites[site]
            return node
        new = copy.copy(node)
        new.func = builders.located(resolved, node)
        return new

    def _operator(self, node):
        if self.in_iterable:
            return None
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and isinstance(node.func.value, gast.Name) and node.func.value.id == self.ag
                and node.func.attr in self._EXPRESSION_OPERATORS and _only_pure(node.keywords)):
            if node.func.attr == "getitem":
                index = node.args[1]
                return "getitem" if isinstance(node.args[0], gast.Name) and (
                    not isinstance(index, gast.Tuple) or _index_names(index)) else None
            if node.func.attr == "compare":
                return "compare" if len(node.args) > 3 and _compare_ops(node.args[1]) \
                    and all(isinstance(a, gast.Lambda) for a in node.args[3:]) else None
            if node.func.attr == "not_" or all(isinstance(a, gast.Lambda) for a in node.args[1:]):
                return node.func.attr
        return None

    def compare(self, node, original):
        """`a < b <= c` (`ag__.compare(a, ('<', '<='), b, lambda: c)`) as
        `and_` of its pairs, the middle operand held in a temporary, so that
        each operand is evaluated once, left to right:

            (operand <= c) if (value := (a < (operand := b))) is True or ...
            else value if value is False or ag__.is_python(value)
            else ag__.and_(value, lambda operand=operand: operand <= c)
        """
        operand = self.namer.fixed("operand")
        left, ops, right, *later = node.args
        names = _compare_ops(ops)
        test = gast.Compare(left=left, ops=[_COMPARE_OPS[names[0]]()],
                            comparators=[gast.NamedExpr(target=builders.store(operand), value=right)])

        def tail(later):
            if len(names) == 2:
                return gast.Compare(left=builders.name(operand), ops=[_COMPARE_OPS[names[1]]()],
                                    comparators=[later[0].body])
            rest = gast.Tuple(elts=ops.elts[1:], ctx=gast.Load())
            return builders.call(builders.attr(self.ag, "compare"), builders.name(operand), rest,
                                 later[0].body, *later[1:])
        taken, unchanged = tail(later), tail(original.args[3:])
        if len(names) > 2 and self.depth + 1 < MAX_INLINED_DEPTH:
            self.depth += 1
            taken = self.compare(taken, unchanged)
            self.depth -= 1
        # The lambda takes the operand's value now: a backend may call it later.
        later_pairs = gast.Lambda(args=gast.arguments(
            args=[gast.Name(id=operand, ctx=gast.Param(), annotation=None, type_comment=None)],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[builders.name(operand)]), body=unchanged)
        fallback = builders.call(builders.attr(self.ag, "and_"), builders.const(None), later_pairs)
        return self._choose(test, True, taken, builders.name(self.temporary), fallback)

    def _assign(self, value):
        return gast.NamedExpr(target=builders.store(self.temporary), value=value)

    def _is(self, left, constant):
        return gast.Compare(left=left, ops=[gast.Is()], comparators=[builders.const(constant)])

    def _fallback_at(self, node, position):
        """`node` with its argument at `position` read from the temporary."""
        new = copy.copy(node)
        new.args = list(node.args)
        new.args[position] = builders.located(builders.name(self.temporary), node)
        return new

    def _fallback(self, node):
        new = copy.copy(node)
        new.args = [builders.located(builders.name(self.temporary), node)] + node.args[1:]
        return new

    def _choose(self, test, go_on, taken, other, node):
        """`taken if <test decides go_on> else (other if <Python> else <the
        operator>)`: each operand appears once (nesting stays linear), and a
        Python value's truth is asked once, as Python does:

            taken if (value := test) is True or (value is not False
                      and ag__.is_python(value) and value)
            else other if value is False or ag__.is_python(value)
            else ag__.operator(value, ...)

        (with False, True and `not value` for go_on False)."""
        value = builders.name(self.temporary)
        is_python = builders.call(builders.attr(self.ag, "is_python"), value)
        truth = value if go_on else builders.not_(value)
        decides = gast.BoolOp(op=gast.Or(), values=[
            self._is(self._assign(test), go_on),
            gast.BoolOp(op=gast.And(), values=[
                gast.Compare(left=value, ops=[gast.IsNot()], comparators=[builders.const(not go_on)]),
                is_python, truth])])
        python = gast.BoolOp(op=gast.Or(), values=[self._is(builders.name(self.temporary), not go_on),
                                                   builders.call(builders.attr(self.ag, "is_python"),
                                                                  builders.name(self.temporary))])
        return gast.IfExp(test=decides, body=taken,
                          orelse=gast.IfExp(test=python, body=other, orelse=self._fallback(node)))

    def if_exp(self, node, original):
        test, if_true, if_false = node.args
        return self._choose(test, True, if_true.body, if_false.body, original)

    def _short_circuit(self, node, original, go_on):
        """`a and b and c`: the chain after `a` is `b and c`, inlined the same
        way (its fallback is the operator on the original `b` and `c`)."""
        if len(node.args) > 2:
            tail, tail_original = copy.copy(node), copy.copy(original)
            tail.args = [node.args[1].body] + node.args[2:]
            tail_original.args = [original.args[1].body] + original.args[2:]
            self.depth += 1
            following = tail_original if self.depth >= MAX_INLINED_DEPTH else \
                self._short_circuit(tail, tail_original, go_on)
            self.depth -= 1
        else:
            following = node.args[1].body
        return self._choose(node.args[0], go_on, following, builders.name(self.temporary), original)

    def and_(self, node, original):
        return self._short_circuit(node, original, True)

    def or_(self, node, original):
        return self._short_circuit(node, original, False)

    def getitem(self, node, original):
        """`x[i]` (`ag__.getitem(x, i, 'x')`, item_reads.py) where the index
        is a Python int (for a tuple of names and constants, each of its
        names), the index that decides its meaning:

            x[value] if (value := i - 1).__class__ is int else ag__.getitem(x, value, 'x')

        and as `x[i - 1]` where the index reads only variables of the Python
        `for` loops around it that their bodies bind nowhere else."""
        def is_int(value):
            return gast.Compare(left=builders.attr(value, "__class__"), ops=[gast.Is()],
                                comparators=[builders.name("int")])
        obj, index = node.args[:2]
        if {n.id for n in builders.nodes(index) if isinstance(n, gast.Name)} <= self.python_names:
            return gast.Subscript(value=obj, slice=index, ctx=gast.Load())
        if isinstance(index, gast.Tuple):
            tests = [is_int(builders.name(n)) for n in _index_names(index)]
            test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
            return gast.IfExp(test=test, body=gast.Subscript(value=obj, slice=index, ctx=gast.Load()),
                              orelse=original)
        read = gast.Subscript(value=obj, slice=builders.name(self.temporary), ctx=gast.Load())
        return gast.IfExp(test=is_int(self._assign(index)), body=read, orelse=self._fallback_at(node, 1))

    def not_(self, node, original):
        return gast.IfExp(
            test=self._is(self._assign(node.args[0]), True), body=builders.const(False),
            orelse=gast.IfExp(test=self._is(builders.name(self.temporary), False), body=builders.const(True),
                              orelse=self._fallback(original)))


# Else branches ending in an `elif` -------------------------------------------

_BLOCK_NODES = (gast.stmt, gast.excepthandler, gast.match_case)


# A traced `if` followed by at least this many `elif`s that only read and
# compute is staged at once (runtime.operators.pure_elif_stmt); a shorter
# chain, one cond per `elif`, as Python nests them.
MIN_FLAT_CHAIN = 3


def _with_tail_elifs(node, ag, chains=None):
    """`node`, where each else branch's function that ends in an `if` with
    the branch's own outputs (an `elif`) ends in `return ag__.elif_stmt(...)`
    instead: run on Python values, a chain of them is a loop in
    runtime.operators (`_else`), not one call deeper per `elif`. Copies
    what changes; statements only (the functional tree shares them).
    `chains`: id of each else branch's function that ends in an `elif` ->
    how many `elif`s that could be staged at once start there (or 0)."""
    chains = {} if chains is None else chains
    changes = {}
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list and value and isinstance(value[0], _BLOCK_NODES):
            new = [_with_tail_elifs(item, ag, chains) for item in value]
            if any(a is not b for a, b in zip(new, value)):
                changes[field] = new
    tail = None
    if isinstance(node, gast.FunctionDef) and node.name.startswith("else_body"):
        tail = _tail_elif(changes.get("body", node.body), ag, chains)
        if tail is not None:
            changes["body"] = tail[0]
    new = _with_fields(node, changes)
    if tail is not None:
        chains[id(new)] = tail[1]
    return new


def _tail_elif(body, ag, chains):
    """(`body` ending in `return ag__.elif_stmt(...)` where it ends in
    `return ag__.if_stmt(...)`, or in `outputs = ag__.if_stmt(...)` and
    `return outputs` of the same names; the length of the chain that can be
    staged at once from there), or None."""
    def operator(value):
        func = getattr(value, "func", None)
        return (isinstance(value, gast.Call) and isinstance(func, gast.Attribute) and func.attr == "if_stmt"
                and isinstance(func.value, gast.Name) and func.value.id == ag and len(value.args) == 5)

    def names(node):
        items = node.elts if isinstance(node, gast.Tuple) else [node]
        return [n.id for n in items] if all(isinstance(n, gast.Name) for n in items) else None

    last = body[-1] if body else None
    if not isinstance(last, gast.Return):
        return None
    if operator(last.value):
        call, kept, origin = last.value, body[:-1], last
    elif len(body) >= 2 and isinstance(body[-2], gast.Assign) and len(body[-2].targets) == 1 \
            and operator(body[-2].value) and last.value is not None:
        call, kept, origin = body[-2].value, body[:-2], body[-2]
        given = call.args[4]
        outputs = names(body[-2].targets[0])
        if not (outputs and outputs == names(last.value) and isinstance(given, gast.Tuple)
                and outputs == [getattr(e, "value", None) for e in given.elts]):
            return None
    else:
        return None
    # An else branch that holds nothing but the `elif`, whose test has no
    # side effect, is a link of a chain that a backend may stage at once.
    length = 0
    if all(isinstance(s, gast.FunctionDef) for s in kept) and _side_effect_free(call.args[0], ag):
        below = next((s for s in kept if s.name == getattr(call.args[2], "id", None)), None)
        length = 1 + chains.get(id(below), 0)
    new_call = copy.copy(call)
    operator = "pure_elif_stmt" if length >= MIN_FLAT_CHAIN else "elif_stmt"
    new_call.func = builders.located(builders.attr(ag, operator), call.func)
    return kept + [builders.located(gast.Return(value=new_call), origin)], length


# What an `elif` test may hold to be evaluated before its turn: reads,
# arithmetic and comparisons, and the operators that stand for `[]`, `and`,
# `or` and `not` (a walrus writes a temporary of the fast paths).
_PURE_NODES = (gast.Name, gast.Constant, gast.Attribute, gast.Subscript, gast.Slice, gast.Compare, gast.BinOp,
               gast.UnaryOp, gast.BoolOp, gast.IfExp, gast.Tuple, gast.List, gast.NamedExpr, gast.Lambda,
               gast.arguments, gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)
_PURE_OPERATORS = frozenset({"getitem", "and_", "or_", "not_"})


def _side_effect_free(test, ag):
    """True if evaluating `test` (an `elif` condition in converted code)
    calls nothing but the runtime's item read and logical operators."""
    for node in gast.walk(test):
        if isinstance(node, gast.Call):
            func = node.func
            if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                    and func.value.id == ag and func.attr in _PURE_OPERATORS):
                return False
        elif isinstance(node, gast.Lambda):
            if node.args.args or node.args.vararg or node.args.kwarg:
                return False
        elif not isinstance(node, _PURE_NODES):
            return False
    return True


# Long chains: side by side, not nested -------------------------------------

# Each link of an `elif` chain is an else-branch function defined inside the
# one before, and CPython compiles nested functions in time quadratic in
# their depth: a chain of 1,000 `elif`s took 0.32 s to compile. In the code
# that runs, the body functions of up to this many links are defined side by
# side in the first link of their segment, so the depth is the length / this.
# (Those of a segment are made together when its first link runs: at most
# twice this many closures that Python values may not need.)
CHAIN_SEGMENT = 16


def _link(function, ag):
    """(body functions, final return) of `function` if it is a link of an
    `elif` chain: its body functions, then `return ag__.elif_stmt(...)`."""
    if not isinstance(function, gast.FunctionDef) or not function.body:
        return None
    last = function.body[-1]
    call = getattr(last, "value", None)
    func = getattr(call, "func", None)
    if not (isinstance(last, gast.Return) and isinstance(call, gast.Call) and isinstance(func, gast.Attribute)
            and func.attr in ("elif_stmt", "pure_elif_stmt") and isinstance(func.value, gast.Name)
            and func.value.id == ag and len(call.args) == 5):
        return None
    kept = function.body[:-1]
    branches = {getattr(a, "id", None) for a in call.args[1:3]}
    if not all(isinstance(s, gast.FunctionDef) and s.name in branches for s in kept):
        return None
    return kept, last


def _next_link(kept, last):
    """The body function of `kept` that is the else branch of `last`'s call."""
    name = getattr(last.value.args[2], "id", None)
    return next((d for d in kept if d.name == name), None)


class _Chains:
    """Rebuilds a tree (copying what changes) with the links of each long
    `elif` chain defined side by side, CHAIN_SEGMENT at a time."""

    def __init__(self, ag, namer):
        self.ag, self.namer = ag, namer
        self.free = {}  # id of a function -> the names it reads or assigns from enclosing scopes

    def rebuild(self, node):
        changes = {}
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list and value and isinstance(value[0], _BLOCK_NODES):
                new = [self.rebuild(self.segment(item) if _link(item, self.ag) else item) for item in value]
                if any(a is not b for a, b in zip(new, value)):
                    changes[field] = new
        return _with_fields(node, changes)

    @staticmethod
    def _own(link, last):
        """The locals of `link` other than its body functions: its parameters
        and the targets of walrus operators in its `elif` test."""
        args = link.args
        own = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        stack = [last.value.args[0]]
        while stack:
            node = stack.pop()
            if isinstance(node, gast.NamedExpr):
                own.add(node.target.id)
            stack.extend(builders.children(node))
        return own

    def _reads(self, link, kept, last):
        """The names `link`'s `return` reads from enclosing scopes."""
        return set(analysis.reads(last)) - self._own(link, last) - {d.name for d in kept}

    def _free_names(self, function):
        """Names `function` reads or assigns (nonlocal) from enclosing scopes;
        for the links of a chain, computed once each, from its end."""
        chain = []
        link = function
        while id(link) not in self.free:
            parts = _link(link, self.ag)
            if parts is None:
                reads, writes = analysis.reads_and_writes(link)
                self.free[id(link)] = (set(reads) | set(writes)) - {link.name}
                break
            chain.append((link, parts))
            link = _next_link(*parts)
            if link is None:
                break
        for link, (kept, last) in reversed(chain):
            inner = set().union(*(self._free_names(d) for d in kept))
            self.free[id(link)] = self._reads(link, kept, last) | (inner - self._own(link, last)
                                                                   - {d.name for d in kept})
        return self.free[id(function)]

    def segment(self, head):
        """`head`, a link, with the body functions of the next links of its
        chain (up to CHAIN_SEGMENT) defined in its own body under fresh
        names, each of those links left with its `return` alone. A link
        whose functions read a name that a link between binds (a state
        variable they do not take as a parameter) ends the segment."""
        kept, last = _link(head, self.ag)
        body, pending, bound = [], list(kept), set()
        below = _next_link(kept, last)
        for _ in range(CHAIN_SEGMENT):
            parts = _link(below, self.ag) if below is not None else None
            if parts is None:
                break
            below_kept, below_last = parts
            own = self._own(below, below_last)
            if (bound or own) and (self._reads(below, below_kept, below_last) & bound
                                   or any(self._free_names(d) & (bound | own) for d in below_kept)):
                break
            else_name = getattr(below_last.value.args[2], "id", None)
            names = {d.name: self.namer.new("elif_else" if d.name == else_name else "elif_body") for d in below_kept}
            moved = []
            for definition in below_kept:
                renamed = copy.copy(definition)
                renamed.name = names[definition.name]
                moved.append(renamed)
            call = copy.copy(below_last.value)
            call.args = [builders.located(builders.name(names[a.id]), a) if isinstance(a, gast.Name) and a.id in names
                         else a for a in call.args]
            stub = copy.copy(below)
            stub.body = [builders.located(gast.Return(value=call), below_last)]
            body.extend(stub if d is below else d for d in pending)
            pending, bound = moved, bound | own
            below = _next_link(moved, stub.body[0])
        if not body:
            return head
        new = copy.copy(head)
        new.body = body + pending + [last]
        return new


def transform(node, ctx, written=False):
    """A new tree for `node` with fast paths inlined; `node` is unchanged.
    Returns it and the names its closure binds: {name: None for a call site
    (bound to a fresh `runtime.calls.new_site()`), or the attribute of ag__ that
    it holds}. `written`: `node` holds the statements of a function as
    written (conversion._as_written), whose call sites run them as written
    in their callees too."""
    new = copy.copy(node)
    inliner = _Inliner(ctx)
    if written:
        inliner.fast.hooks = _WRITTEN_HOOKS
    new.body = inliner.block(node.body)
    chains = {}
    new = _with_tail_elifs(new, ctx.ag, chains)
    if len(chains) > CHAIN_SEGMENT:  # else no chain is long enough to be cut into segments
        new = _Chains(ctx.ag, ctx.namer).rebuild(new)
    return new, inliner.fast.sites
