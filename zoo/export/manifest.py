"""The export manifest (`VERSION/assets.extra/manifest.json`) and the checks of the
SavedModel files it describes (`read_saved_model`, `check_version_files`).

Reading a manifest and its limits (`load_manifest`, `batch_limits`, `byte_limits`)
needs no TensorFlow: `zoo predict` checks them before loading the export."""

import datetime
import json
import os
import platform

from zoo.errors import DataError

MANIFEST_PATH = os.path.join("assets.extra", "manifest.json")
MAX_MANIFEST_BYTES = 16 << 20  # a manifest is a few KiB
WARMUP_PATH = os.path.join("assets.extra", "tf_serving_warmup_requests")
FORMAT_VERSION = 1


def read_saved_model(version_dir):
    """The `SavedModel` proto of `version_dir/saved_model.pb`.

    Raises:
        zoo.errors.DataError: a file that cannot be read or does not parse.
    """
    from google.protobuf.message import DecodeError
    from tensorflow.core.protobuf import saved_model_pb2

    path = os.path.join(os.fspath(version_dir), "saved_model.pb")
    saved_model = saved_model_pb2.SavedModel()
    try:
        with open(path, "rb") as f:
            saved_model.ParseFromString(f.read())
    except FileNotFoundError:
        raise DataError("no saved_model.pb (an interrupted copy?)", path=path) from None
    except (OSError, DecodeError, RuntimeWarning) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise DataError(
            f"does not parse as a SavedModel ({reason}); export it again", path=path
        ) from None
    if not saved_model.meta_graphs:
        raise DataError("holds no MetaGraph (not a SavedModel?)", path=path)
    return saved_model


def check_version_files(version_dir):
    """Checks that TF Serving can load the version's files (`zoo deploy` and the
    verifier check a version so before TF Serving would load it): `saved_model.pb`
    parses (no file of the version is a named pipe or a device, which would never
    end), every variable the index lists reads back whole from its data file (a
    SavedModel whose graph has variables but no `variables/variables.index` loads
    in TF Serving with no variable restored, then fails every request), and the
    warm-up file parses.

    Returns:
        The warm-up requests (`warmup.read_warmup`), or None without a warm-up file.

    Raises:
        zoo.errors.DataError: one line naming the file and the problem.
    """
    import textwrap

    import tensorflow as tf

    from zoo.export.paths import regular_files_only
    from zoo.export.warmup import read_warmup

    saved_model = read_saved_model(regular_files_only(version_dir))
    folder = os.path.join(os.fspath(version_dir), "variables")
    index = os.path.join(folder, "variables.index")
    if not os.path.exists(index):
        data = os.path.isdir(folder) and any(
            n.startswith("variables.data") for n in os.listdir(folder)
        )
        nodes = [n for m in saved_model.meta_graphs for n in m.object_graph_def.nodes]
        if data or any(n.HasField("variable") for n in nodes):
            raise DataError(
                "missing, yet the graph has variables: TF Serving would restore "
                "none; export it again",
                path=index,
            )
    else:
        try:
            reader = tf.train.load_checkpoint(index[: -len(".index")])
            for key in sorted(reader.get_variable_to_shape_map()):
                reader.get_tensor(key)
        except (tf.errors.OpError, ValueError, IndexError, RuntimeError, OSError) as e:
            text = str(getattr(e, "message", e))
            text = textwrap.shorten(text, 300, placeholder="...") or type(e).__name__
            raise DataError(
                f"the variables do not read back ({text}); export it again", path=folder
            ) from None
    path = os.path.join(version_dir, WARMUP_PATH)
    return list(read_warmup(path)) if os.path.exists(path) else None


def read_signatures(version_dir):
    """Reads the SignatureDefs of a SavedModel's `serve` MetaGraph from saved_model.pb.

    Returns:
        `{signature: {"method_name": str, "inputs": {name: {"dtype", "shape",
        "tensor"}}, "outputs": {...}}}`; shapes use -1 for unknown dimensions and
        None for unknown rank.

    Raises:
        zoo.errors.DataError: `saved_model.pb` does not parse or has no `serve`
            MetaGraph.
    """
    meta_graphs = [
        m
        for m in read_saved_model(version_dir).meta_graphs
        if "serve" in m.meta_info_def.tags
    ]
    if not meta_graphs:
        raise DataError(
            "no MetaGraph tagged 'serve'",
            path=os.path.join(version_dir, "saved_model.pb"),
        )
    return {
        name: {
            "method_name": sig.method_name,
            "inputs": _tensor_info(sig.inputs),
            "outputs": _tensor_info(sig.outputs),
        }
        for name, sig in sorted(meta_graphs[0].signature_def.items())
        if not name.startswith("__")
    }


def _tensor_info(tensors):
    """`{name: {"dtype", "shape", "tensor"}}` of a SignatureDef's TensorInfo map."""
    import tensorflow as tf

    return {
        k: {
            "dtype": tf.dtypes.as_dtype(v.dtype).name,
            "shape": None
            if v.tensor_shape.unknown_rank
            else [int(d.size) for d in v.tensor_shape.dim],
            "tensor": v.name,
        }
        for k, v in sorted(tensors.items())
    }


def build_manifest(name, signatures, metadata, keras_check, warmup, keras_file, limits):
    """Assembles the manifest dict (see `export_model` for the fields).

    `limits` (e.g. `{"max_batch_size": 256}`) and `metadata["limits"]` are merged into
    the top-level `limits`.
    """
    import keras
    import tensorflow as tf
    import tensorflow_text

    import zoo

    metadata = dict(metadata or {})
    now = datetime.datetime.now(datetime.timezone.utc)
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "created": now.isoformat(timespec="seconds"),
        "recipe": metadata.pop("recipe", None),
        "data": metadata.pop("data", None),
        "metrics": metadata.pop("metrics", {}),
        "versions": {  # the libraries the export depends on
            "tensorflow": tf.__version__,
            "tensorflow_text": tensorflow_text.__version__,
            "keras": keras.__version__,
            "attention_zoo": zoo.__version__,
            "python": platform.python_version(),
        },
        "default_signature": "serving_default",
        "limits": {**(metadata.pop("limits", None) or {}), **limits},
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
        json.dump(manifest, f, indent=2, default=_json_default)
        f.write("\n")
    return path


class MissingManifestError(DataError, FileNotFoundError):
    """A version folder without `assets.extra/manifest.json`."""


def load_manifest(version_dir):
    """Reads `VERSION/assets.extra/manifest.json`.

    Raises:
        MissingManifestError: no manifest (a `FileNotFoundError`).
        zoo.errors.DataError: a file that is not a JSON object (file and line).
    """
    path = os.path.join(os.fspath(version_dir), MANIFEST_PATH)
    try:
        if os.path.exists(path) and not os.path.isfile(path):  # a pipe would wait
            raise DataError("is not a file (a folder, a pipe, a device)", path=path)
        with open(path, "rb") as f:  # bounded
            data = f.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise DataError(
                f"larger than {MAX_MANIFEST_BYTES >> 20} MiB: not an export manifest",
                path=path,
            )
        manifest = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise MissingManifestError(
            "no export manifest (not a zoo export?)", path=path
        ) from None
    except json.JSONDecodeError as e:
        raise DataError(f"invalid JSON ({e.msg})", path=path, line=e.lineno) from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read the manifest ({e})", path=path) from None
    except RecursionError:
        raise DataError("the manifest's JSON nests too deeply", path=path) from None
    if not isinstance(manifest, dict):
        raise DataError("the manifest is not a JSON object", path=path)
    return manifest


def batch_limits(manifest, version_dir):
    """`{signature: max_batch_size or None}` as the manifest records them: each
    signature's own `max_batch_size` (null: no limit), else `limits.max_batch_size`.

    Raises:
        zoo.errors.DataError: a limit that is neither null nor a positive integer,
            one line naming the manifest and the field.
    """
    path = os.path.join(os.fspath(version_dir), MANIFEST_PATH)
    limits = _mapping(manifest, "limits", path)
    default = _limit(limits.get("max_batch_size"), "limits.max_batch_size", path)
    result = {}
    for signature, info in _mapping(manifest, "signatures", path).items():
        if not isinstance(info, dict):
            raise DataError(f"signatures.{signature} must be an object", path=path)
        field = f"signatures.{signature}.max_batch_size"
        result[signature] = _limit(info.get("max_batch_size", default), field, path)
    return result


def byte_limits(manifest, version_dir):
    """`{key: bytes}` of the manifest's `limits.max_*_bytes` (e.g.
    `max_story_bytes`, the longest input the signature takes).

    Raises:
        zoo.errors.DataError: a limit that is neither null nor a positive integer.
    """
    path = os.path.join(os.fspath(version_dir), MANIFEST_PATH)
    found = {
        key: _limit(value, f"limits.{key}", path)
        for key, value in _mapping(manifest, "limits", path).items()
        if key.startswith("max_") and key.endswith("_bytes")
    }
    return {key: value for key, value in found.items() if value is not None}


def _mapping(manifest, key, path):
    value = manifest.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(f"{key} must be an object. Received: {value!r}", path=path)
    return value


def _limit(value, field, path):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(
            f"{field} must be a positive integer or null. Received: {value!r}",
            path=path,
        )
    if value >= 1 << 63:  # TF Serving's configs hold int64
        raise DataError(f"{field} is over 2**63 - 1. Received: {value}", path=path)
    return value


def _json_default(value):
    if hasattr(value, "tolist"):  # NumPy scalars and arrays
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"Not JSON serializable: {type(value).__name__}")
