"""Benchmark tables go into the docs from here, never by hand.

`publish(name, text)` prints `text` and writes it into `docs/performance.md`
between the markers `<!-- table:NAME -->` and `<!-- /table:NAME -->`,
replacing what stood there; a table the page does not have yet is added at
its end. The README shows a table too when it holds that table's markers
(it is never added there). `--no-write` on a script (passed here as
`write=False`) only prints.
"""

import contextlib
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "performance.md")
README = os.path.join(ROOT, "README.md")

__all__ = ["PAGE", "markdown", "publish", "section"]


def markdown(header, rows, align=None):
    """A Markdown table: `header` is a list of column titles, `rows` lists of
    cells (converted with str), `align` a string of 'l'/'r' per column."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def publish(name, text, write=True, page=PAGE, also=(README,)):
    """Prints `text`; with `write`, puts it into `page` between the markers of
    `name`, and into each page of `also` that already holds those markers."""
    print(text)
    if not write:
        return
    _write(page, name, text, add=True)
    for other in also:
        _write(other, name, text, add=False)


def _write(page, name, text, add):
    start, end = f"<!-- table:{name} -->", f"<!-- /table:{name} -->"
    block = f"{start}\n{text.rstrip()}\n{end}"
    try:
        with open(page, encoding="utf-8") as f:
            content = f.read()
    except FileNotFoundError:
        if not add:
            return
        content = "# Performance\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if pattern.search(content):
        content = pattern.sub(lambda _: block, content)
    elif add:
        content = content.rstrip("\n") + "\n\n" + block + "\n"
    else:
        return
    os.makedirs(os.path.dirname(page), exist_ok=True)
    with open(page, "w", encoding="utf-8") as f:
        f.write(content)


@contextlib.contextmanager
def section(name, write=True, page=PAGE):
    """Publishes what the block prints as the table `name`. If the block
    raises, what it printed goes to stderr and nothing is written."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            yield
    except BaseException:
        sys.stderr.write(buffer.getvalue())
        raise
    publish(name, buffer.getvalue(), write, page)
