"""The first thing to read: convert a function, look at its generated code,
run it.

    python examples/square_if_positive.py
"""

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
    for function, argument in [(square_if_positive, 9.0), (collatz_steps, 27)]:
        print(f"# autograph.to_code({function.__name__}):")
        print(autograph.to_code(function))
        converted = autograph.to_graph(function)
        print(f"# eager: {function.__name__}({argument}) = {function(argument)}; "
              f"converted: {converted(argument)}\n")


if __name__ == "__main__":
    main()
