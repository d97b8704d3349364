"""Every ```python block of the README and of docs/*.md runs as written.

The blocks of one page run in order in one namespace, as a reader would
type them. Each block is compiled with the page's name and the block's own
line numbers, and the page is put into `linecache`, so autograph finds the
source of the functions a block defines and errors name the page's lines.

A python block followed by a plain ``` block, with nothing but blank lines
or HTML table tags (`</td><td>`, for a side-by-side view) between, shows
output: what
the python block prints, and, if it raises, the exception's last line as
Python prints it (`ExceptionType: message`), must equal that block. A python
block that raises without such a block fails the test.
"""

import contextlib
import io
import linecache
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
PAGES = ["README.md"] + sorted(
    os.path.join("docs", name) for name in os.listdir(DOCS) if name.endswith(".md"))

_FENCE = re.compile(r"^```(\w*)\s*$")
_TABLE_TAGS = re.compile(r"^(\s*</?(table|tr|td|th)>\s*)*$")


def fenced_blocks(lines):
    """[(language, first code line number (1-based), code, end line number)]"""
    blocks, i = [], 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        language, start = match.group(1), i + 1
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            i += 1
        blocks.append((language, start + 1, "".join(lines[start:i]), i + 1))
        i += 1
    return blocks


def examples(lines):
    """[(start, code, output)] for each python block: its first line number,
    its code, and the plain block that follows it with nothing but blank
    lines and table tags between, as (text, first, end) with the line
    indices of its text (lines[first:end]), or None."""
    blocks = fenced_blocks(lines)
    found = []
    for k, (language, start, code, end) in enumerate(blocks):
        if language != "python":
            continue
        output = None
        if k + 1 < len(blocks):
            next_language, next_start, next_code, next_end = blocks[k + 1]
            between = lines[end:next_start - 2]
            if next_language == "" and all(_TABLE_TAGS.match(line) for line in between):
                output = (next_code, next_start - 1, next_end - 1)
        found.append((start, code, output))
    return found


def python_view(lines):
    """The page as linecache gets it: the lines of python blocks as they are,
    every other line blank. Line numbers stay the page's, and tools that
    tokenize a function's file (inspect, dynamo) see Python."""
    view = ["\n"] * len(lines)
    for language, start, _code, end in fenced_blocks(lines):
        if language == "python":
            view[start - 1:end - 1] = lines[start - 1:end - 1]
    return view


def register(page, text):
    """Puts `page` into linecache (its python view) and returns its lines."""
    lines = text.splitlines(keepends=True)
    linecache.cache[page] = (len(text), None, python_view(lines), page)
    return lines


def shown(error):
    """The exception's line as Python prints it, without notes that
    libraries add (JAX's traceback filtering adds one)."""
    cls = type(error)
    name = cls.__qualname__ if cls.__module__ in ("builtins", "__main__") else f"{cls.__module__}.{cls.__qualname__}"
    text = str(error)
    return f"{name}: {text}\n" if text else f"{name}\n"


def run_block(code, start, filename, namespace):
    compiled = compile("\n" * (start - 1) + code, filename, "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compiled, namespace)
        except Exception as error:  # noqa: BLE001 - shown, or the test fails below
            return out.getvalue(), error
    return out.getvalue(), None


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        text = f.read()
    lines = register(page, text)
    namespace = {"__name__": "docs." + os.path.splitext(os.path.basename(page))[0]}
    for start, code, output in examples(lines):
        printed, error = run_block(code, start, page, namespace)
        if error is not None:
            if output is None:
                raise AssertionError(f"{page}:{start}: the block raised {shown(error)}") from error
            printed += shown(error)
        if output is not None:
            assert printed.rstrip() == output[0].rstrip(), (
                f"{page}:{start}: the output differs from the block after it "
                "(python -m tools.docs_output PAGE rewrites it; read the diff)")


def test_fenced_blocks_parse():
    lines = ["text\n", "```python\n", "print(1)\n", "```\n", "\n", "```\n", "1\n", "```\n",
             "```python\n", "x = 2\n", "```\n", "between\n", "```\n", "2\n", "```\n"]
    assert examples(lines) == [(3, "print(1)\n", ("1\n", 6, 7)), (10, "x = 2\n", None)]


def test_readme_links_resolve_and_it_stays_short():
    # The README is the front page: the guides hold the detail (at most 200
    # lines, issue 31), and each relative link of it names a page that exists,
    # with a heading for its anchor.
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 200
    for target, anchor in re.findall(r"\]\(((?:docs|examples)/[^)#]+)(?:#([^)]+))?\)", text):
        path = os.path.join(ROOT, target)
        assert os.path.exists(path), target
        if anchor:
            with open(path, encoding="utf-8") as f:
                headings = [line.lstrip("#").strip() for line in f if line.startswith("#")]
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{target}#{anchor}"
