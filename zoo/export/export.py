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

import hashlib
import os
import re
import secrets
import shutil
import socket
import time

import tensorflow as tf

from zoo.errors import DiskFullError, is_disk_full
from zoo.export import manifest as manifest_lib
from zoo.export import warmup as warmup_lib
from zoo.export.paths import check_model_name, latest_version
from zoo.export.serving_module import BATCH_CHECK_SCOPE, ServingModule


def _concrete(name, fn):
    """The concrete function of a signature, which must return a dict of outputs."""
    if getattr(fn, "input_signature", None) is not None:
        fn = fn.get_concrete_function()  # tracing errors propagate unchanged
    outputs = getattr(fn, "structured_outputs", None)
    if not isinstance(outputs, dict) or not outputs:
        raise ValueError(
            f"Signature {name!r} must be a tf.function with an input_signature (or a "
            "concrete function) returning a non-empty dict of named outputs. "
            f"Received: {fn!r} returning {type(outputs).__name__}"
        )
    return fn


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
        module: a `tf.Module` (normally a task's `zoo.export.ServingModule`) that
            tracks the preprocessing resources; the variables the signatures use
            are tracked from them.
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
        received = sorted(signatures) if isinstance(signatures, dict) else signatures
        raise ValueError(
            "`signatures` must be a dict holding 'serving_default'. "
            f"Received: signatures={received!r}"
        )
    concrete = {k: _concrete(k, fn) for k, fn in signatures.items()}
    input_specs = {
        k: {
            spec.name: spec.dtype
            for spec in tf.nest.flatten(fn.structured_input_signature)
        }
        for k, fn in concrete.items()
    }
    keras_check = _check_keras_check(keras_check, concrete, warmup, keras_model)
    logs = warmup_lib.build_requests(name, warmup or {}, input_specs)
    # `{signature: max_batch_size or None}`: the module's limit for each signature
    # whose graph (or a function it calls) holds `ServingModule.check_batch`'s check.
    limit = getattr(module, "max_batch_size", None)
    batch_limits = {
        k: limit if _calls_check_batch(fn) else None for k, fn in concrete.items()
    }
    common = set(batch_limits.values())  # recorded when every signature has it

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
        ServingModule.track_variables_of(module, concrete.values())
        tf.saved_model.save(module, tmp_dir, signatures=concrete)
        if logs:
            warmup_lib.write_warmup(
                os.path.join(tmp_dir, manifest_lib.WARMUP_PATH), logs
            )
        signature_info = manifest_lib.read_signatures(tmp_dir)
        for key, value in batch_limits.items():
            signature_info[key]["max_batch_size"] = value
        manifest = manifest_lib.build_manifest(
            name,
            signature_info,
            metadata=metadata,
            keras_check=keras_check,
            warmup=warmup,
            keras_file="../<VERSION>.keras" if keras_model is not None else None,
            limits={"max_batch_size": common.pop() if len(common) == 1 else None},
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


def _calls_check_batch(concrete):
    graph_def = concrete.graph.as_graph_def()
    functions = [f.node_def for f in graph_def.library.function]
    marker = f"{BATCH_CHECK_SCOPE}/max_batch_size"
    return any(
        node.op == "Assert" and marker in node.name
        for nodes in (graph_def.node, *functions)
        for node in nodes
    )


STAGING_PREFIX = ".tmp-export-"
DIR_MODE = 0o755  # what TensorFlow's file system gives the folders it creates
STALE_SECONDS = 24 * 3600
# .tmp-export-<host hash>-<pid>-<token>[<suffix>]; older exports wrote
# .tmp-export-<token>[<suffix>].
_STAGING_RE = re.compile(
    re.escape(STAGING_PREFIX) + r"(?:(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-)?[0-9a-f]+"
)


def _host_tag():
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _make_staging_dir(model_dir):
    """A new, empty hidden folder in `model_dir`, mode `DIR_MODE` less the umask.

    Like `tempfile.mkdtemp` (a random name, `os.mkdir` fails rather than reuse an
    existing folder) but readable by the users the umask allows. The name holds a
    hash of the host name and the writer's pid, so `remove_stale_staging` can tell a
    folder whose writer has gone.
    """
    name = f"{STAGING_PREFIX}{_host_tag()}-{os.getpid()}-{secrets.token_hex(6)}"
    path = os.path.join(model_dir, name)
    os.mkdir(path, DIR_MODE)  # the umask applies
    return path


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
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
    now = time.time() if now is None else now
    host = _host_tag()
    removed = []
    for name in sorted(os.listdir(model_dir)) if os.path.isdir(model_dir) else ():
        match = _STAGING_RE.match(name)
        path = os.path.join(model_dir, name)
        if match is None:
            continue
        try:
            age = now - os.lstat(path).st_mtime
        except FileNotFoundError:
            continue  # its writer finished meanwhile
        gone = match["host"] == host and not _pid_alive(int(match["pid"]))
        if not gone and age <= max_age:
            continue
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)
        except FileNotFoundError:
            continue  # removed meanwhile
        removed.append(path)
    return removed


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
    """The manifest's `keras_check` (see `export_model`), or a `ValueError` naming
    what the verifier could not compare."""
    if keras_check is None or "skipped" in keras_check:
        keras_check = keras_check or {"skipped": "no keras_check given to export_model"}
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
