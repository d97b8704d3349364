"""Library code with data-dependent control flow, converted with
`include=[...]`, compiles and exports with the eager results (docs/pytorch.md,
"Library code"): torch's von Mises sampler, whose rejection loop
(`while not done.all():`) sits behind `torch.jit.script_if_tracing` and, in
`VonMises.sample`, inside `torch.no_grad()`."""

import pytest

torch = pytest.importorskip("torch")

from torch.distributions import VonMises, von_mises  # noqa: E402

import autograph  # noqa: E402

LOC, CONCENTRATION = torch.tensor(0.5), torch.tensor(2.0)


def draw(loc, concentration, n):
    return VonMises(loc, concentration, validate_args=False).sample((n,))


def rejection_loop(loc, concentration, x):
    tau = 1 + (1 + 4 * concentration**2).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * concentration)
    return von_mises._rejection_sample(loc, concentration, (1 + rho**2) / (2 * rho), x)


def seeded(f, *args):
    torch.manual_seed(0)
    return f(*args)


class Module(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)


def test_plain_compile_refuses_the_sampler():
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(draw, fullgraph=True, backend="eager")(LOC, CONCENTRATION, 4)


def test_the_converted_sampler_compiles_in_one_graph():
    torch._dynamo.reset()
    compiled = torch.compile(autograph.to_graph(draw, include=["torch.distributions"]), fullgraph=True,
                             backend="eager")
    assert torch.equal(seeded(compiled, LOC, CONCENTRATION, 4), seeded(draw, LOC, CONCENTRATION, 4))


def test_the_converted_sampler_exports_strictly_under_no_grad():
    converted = autograph.to_graph(draw, include=["torch.distributions"])
    with torch.no_grad():
        exported = torch.export.export(Module(lambda loc, c: converted(loc, c, 4)), (LOC, CONCENTRATION),
                                       strict=True)
    assert torch.equal(seeded(exported.module(), LOC, CONCENTRATION), seeded(draw, LOC, CONCENTRATION, 4))


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
def test_the_converted_rejection_loop_exports(strict):
    # Its `torch.jit.script_if_tracing` wrapper is converted with it: the
    # loop of library code that `include` names.
    converted = autograph.to_graph(rejection_loop, include=["torch.distributions"])
    x = torch.zeros(5)
    exported = torch.export.export(Module(converted), (LOC, CONCENTRATION, x), strict=strict)
    assert torch.equal(seeded(exported.module(), LOC, CONCENTRATION, x), seeded(rejection_loop, LOC, CONCENTRATION, x))


def random_walk(x):
    while x.sum() < 3:
        x = x + torch.rand(x.shape)
    if x.mean() > 1:
        x = x - torch.rand(x.shape)
    return x


@pytest.mark.parametrize("mode", ["compile", "non-strict", "strict"])
def test_a_staged_body_draws_as_python_does(mode):
    # Under dynamo each body first runs once in the enclosing graph (a
    # probe): its draws are erased, or the program would draw more than
    # Python does and give other numbers for the same seed.
    converted, x = autograph.to_graph(random_walk), torch.zeros(3)
    if mode == "compile":
        torch._dynamo.reset()
        run = torch.compile(converted, fullgraph=True, backend="eager")
    else:
        run = torch.export.export(Module(converted), (x,), strict=mode == "strict").module()
    assert torch.equal(seeded(run, x), seeded(random_walk, x))
