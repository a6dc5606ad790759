"""Recipes: one script per task wiring data -> model -> fit -> evaluate -> export.

`python -m recipes` runs every recipe on its built-in demo data, verifies the exports
and writes the TF Serving deployment files (see `recipes/__main__.py`).
"""

import os as _os

# The recipes import what they use: `import zoo` here skips registering every model
# (which imports TensorFlow), so a recipe's `--help` answers at once.
_lazy = _os.environ.get("ZOO_LAZY_IMPORT")
_os.environ["ZOO_LAZY_IMPORT"] = "1"
try:
    import zoo  # noqa: F401
finally:
    if _lazy is None:
        del _os.environ["ZOO_LAZY_IMPORT"]
    else:
        _os.environ["ZOO_LAZY_IMPORT"] = _lazy
