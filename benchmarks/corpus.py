"""A corpus of ordinary Python functions for benchmarking the transpiler.

Run `python benchmarks/corpus.py` to validate the corpus in plain Python:
every case must run, be deterministic, leave its arguments unmodified, and
take between ~5 us and ~2 ms per call. The timing and comparison script is
`python benchmarks/conversion.py`.

Each function is the kind of code people write by hand: numeric loops, string
processing, searches with early returns, nested loops with break/continue,
while loops, small state machines, recursion and helpers calling each other,
list/dict manipulation, try/except, for/else and while/else, comprehensions,
the walrus operator (no `match`: the project supports Python 3.9). No numpy:
the point is the overhead of the converted control flow on plain Python
values.

`CASES` is a list of `(function, args_tuple)`. The functions never mutate
their arguments, so a case can be called any number of times.
"""

# ---------------------------------------------------------------------------
# Numeric loops
# ---------------------------------------------------------------------------


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def sieve_primes(limit):
    is_composite = [False] * (limit + 1)
    primes = []
    for i in range(2, limit + 1):
        if is_composite[i]:
            continue
        primes.append(i)
        j = i * i
        while j <= limit:
            is_composite[j] = True
            j += i
    return primes


def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def count_primes_between(lo, hi):
    count = 0
    for k in range(lo, hi):
        if is_prime(k):
            count += 1
    return count


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def lcm_of_list(numbers):
    result = 1
    for x in numbers:
        result = result * x // gcd(result, x)
    return result


def newton_sqrt(x, tol=1e-12):
    if x < 0:
        raise ValueError("negative input")
    if x == 0:
        return 0.0
    guess = x if x > 1 else 1.0
    iterations = 0
    while True:
        better = 0.5 * (guess + x / guess)
        iterations += 1
        if abs(better - guess) < tol * better or iterations > 100:
            return better
        guess = better


def sum_sqrts(values):
    total = 0.0
    for v in values:
        total += newton_sqrt(v)
    return total


def digital_root_stats(numbers):
    roots = {}
    for n in numbers:
        while n >= 10:
            s = 0
            while n > 0:
                s += n % 10
                n //= 10
            n = s
        roots[n] = roots.get(n, 0) + 1
    return sorted(roots.items())


def smallest_divisor(n):
    d = 2
    while d * d <= n:
        if n % d == 0:
            break
        d += 1
    else:
        return n
    return d


def factorize_all(numbers):
    out = []
    for n in numbers:
        factors = []
        while n > 1:
            p = smallest_divisor(n)
            factors.append(p)
            n //= p
        out.append(tuple(factors))
    return out


def fib_recursive(n):
    if n < 2:
        return n
    return fib_recursive(n - 1) + fib_recursive(n - 2)


def pythagorean_triples(limit):
    triples = []
    for a in range(1, limit):
        for b in range(a, limit):
            c2 = a * a + b * b
            c = int(c2 ** 0.5)
            if c >= limit:
                break
            if c * c != c2:
                continue
            triples.append((a, b, c))
    return triples


def moving_average(xs, window):
    if window <= 0 or window > len(xs):
        return []
    out = []
    acc = 0.0
    for i, x in enumerate(xs):
        acc += x
        if i >= window:
            acc -= xs[i - window]
        if i >= window - 1:
            out.append(acc / window)
    return out


def histogram(values, nbins, lo, hi):
    counts = [0] * nbins
    width = (hi - lo) / nbins
    outliers = 0
    for v in values:
        if v < lo or v > hi:
            outliers += 1
            continue
        idx = int((v - lo) / width)
        idx = nbins - 1 if idx >= nbins else idx
        counts[idx] += 1
    return counts, outliers


def clamp_and_scale(xs, lo, hi, scale):
    out = []
    for x in xs:
        y = lo if x < lo else (hi if x > hi else x)  # noqa: FURB136 - control flow on purpose
        neg = y < 0 and not (scale < 0)
        out.append(-y * scale if neg else y * scale)
    return out


def matrix_multiply(a, b):
    n = len(a)
    m = len(b[0])
    k = len(b)
    result = []
    for i in range(n):
        row = []
        for j in range(m):
            s = 0
            for t in range(k):
                s += a[i][t] * b[t][j]
            row.append(s)
        result.append(row)
    return result


def knapsack(weights, values, capacity):
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        c = capacity
        while c >= w:
            candidate = best[c - w] + v
            if candidate > best[c]:  # noqa: PLR1730 - control flow on purpose
                best[c] = candidate
            c -= 1
    return best[capacity]


# ---------------------------------------------------------------------------
# Searching
# ---------------------------------------------------------------------------


def binary_search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == target:
            return mid
        elif xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def search_many(xs, targets):
    found = 0
    missing = []
    for t in targets:
        if binary_search(xs, t) >= 0:
            found += 1
        else:
            missing.append(t)
    return found, missing


def find_pair_with_sum(xs, target):
    n = len(xs)
    for i in range(n):
        if xs[i] > target:
            continue
        for j in range(i + 1, n):
            if xs[i] + xs[j] == target:
                return i, j
    return None


def find_in_grid(grid, target):
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if value == target:
                return r, c
    return -1, -1


def first_repeated_window(xs, k):
    seen = {}
    for i in range(len(xs) - k + 1):
        key = tuple(xs[i:i + k])
        if key in seen:
            break
        seen[key] = i
    else:
        return None
    return seen[key], i


# ---------------------------------------------------------------------------
# Strings
# ---------------------------------------------------------------------------


def word_frequencies(text):
    counts = {}
    for raw in text.split():
        word = raw.strip(".,;:!?\"'()").lower()
        if not word:
            continue
        if word in counts:
            counts[word] += 1
        else:
            counts[word] = 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return top[:5]


def caesar_cipher(text, shift):
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + shift) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + shift) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)


def is_palindrome(text):
    chars = [c.lower() for c in text if c.isalnum()]
    i, j = 0, len(chars) - 1
    while i < j:
        if chars[i] != chars[j]:
            return False
        i += 1
        j -= 1
    return True


def run_length_encode(s):
    if not s:
        return ""
    parts = []
    current = s[0]
    count = 1
    for ch in s[1:]:
        if ch == current:
            count += 1
        else:
            parts.append(f"{count}{current}" if count > 1 else current)
            current = ch
            count = 1
    parts.append(f"{count}{current}" if count > 1 else current)
    return "".join(parts)


def count_letter_classes(text):
    vowels = consonants = digits = other = 0
    for ch in text:
        if ch.isspace():
            continue
        low = ch.lower()
        if low in "aeiou":
            vowels += 1
        elif low.isalpha() and low.isascii():
            consonants += 1
        elif ch.isdigit():
            digits += 1
        else:
            other += 1
    return vowels, consonants, digits, other


def longest_common_prefix(words):
    if not words:
        return ""
    prefix = words[0]
    for w in words[1:]:
        i = 0
        while i < len(prefix) and i < len(w) and prefix[i] == w[i]:
            i += 1
        prefix = prefix[:i]
        if not prefix:
            break
    return prefix


def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost))
        prev = cur
    return prev[-1]


def balanced_brackets(s):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack[-1] != pairs[ch]:
                return False
            stack.pop()
    return not stack


def group_anagrams(words):
    groups = {}
    for w in words:
        key = "".join(sorted(w))
        groups.setdefault(key, []).append(w)
    result = [sorted(g) for g in groups.values() if len(g) > 1]
    result.sort()
    return result


def wrap_text(text, width):
    lines = []
    line = ""
    for word in text.split():
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = line + " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


# ---------------------------------------------------------------------------
# State machines, parsing, interpreters
# ---------------------------------------------------------------------------


def tokenize(expr):
    tokens = []
    i = 0
    n = len(expr)
    while i < n:
        ch = expr[i]
        if ch.isspace():
            i += 1
        elif ch.isdigit() or ch == ".":
            start = i
            while i < n and (expr[i].isdigit() or expr[i] == "."):
                i += 1
            tokens.append(("num", float(expr[start:i])))
        elif ch.isalpha() or ch == "_":
            start = i
            while i < n and (expr[i].isalnum() or expr[i] == "_"):
                i += 1
            tokens.append(("name", expr[start:i]))
        elif ch in "+-*/()":
            tokens.append(("op", ch))
            i += 1
        else:
            raise SyntaxError(f"bad character {ch!r} at {i}")
    return tokens


def evaluate_rpn(tokens):
    stack = []
    for tok in tokens:
        try:
            stack.append(int(tok))
            continue
        except ValueError:
            pass
        b = stack.pop()
        a = stack.pop()
        if tok == "+":
            stack.append(a + b)
        elif tok == "-":
            stack.append(a - b)
        elif tok == "*":
            stack.append(a * b)
        elif tok == "/":
            stack.append(a // b if b != 0 else 0)
        else:
            raise ValueError(tok)
    return stack[-1] if stack else None


def parse_csv_line(line):
    fields = []
    field = []
    state = "start"
    for ch in line:
        if state == "start" or state == "plain":
            if ch == ",":
                fields.append("".join(field))
                field = []
                state = "start"
            elif ch == '"' and state == "start":
                state = "quoted"
            else:
                field.append(ch)
                state = "plain"
        elif state == "quoted":
            if ch == '"':
                state = "quote_in_quoted"
            else:
                field.append(ch)
        else:  # quote_in_quoted
            if ch == '"':
                field.append('"')
                state = "quoted"
            elif ch == ",":
                fields.append("".join(field))
                field = []
                state = "start"
            else:
                field.append(ch)
                state = "plain"
    fields.append("".join(field))
    return fields


def traffic_controller(events):
    state = "red"
    timer = 0
    log = []
    for ev in events:
        if ev == "tick":
            timer += 1
            if state == "green" and timer >= 3:
                state, timer = "yellow", 0
            elif state == "yellow" and timer >= 1:
                state, timer = "red", 0
            elif state == "red" and timer >= 4:
                state, timer = "green", 0
        elif ev == "emergency":
            state, timer = "red", 0
        elif isinstance(ev, tuple) and ev[0] == "walk" and ev[1] > 0:
            if state != "red":
                state, timer = "yellow", 0
        else:
            log.append(("ignored", ev))
        log.append(state)
    return log


def run_stack_vm(program, x):
    stack = [x]
    pc = 0
    steps = 0
    while pc < len(program) and steps < 10000:
        op, arg = program[pc]
        steps += 1
        if op == "push":
            stack.append(arg)
        elif op == "add":
            b = stack.pop()
            stack.append(stack.pop() + b)
        elif op == "mul":
            b = stack.pop()
            stack.append(stack.pop() * b)
        elif op == "dup":
            stack.append(stack[-1])
        elif op == "jz":
            if stack.pop() == 0:
                pc = arg
                continue
        elif op == "jmp":
            pc = arg
            continue
        elif op == "halt":
            break
        pc += 1
    return stack[-1], steps


# ---------------------------------------------------------------------------
# Lists, dicts, recursion
# ---------------------------------------------------------------------------


def merge(left, right):
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def merge_sort(xs):
    if len(xs) <= 1:
        return list(xs)
    mid = len(xs) // 2
    return merge(merge_sort(xs[:mid]), merge_sort(xs[mid:]))


def bubble_sort(xs):
    xs = list(xs)
    n = len(xs)
    while True:
        swapped = False
        for i in range(1, n):
            if xs[i - 1] > xs[i]:
                xs[i - 1], xs[i] = xs[i], xs[i - 1]
                swapped = True
        n -= 1
        if not swapped:
            break
    return xs


def flatten(nested):
    out = []
    for item in nested:
        if isinstance(item, (list, tuple)):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


def dedupe_preserve_order(items):
    seen = set()
    out = []
    for x in items:
        key = x.lower() if isinstance(x, str) else x
        if key in seen:
            continue
        seen.add(key)
        out.append(x)
    return out


def invert_index(docs):
    index = {}
    for doc_id, text in enumerate(docs):
        for word in set(text.lower().split()):
            if len(word) < 3:
                continue
            if word not in index:
                index[word] = []
            index[word].append(doc_id)
    common = {w: ids for w, ids in index.items() if len(ids) >= 2}
    return sorted(common.items())


def chunked_sums(xs, size):
    it = iter(xs)
    sums = []
    while chunk := [v for _, v in zip(range(size), it)]:
        sums.append(sum(chunk))
    return sums


def safe_ratios(pairs):
    ratios = []
    errors = 0
    for num, den in pairs:
        try:
            r = num / den
        except ZeroDivisionError:
            errors += 1
            r = float("inf") if num > 0 else 0.0
        except TypeError:
            errors += 1
            continue
        finally:
            pass
        ratios.append(round(r, 6))
    return ratios, errors


def parse_records(lines):
    records = []
    bad = 0
    for line in lines:
        parts = line.split("=")
        if len(parts) != 2:
            bad += 1
            continue
        key, value = parts[0].strip(), parts[1].strip()
        try:
            parsed = int(value)
        except ValueError:
            try:
                parsed = float(value)
            except ValueError:
                parsed = value
        records.append((key, parsed))
    return records, bad


def count_islands(grid):
    rows = len(grid)
    cols = len(grid[0]) if rows else 0
    seen = [[False] * cols for _ in range(rows)]
    islands = 0
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] != 1 or seen[r][c]:
                continue
            islands += 1
            stack = [(r, c)]
            seen[r][c] = True
            while stack:
                y, x = stack.pop()
                for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < rows and 0 <= nx < cols and grid[ny][nx] == 1 and not seen[ny][nx]:
                        seen[ny][nx] = True
                        stack.append((ny, nx))
    return islands


def bank_account_ledger(transactions, overdraft_limit):
    balance = 0
    rejected = []
    history = []
    for i, (kind, amount) in enumerate(transactions):
        if amount <= 0:
            rejected.append((i, "non-positive"))
            continue
        if kind == "deposit":
            balance += amount
        elif kind == "withdraw":
            if balance - amount < -overdraft_limit:
                rejected.append((i, "overdraft"))
                continue
            balance -= amount
        else:
            rejected.append((i, "unknown"))
            continue
        history.append(balance)
    return balance, rejected, max(history) if history else None


# ---------------------------------------------------------------------------
# Inputs (deterministic, built once at import)
# ---------------------------------------------------------------------------


def _lcg(seed, n, mod):
    out = []
    x = seed
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2147483648
        out.append((x >> 8) % mod)
    return out


_SORTED = sorted(set(_lcg(1, 400, 5000)))
_TEXT = (
    "The quick brown fox jumps over the lazy dog. The dog, being lazy, did not "
    "move; the fox was quick and brown. A quick movement of the enemy will "
    "jeopardize six gunboats! Pack my box with five dozen liquor jugs. "
) * 4
_GRID = [[r * 40 + c for c in range(40)] for r in range(40)]
_ISLANDS = [[1 if v % 3 == 0 else 0 for v in _lcg(r + 5, 24, 7)] for r in range(16)]
_RPN = ("0" + " 3 4 + 2 * 7 - 10 5 / + + 5 0 / -" * 12).split()
_VM_PROGRAM = [
    # countdown loop: acc = x; while acc != 0: acc = acc + (-1); result 0
    ("dup", None),   # 0
    ("jz", 5),       # 1
    ("push", -1),    # 2
    ("add", None),   # 3
    ("jmp", 0),      # 4
    ("push", 42),    # 5
    ("halt", None),  # 6
]
_EVENTS = (["tick"] * 5 + ["emergency", ("walk", 2), "tick", "noise", ("walk", 0)] + ["tick"] * 6) * 12
_CSV = 'alpha,"beta, with comma",gamma,"say ""hi""",,delta,42,"x"y,end' * 3
_WORDS = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act", "tac", "dog", "god",
          "odg", "bird", "drib", "fish", "shif", "hsif", "alone", "elbow", "below", "state",
          "taste", "night", "thing", "inch", "chin", "dusty", "study"] * 2
_TRANSACTIONS = [("deposit" if v % 3 else "withdraw", v * 10 - 50) for v in _lcg(9, 120, 40)] + [("refund", 5)]
_RECORDS = [f"key{i} = {v}" if i % 7 else f"broken line {i}" for i, v in
            enumerate(["12", "3.5", "abc", "-7", "1e3", "x=y", "0"] * 12)]
_DOCS = [_TEXT[i * 40:(i * 40) + 160] for i in range(12)]
_MATRIX_A = [[(i * 3 + j) % 11 - 5 for j in range(12)] for i in range(12)]
_MATRIX_B = [[(i + j * 5) % 7 - 3 for j in range(12)] for i in range(12)]
_NESTED = [1, [2, 3, [4, 5, (6, 7)], []], [[[8]], 9], (10, [11, [12, 13]])] * 10


CASES = [
    (collatz_steps, (871,)),
    (sieve_primes, (600,)),
    (count_primes_between, (1000, 1400)),
    (lcm_of_list, (list(range(1, 120)),)),
    (sum_sqrts, ([float(v) for v in range(1, 30)],)),
    (digital_root_stats, (_lcg(3, 120, 10 ** 9),)),
    (factorize_all, (list(range(2, 80)),)),
    (fib_recursive, (14,)),
    (pythagorean_triples, (40,)),
    (moving_average, ([float(v) for v in _lcg(4, 300, 1000)], 7)),
    (histogram, ([v / 10 for v in _lcg(5, 300, 1200)], 10, 5.0, 105.0)),
    (clamp_and_scale, ([v - 50 for v in _lcg(6, 250, 100)], -30, 30, 2)),
    (matrix_multiply, (_MATRIX_A, _MATRIX_B)),
    (knapsack, ([3, 4, 5, 9, 12, 4, 7, 2], [30, 50, 60, 100, 130, 45, 80, 15], 40)),
    (search_many, (_SORTED, list(range(0, 5000, 97)))),
    (find_pair_with_sum, (_SORTED[:150], _SORTED[90] + _SORTED[140])),
    (find_in_grid, (_GRID, 31 * 40 + 25)),
    (first_repeated_window, ([v % 4 for v in _lcg(7, 400, 1000)], 6)),
    (word_frequencies, (_TEXT,)),
    (caesar_cipher, (_TEXT[:400], 13)),
    (is_palindrome, ("A man, a plan, a canal: Panama! " * 8
                     + " ".join(reversed("A man, a plan, a canal: Panama! " * 8)),)),
    (run_length_encode, ("aaabccddddde" * 30 + "xyz" * 10,)),
    (count_letter_classes, (_TEXT[:500] + "12345 67890 ?!",)),
    (longest_common_prefix, (["interstellar", "internet", "interval", "internal", "interstate"] * 8,)),
    (levenshtein, ("kitten sitting on the mat", "sitting kitten at the mall")),
    (balanced_brackets, ("{[()()]}(([]){})[{}]" * 20,)),
    (group_anagrams, (_WORDS,)),
    (wrap_text, (_TEXT, 40)),
    (tokenize, ("3.5 * (alpha + 42) - beta_2 / (7 + x1) * 10.25 " * 6,)),
    (evaluate_rpn, (_RPN,)),
    (parse_csv_line, (_CSV,)),
    (traffic_controller, (_EVENTS,)),
    (run_stack_vm, (_VM_PROGRAM, 60)),
    (merge_sort, (_lcg(8, 200, 10000),)),
    (bubble_sort, (_lcg(10, 60, 1000),)),
    (flatten, (_NESTED,)),
    (dedupe_preserve_order, ((["Apple", "apple", "Banana", 3, 4, 3, "BANANA", "cherry"] * 20) + list(range(60)),)),
    (invert_index, (_DOCS,)),
    (chunked_sums, (list(range(500)), 7)),
    (safe_ratios, ([(a, b % 5) for a, b in zip(range(100), _lcg(11, 100, 50))] + [(1, None), (None, 2)],)),
    (parse_records, (_RECORDS,)),
    (count_islands, (_ISLANDS,)),
    (bank_account_ledger, (_TRANSACTIONS, 100)),
]


def _validate():
    """Run every case in plain Python: deterministic, no argument mutation,
    and per-call time inside the intended range."""
    import copy
    import timeit

    problems = 0
    names = set()
    print(f"{'function':28s} {'time/call':>12s}  result")
    for fn, args in CASES:
        if fn.__name__ in names:
            print(f"{fn.__name__}: duplicate case")
            problems += 1
        names.add(fn.__name__)
        before = copy.deepcopy(args)
        try:
            first = fn(*args)
            second = fn(*args)
        except Exception as e:  # noqa: BLE001 - report and continue
            print(f"{fn.__name__:28s} FAILED: {type(e).__name__}: {e}")
            problems += 1
            continue
        if first != second:
            print(f"{fn.__name__:28s} not deterministic")
            problems += 1
        if args != before:
            print(f"{fn.__name__:28s} mutated its arguments")
            problems += 1
        timer = timeit.Timer("fn(*args)", globals={"fn": fn, "args": args})
        number, _ = timer.autorange()
        per_call = min(timer.repeat(repeat=3, number=number)) / number
        flag = ""
        if not 5e-6 <= per_call <= 2e-3:
            flag = "  <-- outside 5 us .. 2 ms"
            problems += 1
        shown = repr(first)
        if len(shown) > 50:
            shown = shown[:47] + "..."
        print(f"{fn.__name__:28s} {per_call * 1e6:9.1f} us  {shown}{flag}")
    print(f"\n{len(CASES)} cases, {problems} problem(s)")
    return problems


if __name__ == "__main__":
    raise SystemExit(1 if _validate() else 0)
