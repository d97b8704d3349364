"""Rewrites the output blocks of a docs page with what its python blocks
print now, for when a change of output is intended:

    python -m tools.docs_output docs/tracing.md [README.md ...]

It runs the page the way `tests/test_docs.py` does (blocks in order, one
namespace) and replaces each plain block that shows a python block's output.
Read the diff before committing it: the test exists so that output changes
are seen.
"""

import os
import sys

from tests.test_docs import examples, register, run_block, shown


def update(page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    lines = register(page, text)
    namespace = {"__name__": "docs." + os.path.splitext(os.path.basename(page))[0]}
    replacements = []
    for start, code, output in examples(lines):
        printed, error = run_block(code, start, page, namespace)
        if error is not None:
            printed += shown(error)
        if output is None:
            if error is not None:
                print(f"{page}:{start}: raised {shown(error).strip()} and shows no output block",
                      file=sys.stderr)
            continue
        _, first, end = output
        replacements.append((first, end, printed))
    for first, last, printed in reversed(replacements):
        lines[first:last] = [printed.rstrip("\n") + "\n"]
    with open(page, "w", encoding="utf-8") as f:
        f.write("".join(lines))


if __name__ == "__main__":
    for page in sys.argv[1:]:
        update(page)
