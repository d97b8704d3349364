"""The example scripts run and print what they promise."""

import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def run_example(name):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_square_if_positive():
    out = run_example("square_if_positive.py")
    assert out.startswith("# plain tracing fails: SymbolicBoolError: the truth value of a symbolic array")
    assert "x = ag__.if_stmt(x > 0, if_body, else_body, (x,), ('x',))" in out
    assert "# eager: square_if_positive(9.0) = 81.0; converted: 81.0" in out
    assert "# eager: collatz_steps(27) = 111; converted: 111" in out
    assert "# traced: autograph.function(square_if_positive)(np.asarray(9.0)) = 81.0" in out
    assert "# traced: autograph.function(collatz_steps)(np.asarray(27)) = 111" in out
    assert "graph square_if_positive(%x: float64[]):" in out
    assert "graph collatz_steps(%n: int64[]):" in out
    assert re.search(r"= cond\(%\d+\) : float64\[\]", out)
    assert re.search(r"= while_loop\(%n, %\d+\) : int64\[\], int", out)


def test_explicit_graph():
    out = run_example("explicit_graph.py")
    assert "graph square_if_positive(%x: float64[]):" in out
    assert re.search(r"%\d+ = cond\(%\d+\) : float64\[\]", out)
    assert "then:" in out and "else:" in out
    assert "g.run(y, {x: 9.0}) = 81.0" in out
    assert "g.run(y, {x: -3.0}) = 0.0" in out


def test_traced_function():
    out = run_example("traced_function.py")
    counts = [int(c) for c in re.findall(r"trace_count = (\d+)", out)]
    assert counts == [1, 1, 2, 1, 1, 2]
    assert "f(np.float64(9.0))  = 81.0   trace_count = 1" in out
    assert "f(np.float64(-3.0)) = 0.0    trace_count = 1" in out
    assert "f(np.float32(2.0))  = 4.0    trace_count = 2" in out
    assert "def run_square_if_positive(v0):" in out          # the compiled source
    assert "eager newton_sqrt gives the same: True" in out
    assert "f([4, 16, 25], 1e-9) = ([2. 4. 5.], steps=6)" in out
    assert "graph newton_sqrt(%a: float64[3], %tol: float64[]):" in out
    assert "= while_loop(" in out
    assert re.search(r"concrete.to_dot\(\): \d+ characters", out)
    assert 'digraph "newton_sqrt" {' in out


# The examples, each run once by its test here, which reads what it prints
# (a subprocess each: importing torch or jax costs seconds, and
# torch_compile.py runs inductor).
CHECKED = ("early_exit.py", "explicit_graph.py", "jax_jit.py", "square_if_positive.py", "torch_compile.py",
           "torch_export.py", "traced_function.py")


def test_every_example_has_a_test():
    assert tuple(sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))) == CHECKED


def test_jax_jit():
    out = run_example("jax_jit.py")
    assert "# plain jax.jit fails: TracerBoolConversionError" in out
    assert "# eager: clipped_sum_of_squares(x, 5.0) = 12.0; jax.jit(to_graph(...)): 12.0" in out
    assert "# gradient through the loop: [ 2. -1.  6.  8.]" in out
    assert "# jax.jit(to_graph(newton_sqrt))(2.0) = 1.414213" in out
    assert "while[" in out and "select_n" in out  # the break loop stops early; small branches select


def test_torch_export():
    out = run_example("torch_export.py")
    assert "# plain torch.export fails: GuardOnDataDependentSymNode" in out
    for n, steps in ((27, 111), (6, 8), (1, 0)):  # the Collatz sequence of n takes `steps` steps
        assert f"# eager: collatz_steps({n}) = {steps}; exported: {steps}" in out
    assert "torch.ops.higher_order.while_loop(" in out


def test_torch_compile():
    out = run_example("torch_compile.py")
    assert "# the unconverted forward: Unsupported" in out
    assert "# converted: 1 graph, 0 graph breaks" in out
    assert out.count("# same result as eager: True") == 2


def test_early_exit():
    out = run_example("early_exit.py")
    assert "# plain tracing fails: SymbolicBoolError" in out
    for limit, index in ((2.0, 1), (3.0, 2), (9.0, -1)):
        assert f"# first_index_above(x, {limit}): eager {index}, traced {index}" in out
    assert "trace_count = 1" in out
    assert "while_loop" not in out and "# its graph has 7 cond nodes and no loop:" in out


@pytest.mark.parametrize("name, module, extra", [("jax_jit.py", "jax", ".[jax]"),
                                                 ("torch_export.py", "torch", ".[torch]"),
                                                 ("torch_compile.py", "torch", ".[torch]")])
def test_optional_examples_say_what_to_install(name, module, extra):
    # Run the example as if `module` were not installed.
    code = (f"import sys, runpy; sys.modules[{module!r}] = None; "
            f"runpy.run_path({os.path.join(EXAMPLES, name)!r}, run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert f'pip install "{extra}"' in result.stdout
