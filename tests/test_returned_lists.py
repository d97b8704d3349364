"""A list appended to in a staged loop of unknown trip count and returned by
an `autograph.function` comes back as Python's list of the values, after
the graph runs (before: the trace's placeholder, a `TracedList` whose
`len()` raised). Differential: against the function run eagerly."""

import numpy as np
import pytest

import autograph


def doubled(x):
    out = []
    for v in x:
        out.append(v * 2)
    return out


def rows_and_count(x):
    rows = []
    for row in x:
        rows.append(row + 1.0)
    return rows, x.shape[0]


def halvings(n):
    seen = []
    while n > 1:
        n = n / 2
        seen.append(n)
    return {"seen": seen, "last": n}


CASES = [
    (doubled, [autograph.Spec((None,))], [np.arange(3.0), np.arange(0.0)]),
    (rows_and_count, [autograph.Spec((None, 2))], [np.ones((3, 2)), np.ones((1, 2))]),
    (halvings, None, [np.float64(20.0), np.float64(0.5)]),
]


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("f, signature, inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_list_built_in_a_staged_loop_is_returned_as_a_list(f, signature, inputs):
    traced = autograph.function(f, input_signature=signature) if signature else autograph.function(f)
    for x in inputs:
        _same(traced(x), f(x))
    assert traced.trace_count == 1
