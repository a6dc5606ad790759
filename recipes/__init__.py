"""Recipes: one script per task wiring data -> model -> fit -> evaluate -> export.

`python -m recipes` runs every recipe on its built-in demo data, verifies the exports
and writes the TF Serving deployment files (see `recipes/__main__.py`).
"""
