"""`export_model`: a SavedModel in TF Serving's layout, written atomically.

Layout (see saved_models/README.md):

```
saved_models/NAME/VERSION/            saved_model.pb, variables/, assets/ (vocabularies)
saved_models/NAME/VERSION/assets.extra/manifest.json
saved_models/NAME/VERSION/assets.extra/tf_serving_warmup_requests
saved_models/NAME/VERSION.keras       the Keras model, for reuse in Keras apps
```

VERSION is the next integer. Everything is written to a hidden temporary folder beside
the target (`NAME/.tmp-export-*`, which TF Serving ignores) and then renamed into
place with `os.rename`, which is atomic and fails when the target exists: a
concurrent exporter that won the same number makes this one take the next. If the
export fails midway, the temporary files are removed and nothing is left behind; what
a killed export left (its writer's pid gone, or older than a day) is removed by the
next export of that name (`remove_stale_staging`).

The temporary folder is created with the mode `tf.saved_model.save` gives the folders
it creates (0o755 less the umask), not `tempfile.mkdtemp`'s private 0o700, so a TF
Serving process running as another user can read the version once it is renamed into
place.
"""

import os
import re
import secrets
import shutil

import tensorflow as tf

from zoo.errors import DiskFullError, is_disk_full
from zoo.export import manifest as manifest_lib
from zoo.export import warmup as warmup_lib
from zoo.export.paths import (  # noqa: F401  (public names of this module too)
    MODEL_NAME_RE,
    NoVersionError,
    check_model_name,
    latest_version,
    list_versions,
    resolve_version_dir,
)
from zoo.export.serving_module import BATCH_CHECK_SCOPE

_NAME_RE = MODEL_NAME_RE  # the one name check, shared with `zoo deploy`


def _concrete(name, fn):
    if isinstance(fn, tf.types.experimental.ConcreteFunction):
        return fn
    if isinstance(fn, tf.types.experimental.GenericFunction):
        if fn.input_signature is None:
            raise ValueError(
                f"Signature {name!r} must be a tf.function with an input_signature "
                f"(or a concrete function). Received: {fn!r} without input_signature"
            )
        return fn.get_concrete_function()  # tracing errors propagate unchanged
    raise ValueError(
        f"Signature {name!r} must be a tf.function or a concrete function. "
        f"Received: {fn!r}"
    )


def _check_outputs(name, concrete):
    outputs = concrete.structured_outputs
    if not isinstance(outputs, dict) or not outputs:
        raise ValueError(
            f"Signature {name!r} must return a non-empty dict of named outputs. "
            f"Received: {type(outputs).__name__}"
        )


def _input_dtypes(concrete):
    args, kwargs = concrete.structured_input_signature
    specs = tf.nest.flatten((args, kwargs))
    return {spec.name: spec.dtype for spec in specs}


def export_model(
    module,
    name,
    signatures,
    base_dir="saved_models",
    keras_model=None,
    warmup=None,
    keras_check=None,
    metadata=None,
    extra_files=None,
):
    """Exports a `ServingModule` as `base_dir/name/VERSION/` (next integer version).

    Args:
        module: a `tf.Module` (normally a `zoo.export.ServingModule`) that tracks the
            Keras model and the preprocessing resources.
        name: the model name, `[A-Za-z0-9][A-Za-z0-9_.-]*`.
        signatures: `{signature_name: tf.function with input_signature}`; must hold
            `"serving_default"`. Each function returns a dict of named outputs.
            Input names come from the `tf.TensorSpec` names.
        base_dir: the export root (TF Serving's model base path parent).
        keras_model: optional `keras.Model`, also saved as `base_dir/name/VERSION.keras`.
        warmup: optional `{signature: {input_name: [values]}}`, real example
            inputs (one batch per signature) written as TF Serving warm-up requests.
            The first entry of `keras_check`'s signature feeds the Keras check.
        keras_check: optional `{"signature": str, "outputs": {serving_output:
            keras_output_name_or_index}, "atol": float, "rtol": float}` telling the
            verifier to run the `preprocess` signature, feed its outputs to the Keras
            model and compare with the serving signature's outputs. Use
            `{"skipped": "reason"}` when no direct comparison exists (e.g. beam search).
        metadata: optional dict with `"recipe"`, `"data"`, `"metrics"`, `"limits"`
            and any other JSON-serialisable entries for the manifest. `"limits"`
            (the model's input bounds) lands in the manifest's top-level `limits`,
            beside `max_batch_size` (see `ServingModule.check_batch`).
        extra_files: optional `{suffix: write(path)}`: files written beside the
            version folder as `VERSION<suffix>` (e.g. `".encoder.keras"`). Each
            `write` gets a temporary path ending in `suffix`; the files are renamed
            into place with the version folder and removed if the export fails.

    Returns:
        The path of the new version folder (str).

    Raises:
        ValueError: for a bad name, a missing `serving_default`, signatures without
            input signatures or dict outputs, bad warm-up inputs or `keras_check`.
    """
    check_model_name(name)
    if not isinstance(signatures, dict) or "serving_default" not in signatures:
        raise ValueError(
            "`signatures` must be a dict holding 'serving_default'. "
            f"Received: signatures={sorted(signatures) if isinstance(signatures, dict) else signatures!r}"
        )
    concrete = {k: _concrete(k, fn) for k, fn in signatures.items()}
    for k, fn in concrete.items():
        _check_outputs(k, fn)
    input_specs = {k: _input_dtypes(fn) for k, fn in concrete.items()}
    keras_check = _check_keras_check(keras_check, concrete, warmup, keras_model)
    logs = warmup_lib.build_requests(name, warmup or {}, input_specs)
    batch_limits = _batch_limits(module, concrete)

    extras = dict(extra_files or {})
    for suffix in extras:
        if not isinstance(suffix, str) or not suffix.startswith(".") or "/" in suffix:
            raise ValueError(
                "`extra_files` keys are suffixes like '.encoder.keras'. "
                f"Received: {suffix!r}"
            )
    if keras_model is not None:
        extras = {".keras": keras_model.save, **extras}

    model_dir = os.path.join(os.fspath(base_dir), name)
    os.makedirs(model_dir, exist_ok=True)
    remove_stale_staging(model_dir)
    tmp_dir = _make_staging_dir(model_dir)
    try:
        _track_variables(module, concrete.values())
        tf.saved_model.save(module, tmp_dir, signatures=concrete)
        if logs:
            warmup_lib.write_warmup(
                os.path.join(tmp_dir, manifest_lib.WARMUP_PATH), logs
            )
        signature_info = manifest_lib.read_signatures(tmp_dir)
        for key, limit in batch_limits.items():
            signature_info[key]["max_batch_size"] = limit
        manifest = manifest_lib.build_manifest(
            name,
            signature_info,
            metadata=metadata,
            keras_check=keras_check,
            warmup=warmup,
            keras_file="../<VERSION>.keras" if keras_model is not None else None,
            limits={"max_batch_size": _common_limit(batch_limits)},
        )
        manifest_lib.write_manifest(tmp_dir, manifest)
        for suffix, write in extras.items():
            write(tmp_dir + suffix)
        version_dir = _rename_to_next_version(tmp_dir, model_dir, list(extras))
        for suffix in extras:
            os.rename(tmp_dir + suffix, version_dir + suffix)
    except BaseException as e:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        for suffix in extras:
            if os.path.exists(tmp_dir + suffix):
                os.remove(tmp_dir + suffix)
        if is_disk_full(e):
            reason = " ".join(str(e).split())
            raise DiskFullError(
                f"{model_dir}: the disk is full, the export was not written "
                f"({reason[-160:]}); nothing of it is left and the earlier versions "
                "are untouched"
            ) from None
        raise
    return version_dir


def _batch_limits(module, concrete):
    """`{signature: max_batch_size or None}`: the module's limit for each signature
    whose graph (or a function it calls) holds `ServingModule.check_batch`'s check."""
    limit = getattr(module, "max_batch_size", None)
    return {
        key: limit if limit is not None and _calls_check_batch(fn) else None
        for key, fn in concrete.items()
    }


def _calls_check_batch(concrete):
    graph_def = concrete.graph.as_graph_def()
    nodes = list(graph_def.node)
    for function in graph_def.library.function:
        nodes.extend(function.node_def)
    marker = f"{BATCH_CHECK_SCOPE}/max_batch_size"
    return any(node.op == "Assert" and marker in node.name for node in nodes)


def _common_limit(batch_limits):
    """The limit when every signature enforces the same one, else None."""
    limits = set(batch_limits.values())
    return limits.pop() if len(limits) == 1 else None


STAGING_PREFIX = ".tmp-export-"
DIR_MODE = 0o755  # what TensorFlow's file system gives the folders it creates
STALE_SECONDS = 24 * 3600
# .tmp-export-<host hash>-<pid>-<token>[<suffix>]; older exports wrote
# .tmp-export-<token>[<suffix>].
_STAGING_RE = re.compile(
    re.escape(STAGING_PREFIX) + r"(?:(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-)?[0-9a-f]+"
)


def _host_tag():
    import hashlib
    import socket

    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _make_staging_dir(model_dir):
    """A new, empty hidden folder in `model_dir`, mode `DIR_MODE` less the umask.

    Like `tempfile.mkdtemp` (a random name, `os.mkdir` fails rather than reuse an
    existing folder) but readable by the users the umask allows. The name holds a
    hash of the host name and the writer's pid, so `remove_stale_staging` can tell a
    folder whose writer has gone.
    """
    stem = f"{STAGING_PREFIX}{_host_tag()}-{os.getpid()}-"
    for _ in range(100):
        path = os.path.join(model_dir, stem + secrets.token_hex(6))
        try:
            os.mkdir(path, DIR_MODE)  # the umask applies
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"{model_dir}: could not create a staging folder.")


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def remove_stale_staging(model_dir, max_age=STALE_SECONDS, now=None):
    """Removes what killed exports left in `model_dir`: `.tmp-export-*` folders and
    their side files (`.tmp-export-*.keras`) older than `max_age` seconds, or written
    on this host by a process that no longer runs.

    A running export's staging folder is left alone: its writer's pid is alive and,
    on another host sharing the folder, it is younger than `max_age`.

    Returns:
        The paths removed.
    """
    import time

    now = time.time() if now is None else now
    host = _host_tag()
    removed = []
    try:
        names = sorted(os.listdir(model_dir))
    except FileNotFoundError:
        return removed
    for name in names:
        match = _STAGING_RE.match(name)
        if match is None:
            continue
        path = os.path.join(model_dir, name)
        try:
            age = now - os.lstat(path).st_mtime
        except FileNotFoundError:
            continue  # its writer finished meanwhile
        gone = (
            match["pid"] is not None
            and match["host"] == host
            and not _pid_alive(int(match["pid"]))
        )
        if not gone and age <= max_age:
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.remove(path)
            except FileNotFoundError:
                continue
        removed.append(path)
    return removed


def _track_variables(module, concrete_functions):
    if hasattr(module, "track_variables_of"):
        return module.track_variables_of(concrete_functions)
    # A plain tf.Module: track the variables the same way.
    seen, variables = set(), []
    for fn in concrete_functions:
        for v in list(fn.trainable_variables) + list(fn.variables):
            if id(v) not in seen:
                seen.add(id(v))
                variables.append(v)
    module._serving_variables = variables
    return variables


def _rename_to_next_version(tmp_dir, model_dir, suffixes=(".keras",)):
    version = max(latest_version(model_dir) or 0, 0) + 1  # TF Serving reads "-3"
    for _ in range(1000):
        target = os.path.join(model_dir, str(version))
        # Also skip a number whose side files exist (a half-removed version).
        taken = [target] + [target + suffix for suffix in suffixes]
        if not any(os.path.exists(path) for path in taken):
            try:
                os.rename(tmp_dir, target)
                return target
            except OSError:
                pass  # another exporter took this number first
        version += 1
    raise RuntimeError(f"{model_dir}: could not find a free version number.")


def _check_keras_check(keras_check, concrete, warmup, keras_model):
    if keras_check is None:
        return {"skipped": "no keras_check given to export_model"}
    if not isinstance(keras_check, dict):
        raise ValueError(
            f"`keras_check` must be a dict. Received: keras_check={keras_check!r}"
        )
    if "skipped" in keras_check:
        return {"skipped": str(keras_check["skipped"])}
    if "modules" in keras_check:
        raise ValueError(
            "`keras_check` cannot name modules: the verifier imports nothing an export "
            "names, only the zoo's own layers and models (register custom classes "
            "there). Received: modules="
            f"{keras_check['modules']!r}"
        )
    signature = keras_check.get("signature", "serving_default")
    outputs = keras_check.get("outputs")
    if signature not in concrete:
        raise ValueError(
            f"`keras_check` names an unknown signature. Received: signature={signature!r}"
        )
    if "preprocess" not in concrete:
        raise ValueError(
            "`keras_check` needs a 'preprocess' signature whose outputs are the Keras "
            f"model's inputs. Received signatures: {sorted(concrete)!r}"
        )
    if keras_model is None:
        raise ValueError("`keras_check` needs `keras_model` (saved as VERSION.keras).")
    if not isinstance(outputs, dict) or not outputs:
        raise ValueError(
            "`keras_check['outputs']` must map serving outputs to Keras outputs. "
            f"Received: outputs={outputs!r}"
        )
    served = concrete[signature].structured_outputs
    unknown = sorted(set(outputs) - set(served))
    if unknown:
        raise ValueError(
            f"`keras_check['outputs']` names outputs that {signature!r} does not "
            f"return. Received: {unknown!r}; outputs: {sorted(served)!r}"
        )
    if not warmup or signature not in warmup:
        raise ValueError(
            f"`keras_check` needs warm-up inputs for {signature!r} (the verifier "
            "compares on them)."
        )
    return {
        "signature": signature,
        "outputs": dict(outputs),
        "atol": float(keras_check.get("atol", 1e-4)),
        "rtol": float(keras_check.get("rtol", 1e-3)),
    }
