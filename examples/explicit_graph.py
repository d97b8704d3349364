"""The explicit-graph flow of TensorFlow 1, with autograph's numpy tracer.

Build a graph once with a placeholder, then run it with different inputs:

    python examples/explicit_graph.py
"""

import autograph


def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def main():
    converted = autograph.to_graph(square_if_positive)

    # Inside `with g:` the converted function is traced: `x` is symbolic, so
    # `if x > 0` becomes one `cond` node holding both branches.
    with autograph.Graph("square_if_positive") as g:
        x = g.placeholder((), "float64", "x")
        y = converted(x)

    print("# the graph built from square_if_positive:")
    print(g)
    print()
    for value in (9.0, -3.0):
        print(f"g.run(y, {{x: {value}}}) = {g.run(y, {x: value})}")


if __name__ == "__main__":
    main()
