"""Graph printing, Graphviz export, explicit graphs, the graph compiler."""

import autograph.runtime as ag__
import numpy as np
import pytest
from autograph.runtime import tracer
from autograph.runtime.tracer import passes

from autograph.traced_function import function


def build():
    with tracer.Graph("f") as g:
        x = g.placeholder((3,), "float32", "x")
        n = g.placeholder((), "int64", "n")
        y = np.sum(x * 2) / n

        def loop_test(i, s):
            return i < n

        def loop_body(i, s):
            def if_body():
                return s + x

            def else_body():
                return s
            s = ag__.if_stmt(i % 2 == 0, if_body, else_body, (), ("s",))
            return i + 1, s
        i, s = ag__.while_stmt(loop_test, loop_body, (0, np.zeros(3, np.float32)), ("i", "s"))
    return g, x, n, y, i, s


def test_text_one_op_per_line():
    g, x, n, y, i, s = build()
    g.outputs = [y, s]
    passes.eliminate_dead_code(g)
    assert str(g) == """\
graph f(%x: float32[3], %n: int64[]):
  %0 = multiply(%x, 2) : float32[3]
  %1 = sum(%0) : float32[]
  %2 = divide(%1, %n) : float64[]
  %3 = constant(0) : int
  %4 = constant([0., 0., 0.]) : float32[3]
  %i, %s = while_loop(%3, %4) : int, float32[3]
    test(%5: int, %6: float32[3]):
      %7 = less(%5, %n) : bool[]
      return %7
    body(%5: int, %6: float32[3]):
      %8 = mod(%5, 2) : int
      %9 = eq(%8, 0) : bool
      %10 = cond(%9) : float32[3]
        then:
          %11 = add(%6, %x) : float32[3]
          return %11
        else:
          return %6
      %12 = add(%5, 1) : int
      return %12, %10
  return %2, %s"""


def test_run_explicit_graph():
    g, x, n, y, i, s = build()
    out = g.run({"y": y, "i": i, "s": s}, {x: [1, 2, 3], n: 5})
    assert out["y"] == pytest.approx(12 / 5)
    assert out["i"] == 5 and type(out["i"]) is int
    np.testing.assert_array_equal(out["s"], np.array([3, 6, 9], np.float32))
    assert out["s"].dtype == np.float32
    # Fetching a subset needs only the placeholders it depends on.
    assert g.run(y, {x: [1, 1, 1], n: 3}) == 2.0


def test_run_requires_needed_feeds():
    g, x, n, y, i, s = build()
    with pytest.raises(tracer.TracingError, match="must be fed"):
        g.run(y, {x: [1, 2, 3]})


def test_feed_shape_is_checked():
    g, x, n, y, i, s = build()
    with pytest.raises(ValueError, match=r"cannot feed a value of shape \(2,\) to a placeholder "
                       r"of shape \(3\)"):
        g.run(y, {x: [1, 2], n: 1})


def test_feeding_an_intermediate_value_overrides_it():
    # As in TensorFlow 1: the fed value replaces the computed one.
    with tracer.Graph("h") as h:
        a = h.placeholder((3,), "float64", "a")
        b = a * 2.0
        c = b + 1.0
    np.testing.assert_array_equal(h.run(c, {a: [1, 2, 3], b: [10, 20, 30]}), [11, 21, 31])
    # The placeholder is not needed once the value that reads it is fed.
    out = h.run([c, b], {b: [0, 1, 2]})
    np.testing.assert_array_equal(out[0], [1, 2, 3])
    np.testing.assert_array_equal(out[1], [0, 1, 2])
    # Without the feed, the value is computed again.
    np.testing.assert_array_equal(h.run(c, {a: [1, 2, 3]}), [3, 5, 7])


def test_feeding_a_loop_output_overrides_it():
    g, x, n, y, i, s = build()
    out = g.run({"i": i, "y": y}, {x: [1, 2, 3], n: 5, i: 7})
    assert out["i"] == 7 and type(out["i"]) is int
    assert out["y"] == pytest.approx(12 / 5)


def test_unknown_feed_key_is_named():
    g, x, n, y, i, s = build()
    with pytest.raises(TypeError, match="feed_dict key 'typo' is not a symbolic value"):
        g.run(y, {x: [1, 2, 3], n: 5, "typo": 1.0})


def test_values_of_another_graph_are_refused_naming_it():
    g, x, n, y, i, s = build()
    with tracer.Graph("other") as h:
        w = h.placeholder((), "float64", "w")
        v = w + 1.0
    with pytest.raises(ValueError, match="fetch .* is a value of graph 'other', not of graph 'f'"):
        g.run(v, {x: [1, 2, 3], n: 5})
    with pytest.raises(ValueError, match="feed_dict key 'w' .* is a value of graph 'other', not of graph 'f'"):
        g.run(y, {x: [1, 2, 3], n: 5, w: 1.0})


def test_to_dot():
    g, x, n, y, i, s = build()
    g.outputs = [y, s]
    dot = g.to_dot()
    assert dot.startswith('digraph "f" {')
    assert dot.rstrip().endswith("}")
    assert "subgraph cluster_" in dot
    assert 'label="while body";' in dot and 'label="cond true branch";' in dot
    assert 'label="multiply\\nfloat32[3]"' in dot


def test_compiled_source_is_flat_python():
    f = function(lambda x: np.exp(x) + 1, autograph=False)
    c = f.get_concrete_function(np.ones(2))
    # A value read once, right after it is computed, is inlined there.
    assert c.source.splitlines()[2:-3] == ["        return exp_0(v0) + 1"]
    f = function(lambda x: np.exp(x) * np.exp(x) + 1, autograph=False)
    c = f.get_concrete_function(np.ones(2))
    assert c.source.splitlines()[2:-3] == ["        v1 = exp_0(v0)", "        return (v1 * v1) + 1"]


def test_graph_str_of_concrete_function():
    f = function(lambda x: x * x, autograph=False)
    assert str(f.get_concrete_function(np.float32(2))) == (
        "graph <lambda>(%x: float32[]):\n"
        "  %0 = multiply(%x, %x) : float32[]\n"
        "  return %0")
