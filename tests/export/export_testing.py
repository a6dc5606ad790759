"""Test helpers for exports: bad inputs, reloaded signatures, fresh processes.

A recipe tests every bad-input case against its reloaded export in a few lines:

```python
from tests.export.export_testing import BAD_TEXT_INPUTS, check_bad_text_inputs

def test_bad_inputs(exported_version_dir):
    results = check_bad_text_inputs(exported_version_dir, input_name="text")
    assert results["batch_of_zero"]["label"].shape == (0,)
```
"""

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ONE_MEGABYTE = 1 << 20

BAD_TEXT_INPUTS = {
    "empty": [b""],
    "whitespace": [b"   \t\n  \r\n "],
    "one_megabyte": [(b"word " * (ONE_MEGABYTE // 5 + 1))[:ONE_MEGABYTE]],
    "invalid_utf8": [b"caf\xe9 \xff\xfe broken \xc3"],
    "batch_of_zero": [],
    "mixed_lengths": [b"short one.", b"a much longer text. " * 2000],
}
"""Bad inputs every serving signature must handle: name -> batch of raw bytes."""

_GOOD_TEXT = b"this is a normal input."


def load_signature(version_dir, name="serving_default"):
    """A callable over a signature of the reloaded export (TensorFlow's loader).

    The callable takes the inputs as keyword arguments (lists, NumPy arrays or
    tensors) and returns `{output_name: np.ndarray}`.
    """
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    loaded = tf.saved_model.load(os.fspath(version_dir))
    if name not in loaded.signatures:
        raise KeyError(
            f"{version_dir} has no signature {name!r}. Signatures: "
            f"{sorted(loaded.signatures)!r}"
        )
    fn = loaded.signatures[name]
    specs = fn.structured_input_signature[1]

    def call(**inputs):
        args = {}
        for key, value in inputs.items():
            if key not in specs:
                raise KeyError(
                    f"{name!r} has no input {key!r}; inputs: {sorted(specs)!r}"
                )
            args[key] = _to_tensor(value, specs[key])
        outputs = fn(**args)
        return {k: v.numpy() for k, v in outputs.items()}

    call.loaded = loaded  # keeps the resources alive
    call.signature = fn
    return call


def _to_tensor(value, spec):
    import tensorflow as tf

    if isinstance(value, tf.Tensor):
        return value
    if spec.dtype == tf.string:
        value = np.asarray(value, dtype=object)
        flat = [
            v.encode("utf-8") if isinstance(v, str) else v for v in value.reshape(-1)
        ]
        return tf.reshape(
            tf.constant(flat, dtype=tf.string, shape=[len(flat)]), value.shape
        )
    return tf.constant(value, dtype=spec.dtype)


def assert_outputs_well_defined(outputs, batch_size, where=""):
    """No NaN/inf in float outputs and every output has `batch_size` rows."""
    for key, value in outputs.items():
        value = np.asarray(value)
        assert value.ndim >= 1 and value.shape[0] == batch_size, (
            f"{where}: output {key!r} has shape {value.shape}, expected {batch_size} rows"
        )
        if np.issubdtype(value.dtype, np.floating):
            assert np.all(np.isfinite(value)), f"{where}: output {key!r} is not finite"


def _assert_rows_equal(a, b, where, atol=1e-5, strict_padding=True):
    """Compares one row of a batched output with the same input run alone; padded
    dimensions may differ in size, the common part must match, the rest is padding."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.ndim == b.ndim, f"{where}: rank {a.ndim} vs {b.ndim}"
    common = tuple(slice(0, min(x, y)) for x, y in zip(a.shape, b.shape, strict=False))
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(
            a[common], b[common], atol=atol, rtol=1e-4, err_msg=where
        )
        for extra in (a, b) if strict_padding else ():
            rest = extra.copy()
            rest[common] = 0
            assert not np.any(rest), f"{where}: padding beyond the input is not zero"
    else:
        np.testing.assert_array_equal(a[common], b[common], err_msg=where)


def check_bad_text_inputs(
    version_dir,
    signature="serving_default",
    input_name="text",
    extra_inputs=None,
    cases=None,
    atol=1e-5,
    strict_padding=True,
):
    """Runs every `BAD_TEXT_INPUTS` case through a reloaded export's signature.

    For each case: float outputs are finite, every output has one row per input, and
    every row equals the output of the same input run alone (a bad row does not change
    the others; padded dimensions may differ in size, then the extra part must be 0
    or empty).

    Args:
        version_dir: `saved_models/NAME/VERSION`.
        signature: the signature to test.
        input_name: the string input that receives the bad values.
        extra_inputs: `{input_name: value}` for the signature's other inputs; the
            value is repeated for every row.
        cases: optional subset of `BAD_TEXT_INPUTS` names.
        atol: tolerance of the row comparison.
        strict_padding: whether float values in a padded dimension beyond a row's
            own length must be 0 (set False when the padding of such an output is
            documented as undefined).

    Returns:
        `{case: outputs}` (NumPy arrays) for further assertions.
    """
    call = load_signature(version_dir, signature)
    extra_inputs = dict(extra_inputs or {})

    def run(texts):
        inputs = {input_name: np.array(texts, dtype=object)}
        for key, value in extra_inputs.items():
            inputs[key] = (
                np.array([value] * len(texts), dtype=object)
                if isinstance(value, (str, bytes))
                else np.array([value] * len(texts))
            )
        if not texts:
            inputs = {k: np.zeros([0], dtype=v.dtype) for k, v in inputs.items()}
        return call(**inputs)

    results = {}
    for case in cases or BAD_TEXT_INPUTS:
        texts = list(BAD_TEXT_INPUTS[case])
        where = f"{version_dir} {signature} [{case}]"
        outputs = run(texts)
        assert_outputs_well_defined(outputs, len(texts), where)
        if texts:
            # The bad input between two good ones: the good rows are unaffected.
            batch = [_GOOD_TEXT] + texts + [_GOOD_TEXT + b" again"]
            mixed = run(batch)
            assert_outputs_well_defined(mixed, len(batch), where + " in a batch")
            for row, text in enumerate(batch):
                alone = run([text])
                for key in mixed:
                    _assert_rows_equal(
                        mixed[key][row],
                        alone[key][0],
                        f"{where}: row {row} of {key!r} changed by the other rows",
                        atol=atol,
                        strict_padding=strict_padding,
                    )
        results[case] = outputs
    return results


def run_in_fresh_process(target, *args, timeout=600, env=None, **kwargs):
    """Calls a function in a new Python process and returns its JSON-able result.

    Args:
        target: a module-level function (also one defined in a test file) or a
            `"package.module:function"` string.
        *args, **kwargs: JSON-serialisable arguments.
        timeout: seconds before the child is killed (then `TimeoutError`).
        env: extra environment variables.

    Returns:
        The function's return value, through JSON.

    Raises:
        RuntimeError: with the child's output when it fails.
    """
    if callable(target):
        spec = {"file": inspect.getfile(target), "name": target.__qualname__}
    else:
        module, _, name = str(target).partition(":")
        spec = {"module": module, "name": name}
    with tempfile.TemporaryDirectory() as tmp:
        payload = os.path.join(tmp, "call.json")
        result = os.path.join(tmp, "result.json")
        with open(payload, "w") as f:
            json.dump({"target": spec, "args": args, "kwargs": kwargs}, f)
        child_env = {**os.environ, "KERAS_BACKEND": "tensorflow", **(env or {})}
        child_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), payload, result],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=child_env,
            )
        except subprocess.TimeoutExpired as e:
            raise TimeoutError(f"{spec} did not finish within {timeout} s") from e
        if proc.returncode != 0 or not os.path.exists(result):
            raise RuntimeError(
                f"{spec} failed in a fresh process (exit {proc.returncode}):\n"
                + (proc.stdout + proc.stderr)[-6000:]
            )
        with open(result) as f:
            return json.load(f)


def _child_main(payload_path, result_path):
    with open(payload_path) as f:
        payload = json.load(f)
    target = payload["target"]
    if "file" in target:
        name = "_fresh_" + os.path.splitext(os.path.basename(target["file"]))[0]
        spec = importlib.util.spec_from_file_location(name, target["file"])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target["module"])
    fn = module
    for part in target["name"].split("."):
        fn = getattr(fn, part)
    value = fn(*payload["args"], **payload["kwargs"])
    with open(result_path, "w") as f:
        json.dump(value, f, default=_json_default)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"Not JSON serializable: {type(value).__name__}")


if __name__ == "__main__":
    # Run as a script: the checkout's root, for `tests.` imports in the target file.
    sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    _child_main(sys.argv[1], sys.argv[2])
