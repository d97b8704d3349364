"""A Python loop whose `break` depends on the data: plain tracing fails,
TensorFlow's AutoGraph refuses it, converted code traces it.

The loop runs over a Python `range`, so it unrolls while tracing; the
`break` depends on a traced value, so after the first iteration every
later one is guarded by a `cond` on the break flag.

    python examples/early_exit.py
"""

import numpy as np

import autograph


def first_index_above(x, limit):
    """The index of the first element above `limit` among the first four, or -1."""
    found = -1
    for i in range(4):
        if x[i] > limit:
            found = i
            break
    return found


def main():
    x = np.array([0.5, 2.5, 3.5, 1.0])
    try:
        autograph.function(first_index_above, autograph=False)(x, np.float64(2.0))
    except autograph.runtime.tracer.SymbolicBoolError as error:
        print(f"# plain tracing fails: {type(error).__name__}")

    f = autograph.function(first_index_above)
    for limit in (2.0, 3.0, 9.0):
        print(f"# first_index_above(x, {limit}): eager {first_index_above(x, limit)}, "
              f"traced {f(x, np.float64(limit))}")
    print(f"# one graph for every limit: trace_count = {f.trace_count}")
    graph = f.get_concrete_function(x, np.float64(2.0)).graph
    print(f"# its graph has {graph.count_nodes('cond')} cond nodes and no loop:")
    print(f.get_concrete_function(x, np.float64(2.0)))


if __name__ == "__main__":
    main()
