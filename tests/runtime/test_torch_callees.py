"""Functions that converted code calls, under dynamo (`torch.compile`, with
`fullgraph=True` and without, and strict `torch.export`) and under
non-strict `torch.export`: each callee is converted on its first call, also
when that call happens while dynamo traces, so a data-dependent `if` or
`while` in a helper becomes a `cond` or `while_loop` as in the caller.

Each program runs on arguments that take every way through each condition,
and its results are compared with the unconverted function run eagerly;
`torch._dynamo.explain` counts its graph breaks."""

import functools

import pytest

torch = pytest.importorskip("torch")

import autograph  # noqa: E402
from autograph import conversion  # noqa: E402
from tests.runtime.exported_graphs import Converted, assert_same  # noqa: E402

POSITIVE, NEGATIVE = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([-1.0, -2.0, -3.0])
ARGSETS = [(POSITIVE,), (NEGATIVE,)]


def scale_or_negate(x, k=1.0):
    if x.sum() > 0:
        y = x * k
    else:
        y = -x
    return y


def halve_until_small(x, limit=1.0):
    while x.abs().max() > limit:
        x = x / 2
    return x


def calls_a_helper(x):
    return scale_or_negate(x) + 1


def calls_with_keywords(x):
    return scale_or_negate(x, k=2.0) + halve_until_small(x * 3, limit=0.5)


def calls_a_lambda(x):
    pick = lambda v: v * 2 if v.sum() > 0 else v - 1  # noqa: E731 - the construct under test
    return pick(x)


def calls_a_nested_function(x):
    def pick(v):
        if v.sum() > 0:
            return v * 2
        return v - 1
    return pick(x + 1)


def calls_a_partial(x):
    scaled = functools.partial(scale_or_negate, k=3.0)
    return scaled(x)


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return scale_or_negate(x, k=self.k)


SCALER = Scaler(4.0)  # made outside the compiled function (docs/pytorch.md: objects made inside)


def calls_a_method(x):
    return SCALER.apply(x) - 1


def calls_through_an_expression(x):
    # `ag__.call(SCALER.apply)` on an attribute of an attribute's value, and
    # a method of a tensor that the code computed.
    holder = {"scaler": SCALER}
    return holder["scaler"].apply(x.abs().neg() if x.sum() > 0 else x)


ACTIVATION = torch.nn.Hardtanh(-2.0, 2.0)  # no parameters: strict export refuses those of a global module


def calls_library_code(x):
    # Library code runs as it is: a method of a torch module, a partial of a
    # torch function.
    clamp = functools.partial(torch.clamp, min=-1.0)
    return clamp(ACTIVATION.forward(x)) + scale_or_negate(x)


@torch.jit.script_if_tracing
def negate_or_double(x):
    if x.sum() > 0:
        return x * 2
    return -x


def calls_a_script_if_tracing_function(x):
    # torch.compile calls the function such a wrapper keeps (`__original_fn`),
    # not the wrapper: the converted function, whichever of them it meets.
    return negate_or_double(x) + 1


CALLERS = [calls_a_helper, calls_with_keywords, calls_a_lambda, calls_a_nested_function, calls_a_partial,
           calls_a_method, calls_through_an_expression, calls_library_code, calls_a_script_if_tracing_function]


def graph_breaks(f, *args):
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(f)(*args)
    return explanation.graph_count, explanation.graph_break_count


@pytest.mark.parametrize("f", CALLERS)
@pytest.mark.parametrize("fullgraph", [True, False], ids=["fullgraph", "default"])
def test_callees_convert_under_torch_compile(f, fullgraph):
    converted = autograph.to_graph(f)
    torch._dynamo.reset()
    function = torch.compile(converted, fullgraph=fullgraph, backend="eager")
    for args in ARGSETS:
        assert_same(f(*args), function(*args))
    assert graph_breaks(converted, POSITIVE) == (1, 0)


@pytest.mark.parametrize("f", CALLERS)
@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
def test_callees_convert_under_torch_export(f, strict):
    exported = torch.export.export(Converted(f), ARGSETS[0], strict=strict)
    for args in ARGSETS:
        assert_same(f(*args), exported.module()(*args))


def make_helper():
    """A helper that no test has converted yet: its first conversion is the
    one that dynamo's trace asks for."""
    def fresh(x):
        if x.sum() > 0:
            return x * 5
        return x + 5
    return fresh


def test_first_conversion_of_a_callee_happens_while_dynamo_traces():
    fresh = make_helper()

    def caller(x):
        return fresh(x) * 2

    assert conversion.cached(fresh) is None
    torch._dynamo.reset()
    function = torch.compile(autograph.to_graph(caller), fullgraph=True, backend="eager")
    assert_same(caller(POSITIVE), function(POSITIVE))
    assert conversion.cached(fresh) is not None  # converted inside the compiled region
    assert_same(caller(NEGATIVE), function(NEGATIVE))


def make_script_if_tracing_caller():
    @torch.jit.script_if_tracing
    def wrapped(x):
        if x.sum() > 0:
            return x * 5
        return x + 5

    def caller(x):
        return wrapped(x) * 2
    return caller


@pytest.mark.parametrize("first", ["eager", "dynamo"])
def test_script_if_tracing_callee_converts_whichever_runs_first(first):
    # Eager first: the call site keeps the converted wrapper, which dynamo
    # would call through `__original_fn`; dynamo first: the hook meets the
    # wrapper inside the trace.
    caller = make_script_if_tracing_caller()
    converted = autograph.to_graph(caller)
    if first == "eager":
        assert_same(caller(POSITIVE), converted(POSITIVE))
    torch._dynamo.reset()
    function = torch.compile(converted, fullgraph=True, backend="eager")
    for args in ARGSETS:
        assert_same(caller(*args), function(*args))
    exported = torch.export.export(Converted(caller), ARGSETS[0], strict=True)
    for args in ARGSETS:
        assert_same(caller(*args), exported.module()(*args))


class Block(torch.nn.Module):
    """A module whose converted forward calls a method of its own, which
    calls a helper with a data-dependent `if`."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(3, 3)

    def gate(self, x):
        return scale_or_negate(self.linear(x), k=0.5)

    def plain_forward(self, x):
        return self.gate(x) + x

    forward = autograph.to_graph(plain_forward)


def test_module_method_calling_a_helper():
    block = Block()
    inputs = [(POSITIVE * 10,), (NEGATIVE * 10,)]
    expected = [block.plain_forward(*args) for args in inputs]
    assert {bool(block.linear(*args).sum() > 0) for args in inputs} == {True, False}  # both paths
    torch._dynamo.reset()
    function = torch.compile(block, fullgraph=True, backend="eager")
    for args, value in zip(inputs, expected, strict=True):
        assert_same(value, function(*args))
    assert graph_breaks(block, *inputs[0]) == (1, 0)
    for strict in (False, True):
        exported = torch.export.export(block, inputs[0], strict=strict)
        for args, value in zip(inputs, expected, strict=True):
            assert_same(value, exported.module()(*args))
