"""SavedModel export in TF Serving's layout, warm-up requests, manifest, verification.

Public API (imported lazily, so `python -m zoo.export.verify` starts with TensorFlow and
tensorflow-text only, and `zoo predict` reads `zoo.export.paths` before TensorFlow):

- `ServingModule`: the `tf.Module` holding a task's serving signatures and the resources they use.
- `export_model(module, name, signatures, ...)`: writes `saved_models/NAME/VERSION/`.
- `load_manifest(version_dir)`: the manifest of an export.
"""

_EXPORTS = {
    "ServingModule": "zoo.export.serving_module",
    "export_model": "zoo.export.export",
    "load_manifest": "zoo.export.manifest",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'zoo.export' has no attribute {name!r}")
