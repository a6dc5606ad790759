"""Verify an export the way TF Serving loads it.

```
python -m zoo.export.verify saved_models/NAME[/VERSION] [--json-out report.json]
```

First the files TF Serving reads must be sound: the manifest's limits well-formed
(`zoo.export.manifest.batch_limits`), `saved_model.pb` parsing, the variables reading
back whole (`zoo.export.manifest.check_version_files`), the warm-up file parsing. Then these checks, in
this order (the first two with only TensorFlow and tensorflow-text imported, as TF
Serving links nothing else):

1. load the `serve` MetaGraph with TensorFlow's SavedModel loader in a
   `tf.compat.v1.Session` (variables restored, asset-initialised tables), as TF
   Serving's session bundle does;
2. every op in the graph and in its function library is registered by TensorFlow
   plus tensorflow-text (any other op is listed);
3. every warm-up request is replayed through the SignatureDef tensor names; float
   outputs must be finite; each signature's `max_batch_size` as the manifest records
   it (the limit `zoo predict` and `zoo deploy` read) must be enforced: the warm-up
   rows repeated to one row more are refused with InvalidArgument naming that limit;
4. the `keras_check` of the manifest: the `preprocess` signature's outputs are fed to
   the `.keras` model beside the version folder (loaded with
   `keras.saving.load_model` after importing the zoo's layers and models) and the
   result must match the serving signature (allclose). When a `.keras` model is
   present the comparison always runs: a manifest that skips it gets the default
   comparison (the float outputs of `serving_default`, by name);
5. no symbolic link in the version folder points outside it (TF Serving's container
   mounts only the export root, and a link out of it is a file the export did not
   write); every link is listed in the report;
6. the signatures are printed.

Exit status 0 when everything passed, 1 when a check failed (each failure listed),
2 with one line when the export cannot be read at all: a missing folder, a damaged
`saved_model.pb`, variables or warm-up file, a malformed manifest (e.g.
`max_batch_size: "abc"`), or a `--json-out` into a missing folder (refused before
the work). `verify_export(path)` returns the same report as a dict;
`verify_in_fresh_process(path)` runs the command in a new Python process.

What the verifier trusts: it imports TensorFlow, tensorflow-text and, for the Keras
check, Keras and the zoo's own `zoo.layers` / `zoo.models`; it never imports a module
that an export names (the manifest is data, not code; a `modules` entry in an old
manifest's `keras_check` is reported and ignored), and `keras.saving.load_model` runs in
safe mode. `verify_in_fresh_process` starts Python in isolated mode (`python -I`: no
current folder on `sys.path`, `PYTHON*` variables ignored), so files beside the caller
cannot shadow a library. Verifying still loads the SavedModel and executes its graph on
the warm-up requests, as TF Serving does: verify exports from sources you trust.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from zoo.errors import ConfigError, MissingPathError, ZooError, one_line, printable

MAX_CHECKED_ROWS = 1 << 20  # the largest over-limit request verify builds


def _unregistered_ops(graph_def):
    """`(op types, the sorted ones TensorFlow and tensorflow-text do not register)` of
    a graph and its function library."""
    from tensorflow.python.framework import op_def_registry

    functions = graph_def.library.function
    ops = {n.op for n in graph_def.node} | {n.op for f in functions for n in f.node_def}
    ops -= {f.signature.name for f in functions}
    return ops, sorted(op for op in ops if op_def_registry.get(op) is None)


def verify_export(path, print_fn=None):
    """Verifies one export; see the module docstring for the checks.

    Args:
        path: `saved_models/NAME/VERSION` or `saved_models/NAME` (latest version).
        print_fn: optional function receiving progress lines.

    Returns:
        A dict: `{"path", "ok", "errors", "signatures", "ops": {"count",
        "unregistered"}, "warmup": {"requests", "replayed", "seconds"},
        "batch_limit", "keras_check": {...}, "load_seconds"}`; an export that
        cannot be read at all has its one-line reason as the only error.
    """
    return _report(path, print_fn or (lambda line: None))[0]


def _report(path, say):
    """The report, and the `ZooError` of an export that cannot be read (or None)."""
    report = {"path": os.fspath(path), "ok": False, "errors": [], "notes": []}
    try:
        _verify(path, report, say)
    except ZooError as e:
        report["errors"].append(str(e))
        return report, e
    report["ok"] = not report["errors"]
    return report, None


def _verify(path, report, say):
    """Runs the checks into `report`; raises `ZooError` for an export that cannot be
    read at all."""
    import numpy as np

    from zoo.export import manifest as manifest_lib
    from zoo.export.paths import resolve_version_dir
    from zoo.serving.saved_model_session import SavedModelSession

    errors = report["errors"]
    version_dir = report["path"] = resolve_version_dir(
        path, note=report["notes"].append
    )
    for line in report["notes"]:
        say(f"note: {printable(line)}")
    manifest = manifest_lib.load_manifest(version_dir)
    limits = manifest_lib.batch_limits(manifest, version_dir)
    report["name"] = manifest.get("name")
    requests = manifest_lib.check_version_files(version_dir)  # at most 1000
    warmup_path = os.path.join(version_dir, manifest_lib.WARMUP_PATH)

    # 1. Load as TF Serving does (zoo.serving.SavedModelSession).
    start = time.perf_counter()
    sess = SavedModelSession(version_dir)
    report["load_seconds"] = round(time.perf_counter() - start, 3)
    signatures = report["signatures"] = manifest_lib.read_signatures(version_dir)
    if "serving_default" not in signatures:
        errors.append(f"{version_dir}: no 'serving_default' signature.")
    say(f"loaded {version_dir} in {report['load_seconds']} s")

    # 2. Ops registered by TensorFlow + tensorflow-text only.
    ops, unregistered = _unregistered_ops(sess.meta_graph.graph_def)
    report["ops"] = {"count": len(ops), "unregistered": unregistered}
    if unregistered:
        errors.append(
            "ops not registered by TensorFlow or tensorflow-text (TF Serving cannot run "
            f"them): {', '.join(unregistered)}"
        )
    say(f"{len(ops)} op types, {len(unregistered)} not registered")

    # 3. Warm-up replay.
    warm = report["warmup"] = {"requests": len(requests or []), "replayed": 0}
    first_inputs = {}
    start = time.perf_counter()
    for i, (signature, inputs) in enumerate(requests or []):
        first_inputs.setdefault(signature, inputs)
        where = f"warm-up request {i} ({signature})"
        try:  # an unknown signature fails here too, named
            fetched = sess.predict(inputs, signature)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{where}: failed: {e}")
            continue
        for key, value in fetched.items():  # float outputs must be finite
            value = np.asarray(value)
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                errors.append(f"{where}: output {key!r} is not finite")
        warm["replayed"] += 1
    warm["seconds"] = round(time.perf_counter() - start, 3) if requests else 0.0
    if requests is None:
        errors.append(f"{warmup_path}: no warm-up file.")
    elif not requests:
        errors.append(f"{warmup_path}: holds no requests.")
    say(f"replayed {warm['replayed']}/{warm['requests']} warm-up requests")

    # 3b. The manifest's batch limit: one row over it is refused.
    report["batch_limit"] = _check_batch_limits(sess, limits, first_inputs, errors)
    say(f"batch limit: {report['batch_limit']}")

    # 4. Keras check: always when a .keras model is present.
    check = manifest.get("keras_check") or {"skipped": "no keras_check in the manifest"}
    skipped = check.get("skipped")
    if skipped is not None and not os.path.exists(version_dir + ".keras"):
        report["keras_check"] = {"skipped": skipped}
    else:
        if skipped is not None:  # serving_default's float outputs, by name
            outputs = signatures.get("serving_default", {}).get("outputs", {})
            floats = [k for k, v in outputs.items() if "float" in v["dtype"]]
            check = {"signature": "serving_default", "outputs": {k: k for k in floats}}
            say(
                f"keras check: the manifest skips it ({skipped}) but "
                f"{version_dir}.keras is present: comparing {floats}"
            )
        result = _keras_check(sess, check, first_inputs, version_dir, errors)
        if skipped is not None:
            result["manifest_skipped"] = str(skipped)
        report["keras_check"] = result
    say(f"keras check: {report['keras_check']}")
    sess.close()

    # 5. Symbolic links.
    report["symlinks"] = _check_symlinks(version_dir, errors)
    if report["symlinks"]:
        say(f"symlinks: {report['symlinks']}")


def _check_symlinks(version_dir, errors):
    """`{relative path: target}` of every symbolic link under `version_dir`; a link
    whose target resolves outside `version_dir` is an error."""
    root = os.path.realpath(version_dir)
    links = {}
    for folder, dirs, files in os.walk(version_dir):
        for path in sorted(os.path.join(folder, name) for name in dirs + files):
            if not os.path.islink(path):
                continue
            links[os.path.relpath(path, version_dir)] = os.readlink(path)
            target = os.path.realpath(path)
            if os.path.commonpath([root, target]) != root:
                errors.append(
                    f"{path}: a symbolic link to {target}, outside the export (TF "
                    "Serving's container sees only the export root; copy the file "
                    "in)"
                )
    return links


def _check_batch_limits(sess, limits, first_inputs, errors):
    """Runs each signature whose manifest records a `max_batch_size` on one row more
    (its warm-up rows repeated) and expects InvalidArgument naming that limit."""
    import numpy as np

    from zoo.serving.errors import ServingError

    result = {}
    for signature in sorted(sess.signature_defs):
        limit, inputs = limits.get(signature), first_inputs.get(signature)
        if limit is None or inputs is None:
            result[signature] = (
                "not enforced" if limit is None else "not checked (no warm-up request)"
            )
            continue
        rows, named = limit + 1, f"max_batch_size={limit}"
        problem = (
            f"the manifest's {named} for {signature!r} is over the "
            f"{MAX_CHECKED_ROWS} rows verify sends"
        )
        if limit < MAX_CHECKED_ROWS:
            index = np.arange(rows)
            over = {k: np.take(v, index % len(v), axis=0) for k, v in inputs.items()}
            problem = f"{signature!r} accepted {rows} rows, over the manifest's {named}"
            try:
                sess.predict(over, signature)
            except ServingError as e:
                problem = None
                if e.code != "INVALID_ARGUMENT" or named not in e.message:
                    problem = (
                        f"{signature!r} failed on {rows} rows without naming the "
                        f"manifest's {named}: {e.code}: {e.message}"
                    )
        result[signature] = "failed" if problem else f"refuses {rows} rows"
        if problem:
            errors.append(f"batch limit: {problem}")
    return result


def _keras_check(sess, check, first_inputs, version_dir, errors):
    """Feeds the `preprocess` outputs of the first warm-up request of
    `check["signature"]` to the `.keras` model beside the version and compares its
    outputs with the served ones."""
    import numpy as np

    signature, keras_path = check["signature"], version_dir + ".keras"
    inputs = first_inputs.get(signature)

    def fail(problem):
        errors.append(f"keras check: {problem}")
        return {"ok": False}

    if not check["outputs"]:
        return fail(
            f"{keras_path} is present but {signature!r} has no float output to "
            "compare it on"
        )
    if inputs is None:
        return fail(f"no warm-up request for {signature!r}")
    if "preprocess" not in sess.signature_defs:
        return fail("the export has no 'preprocess' signature")
    wanted = sess.signature_defs["preprocess"].inputs
    try:
        features = sess.predict(
            {k: v for k, v in inputs.items() if k in wanted}, "preprocess"
        )
        served = sess.predict(inputs, signature)
    except Exception as e:  # noqa: BLE001
        return fail(f"running the signatures failed: {e}")
    if not os.path.exists(keras_path):
        return fail(f"{keras_path} is missing")
    try:
        task = _load_keras_model(keras_path)
        # A task (`zoo.models.task.Task`) reads raw strings; its network reads the
        # `preprocess` signature's outputs.
        model = getattr(task, "backbone", None) or task
        outputs = _call_keras(model, features)
        raw = _call_task(task, inputs, served)
    except Exception as e:  # noqa: BLE001
        return fail(f"loading or running {keras_path} failed: {e}")
    result, before = {"ok": True, "compared": {}}, len(errors)
    if raw is not None:
        result["raw_text"] = raw
        if not raw["ok"]:
            fail(
                "the task's predict on the warm-up texts differs from "
                f"{signature!r} (max |diff| = {raw['max_abs_diff']:.3g})"
            )
    if check.get("modules"):
        result["ignored_modules"] = [str(m) for m in check["modules"]]
    for served_name, keras_name in check["outputs"].items():
        try:
            expected = _pick_output(outputs, keras_name)
        except (KeyError, IndexError) as e:
            fail(f"no Keras output {keras_name!r} ({e})")
            continue
        got = np.asarray(served[served_name])
        compared = _compare(got, expected, check.get("atol"), check.get("rtol"))
        result["compared"][served_name] = compared
        if not compared["ok"]:
            fail(
                f"{served_name!r} differs from the Keras model (max |diff| = "
                f"{compared['max_abs_diff']:.3g}; shapes {got.shape}, {expected.shape})"
            )
    result["ok"] = len(errors) == before
    return result


def _compare(got, expected, atol=None, rtol=None):
    """`{"max_abs_diff", "ok"}` of two arrays (`ok`: one shape and allclose, by
    default within 1e-4 + 1e-3 relative; two shapes differ by inf)."""
    import numpy as np

    if got.shape != expected.shape:
        return {"max_abs_diff": float("inf"), "ok": False}
    diff = float(np.max(np.abs(got - expected))) if got.size else 0.0
    atol, rtol = 1e-4 if atol is None else atol, 1e-3 if rtol is None else rtol
    close = bool(np.allclose(got, expected, atol=atol, rtol=rtol))
    return {"max_abs_diff": diff, "ok": close}


def _load_keras_model(path):
    """`keras.saving.load_model` (safe mode) after importing the zoo's own layers and
    models, whose registered classes the file may name; nothing the export names is
    imported."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    import zoo.layers  # noqa: F401  (registers the zoo's layers with Keras)
    import zoo.models  # noqa: F401  (and its models)

    return keras.saving.load_model(path, safe_mode=True)


def _call_task(task, inputs, served):
    """The task's `predict` on the raw warm-up inputs against the served
    `probabilities` (classifiers); None where the model is no classifier task."""
    import numpy as np

    if getattr(task, "preprocessor", None) is None or "probabilities" not in served:
        return None

    def texts(values):
        flat = np.asarray(values).reshape(-1).tolist()
        return [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in flat]

    if len(inputs) == 1:
        raw = texts(next(iter(inputs.values())))
    else:  # named inputs, e.g. MemN2N's story and question
        raw = {name: texts(values) for name, values in inputs.items()}
    got = np.asarray(task.predict(raw, verbose=0))
    return _compare(got, np.asarray(served["probabilities"]))


def _call_keras(model, features):
    import numpy as np

    names = [t.name.split(":")[0] for t in model.inputs]
    if len(names) == 1 and len(features) == 1:
        args = next(iter(features.values()))
    else:
        missing = sorted(set(names) - set(features))
        if missing:
            raise KeyError(
                f"preprocess outputs {sorted(features)} do not provide the Keras "
                f"inputs {missing}"
            )
        args = {k: features[k] for k in names}
    outputs = model(args, training=False)
    if not isinstance(outputs, dict):
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        names = list(getattr(model, "output_names", None) or [])
        if len(names) != len(outputs):  # then by position only
            names = range(len(outputs))
        outputs = dict(zip(names, outputs, strict=True))
    return {k: np.asarray(v) for k, v in outputs.items()}


def _pick_output(outputs, key):
    """An output by name or position; a single output answers to any name."""
    values = list(outputs.values())
    if isinstance(key, int):
        return values[key]
    if key not in outputs and len(values) == 1:
        return values[0]
    return outputs[key]


# Run by `python -I -c`: isolated mode leaves the current folder and PYTHONPATH off
# sys.path; the folder holding the `zoo` package is appended (after the standard library
# and site-packages, so it cannot shadow them) for a source checkout not installed.
_ISOLATED_MAIN = """\
import sys
root = sys.argv.pop(1)
if root not in sys.path:
    sys.path.append(root)
from zoo.export.verify import main
sys.exit(main(sys.argv[1:]))
"""


def fresh_process_command(path, json_out=None):
    """The command line of `verify_in_fresh_process`: `python -I -c ... PATH`."""
    import zoo

    root = os.path.dirname(os.path.dirname(os.path.abspath(zoo.__file__)))
    command = [sys.executable, "-I", "-c", _ISOLATED_MAIN, root, os.fspath(path)]
    if json_out is not None:
        command += ["--json-out", os.fspath(json_out)]
    return command


def verify_in_fresh_process(path, timeout=600):
    """Runs the verifier on `path` in a new Python process in isolated mode.

    The process is `python -I` (see `fresh_process_command`): only the standard library,
    site-packages and the zoo itself are importable, and it imports nothing the export
    names.

    Returns:
        The report dict (with `"returncode"` and the `"output"` tail added).
    """
    import tempfile

    report = {"path": os.fspath(path), "ok": False, "returncode": None, "output": ""}
    env = {"TF_CPP_MIN_LOG_LEVEL": "2", **os.environ, "KERAS_BACKEND": "tensorflow"}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        command = fresh_process_command(path, json_out=out)
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return {**report, "errors": [f"verification timed out after {timeout} s"]}
        report["errors"] = ["the verifier crashed before writing its report"]
        if os.path.exists(out):
            with open(out) as f:
                report = json.load(f)
    report["returncode"] = proc.returncode
    report["output"] = (proc.stdout + proc.stderr)[-4000:]
    report["ok"] = report["ok"] and proc.returncode == 0
    return report


def main(argv=None, prog="python -m zoo.export.verify"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Verify a SavedModel export the way TF Serving loads it.",
    )
    parser.add_argument("path", help="saved_models/NAME[/VERSION] (latest if omitted)")
    parser.add_argument("--json-out", help="also write the report as JSON here")
    parser.error = usage_error  # a usage error is one line too
    try:
        args = parser.parse_args(argv)
        _check_json_out(args.json_out)
    except ZooError as e:
        print(one_line(e), file=sys.stderr)
        return e.exit_code
    report, error = _report(args.path, print)
    if error is not None:
        print(one_line(error), file=sys.stderr)
    else:  # 6. the signatures
        for name, sig in report.get("signatures", {}).items():
            print(f"signature {name!r} ({sig['method_name']}):")
            for kind in ("inputs", "outputs"):
                for key, info in sig[kind].items():
                    print(f"  {kind[:-1]:6s} {key}: {info['dtype']} {info['shape']}")
    if not _write_report(args.json_out, report) or error is not None:
        return 2
    if report["ok"]:
        print(f"OK: {report['path']} verified")
        return 0
    print(f"FAILED: {report['path']}", file=sys.stderr)
    for line in report["errors"]:
        print(f"  - {line}", file=sys.stderr)
    return 1


def usage_error(message):
    """`ArgumentParser.error` as a `ConfigError` (one line, exit status 2)."""
    raise ConfigError(message)


def _check_json_out(path):
    """Refuses a `--json-out` that cannot be written, before the work."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise MissingPathError(folder, what="folder for --json-out")
    if os.path.isdir(path):
        raise ConfigError(f"--json-out names a folder. Received: {path!r}")


def _write_report(path, report):
    """Writes the report to `--json-out` (if given); False, with one line, when it
    cannot."""
    if path is None:
        return True
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, default=str)
    except OSError as e:
        print(one_line(f"{path}: {e.strerror or e}"), file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
