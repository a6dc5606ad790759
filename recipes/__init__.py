"""Recipes: one script per task wiring data -> model -> fit -> evaluate -> export.

`python -m zoo.recipes` runs every recipe on its built-in demo data, verifies the
exports and writes the TF Serving deployment files (see `zoo/recipes/__main__.py`).
Started with `python -m zoo.recipes...`, `import zoo` registers no models
(`zoo/__init__.py`): a recipe's `--help` answers without importing TensorFlow.
"""
