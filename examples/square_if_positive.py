"""The first thing to read: why conversion is needed, then a converted
function's generated code, run as Python and traced into a graph.

Tracing runs a function once on symbolic inputs and records what it does.
Python's `if` and `while` cannot be recorded that way: they need a `bool`,
and a symbolic value has none. autograph rewrites them into operators that
run as Python for Python values and become graph operations for symbolic
ones.

    python examples/square_if_positive.py
"""

import numpy as np

import autograph


def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def main():
    # Plain tracing (autograph=False traces the function as written) fails
    # at the `if`: the truth value of a symbolic array is not known.
    try:
        autograph.function(square_if_positive, autograph=False)(np.float64(9.0))
    except autograph.runtime.tracer.SymbolicBoolError as error:
        reason = str(error).partition(" while tracing")[0]
        print(f"# plain tracing fails: {type(error).__name__}: {reason} while tracing\n")

    for function, argument in [(square_if_positive, 9.0), (collatz_steps, 27)]:
        print(f"# autograph.to_code({function.__name__}):")
        print(autograph.to_code(function))
        converted = autograph.to_graph(function)
        print(f"# eager: {function.__name__}({argument}) = {function(argument)}; "
              f"converted: {converted(argument)}")
        # Traced: a numpy argument becomes a symbolic placeholder, so `if` and
        # `while` on it become graph nodes (cond, while_loop); later calls with
        # the same dtype and shape run the cached graph.
        traced = autograph.function(function)
        array = np.asarray(argument)
        print(f"# traced: autograph.function({function.__name__})(np.asarray({argument})) = "
              f"{traced(array)}; its graph:")
        print(traced.get_concrete_function(array), end="\n\n")


if __name__ == "__main__":
    main()
