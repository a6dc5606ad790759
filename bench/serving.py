"""Serving latency and throughput of the exports, through the TF-Serving-style loader.

```
python bench/serving.py [saved_models | saved_models/NAME[/VERSION] ...]
                        [--iterations 50] [--batch-sizes 1 32] [--signature serving_default]
```

For every export (latest version of each `NAME` under the given folders), the
SavedModel is loaded as TF Serving loads it (`zoo.serving.SavedModelSession`: the C++
loader in a Session, run over the SignatureDef tensor names), with XLA auto-clustering off and
on (`OptimizerOptions.global_jit_level`), and the serving signature is timed on
batches built from the export's own warm-up requests (real example inputs, repeated
to the batch size). Prints a markdown table: p50/p99 latency per request and
throughput in examples per second, and the device (CPU or GPU) it ran on.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def find_exports(paths):
    from zoo.export.paths import latest_version, resolve_version_dir

    found = []
    for path in paths:
        path = os.path.normpath(path)
        if os.path.exists(os.path.join(path, "saved_model.pb")):
            found.append(path)
            continue
        if latest_version(path) is not None:
            found.append(resolve_version_dir(path))
            continue
        for name in sorted(os.listdir(path)):
            sub = os.path.join(path, name)
            if os.path.isdir(sub) and not name.startswith(".") and latest_version(sub):
                found.append(resolve_version_dir(sub))
    return found


def device_description():
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        return f"GPU: {details.get('device_name', gpus[0].name)} x{len(gpus)}"
    return f"CPU: {os.cpu_count()} cores"


def _batch(inputs, size):
    import numpy as np

    out = {}
    for key, value in inputs.items():
        reps = -(-size // len(value))
        out[key] = np.concatenate([value] * reps, axis=0)[:size]
    return out


def bench_export(version_dir, signature, batch_sizes, iterations, xla):
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    from zoo.export import manifest as manifest_lib
    from zoo.export.warmup import read_warmup
    from zoo.serving import SavedModelSession

    requests = [
        inputs
        for sig, inputs in read_warmup(
            os.path.join(version_dir, manifest_lib.WARMUP_PATH)
        )
        if sig == signature
    ]
    if not requests:
        raise ValueError(f"{version_dir}: no warm-up request for {signature!r}")
    config = tf.compat.v1.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = (
        tf.compat.v1.OptimizerOptions.ON_1 if xla else tf.compat.v1.OptimizerOptions.OFF
    )
    rows = []
    start = time.perf_counter()
    with SavedModelSession(version_dir, config=config) as model:
        load_s = time.perf_counter() - start
        sess = model.session
        sig = model.signature_def(signature)
        fetches = {k: v.name for k, v in sig.outputs.items()}
        for size in batch_sizes:
            feed_values = _batch(requests[0], size)
            feed = {sig.inputs[k].name: v for k, v in feed_values.items()}
            start = time.perf_counter()
            sess.run(fetches, feed)  # first call: compiles (XLA) / warms up
            first_ms = (time.perf_counter() - start) * 1e3
            for _ in range(min(3, iterations)):
                sess.run(fetches, feed)
            times = []
            for _ in range(iterations):
                start = time.perf_counter()
                sess.run(fetches, feed)
                times.append(time.perf_counter() - start)
            times_ms = np.array(times) * 1e3
            rows.append(
                {
                    "model": os.sep.join(version_dir.split(os.sep)[-2:]),
                    "signature": signature,
                    "xla": "on" if xla else "off",
                    "batch": size,
                    "p50_ms": float(np.percentile(times_ms, 50)),
                    "p99_ms": float(np.percentile(times_ms, 99)),
                    "throughput": size / (statistics.mean(times)),
                    "first_ms": first_ms,
                    "load_s": load_s,
                }
            )
    return rows


def format_table(rows, device):
    lines = [
        f"Device: {device}",
        "",
        "| model | signature | XLA | batch | p50 (ms) | p99 (ms) | throughput (ex/s) | first call (ms) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['signature']} | {r['xla']} | {r['batch']} | "
            f"{r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['throughput']:.1f} | "
            f"{r['first_ms']:.0f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=["saved_models"])
    parser.add_argument("--signature", default="serving_default")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--xla", choices=["off", "on", "both"], default="both")
    args = parser.parse_args(argv)

    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    exports = find_exports(args.paths)
    if not exports:
        print(f"no exports found under {args.paths}", file=sys.stderr)
        return 1
    xla_modes = {"off": [False], "on": [True], "both": [False, True]}[args.xla]
    rows, failures = [], []
    for version_dir in exports:
        for xla in xla_modes:
            try:
                rows += bench_export(
                    version_dir, args.signature, args.batch_sizes, args.iterations, xla
                )
            except Exception as e:  # noqa: BLE001 - report and continue with the others
                failures.append(f"{version_dir} (XLA {'on' if xla else 'off'}): {e}")
    print(format_table(rows, device_description()))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
