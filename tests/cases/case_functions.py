"""Functions: lambdas, closures, nested functions, scopes, generators, async,
classes, recursion and calls to other user functions."""

import asyncio

from tests.cases import case, log

COUNTER = 0


def helper_square(x):
    if x < 0:
        return -x * x
    return x * x


def helper_loop(n):
    total = 0
    for i in range(n):
        if i % 2:
            continue
        total += i
    return total


@case((3,), (-3,))
def calls_user_function(x):
    return helper_square(x) + helper_loop(abs(x) + 3)


@case((3,),)
def closures_late_binding(n):
    fs = []
    for i in range(n):
        fs.append(lambda: i)
    return [f() for f in fs]


@case((3,),)
def closures_default_arg_binding(n):
    fs = []
    for i in range(n):
        fs.append(lambda i=i: i)
    return [f() for f in fs]


@case((3,),)
def closures_late_binding_while(n):
    fs = []
    i = 0
    while i < n:
        fs.append(lambda: i * 10)
        i += 1
    return [f() for f in fs]


@case((3,),)
def closure_defined_in_loop_def(n):
    fs = []
    for i in range(n):
        def g():
            return i * 2

        fs.append(g)
    return [f() for f in fs]


@case((3,),)
def closure_sees_later_assignment(n):
    def get():
        return x

    x = n
    first = get()
    if n > 0:
        x = n * 2
    return first, get()


@case((1,), (0,))
def closure_over_branch_var(n):
    if n:
        v = "set"

    def get():
        return v

    return get()


@case((5,),)
def nonlocal_counter(n):
    count = 0

    def inc():
        nonlocal count
        count += 1

    for _ in range(n):
        if _ % 2:
            inc()
    return count


@case((3,),)
def nonlocal_in_loop_in_nested(n):
    total = 0

    def add_all():
        nonlocal total
        for i in range(n):
            if i == 1:
                continue
            total += i

    add_all()
    return total


@case((3,),)
def global_statement(n):
    global COUNTER
    COUNTER = 0
    for i in range(n):
        if i:
            COUNTER += i
    return COUNTER


@case((3,),)
def del_in_loop(n):
    x = 1
    for i in range(n):
        y = i
        del y
    del x
    return "deleted"


@case((1,), (0,))
def del_then_read(n):
    x = 1
    if n:
        del x
    return x


@case((1, 2, 3), (1,), kwargs=[{"a": 1, "z": 9}])
def star_args_kwargs(*args, **kwargs):
    total = 0
    for a in args:
        total += a
    for k, v in sorted(kwargs.items()):
        if k != "z":
            total += v
    return total, args, kwargs


@case((1,), (1, 2), (1, 2, [0]))
def default_args(a, b=10, c=None):
    if c is None:
        c = []
    c.append(a + b)
    return c


@case((1,), kwargs=[{"a": 1, "b": 2}])
def keyword_only(a, *, b=5):
    if b > a:
        return b - a
    return a - b


@case((1, 2),)
def positional_only(a, b, /):
    return a - b if a < b else b - a


@case((5,), (0,), (1,))
def recursion_factorial(n):
    if n <= 1:
        return 1
    return n * recursion_factorial(n - 1)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@case((10,), (7,))
def mutual_recursion(n):
    return is_even(n), is_odd(n)


@case((10,),)
def recursion_nested_def(n):
    def fib(k):
        if k < 2:
            return k
        return fib(k - 1) + fib(k - 2)

    return [fib(i) for i in range(n)]


@case((4,), (0,))
def generator_function(n):
    for i in range(n):
        if i == 2:
            continue
        yield i
    yield "end"


@case((4,),)
def generator_with_return(n):
    i = 0
    while True:
        if i >= n:
            return "stopped"
        yield i
        i += 1


@case((3,),)
def generator_yield_from(n):
    yield from range(n)
    for i in range(n):
        yield from [i, -i]


@case((3,),)
def generator_send_protocol(n):
    def echo():
        received = None
        while True:
            received = yield received
            if received is None:
                break

    g = echo()
    next(g)
    out = []
    for i in range(n):
        out.append(g.send(i))
    return out


@case((3,),)
def generator_expression_closure(n):
    gen = (i * n for i in range(n) if i)
    return list(gen)


@case((3,), (0,), run_async=True)
async def async_function(n):
    total = 0
    for i in range(n):
        await asyncio.sleep(0)
        if i == 1:
            continue
        total += i
    return total


@case((3,),)
def async_called_inside(n):
    async def inner(k):
        out = []
        for i in range(k):
            out.append(i)
            await asyncio.sleep(0)
        return out

    return asyncio.run(inner(n))


@case((3,),)
def async_for_and_with(n):
    class AIter:
        def __init__(self, k):
            self.k = k

        def __aiter__(self):
            return self

        async def __anext__(self):
            if self.k <= 0:
                raise StopAsyncIteration
            self.k -= 1
            return self.k

    class ACM:
        async def __aenter__(self):
            log("aenter")
            return "cm"

        async def __aexit__(self, *exc):
            log("aexit")
            return False

    async def main():
        out = []
        async with ACM() as tag:
            async for v in AIter(n):
                if v == 1:
                    continue
                out.append((tag, v))
        return out

    return asyncio.run(main())


@case((3,),)
def class_inside_function(n):
    class Acc:
        total = 0

        def add(self, v):
            if v > 0:
                self.total += v
            return self

    a = Acc()
    for i in range(n):
        a.add(i)
    return a.total


@case((3,),)
def class_with_super(n):
    class Base:
        def describe(self):
            return ["base"]

    class Child(Base):
        def describe(self):
            out = super().describe()
            for i in range(n):
                out.append(i)
            return out

    return Child().describe()


class Animal:
    def __init__(self, name):
        self.name = name

    def speak(self):
        return self.name + " makes a sound"


class Dog(Animal):
    def __init__(self, name, loud):
        super().__init__(name)
        self.loud = loud

    def speak(self):
        base = super().speak()
        if self.loud:
            return base.upper()
        return base


@case((True,), (False,))
def method_super_module_level(loud):
    return Dog("rex", loud).speak()


@case((3,),)
def lambda_with_ternary(n):
    f = lambda x: "even" if x % 2 == 0 else "odd"  # noqa: E731
    return [f(i) for i in range(n)]


@case((3,),)
def function_returning_function(n):
    def make_adder(k):
        def add(x):
            return x + k

        return add

    adders = [make_adder(i) for i in range(n)]
    return [a(10) for a in adders]


@case((2,),)
def decorator_inside(n):
    def deco(fn):
        def wrapper(*a):
            log("call", a)
            return fn(*a) * 2

        return wrapper

    @deco
    def f(x):
        if x:
            return x
        return -1

    return f(n), f(0)


@case((3,),)
def higher_order_builtins(n):
    return (list(map(lambda v: v * 2, range(n))), list(filter(lambda v: v % 2, range(n))),
            sorted(range(n), key=lambda v: -v))


@case((5,),)
def closure_counter_in_while(n):
    def make():
        c = 0

        def step():
            nonlocal c
            c += 1
            return c

        return step

    s = make()
    v = 0
    while v < n:
        v = s()
    return v


@case((3,),)
def class_method_with_control_flow(n):
    class Grid:
        def __init__(self, size):
            self.cells = [[0] * size for _ in range(size)]

        def fill(self):
            for i, row in enumerate(self.cells):
                for j in range(len(row)):
                    if i == j:
                        continue
                    row[j] = i - j
            return self.cells

    return Grid(n).fill()


@case((2,),)
def generator_in_class_method(n):
    class Seq:
        def __iter__(self):
            i = 0
            while i < n:
                yield i
                i += 1

    return list(Seq())


@case((1,), (0,))
def lambda_closure_over_branch_var(n):
    if n:
        k = 5
    f = lambda: k  # noqa: E731
    return f()


@case((0,), (1,), (2,))
def del_in_loop_then_read(n):
    x = 1
    for i in range(n):
        if i == 1:
            del x
    return x


@case((0,), (1,))
def del_in_while_then_read(n):
    x = 1
    while n > 0:
        del x
        n -= 1
    return x


@case((2,))
def captured_loop_var_read_in_while_test(n):
    # Known limitation (README): with n == 0, NameError (free variable)
    # instead of UnboundLocalError, as the test runs in loop_test.
    for i in range(n):
        def g():
            return i
    j = 0
    while j < 1 and i > 0:
        j += 1
    return j


@case((2,))
def captured_loop_var_read_in_ternary(n):
    # Known limitation (README): with n == 0 the converted code raises
    # NameError (free variable) where Python raises UnboundLocalError, as the
    # operand becomes a lambda that reads the captured, unbound variable.
    for i in range(n):
        g = lambda: i  # noqa: E731
    return 1 if n > 5 else i


@case((2,))
def captured_loop_var_in_or_operand_caught(n):
    # Known limitation (README): with n == 0 the converted code raises
    # NameError (free variable): the operand runs as a lambda reading the
    # captured, unbound variable. Python raises UnboundLocalError.
    for i in range(n):
        g = lambda: i  # noqa: E731,F841
    try:
        if n or i:
            pass
    except UnboundLocalError:
        return "caught"
    return "end"


@case((0,), (2,))
def dead_code_after_continue_read_by_closure(n):
    while n:
        n -= 1
        continue
        w = 1

    def g():
        return w

    return g()


@case((1,),)
def closure_reads_variable_whose_binding_is_dead_code(c):
    # Found by tools/fuzz.py (seed 2082031): the only binding of `cm` follows
    # a `return` in a loop that never runs; the closure must find the cell
    # empty (NameError), not a marker for the unbound variable.
    while 0:
        return
        with CM() as cm:
            pass
    else:
        def g(p):
            return p - cm
        g(c)
        return cm


class CM:
    def __enter__(self):
        return 1

    def __exit__(self, *exc):
        return False
