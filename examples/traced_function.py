"""`autograph.function`: convert a function, trace it once per argument
signature into a graph, then run the cached graph (like `tf.function`).

    python examples/traced_function.py
"""

import numpy as np

import autograph


def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0.0
    return x


def newton_sqrt(a, tol):
    """Elementwise square root by Newton's method: the number of iterations
    depends on the data, so the `while` becomes a graph `while_loop`."""
    x = a
    steps = 0
    while np.max(np.abs(x * x - a)) > tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


def show_square_if_positive():
    print("# autograph.to_code(square_if_positive):")
    print(autograph.to_code(square_if_positive))

    f = autograph.function(square_if_positive)
    print(f"f(np.float64(9.0))  = {f(np.float64(9.0))}   trace_count = {f.trace_count}  (first call: traced)")
    print(f"f(np.float64(-3.0)) = {f(np.float64(-3.0))}    trace_count = {f.trace_count}  "
          "(same signature float64[]: cached graph, no retrace)")
    print(f"f(np.float32(2.0))  = {f(np.float32(2.0))}    trace_count = {f.trace_count}  "
          "(new signature float32[]: retraced)")

    concrete = f.get_concrete_function(np.float64(1.0))
    print("\n# f.get_concrete_function(np.float64(1.0)):")
    print(concrete)
    print("\n# ... compiled to this numpy code (concrete.source):")
    print(concrete.source)


def show_newton_sqrt():
    print("# autograph.to_code(newton_sqrt):")
    print(autograph.to_code(newton_sqrt))

    f = autograph.function(newton_sqrt)
    a = np.array([2.0, 9.0, 1e6])
    tol = np.float64(1e-9)
    x, steps = f(a, tol)
    print(f"f({a}, 1e-9) = ({x}, steps={steps})   trace_count = {f.trace_count}")
    print(f"eager newton_sqrt gives the same: {np.allclose(newton_sqrt(a, 1e-9)[0], x)}")
    x, steps = f(np.array([4.0, 16.0, 25.0]), tol)
    print(f"f([4, 16, 25], 1e-9) = ({x}, steps={steps})   trace_count = {f.trace_count}  "
          "(same signature float64[3]: no retrace)")
    x, steps = f(np.array([4.0, 16.0]), tol)
    print(f"f([4, 16], 1e-9) = ({x}, steps={steps})   trace_count = {f.trace_count}  "
          "(new shape float64[2]: retraced)")

    concrete = f.get_concrete_function(a, tol)
    print("\n# f.get_concrete_function(a, tol):")
    print(concrete)
    dot = concrete.to_dot()
    print(f"\n# concrete.to_dot(): {len(dot)} characters of Graphviz text; first lines:")
    print("\n".join(dot.splitlines()[:4]))


def main():
    show_square_if_positive()
    print("\n" + "=" * 72 + "\n")
    show_newton_sqrt()


if __name__ == "__main__":
    main()
