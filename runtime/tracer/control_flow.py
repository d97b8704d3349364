"""Tracing `if` and loops into `cond` and `while_loop` nodes.

Branch outputs and loop state are nested containers whose leaves are
symbolic values, Python numbers or other Python objects. Python numbers
become constants where they meet a symbolic value; a Python number that is
loop state becomes a weak value (a Python scalar at run time) so numpy's
promotion of it stays as in eager code; other Python objects must be the
same whichever way the program goes.
"""

import numpy as np
from autograph.runtime import staging
from autograph.runtime.errors import user_location
from autograph.runtime.staging import normalize, pack, same_python
from autograph.runtime.tracer import context, numpy_api, trees
from autograph.runtime.tracer.errors import (
    BranchMismatchError,
    LoopStateError,
    TracingError,
    UndefinedOutputError,
)
from autograph.runtime.tracer.graph import Block, Node, format_type
from autograph.runtime.tracer.symbolic import SymbolicArray, SymbolicRange, SymbolicZip
from autograph.runtime.undefined import Undefined, UndefinedReturnValue

__all__ = ["cond", "for_loop", "while_loop"]

_NUMBERS = (bool, int, float, complex)
_PY_BY_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _is_sym(x):
    return type(x) is SymbolicArray


def _is_num(x):
    return type(x) in _NUMBERS


def _is_array(x):
    return isinstance(x, (np.ndarray, np.generic))


def _is_value(x):
    return type(x) is SymbolicArray or type(x) in _NUMBERS or _is_array(x)


def _aval(x):
    if _is_sym(x):
        return (x.shape, x.dtype, x.weak)
    if _is_array(x):
        return (x.shape, x.dtype, False)
    return ((), context.weak_dtype(type(x)), True)


def _describe(x):
    if type(x) is Undefined:
        return "undefined"
    if type(x) is UndefinedReturnValue:
        return "not returned yet"
    if isinstance(x, np.ndarray):
        return f"a numpy {_describe_aval(_aval(x))} array"
    if isinstance(x, np.generic):
        return f"a numpy {x.dtype.name} scalar ({x.item()!r})"
    if _is_sym(x):
        if x.weak:
            return f"a symbolic Python {format_type(x)}"
        return format_type(x)
    if _is_num(x):
        return f"a Python {type(x).__name__} ({x!r})"
    return f"a Python {type(x).__name__}"


def _describe_aval(aval):
    shape, dtype, weak = aval
    if weak:
        return f"a Python {_PY_BY_KIND[dtype.kind].__name__}"
    return dtype.name + "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _merge(a, b):
    """The type both a and b can take (as the same statement's result), or None."""
    sa, da, wa = a
    sb, db, wb = b
    if wa and wb:
        return ((), np.result_type(da, db), True)
    if wa != wb:
        (ws, wd, _), (ss, sd, _) = (a, b) if wa else (b, a)
        if np.result_type(sd, context.python_dummy(wd, 0)) == sd:
            return (ss, sd, False)
        return None
    if da != db or len(sa) != len(sb):
        return None
    shape = []
    for x, y in zip(sa, sb):
        if x == y:
            shape.append(x)
        elif x is None or y is None:
            shape.append(None)
        else:
            return None
    return (tuple(shape), da, False)


def _convert(x, aval):
    """`x` (symbolic or Python number) as a value of type `aval` in the current block."""
    shape, dtype, weak = aval
    if _is_num(x):
        if weak:
            return context.constant(_PY_BY_KIND[dtype.kind](x))
        if None in shape:
            return None
        return context.constant(np.full(shape, x, dtype))
    if _is_array(x):
        if weak or x.dtype != dtype or len(x.shape) != len(shape):
            return None
        return context.constant(x)
    if _aval(x) == aval:
        return x
    if weak:
        return numpy_api.to_python(_PY_BY_KIND[dtype.kind], x)
    if x.weak:
        if shape != ():
            return None
        return numpy_api.astype(x, dtype)
    if x.dtype == dtype and len(x.shape) == len(shape):
        return x  # only dimensions became unknown
    return None


def _return_stand_in(value):
    """What stands for a lowered `return` that has not run (an
    `UndefinedReturnValue`) where another path gives `value`: zeros of the
    value's type, or None where `value` is None (`return_value` of either
    is None). None where there is no such stand-in."""
    if value is None:
        return None, True
    if _is_num(value):
        return type(value)(0), True
    if _is_array(value):
        return np.zeros(np.shape(value), value.dtype)[()], True
    if _is_sym(value):
        if value.weak:
            return context.python_dummy(value.dtype, 0), True
        if None in value.shape:
            return None, False
        return np.zeros(value.shape, value.dtype), True
    return None, False


def _stand_in_for_return(x, other):
    """`x`, or its stand-in if it is a return value not set yet and `other`
    (the same variable on the other path) is set."""
    if type(x) is not UndefinedReturnValue or isinstance(other, Undefined):
        return x
    stand_in, ok = _return_stand_in(other)
    return stand_in if ok else x


def _skeleton(x):
    return trees.map_leaves(lambda _: None, x)


def _check_pred(pred, what, loc):
    if _is_num(pred):
        return context.constant(bool(pred))
    if not _is_sym(pred):
        raise TracingError(f"the condition of {what} ({loc}) must be a value, got {pred!r}")
    if pred.shape != () and (None in pred.shape or pred.size != 1):
        raise TracingError(
            f"the condition of {what} ({loc}) must be a scalar, got {format_type(pred)}; "
            "use np.any() or np.all() to reduce it")
    return pred


# cond

def cond(pred, true_fn, false_fn, operands, names):
    """Traces both branches into one `cond` node; returns the outputs per the
    `names` convention (bare value for one, tuple for several, None for none)."""
    loc = user_location()
    pred = _check_pred(pred, "an `if` whose condition is symbolic", loc)
    count = len(names)
    outer = context.current_block()
    blocks = (Block(outer, "true branch"), Block(outer, "false branch"))
    results = []
    for block, fn in zip(blocks, (true_fn, false_fn)):
        with context.block_scope(block):
            if fn is None:
                result = pack(tuple(operands), count) if len(operands) == count else None
            else:
                result = fn(*operands)
        results.append(normalize(result, count, "branch"))

    outputs = []      # per name: the tree with leaves resolved or placeholders
    pending = []      # (t, f, aval, name) for symbolic outputs
    for i, name in enumerate(names):
        t, f = results[0][i], results[1][i]
        if _skeleton(t) != _skeleton(f):
            raise BranchMismatchError(
                f"'{name}' has a different structure in the true branch ({t!r}) and in the "
                f"false branch ({f!r}) of an `if` whose condition is symbolic ({loc})")
        t_leaves, f_leaves = trees.leaves(t), trees.leaves(f)
        resolved = []
        for a, b in zip(t_leaves, f_leaves):
            a, b = _stand_in_for_return(a, b), _stand_in_for_return(b, a)
            ua, ub = type(a) is Undefined, type(b) is Undefined
            if ua != ub:
                defined, missing = ("true", "false") if ub else ("false", "true")
                raise UndefinedOutputError(
                    f"'{name}' is defined in the {defined} branch but not in the {missing} branch "
                    f"of an `if` whose condition is symbolic ({loc}), and it is used after the "
                    f"`if`; define it in both branches (or before the `if`)")
            if not (_is_sym(a) or _is_sym(b)) and same_python(a, b):
                resolved.append(("py", a))
                continue
            if not (_is_value(a) and _is_value(b)):
                raise BranchMismatchError(
                    f"'{name}' is {_describe(a)} in the true branch but {_describe(b)} in the "
                    f"false branch of an `if` whose condition is symbolic ({loc}); Python values "
                    "other than numbers must be the same in both branches")
            aval = _merge(_aval(a), _aval(b))
            if aval is None:
                raise BranchMismatchError(
                    f"'{name}' is {_describe(a)} in the true branch but {_describe(b)} in the "
                    f"false branch of an `if` whose condition is symbolic ({loc}); both branches "
                    "must give it the same dtype and shape")
            resolved.append(("sym", len(pending)))
            pending.append((a, b, aval, name))
        outputs.append((t, resolved))

    branch_outputs = ([], [])
    for k, block in enumerate(blocks):
        with context.block_scope(block):
            for item in pending:
                value = _convert(item[k], item[2])
                if value is None:
                    a, b, _, name = item
                    raise BranchMismatchError(
                        f"'{name}' is {_describe(a)} in the true branch but {_describe(b)} in the "
                        f"false branch of an `if` whose condition is symbolic ({loc}); both "
                        "branches must give it the same dtype and shape")
                branch_outputs[k].append(value)
    blocks[0].outputs, blocks[1].outputs = branch_outputs
    node_outs = context.emit("cond", "cond", None, (pred,), {}, [p[2] for p in pending],
                             blocks=blocks, hints=[p[3] for p in pending])

    values = []
    for tree, resolved in outputs:
        it = iter(resolved)

        def pick(_, it=it):
            kind, v = next(it)
            return v if kind == "py" else node_outs[v]
        values.append(trees.map_leaves(pick, tree))
    return pack(values, count)


# while_loop

def while_loop(test, body, state, names, opts=None):
    """Traces a `while` loop entered with `state` into a `while_loop` node;
    returns the final state tuple."""
    count = len(names)
    return _loop(test, lambda *s: normalize(body(*s), count, "loop body"), tuple(state),
                 names, "a `while` loop whose condition is symbolic", user_location())


def _loop(test, body, state, names, what, loc):
    outer = context.current_block()
    skeletons = [_skeleton(s) for s in state]
    leaves = [trees.leaves(s) for s in state]
    flat = [(i, leaf) for i, ls in enumerate(leaves) for leaf in ls]
    # Loop variables: symbolic leaves and Python numbers; the rest stays fixed.
    var_index = [j for j, (_, leaf) in enumerate(flat) if _is_value(leaf)]
    avals = {j: _aval(flat[j][1]) for j in var_index}

    for _attempt in range(8):
        scope = Block(outer, "while_loop")
        params = {}
        for j in var_index:
            pnode = Node("param", "param")
            pnode.block = scope
            shape, dtype, weak = avals[j]
            p = SymbolicArray(pnode, 0, shape, dtype, weak, names[flat[j][0]])
            pnode.outputs.append(p)
            params[j] = p

        def rebuild(values):
            out = []
            pos = 0
            for i, skel in enumerate(skeletons):
                n = len(leaves[i])
                chunk = iter(values[pos:pos + n])
                pos += n
                out.append(trees.map_leaves(lambda _: next(chunk), skel))
            return tuple(out)

        inside = rebuild([params.get(j, flat[j][1]) for j in range(len(flat))])
        test_block = Block(scope, "test")
        body_block = Block(scope, "body")
        with context.block_scope(scope):
            with context.block_scope(test_block):
                flag = _check_pred(test(*inside), what, loc)
            with context.block_scope(body_block):
                new_state = body(*inside)
        test_block.outputs = [flag]

        new_flat = []
        for i, (s, name) in enumerate(zip(new_state, names)):
            if _skeleton(s) != skeletons[i]:
                raise LoopStateError(
                    f"'{name}' changes structure in an iteration of {what} ({loc}): "
                    f"{state[i]!r} before it, {s!r} after it")
            new_flat.extend(trees.leaves(s))

        changed = False
        for j, (i, before) in enumerate(flat):
            after = new_flat[j]
            name = names[i]
            if j not in avals:
                if type(before) is UndefinedReturnValue and not isinstance(after, Undefined):
                    # A `return` inside the loop: the loop starts from a
                    # stand-in of the returned value's type.
                    stand_in, ok = _return_stand_in(after)
                    if not ok:
                        raise LoopStateError(
                            f"'{name}' (the function's return value) is {_describe(after)} when "
                            f"returned inside {what} ({loc}); a value returned inside a loop "
                            "whose condition is symbolic must be a number or an array of known "
                            "shape")
                    flat[j] = (i, stand_in)
                    if _is_value(stand_in):
                        var_index = sorted(var_index + [j])
                        avals[j] = _aval(after)
                    changed = True
                    continue
                if type(before) is Undefined and type(after) is not Undefined:
                    # First defined in the loop: typed by its first value,
                    # zeros stand for it until an iteration runs.
                    stand_in, ok = _return_stand_in(after) if _is_value(after) else (None, False)
                    if not ok or stand_in is None:
                        raise staging.first_defined_error(name, _describe(after), what, loc)
                    flat[j] = (i, stand_in)
                    var_index = sorted(var_index + [j])
                    avals[j] = _aval(after)
                    changed = True
                    continue
                if not same_python(before, after):
                    raise LoopStateError(
                        f"'{name}' is {_describe(before)} before an iteration of {what} ({loc}) "
                        f"but {_describe(after)} after it; only numbers and arrays can change "
                        "in a loop whose condition is symbolic")
                continue
            if not _is_value(after):
                raise LoopStateError(
                    f"'{name}' is {_describe_aval(avals[j])} before an iteration of {what} ({loc}) "
                    f"but {_describe(after)} after it; loop variables must keep their dtype and "
                    "shape across iterations")
            merged = _merge(avals[j], _aval(after))
            ok = merged is not None and (merged == avals[j] or _may_widen(avals[j], merged, before))
            if not ok:
                raise LoopStateError(
                    f"'{name}' is {_describe_aval(avals[j])} before an iteration of {what} ({loc}) "
                    f"but {_describe(after)} after it; loop variables must keep their dtype and "
                    "shape across iterations: give it its final dtype and shape before the loop "
                    "(for example with .astype())")
            if merged != avals[j]:
                avals[j] = merged
                changed = True
        if changed:
            continue

        outs = []
        with context.block_scope(scope), context.block_scope(body_block):
            for j in var_index:
                value = _convert(new_flat[j], avals[j])
                if value is None:
                    raise LoopStateError(
                        f"'{names[flat[j][0]]}' is {_describe_aval(avals[j])} before an iteration "
                        f"of {what} ({loc}) but {_describe(new_flat[j])} after it; loop variables "
                        "must keep their dtype and shape across iterations")
                outs.append(value)
        body_block.outputs = outs
        inits = []
        for j in var_index:
            value = _convert(flat[j][1], avals[j])
            if value is None:
                raise LoopStateError(
                    f"'{names[flat[j][0]]}' cannot enter {what} ({loc}) as "
                    f"{_describe_aval(avals[j])}")
            inits.append(value)
        param_list = [params[j] for j in var_index]
        node_outs = context.emit(
            "while", "while_loop", None, tuple(inits), {}, [avals[j] for j in var_index],
            blocks=(test_block, body_block), attrs={"params": param_list, "scope": scope},
            hints=[names[flat[j][0]] for j in var_index])
        by_j = dict(zip(var_index, node_outs))
        return rebuild([by_j.get(j, flat[j][1]) for j in range(len(flat))])
    raise LoopStateError(f"the loop variables of {what} ({loc}) do not settle on one dtype")


def _may_widen(before, after, init):
    """A loop variable may change type across the first iteration only from a
    Python number (weak) or by dimensions becoming unknown."""
    if before[2]:
        return True
    return after[1] == before[1] and len(after[0]) == len(before[0])


# for_loop

def for_loop(iterable, extra_test, body, state, names, opts=None):
    """A `for` over a symbolic range or a symbolic array's leading axis, as
    a `while_loop` with a counter; honours `extra_test` (the break flag)."""
    loc = user_location()
    count = len(names)
    what = "a `for` loop over a symbolic range" if type(iterable) is SymbolicRange else \
        "a `for` loop over a symbolic array"
    if type(iterable) is SymbolicRange:
        start, stop, step = iterable.start, iterable.stop, iterable.step

        def in_range(i):
            return staging.in_range(i, stop, step)

        def item(i):
            return i
    elif type(iterable) is SymbolicZip:
        what = f"a `for` loop over {iterable.kind}() of a symbolic array"
        arrays = [a if _is_sym(a) else context.constant(a) for a in iterable.arrays]
        static = [a.shape[0] for a in arrays if a.shape[0] is not None]
        dynamic = [context.emit_call("len", len, (a,)) for a in arrays if a.shape[0] is None]
        start, step = 0, 1
        if static and min(static) == 0:
            return tuple(state)  # no iteration, as in Python
        lengths = ([min(static)] if static else []) + dynamic
        stop = lengths[0] if len(lengths) == 1 else context.emit_call("min", min, tuple(lengths))
        first = iterable.start

        def in_range(i):
            return i < stop

        if iterable.kind == "enumerate":
            def item(i):
                index = i if _is_num(first) and first == 0 else first + i
                return (index, arrays[0][i])
        else:
            def item(i):
                return tuple(a[i] for a in arrays)
    else:
        array = iterable
        if array.weak or not array.shape:
            raise TypeError("iteration over a 0-d array")
        start, step = 0, 1
        stop = array.shape[0]
        if stop == 0:
            return tuple(state)  # no iteration, as in Python
        if stop is None:
            stop = context.emit_call("len", len, (array,))

        def in_range(i):
            return i < stop

        def item(i):
            return array[i]

    def loop_test(i, *s):
        flag = in_range(i)
        if extra_test is None:
            return flag
        more = extra_test(*s)
        if _is_num(more):
            return flag if more else False
        if flag.dtype.kind == "b" and more.dtype.kind == "b":
            return flag & more  # Python's `&` on bools: no ufunc call at run time
        return np.logical_and(flag, more)

    def loop_body(i, *s):
        new = normalize(body(item(i), *s), count, "loop body")
        return (i + step,) + new

    result = _loop(loop_test, loop_body, (start,) + tuple(state),
                   ("<loop counter>",) + tuple(names), what, loc)
    return result[1:]
