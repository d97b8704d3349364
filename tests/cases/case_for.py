"""for loops over every kind of iterable, targets, for/else."""

from tests.cases import case, log


@case((5,), (0,))
def for_range_sum(n):
    s = 0
    for i in range(n):
        s += i
    return s


@case((5,), (0,))
def for_loop_var_leaks(n):
    for i in range(n):
        pass
    return i


@case(([1, 2, 3],), ([],))
def for_list(xs):
    out = []
    for x in xs:
        out.append(x * 2)
    return out


@case(({"a": 1, "b": 2},), ({},))
def for_dict_keys(d):
    keys = []
    for k in d:
        keys.append(k)
    return keys


@case(({"a": 1, "b": 2},), ({},))
def for_dict_items_tuple_target(d):
    out = []
    for k, v in d.items():
        out.append(k * v)
    return out


@case(("hello",), ("",))
def for_string(s):
    out = ""
    for ch in s:
        out = ch + out
    return out


@case((4,), (0,))
def for_generator(n):
    total = 0
    for sq in (i * i for i in range(n)):
        total += sq
    return total


@case((["a", "b", "c"],), ([],))
def for_enumerate(xs):
    out = []
    for i, x in enumerate(xs):
        out.append(f"{i}:{x}")
    return out


@case(([1, 2, 3], [4, 5]), ([], [1]))
def for_zip(xs, ys):
    out = []
    for x, y in zip(xs, ys):
        out.append(x + y)
    return out


@case(([(1, 2, 3), (4, 5, 6)],), ([(1,)],))
def for_starred_target(rows):
    out = []
    for first, *rest in rows:
        out.append((first, rest))
    return out


@case(([[1, [2, 3]], [4, [5, 6]]],))
def for_nested_tuple_target(rows):
    out = []
    for a, (b, c) in rows:
        out.append(a + b + c)
    return out


@case((5, 3), (5, 10), (0, 1))
def for_else_no_break(n, stop):
    for i in range(n):
        if i == stop:
            break
    else:
        return "completed", n
    return "broke", i


@case((5,), (0,))
def for_else_always(n):
    for i in range(n):
        log(i)
    else:
        log("else")
    return n


@case((10,), (0,))
def for_continue(n):
    out = []
    for i in range(n):
        if i % 2:
            continue
        out.append(i)
    return out


@case((4,), (0,), (1,))
def for_nested_loops(n):
    out = []
    for i in range(n):
        for j in range(i):
            out.append((i, j))
    return out


@case((4, 2), (4, 9))
def for_nested_break_outer_flag(n, target):
    found = None
    for i in range(n):
        for j in range(n):
            if i * j == target:
                found = (i, j)
                break
        if found:
            break
    return found


@case((0,), (3,))
def for_empty_loop_var_undefined(n):
    for i in range(n):
        pass
    return i


@case((0,), (3,))
def for_body_var_undefined_after_empty(n):
    for i in range(n):
        last = i * 2
    return last


@case((3,),)
def for_modifying_loop_var(n):
    out = []
    for i in range(n):
        i = i * 100
        out.append(i)
    return out, i


@case(([3, 1, 2],),)
def for_sorted_reversed(xs):
    out = []
    for x in sorted(xs):
        out.append(x)
    for x in reversed(xs):
        out.append(-x)
    return out


@case((3,),)
def for_over_set_of_ints(n):
    total = 0
    for v in {1, 2, n}:
        total += v
    return total


@case((3,),)
def for_iterator_consumed_twice(n):
    it = iter(range(n))
    a = []
    for x in it:
        a.append(x)
        if x == 0:
            break
    for x in it:
        a.append(x * 10)
    return a


@case((5,),)
def for_range_step(n):
    out = []
    for i in range(n, 0, -2):
        out.append(i)
    return out


@case((3,),)
def for_attribute_target(n):
    class Holder:
        pass

    h = Holder()
    for h.value in range(n):
        log(h.value)
    return h.value


@case((3,),)
def for_subscript_target(n):
    arr = [0, 0]
    for arr[0] in range(n):
        arr[1] += arr[0]
    return arr


@case((3,), (0,))
def for_else_break_in_else_scope(n):
    out = []
    for i in range(2):
        for j in range(n):
            if j == 1:
                break
        else:
            out.append(("no break", i))
            continue
        out.append(("break", i))
    return out


@case((3,),)
def for_exception_propagates(n):
    for i in range(n):
        if i == 2:
            raise KeyError(i)
    return "done"


@case((4,),)
def for_generator_side_effects(n):
    def gen():
        for i in range(n):
            log("yield", i)
            yield i

    for v in gen():
        log("got", v)
        if v == 2:
            break
    return v


@case((3,),)
def for_mutate_list_while_iterating(n):
    xs = list(range(n))
    for x in xs:
        if x < 10:
            xs.append(x + 10)
    return xs


@case((3,),)
def for_print_each(n):
    for i in range(n):
        print(i, end=" ")
    print()


@case((3,), (0,))
def for_while_mix(n):
    out = []
    for i in range(n):
        j = i
        while j > 0:
            j -= 1
            if j == 1:
                continue
            out.append((i, j))
    return out


@case((5,),)
def for_return_tuple_from_nested(n):
    for i in range(n):
        for j in range(n):
            if i + j == 5:
                return i, j
    return None


@case((3,),)
def for_dict_values_modify(n):
    d = {i: i for i in range(n)}
    for k in d:
        d[k] += 10
    return d


@case((2,),)
def for_zip_enumerate_combo(n):
    out = []
    for i, (a, b) in enumerate(zip("abc", range(n))):
        out.append((i, a, b))
    return out


@case((3,), (0,))
def for_else_undefined_var(n):
    for i in range(n):
        if i > 5:
            found = i
            break
    else:
        pass
    return found
