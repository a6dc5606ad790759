"""The export manifest: `VERSION/assets.extra/manifest.json`."""

import datetime
import json
import os
import platform

from tensorflow.core.protobuf import saved_model_pb2

MANIFEST_PATH = os.path.join("assets.extra", "manifest.json")
WARMUP_PATH = os.path.join("assets.extra", "tf_serving_warmup_requests")
FORMAT_VERSION = 1


def dtype_name(enum_value):
    """`types_pb2.DT_FLOAT` -> `"float32"` (TensorFlow's numpy-style names)."""
    import tensorflow as tf

    return tf.dtypes.as_dtype(enum_value).name


def _shape(tensor_shape_proto):
    if tensor_shape_proto.unknown_rank:
        return None
    return [int(d.size) for d in tensor_shape_proto.dim]


def read_signatures(version_dir):
    """Reads the SignatureDefs of a SavedModel's `serve` MetaGraph from saved_model.pb.

    Returns:
        `{signature: {"method_name": str, "inputs": {name: {"dtype", "shape",
        "tensor"}}, "outputs": {...}}}`; shapes use -1 for unknown dimensions and
        None for unknown rank.
    """
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(version_dir, "saved_model.pb"), "rb") as f:
        saved_model.ParseFromString(f.read())
    meta_graphs = [
        m for m in saved_model.meta_graphs if "serve" in m.meta_info_def.tags
    ]
    if not meta_graphs:
        raise ValueError(f"{version_dir}: no MetaGraph tagged 'serve'.")
    result = {}
    for name, sig in sorted(meta_graphs[0].signature_def.items()):
        if name.startswith("__"):
            continue
        result[name] = {
            "method_name": sig.method_name,
            "inputs": {
                k: {
                    "dtype": dtype_name(v.dtype),
                    "shape": _shape(v.tensor_shape),
                    "tensor": v.name,
                }
                for k, v in sorted(sig.inputs.items())
            },
            "outputs": {
                k: {
                    "dtype": dtype_name(v.dtype),
                    "shape": _shape(v.tensor_shape),
                    "tensor": v.name,
                }
                for k, v in sorted(sig.outputs.items())
            },
        }
    return result


def library_versions():
    """Versions of the libraries an export depends on."""
    import keras
    import tensorflow as tf
    import tensorflow_text

    import zoo

    return {
        "tensorflow": tf.__version__,
        "tensorflow_text": tensorflow_text.__version__,
        "keras": keras.__version__,
        "attention_zoo": zoo.__version__,
        "python": platform.python_version(),
    }


def build_manifest(
    name,
    signatures,
    metadata=None,
    keras_check=None,
    warmup=None,
    keras_file=None,
    limits=None,
):
    """Assembles the manifest dict (see `export_model` for the fields).

    `limits` (e.g. `{"max_batch_size": 256}`) and `metadata["limits"]` are merged into
    the top-level `limits`.
    """
    metadata = dict(metadata or {})
    merged_limits = {**dict(metadata.pop("limits", None) or {}), **dict(limits or {})}
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "recipe": metadata.pop("recipe", None),
        "data": metadata.pop("data", None),
        "metrics": metadata.pop("metrics", {}),
        "versions": library_versions(),
        "default_signature": "serving_default",
        "limits": merged_limits,
        "signatures": signatures,
        "keras_model": keras_file,
        "keras_check": keras_check,
        "warmup": {
            sig: len(next(iter(inputs.values())))
            for sig, inputs in (warmup or {}).items()
        },
    }
    if metadata:
        manifest["metadata"] = metadata
    return manifest


def write_manifest(version_dir, manifest):
    path = os.path.join(version_dir, MANIFEST_PATH)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=False, default=_json_default)
        f.write("\n")
    return path


def load_manifest(version_dir):
    """Reads `VERSION/assets.extra/manifest.json`."""
    path = os.path.join(os.fspath(version_dir), MANIFEST_PATH)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: no export manifest (not a zoo export?)."
        ) from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: invalid JSON ({e.msg}).") from None


def _json_default(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"Not JSON serializable: {type(value).__name__}")
