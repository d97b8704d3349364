"""Declared dtypes cast by numpy's 'same_kind' rule (input_signature,
py_function result_spec, Graph.run feeds), validated Specs and
result_specs, and messages that show the values they are about."""

import numpy as np
import pytest
from autograph.runtime.tracer.errors import BranchMismatchError

from autograph.traced_function import Graph, Spec, function, py_function


def twice(n):
    return n * 2


# input_signature

@pytest.mark.parametrize("value, dtype", [
    (3, "int64"), (True, "int64"), (3, "float32"), (2.5, "float64"), (2.5, "float32"), (7, "uint8"),
    (1.5, "complex128"), ([1, 2], "float64"), ((1.0, 2.0), "float32"),
])
def test_input_signature_casts_python_values_of_the_same_kind(value, dtype):
    shape = np.shape(value)
    f = function(twice, input_signature=[Spec(shape, dtype)])
    expected = twice(np.asarray(value, dtype))
    got = f(value)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("value, dtype, described", [
    (2.7, "int64", "the Python float 2.7"),
    (-1, "uint8", "the Python int -1"),
    (1j, "float64", "the Python complex 1j"),
    (3, "bool", "the Python int 3"),
    ([1.5, 2.0], "int64", "a list of dtype float64"),
])
def test_input_signature_refuses_casts_that_change_the_value(value, dtype, described):
    spec = Spec(np.shape(value), dtype)
    f = function(twice, input_signature=[spec])
    with pytest.raises(TypeError) as info:
        f(value)
    assert str(info.value) == (
        f"argument 'n' of twice (input_signature {spec}) is {described}, which numpy's 'same_kind' "
        f"casting rule does not turn into {dtype} (the value would change); pass a value of dtype "
        f"{dtype} (np.asarray(value).astype('{dtype}') converts on purpose) or declare another dtype")


def test_input_signature_numpy_values_need_the_dtype():
    f = function(twice, input_signature=[Spec((), "int64")])
    with pytest.raises(TypeError, match="argument 'n' of twice has dtype float64, its input_signature says "
                                        r"Spec\(\(\), 'int64'\)"):
        f(np.float64(2.0))


def test_input_signature_out_of_range_python_int():
    f = function(twice, input_signature=[Spec((), "int8")])
    with pytest.raises(TypeError, match="argument 'n' of twice .* cannot be int8: Python integer 300 out of "
                                        "bounds for int8"):
        f(300)


# py_function results

def _host(value):
    return lambda x: py_function(lambda v: value, [x], Spec(np.shape(value), "int64"))


def test_py_function_result_of_the_same_kind_is_cast():
    f = function(lambda x: py_function(lambda v: [1, 2], [x], Spec((2,), "float32")), autograph=False)
    got = f(np.float64(0.0))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 2.0])


def test_py_function_result_that_would_change_is_refused():
    f = function(_host(1.7), autograph=False)
    with pytest.raises(TypeError) as info:
        f(np.float64(0.0))
    assert str(info.value) == (
        "the value py_function <lambda> returned (result_spec Spec((), 'int64')) is the Python float 1.7, "
        "which numpy's 'same_kind' casting rule does not turn into int64 (the value would change); pass "
        "a value of dtype int64 (np.asarray(value).astype('int64') converts on purpose) or declare another "
        "dtype")


def test_py_function_returning_none_says_so():
    def returns_nothing(v):
        v + 1

    f = function(lambda x: py_function(returns_nothing, [x], Spec((3,))), autograph=False)
    with pytest.raises(ValueError) as info:
        f(np.ones(3))
    assert str(info.value) == ("py_function returns_nothing returned None, its result_spec is "
                               "Spec((3,), 'float64')")


def test_py_function_second_result_named():
    f = function(lambda x: py_function(lambda v: (v, None), [x], [Spec((3,)), Spec((3,))]),
                 autograph=False)
    with pytest.raises(ValueError, match=r"returned None as result 1, its result_spec is Spec\(\(3,\)"):
        f(np.ones(3))


def test_py_function_several_results_need_a_tuple():
    f = function(lambda x: py_function(lambda v: v, [x], [Spec(()), Spec(())]), autograph=False)
    with pytest.raises(ValueError, match=r"returned an array of shape \(2,\), its result_spec lists 2 results: "
                                         "return a tuple of them"):
        f(np.ones(2))


def test_py_function_result_spec_must_be_specs():
    f = function(lambda x: py_function(lambda v: v, [x], (3,)), autograph=False)
    with pytest.raises(TypeError) as info:
        f(np.ones(3))
    assert str(info.value) == ("py_function <lambda>: result_spec must be a Spec or a list/tuple of Specs, "
                               "got (3,); for one result write Spec((3,))")


# Graph.run feeds

def _doubling_graph(dtype):
    with Graph() as g:
        n = g.placeholder((), dtype, name="n")
        out = n * 2
    return g, n, out


@pytest.mark.parametrize("value", [3, np.int32(3), True])
def test_graph_run_casts_feeds_of_the_same_kind(value):
    g, n, out = _doubling_graph("int64")
    got = g.run(out, {n: value})
    assert got == 6 if value is not True else got == 2
    assert np.asarray(got).dtype == np.int64


def test_graph_run_refuses_none():
    g, n, out = _doubling_graph("float64")
    with pytest.raises(TypeError) as info:
        g.run(out, {n: None})
    assert str(info.value) == ("the value fed to placeholder 'n' (float64[]) is None; it must be a value "
                               "of dtype float64")


def test_graph_run_refuses_truncation():
    g, n, out = _doubling_graph("int64")
    with pytest.raises(TypeError, match=r"the value fed to placeholder 'n' \(int64\[\]\) is the Python float "
                                        "2.7, which numpy's 'same_kind' casting rule does not turn into int64"):
        g.run(out, {n: 2.7})


# Spec

@pytest.mark.parametrize("args, error, message", [
    ((3,), TypeError, "Spec: shape must be a tuple of dimensions (ints, None for unknown), got 3; for a 1-d "
                      "array of length 3 write Spec((3,))"),
    (("abc",), TypeError, "Spec: shape must be a tuple of dimensions (ints, None for unknown), got 'abc'"),
    (((-1,),), ValueError, "Spec: dimension -1 of shape (-1,) is negative; write None for an unknown "
                           "dimension"),
    (((2.5, 3),), TypeError, "Spec: dimension 2.5 of shape (2.5, 3) is not an int (None for an unknown "
                             "dimension)"),
])
def test_spec_validates_its_shape(args, error, message):
    with pytest.raises(error) as info:
        Spec(*args)
    assert str(info.value) == message


def test_spec_accepts_numpy_ints_and_lists():
    assert Spec([np.int64(2), None], "int32") == Spec((2, None), "int32")


# Branch mismatches show the values

def pick_name(x):
    if x > 0:
        s = "positive"
    else:
        s = "negative"
    return s


def test_branch_mismatch_between_strings_shows_both():
    with pytest.raises(BranchMismatchError) as info:
        function(pick_name)(np.float64(1.0))
    assert str(info.value).startswith(
        "'s' is a Python str ('positive') in the true branch but a Python str ('negative') in the false "
        "branch of an `if` whose condition is symbolic (")


# A concrete function checks its arguments

def scale(x, n):
    return x * n


@pytest.mark.parametrize("args, message", [
    ((np.ones(3), 3), "argument 'x' of scale is float64[3], the graph was traced for float64[2]"),
    ((np.ones(2, np.float32), 3), "argument 'x' of scale is float32[2], the graph was traced for float64[2]"),
    ((np.ones(2), 5), "scale was traced for other Python values or argument structure than these; call the "
                      "autograph.function itself, which traces again for new ones"),
    ((np.ones(2),), "scale was traced for other Python values or argument structure than these; call the "
                    "autograph.function itself, which traces again for new ones"),
])
def test_concrete_function_refuses_other_signatures(args, message):
    concrete = function(scale).get_concrete_function(np.ones(2), 3)
    np.testing.assert_array_equal(concrete(np.full(2, 2.0), 3), scale(np.full(2, 2.0), 3))
    with pytest.raises(TypeError) as info:
        concrete(*args)
    assert str(info.value) == message


def test_concrete_function_of_a_spec_takes_any_matching_shape():
    concrete = function(scale).get_concrete_function(Spec((None,)), 2)
    np.testing.assert_array_equal(concrete(np.ones(5), 2), scale(np.ones(5), 2))
