"""Functions that change in place, inside a traced `if` or loop, a tensor
they get from outside (`y[i] = v`, `y += v`): torch traces the bodies on
copies, so converted code writes the statement's result back into the
tensor itself, or refuses what it cannot write back; and functions that
change in place what a traced statement gives, which is a new tensor
where Python's may be a view (refused). Shared by the
torch.compile and torch.export tests, which run each function on
arguments that take each way through it and compare the results and the
arguments afterwards (the caller's tensors change, as in Python)."""

import torch


def sets_an_item_of_an_argument(y, c):
    if c.sum() > 0:
        y[0] = 5.0
    return y * 1


def sets_an_item_through_a_second_name(y, c):
    z = y
    if c.sum() > 0:
        z[0] = 5.0
    return y + z


def adds_in_nested_branches(y, c):
    if c.sum() > 0:
        if c.sum() > 1:
            y[1] += 7.0
        y[0] = 5.0
    return y * 1


def sets_items_in_a_loop(y, n):
    i = torch.zeros((), dtype=torch.int64)
    z = y
    while i < n:
        z[i] = 5.0
        i += 1
    return y * 1


def writes_a_view_of_its_own_tensor(y, c):
    if c.sum() > 0:
        u = y * 1
        row = u[0]
        row[0] = 5.0  # changes u, which the branch made
        y = u
    return y


def adds_to_a_new_tensor_after_a_branch(x, c):
    y = x * 1
    if c.sum() > 0:
        y = y * 2
    y += 1  # y is a new tensor on both ways: no view to change
    return y


def sets_an_item_or_makes_a_new_tensor(y, c):
    if c.sum() > 0:
        y[0] = 5.0
    else:
        y = y * 2
    return y


def sets_an_item_of_a_name_read_nowhere_after(y, c):
    z = y
    if c.sum() > 0:
        z[0] = 5.0  # changes y: the copy that torch traces is written back
    return y


def sets_an_item_then_makes_a_new_tensor_in_a_branch(y, c):
    if c.sum() > 0:
        y[0] = 5.0
        y = y * 2  # Python changed the tensor that y held first
    return y


def adds_to_a_new_tensor_after_a_loop(x, n):
    i = torch.zeros((), dtype=torch.int64)
    y = x * 1
    while i < n:
        y = y * 2
        i += 1
    y += 1  # y is a tensor the function made, on every way: nothing else holds it
    return y


def halves_or_adds_in_a_loop(x, n):
    i = torch.zeros((), dtype=torch.int64)
    acc = torch.zeros(3)
    while i < n:
        if x[i].sum() > 0:
            acc = acc * 0.5
        acc += x[i]  # acc is a tensor the function made (or the last iteration's): nothing else holds it
        i += 1
    return acc


def scales_the_argument_in_a_loop_then_after_it(x, s, n):
    i = torch.zeros((), dtype=torch.int64)
    while i < n:
        s *= 0.5  # changes the caller's s, which stays the loop's output
        i += 1
    if x.sum() > 0:
        s *= 3.0  # (traced_fuzz --torch, seed 600016)
    return s * 1


def adds_by_methods_to_a_new_tensor_after_a_branch(x, c):
    y = x * 1
    if c.sum() > 0:
        y = y * 2
    y.add_(1)  # y is a new tensor on both ways: nothing else holds it
    y[0].mul_(3)
    return y


def scales_by_a_method_in_a_loop(x, n):
    i = torch.zeros((), dtype=torch.int64)
    s = x * 1
    while i < n:
        s = s + 1
        s.mul_(0.5)  # the tensor this iteration made
        i += 1
    s.add_(1)  # a tensor the function made, on every way
    return s


def _rows(n):
    return torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)


# (function, argument sets covering each way through it): exact under compile and export
EXACT = [
    (sets_an_item_of_an_argument, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (sets_an_item_through_a_second_name, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (adds_in_nested_branches, [(_rows(2), torch.tensor(2.0)), (_rows(2), torch.tensor(1.0)),
                               (_rows(2), torch.tensor(-1.0))]),
    (sets_items_in_a_loop, [(_rows(3), torch.tensor(2)), (_rows(3), torch.tensor(0))]),
    (writes_a_view_of_its_own_tensor, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (adds_to_a_new_tensor_after_a_branch, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (adds_to_a_new_tensor_after_a_loop, [(_rows(2), torch.tensor(2)), (_rows(2), torch.tensor(0))]),
    (halves_or_adds_in_a_loop, [(_rows(3) - 4, torch.tensor(3)), (_rows(3), torch.tensor(0))]),
    (scales_the_argument_in_a_loop_then_after_it, [(_rows(1), torch.tensor(2.0), torch.tensor(2)),
                                                    (_rows(1) - 5, torch.tensor(2.0), torch.tensor(0))]),
    # y is changed where c > 0, and a new tensor elsewhere (found by traced_fuzz --torch, seed 100025)
    (sets_an_item_or_makes_a_new_tensor, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (sets_an_item_of_a_name_read_nowhere_after, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
    (sets_an_item_then_makes_a_new_tensor_in_a_branch, [(_rows(2), torch.tensor(1.0)),
                                                        (_rows(2), torch.tensor(-1.0))]),
    (adds_by_methods_to_a_new_tensor_after_a_branch, [(_rows(2), torch.tensor(1.0)),
                                                      (_rows(2), torch.tensor(-1.0))]),
    (scales_by_a_method_in_a_loop, [(_rows(2), torch.tensor(2)), (_rows(2), torch.tensor(0))]),
]


def sets_an_item_then_makes_a_new_tensor(y, n):
    i = torch.zeros((), dtype=torch.int64)
    while i < n:
        y[0] += 1.0
        y = y * 2
        i += 1
    return y


def sets_an_item_of_a_row(y, c):
    for row in y:
        if c.sum() > 0:
            row[0] = 5.0
    return y


def doubles_what_may_be_a_view(x, c):
    b = x[0] * 3
    a = b if c.sum() > 0 else x[1]
    a *= 2  # Python doubles x[1] where c <= 0 (found by traced_fuzz --torch, seed 200011)
    return x


def sets_an_item_of_a_view_a_loop_gives(x, n):
    i = torch.zeros((), dtype=torch.int64)
    a = x[0] * 1
    while i < n:
        a = x[1]
        i += 1
    a[0] = 9.0  # Python changes x[1] where the loop ran
    return x


def subtracts_from_a_number_or_a_view(x, c):
    a = 0.5
    if c.sum() > 0:
        a = x[0]  # a view on this way, a number on the other
    if c.sum() > 1:
        a -= 0.25  # Python changes x[0] where c > 1 (traced_fuzz --torch, seed 500039)
    return x


def adds_to_the_argument_or_a_new_tensor(x, c):
    y = x
    if c.sum() > 0:
        y = y * 2
    y += 1  # Python adds to the caller's x where c <= 0
    return x


def sets_an_item_of_the_argument_or_of_its_negation(x, c):
    y = x if c.sum() > 0 else -x
    y[0] = 7.0  # Python changes the caller's x where c > 0
    return x


def doubles_by_a_method_the_argument_or_its_negation(x, c):
    y = x if c.sum() > 0 else -x
    y.mul_(2)  # Python doubles the caller's x where c > 0
    return x


def adds_by_a_method_to_an_item_of_the_argument_or_a_new_tensor(x, c):
    y = x
    if c.sum() > 0:
        y = y * 2
    y[0].add_(1)  # Python adds to the caller's x[0] where c <= 0
    return x


def adds_to_the_argument_a_loop_may_not_replace(x, n):
    i = torch.zeros((), dtype=torch.int64)
    y = x
    while i < n:
        y = y * 2
        i += 1
    y += 1  # Python adds to the caller's x where the loop runs no iteration
    return x


def adds_to_the_argument_in_a_loop(x, n):
    i = torch.zeros((), dtype=torch.int64)
    y = x * 1
    while i < n:
        y = x if x.sum() > 0 else y * 2
        y += 1  # Python adds to the caller's x where x.sum() > 0
        i += 1
    return x


def subtracts_from_a_view_after_a_break(x, s):
    for _ in range(2):
        if x[-2] > 100:
            pass
        else:
            if x[0] < -0.69:
                break  # the rest of the loop is traced: a `cond` on `not break`
        v = x[0]
        v -= s  # changes x, which that `cond` does not assign (traced_fuzz --torch, seed 500010)
    return x


# (function, arguments, what the message says, its line in the function, or the lines it may name)
REFUSED = [
    (subtracts_from_a_view_after_a_break, (_rows(1)[0] - 1, torch.tensor(0.5)),
     "changes in place a tensor that it reads from outside without assigning it", (7, 8)),
    (adds_to_the_argument_in_a_loop, (_rows(2), torch.tensor(2)),
     "that is the value of that expression after an `if` whose condition is traced by torch", (4, 5)),
    (adds_to_the_argument_or_a_new_tensor, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", 4),
    (sets_an_item_of_the_argument_or_of_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of that expression after an `if` whose condition is traced by torch", 2),
    (doubles_by_a_method_the_argument_or_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of that expression after an `if` whose condition is traced by torch", 2),
    (adds_by_a_method_to_an_item_of_the_argument_or_a_new_tensor, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", 4),
    (adds_to_the_argument_a_loop_may_not_replace, (_rows(2), torch.tensor(0)),
     "that is `y` after a `while` loop whose condition is traced by torch", 6),
    (sets_an_item_then_makes_a_new_tensor, (_rows(2), torch.tensor(2)),
     "changes `y` in place (`y[i] = v`, `+=`, `.add_(v)`) and then makes `y` another tensor in the same body", 2),
    (sets_an_item_of_a_row, (_rows(2), torch.tensor(1.0)), "is a view of another tensor", 2),
    (doubles_what_may_be_a_view, (_rows(2), torch.tensor(-1.0)),
     "that is the value of that expression after an `if` whose condition is traced by torch", 3),
    (sets_an_item_of_a_view_a_loop_gives, (_rows(2), torch.tensor(1)),
     "that is `a` after a `while` loop whose condition is traced by torch", 6),
    # (under dynamo, a change in a traced body names the line of its statement)
    (subtracts_from_a_number_or_a_view, (_rows(2), torch.tensor(2.0)),
     "that is `a` after an `if` whose condition is traced by torch", (4, 5)),
]


def clones(args):
    return tuple(a.clone() for a in args)


def sets_an_item_of_a_view_it_makes(y, c):
    if c.sum() > 0:
        row = y[0]
        row[0] = 5.0  # changes y, which the branch does not assign
    return y


# Refused under dynamo (compile, strict export); non-strict export gives Python's result.
REFUSED_UNDER_DYNAMO = [
    (sets_an_item_of_a_view_it_makes, (_rows(2), torch.tensor(1.0)),
     "changes in place a tensor that it reads from outside without assigning it", 1),
]


def locations(f, line):
    """The 'file:line' texts that a message about `f` at `line` (a line of
    the function, or a tuple of those it may name) may give."""
    lines = line if isinstance(line, tuple) else (line,)
    return [f"({f.__code__.co_filename}:{f.__code__.co_firstlineno + n})" for n in lines]
