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


def adds_to_the_argument_before_it_may_become_a_value(x, c):
    x += 1  # before the statement: the value sees it on both ways
    y = x if c.sum() > 0 else -x
    return y + x


def adds_to_new_tensors_after_a_value_is_made(x, c):
    y = x * 2 if c.sum() > 0 else -x  # a new tensor on both ways
    y += 1
    x += 1
    return y


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
    (adds_to_the_argument_before_it_may_become_a_value, [(_rows(2), torch.tensor(1.0)),
                                                         (_rows(2), torch.tensor(-1.0))]),
    (adds_to_new_tensors_after_a_value_is_made, [(_rows(2), torch.tensor(1.0)), (_rows(2), torch.tensor(-1.0))]),
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


def adds_to_the_argument_its_negation_or_it_may_become(x, c):
    y = x if c.sum() > 0 else -x
    x += 1  # Python adds to y too where c > 0
    return y


def adds_to_a_row_of_the_argument_after_it_may_become_a_value(x, c):
    y = x if c.sum() > 0 else -x
    row = x[0]
    row += 1  # Python adds to y[0] too where c > 0
    return y


def adds_to_a_tensor_a_value_may_be(x, c):
    t = x * 1
    y = t if c.sum() > 0 else -t
    t += 1  # Python adds to y too where c > 0
    return y


def adds_to_a_value_that_may_be_a_named_tensor(x, c):
    t = x * 1
    y = t if c.sum() > 0 else -t
    y += 1  # Python adds to t too where c > 0
    return t


def doubles_the_transpose_of_the_argument_or_its_negation(x, c):
    y = x if c.sum() > 0 else -x
    y.T.mul_(2)  # Python doubles the caller's x where c > 0
    return x


def zeroes_the_data_of_the_argument_or_its_negation(x, c):
    y = x if c.sum() > 0 else -x
    y.data.zero_()  # Python zeroes the caller's x where c > 0
    return x


def adds_to_the_argument_a_loop_may_give(x, n):
    i = torch.zeros((), dtype=torch.int64)
    y = x
    while i < n:
        y = y * 2
        i += 1
    x += 1  # Python adds to y too where the loop runs no iteration
    return y


def adds_by_a_method_to_a_tensor_a_loop_body_gives(x, n):
    i = torch.zeros((), dtype=torch.int64)
    t = x * 1
    y = t * 3
    while i < n:
        y = t
        i += 1
    t.add_(1)  # Python adds to y too where the loop runs
    return y


def adds_to_a_tensor_a_second_name_holds(x, c):
    y = x * 1
    z = y
    if c.sum() > 0:
        y = y * 2
    y += 1  # Python adds to z too where c <= 0
    return z


def adds_to_a_tensor_a_row_of_which_a_name_holds(x, c):
    y = x * 1
    row = y[0]
    if c.sum() > 0:
        y = y * 2
    y += 1  # Python adds to row too where c <= 0
    return row * 1


def adds_by_a_method_to_a_tensor_a_list_holds(x, c):
    y = x * 1
    kept = [y]
    if c.sum() > 0:
        y = y * 2
    y.add_(1)  # Python adds to kept[0] too where c <= 0
    return kept[0] * 1


def _doubles_if(y, c):
    if c.sum() > 0:
        y = y * 2
    return y


def adds_to_what_a_function_gives_for_its_tensor(x, c):
    t = x * 1
    u = _doubles_if(t, c)
    u += 1  # Python adds to t too where c <= 0: the function gives it back
    return t * 1


def adds_after_nested_branches_to_the_argument(x, c):
    y = x
    if c.sum() > -5:
        if c.sum() > 0:
            y = y * 2
        y += 1  # Python adds to the caller's x where -5 < c <= 0
    return x * 1


def halves_or_adds_in_a_loop_to_a_tensor_that_enters_it(x, n):
    t = x * 1
    acc = t
    i = torch.zeros((), dtype=torch.int64)
    while i < n:
        if acc.sum() > 6:
            acc = acc * 0.5
        acc += 1  # Python adds to t in the iterations before acc is halved
        i += 1
    return t * 1


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
     "that is the value of a conditional expression whose condition is traced by torch", (4, 5)),
    (adds_to_the_argument_or_a_new_tensor, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", 4),
    (sets_an_item_of_the_argument_or_of_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", 2),
    (doubles_by_a_method_the_argument_or_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", 2),
    (adds_by_a_method_to_an_item_of_the_argument_or_a_new_tensor, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", 4),
    (adds_to_the_argument_a_loop_may_not_replace, (_rows(2), torch.tensor(0)),
     "that is `y` after a `while` loop whose condition is traced by torch", 6),
    (sets_an_item_then_makes_a_new_tensor, (_rows(2), torch.tensor(2)),
     "changes `y` in place (`y[i] = v`, `+=`, `.add_(v)`) and then makes `y` another tensor in the same body", 2),
    (sets_an_item_of_a_row, (_rows(2), torch.tensor(1.0)), "is a view of another tensor", 2),
    (doubles_what_may_be_a_view, (_rows(2), torch.tensor(-1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", 3),
    (sets_an_item_of_a_view_a_loop_gives, (_rows(2), torch.tensor(1)),
     "that is `a` after a `while` loop whose condition is traced by torch", 6),
    (adds_to_the_argument_its_negation_or_it_may_become, (_rows(2), torch.tensor(1.0)),
     "that on some way through a conditional expression whose condition is traced by torch", (1, 2)),
    (adds_to_a_row_of_the_argument_after_it_may_become_a_value, (_rows(2), torch.tensor(1.0)),
     "that on some way through a conditional expression whose condition is traced by torch", (1, 3)),
    (adds_to_a_tensor_a_value_may_be, (_rows(2), torch.tensor(1.0)),
     "that on some way through a conditional expression whose condition is traced by torch", (2, 3)),
    (adds_to_a_value_that_may_be_a_named_tensor, (_rows(2), torch.tensor(1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", (2, 3)),
    (doubles_the_transpose_of_the_argument_or_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", (1, 2)),
    (zeroes_the_data_of_the_argument_or_its_negation, (_rows(2), torch.tensor(1.0)),
     "that is the value of a conditional expression whose condition is traced by torch", (1, 2)),
    (adds_to_the_argument_a_loop_may_give, (_rows(2), torch.tensor(0)),
     "that on some way through a `while` loop whose condition is traced by torch", (3, 6)),
    (adds_by_a_method_to_a_tensor_a_loop_body_gives, (_rows(2), torch.tensor(2)),
     "that on some way through a `while` loop whose condition is traced by torch", (4, 7)),
    (adds_to_a_tensor_a_second_name_holds, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", (3, 5)),
    (adds_to_a_tensor_a_row_of_which_a_name_holds, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", (3, 5)),
    (adds_by_a_method_to_a_tensor_a_list_holds, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", (3, 5)),
    (adds_after_nested_branches_to_the_argument, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", (2, 3, 5)),
    (halves_or_adds_in_a_loop_to_a_tensor_that_enters_it, (_rows(2), torch.tensor(3)),
     "that is `acc` after an `if` whose condition is traced by torch", (4, 5, 7)),
    # (under dynamo, a change in a traced body names the line of its statement)
    (subtracts_from_a_number_or_a_view, (_rows(2), torch.tensor(2.0)),
     "that is `a` after an `if` whose condition is traced by torch", (4, 5)),
]


# Refused in one graph (fullgraph, both exports). torch.compile's default
# mode runs the caller as Python after the refusal and compiles the function
# it calls as a graph of its own, whose output is a new tensor where Python's
# is the argument: a wrong result (docs/pytorch.md, Limitations).
REFUSED_IN_ONE_GRAPH = [
    (adds_to_what_a_function_gives_for_its_tensor, (_rows(2), torch.tensor(-1.0)),
     "that is `y` after an `if` whose condition is traced by torch", 3),
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
