"""Walrus, comprehensions, f-strings, augmented assignment, evaluation order."""

from tests.cases import case, log


def t(name, value):
    log(name, value)
    return value


@case((5,), (0,))
def walrus_in_if(n):
    if (y := n * 2) > 4:
        return y
    return -y


@case((5,),)
def walrus_in_comprehension_leaks(n):
    vals = [(last := i * 2) for i in range(n)]
    return vals, last


@case((0,), (3,))
def walrus_in_comprehension_empty(n):
    vals = [(last := i) for i in range(n)]
    return vals, last


@case((5,),)
def walrus_in_comprehension_condition(n):
    return [y for x in range(n) if (y := x * x) % 2], y


@case((4,),)
def walrus_in_while_loop(n):
    out = []
    i = 0
    while (i := i + 1) < n:
        out.append(i)
    return out, i


@case((3,),)
def list_set_dict_gen_comprehensions(n):
    a = [i * j for i in range(n) for j in range(i) if j]
    b = {i % 2 for i in range(n)}
    c = {i: [j for j in range(i)] for i in range(n)}
    d = sum(i for i in range(n) if i != 1)
    return a, sorted(b), c, d


@case((3,),)
def comprehension_side_effects(n):
    return [t("x", i) for i in range(n) if t("cond", i % 2 == 0)]


@case((3,),)
def nested_comprehension_with_ternary(n):
    return [[("x" if i == j else ".") for j in range(n)] for i in range(n)]


@case((3,),)
def comprehension_shadows_outer(n):
    i = "outer"
    vals = [i for i in range(n)]
    return vals, i


@case((3,), (0,))
def f_strings(n):
    out = []
    for i in range(n):
        out.append(f"{i:>3}|{i * 2!r}|{'even' if i % 2 == 0 else 'odd'}|{n=}")
    return out


@case((3,),)
def augassign_name(n):
    x = 1
    for i in range(n):
        x += i
        x *= 2
        x -= 1
        x //= 1
        x **= 1
        x %= 1000
        x <<= 1
        x >>= 1
        x |= 1
        x &= 0xFFFF
        x ^= 2
    return x


@case((3,),)
def augassign_subscript(n):
    xs = [0, 0, 0]
    d = {"a": 1}
    for i in range(n):
        xs[i] += i * 2
        d["a"] *= 3
    return xs, d


@case((3,),)
def augassign_nested_subscript(n):
    grid = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            grid[i][j] += i * j
            if i == j:
                grid[i][j] -= 1
    return grid


@case((3,),)
def augassign_attribute(n):
    class Obj:
        def __init__(self):
            self.a = 0
            self.child = None

    o = Obj()
    o.child = Obj()
    for i in range(n):
        o.a += i
        o.child.a -= i
    return o.a, o.child.a


@case((2,),)
def augassign_evaluation_order(n):
    xs = [10, 20, 30]

    def idx(i):
        log("idx", i)
        return i

    def val(v):
        log("val", v)
        return v

    def container():
        log("container")
        return xs

    container()[idx(n)] += val(5)
    return xs


@case((2,),)
def item_assignment_order(n):
    d = {}

    def k(x):
        log("key", x)
        return x

    def v(x):
        log("value", x)
        return x

    d[k(n)] = v(n * 10)
    d[k(1)], d[k(2)] = v(1), v(2)
    return d


@case((2,),)
def nested_subscript_assignment(n):
    m = [[0, 0], [0, 0]]
    for i in range(n):
        m[i][1 - i] = i + 1
    return m


@case((3,),)
def augassign_on_list_is_inplace(n):
    a = [1]
    b = a
    for i in range(n):
        a += [i]
    return a is b, b


@case((3,),)
def augassign_on_tuple_rebinds(n):
    a = (1,)
    b = a
    for i in range(n):
        a += (i,)
    return a is b, a, b


@case((3,),)
def augassign_custom_iadd(n):
    class Acc:
        def __init__(self):
            self.v = 0

        def __iadd__(self, other):
            log("iadd", other)
            self.v += other
            return self

    acc = Acc()
    orig = acc
    for i in range(n):
        acc += i
    return acc is orig, acc.v


@case((3,),)
def augassign_attribute_eval_order(n):
    class O:
        a = 0

    o = O()

    def get():
        log("get obj")
        return o

    for i in range(n):
        get().a += t("v", i)
    return o.a


@case((3,),)
def swap_and_unpack(n):
    a, b = 1, 2
    for _ in range(n):
        a, b = b, a
    (c, d), e = (a, b), n
    first, *middle, last = range(n + 3)
    return a, b, c, d, e, first, middle, last


@case((3,),)
def slices(n):
    xs = list(range(10))
    xs[1:3] = [n] * n
    del xs[::3]
    return xs[::-1], xs[n:], xs[:n]


@case((3,),)
def string_building(n):
    s = ""
    i = 0
    while len(s) < n * 2:
        s += str(i)
        i += 1
    return s


@case((3,), (0,))
def print_with_sep_end(n):
    for i in range(n):
        print(i, i * 2, sep="-", end=";")
    print("x", n, sep="")


@case((3,),)
def starred_call_args(n):
    def f(*a, **k):
        return a, k

    args = [i for i in range(n)]
    kw = {"k%d" % i: i for i in range(n)}
    return f(*args, **kw), f(*args, extra=1)


@case((3,),)
def global_name_read(n):
    return [len(str(i)) for i in range(n)], max(range(n)), abs(-n)


@case((4,), (1,))
def chained_assignment(n):
    a = b = c = n
    if n > 2:
        a = b = 0
    return a, b, c


@case((3,),)
def annotated_assignments(n):
    total: int = 0
    for i in range(n):
        step: int = i * 2
        total += step
    return total


@case((3,),)
def is_and_in_operators(n):
    xs = list(range(n))
    out = []
    for i in range(n + 2):
        if i in xs and i is not None and i not in (99,):
            out.append(i)
    return out


@case((3,),)
def conditional_import(n):
    if n > 2:
        import math
    else:
        import cmath as math
    return math.sqrt(n * n)


@case((3,),)
def dict_iteration_while_building(n):
    d = {}
    for i in range(n):
        d.setdefault(i % 2, []).append(i)
    return d


@case((2,),)
def walrus_in_nested_function_condition(n):
    def g():
        if (z := n + 1) > 2:
            return z
        return -z

    return g()


@case((0,),)
def undefined_read_in_comprehension(a):
    while a:
        y = 1
    return [q for q in range(3) if q != y]
