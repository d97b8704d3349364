import os
import sys

# Make the repository root importable so tests can `import tools...` and
# `import tests.cases...`. It is appended, not prepended, so that `autograph`
# itself is the installed package, as a user gets it.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.append(_ROOT)
