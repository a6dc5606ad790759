"""Serving latency and throughput of the exports, through the TF-Serving-style loader.

```
python bench/serving.py [saved_models | saved_models/NAME[/VERSION] ...]
                        [--iterations 50] [--batch-sizes 1 32] [--signature serving_default]
python bench/serving.py --worst-case [PATHS ...] [--signature NAME ...] [--repeats 3]
```

For every export (latest version of each `NAME` under the given folders), the
SavedModel is loaded as TF Serving loads it (`zoo.serving.SavedModelSession`: the C++
loader in a Session, run over the SignatureDef tensor names), with XLA auto-clustering off and
on (`OptimizerOptions.global_jit_level`), and the serving signature is timed on
batches built from the export's own warm-up requests (real example inputs, repeated
to the batch size). Prints a markdown table: p50/p99 latency per request and
throughput in examples per second, and the device (CPU or GPU) it ran on.

`--worst-case` measures the most work one request can ask for instead. For each
signature (all of an export's signatures unless `--signature` names some) and each
request shape of `worst_case_requests` (the export's largest accepted inputs, read
from its manifest's `limits`: `max_batch_size` rows, each row as long as the
preprocessing keeps, built to give the most words, sentences or lines that
preprocessing goes through), a fresh process loads the export with
`SavedModelSession`, runs the export's warm-up requests (as TF Serving does at
load), then runs the request once (first call) and `--repeats` more times (median).
Memory is the process's peak resident set (`VmHWM`, reset after warm-up through
`/proc/self/clear_refs`) minus its resident set after warm-up, so it includes TensorFlow's
copy of the request but not the Python one. One more fresh process per export sends
`max_batch_size + 1` rows of the first shape to the default signature, which must be
refused (InvalidArgument naming `max_batch_size`) before any work: its row shows how
fast and at what memory cost. Linux only (`/proc/self/status`).
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


# === Worst accepted requests (--worst-case) ===

KIB = 1024
WORST_CASE_CHILD = "--worst-case-child"


def _fill(unit, size, head=""):
    """`head` then `unit` repeated, cut to exactly `size` bytes (ASCII only)."""
    body = unit * (-(-(size - len(head)) // len(unit)))
    return (head + body)[:size]


def _words_sentences(total, sentences):
    """`sentences` sentences of one-letter words ("a a ... a."), `total` bytes."""
    per = total // sentences
    sentence = _fill("a ", per - 2) + ". "
    return _fill(sentence, total)


def _limits(manifest):
    return dict(manifest.get("limits") or {})


def _text_bytes(manifest):
    """Bytes of a text input the export's preprocessing keeps."""
    limits = _limits(manifest)
    if "max_input_bytes" in limits:
        return int(limits["max_input_bytes"])
    metadata = {**(manifest.get("metadata") or {}), **manifest}
    if "decoding" in metadata or "preprocessing" in metadata:  # translation
        from zoo.text.subword import DEFAULT_MAX_BYTES

        settings = metadata.get("preprocessing") or {}
        return int(settings.get("max_bytes", DEFAULT_MAX_BYTES))
    from zoo.text.preprocessing import MAX_INPUT_BYTES

    return MAX_INPUT_BYTES


def worst_case_requests(manifest, input_names):
    """`[(name, {input: one row (str)}, description)]`: the costliest rows a
    signature with these inputs accepts, from the export's manifest `limits`.

    Every row is as long as preprocessing keeps (longer inputs are truncated before
    any other work, so they cost only their copy). Text inputs:

    - HAN (`max_sentences` in the limits): `max_input_bytes` of one-letter words,
      either in `max_sentences` long sentences (the most words tokenized) or in as
      many two-word sentences as fit (the most sentences split);
    - other text inputs (the sentence embedder, translation): one-letter words up
      to the byte limit (`max_input_bytes`; translation's 2048-byte source limit),
      the most tokens before the length cut.

    A story/question signature (MemN2N, `max_story_bytes`): a question of one-letter
    words up to the 64 KiB input limit, and a story of `max_story_bytes`, either as
    `memory_slots` long lines of one-letter words (the most words tokenized) or as
    one line of words followed by lines of "." only (no words: preprocessing
    doubles the lines it normalizes until it has found `memory_slots` lines with
    words or read the whole story).
    """
    names = set(input_names)
    limits = _limits(manifest)
    if names == {"story", "question"}:
        from zoo.text.preprocessing import MAX_INPUT_BYTES

        story_bytes = int(limits.get("max_story_bytes", 262144))
        slots = int(limits.get("memory_slots", 50))
        question = _fill("a ", MAX_INPUT_BYTES - 1) + "?"
        per = story_bytes // slots
        long_lines = (_fill("a ", per - 1) + "\n") * (slots - 1)
        long_lines += _fill("a ", story_bytes - len(long_lines))
        wordless = _fill(".\n", story_bytes, head="mary went to the kitchen\n")
        q = f"question {MAX_INPUT_BYTES // KIB} KiB of 1-letter words"
        return [
            (
                "long lines",
                {"story": long_lines, "question": question},
                f"story {story_bytes // KIB} KiB in {slots} lines of 1-letter "
                f"words; {q}",
            ),
            (
                "word-less lines",
                {"story": wordless, "question": question},
                f"story {story_bytes // KIB} KiB: 1 line of words, then "
                f"{(story_bytes - 25) // 2} lines of '.'; {q}",
            ),
        ]
    if names == {"text"}:
        size = _text_bytes(manifest)
        if "max_sentences" in limits:
            sentences = int(limits["max_sentences"])
            return [
                (
                    "long sentences",
                    {"text": _words_sentences(size, sentences)},
                    f"{size // KIB} KiB: {sentences} sentences of "
                    f"{size // sentences // 2 - 1} 1-letter words",
                ),
                (
                    "many sentences",
                    {"text": _fill("a a. ", size)},
                    f"{size // KIB} KiB: {size // 5} sentences of 2 words",
                ),
            ]
        unit = f"{size // KIB} KiB" if size >= KIB else f"{size} bytes"
        return [
            (
                "longest text",
                {"text": _fill("a ", size)},
                f"{unit}: {size // 2} 1-letter words",
            )
        ]
    raise ValueError(
        f"no worst-case request for the inputs {sorted(names)}; known: text, "
        "story + question"
    )


def _memory_kib():
    """`(VmRSS, VmHWM)` of this process, KiB."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                values[key] = int(value.split()[0])
    return values["VmRSS"], values["VmHWM"]


def _reset_peak():
    """Sets VmHWM to the current VmRSS (Linux: `5` in /proc/self/clear_refs)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def run_worst_case(version_dir, signature, shape, repeats, over_limit=False):
    """Runs one worst-case request in this process; returns its result row.

    Loads the export, runs its warm-up requests for `signature`, then sends
    `max_batch_size` rows (`over_limit`: one more) of the request called `shape`
    (see `worst_case_requests`): once, then `repeats` more times; an over-limit
    request is sent once and must be refused.
    """
    import numpy as np
    import tensorflow as tf

    from zoo.export import manifest as manifest_lib
    from zoo.export.warmup import read_warmup
    from zoo.serving import SavedModelSession
    from zoo.serving.errors import one_line_op_error

    manifest = manifest_lib.load_manifest(version_dir)
    info = (manifest.get("signatures") or {}).get(signature) or {}
    max_batch = info.get("max_batch_size") or _limits(manifest).get("max_batch_size")
    if not max_batch:
        raise ValueError(f"{version_dir}: {signature!r} records no max_batch_size")
    rows = int(max_batch) + (1 if over_limit else 0)
    with SavedModelSession(version_dir) as model:
        sess = model.session
        sig = model.signature_def(signature)
        fetches = {k: v.name for k, v in sig.outputs.items()}
        requests = {n: (r, d) for n, r, d in worst_case_requests(manifest, sig.inputs)}
        row, description = requests[shape]
        warmup_path = os.path.join(version_dir, manifest_lib.WARMUP_PATH)
        if os.path.exists(warmup_path):
            for name, inputs in read_warmup(warmup_path):
                if name == signature:
                    sess.run(
                        fetches, {sig.inputs[k].name: v for k, v in inputs.items()}
                    )
        feed = {}
        for key, text in row.items():
            values = np.empty(rows, dtype=object)
            values[:] = [text.encode("utf-8")] * rows
            feed[sig.inputs[key].name] = values
        request_bytes = sum(len(text.encode("utf-8")) for text in row.values()) * rows
        base_rss, _ = _memory_kib()
        _reset_peak()
        result = {
            "model": os.sep.join(version_dir.split(os.sep)[-2:]),
            "signature": signature,
            "shape": shape,
            "description": description,
            "rows": rows,
            "max_batch_size": int(max_batch),
            "request_mib": request_bytes / 2**20,
            "baseline_mib": base_rss / 1024,
        }
        start = time.perf_counter()
        try:
            out = sess.run(fetches, feed)
        except tf.errors.InvalidArgumentError as e:
            if not over_limit or "max_batch_size" not in e.message:
                raise
            result["refused_ms"] = (time.perf_counter() - start) * 1e3
            result["refused"] = one_line_op_error(e.message)[:300]
        else:
            if over_limit:
                raise RuntimeError(
                    f"{version_dir} {signature}: {rows} rows were not refused "
                    f"(max_batch_size={max_batch})"
                )
            result["first_s"] = time.perf_counter() - start
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                out = sess.run(fetches, feed)
                times.append(time.perf_counter() - start)
            result["median_s"] = statistics.median(times) if times else None
            result["repeats"] = repeats
            largest = max(out, key=lambda k: np.asarray(out[k]).size)
            result["largest_output"] = f"{largest} {list(np.shape(out[largest]))}"
        rss, peak = _memory_kib()
        result["peak_increase_mib"] = (peak - base_rss) / 1024
        result["rss_after_mib"] = rss / 1024
    return result


def worst_case_plan(version_dir, signatures=None):
    """`[(signature, shape, over_limit)]` to run for one export: every shape of
    every signature (or of `signatures`), then the first shape of the default
    signature one row over the limit."""
    from zoo.export import manifest as manifest_lib

    manifest = manifest_lib.load_manifest(version_dir)
    specs = manifest.get("signatures") or {}
    plan = []
    for signature in signatures or sorted(specs):
        if signature not in specs:
            raise ValueError(f"{version_dir} has no signature {signature!r}")
        for shape, _, _ in worst_case_requests(manifest, specs[signature]["inputs"]):
            plan.append((signature, shape, False))
    default = manifest.get("default_signature", "serving_default")
    if default in specs:
        first = worst_case_requests(manifest, specs[default]["inputs"])[0][0]
        plan.append((default, first, True))
    return plan


def run_worst_case_child(version_dir, signature, shape, repeats, over_limit, timeout):
    """`run_worst_case` in a fresh Python process; returns its row (or raises)."""
    import json
    import subprocess

    spec = dict(
        version_dir=version_dir,
        signature=signature,
        shape=shape,
        repeats=repeats,
        over_limit=over_limit,
    )
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), WORST_CASE_CHILD, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    error = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    raise RuntimeError(f"exit {proc.returncode}: {error}")


def format_worst_case(rows, device):
    lines = [
        f"Device: {device}",
        "",
        "| export | signature | request (per row) | rows | request MiB | first call "
        "(s) | median (s) | peak RSS increase (MiB) | largest output |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "refused" in r:
            latency = f"refused in {r['refused_ms']:.1f} ms"
            lines.append(
                f"| {r['model']} | {r['signature']} | {r['description']} | "
                f"{r['rows']} (limit {r['max_batch_size']}) | "
                f"{r['request_mib']:.1f} | {latency} | - | "
                f"{r['peak_increase_mib']:.0f} | InvalidArgument |"
            )
            continue
        median = "-" if r["median_s"] is None else f"{r['median_s']:.2f}"
        lines.append(
            f"| {r['model']} | {r['signature']} | {r['description']} | {r['rows']} | "
            f"{r['request_mib']:.1f} | {r['first_s']:.2f} | {median} "
            f"(of {r['repeats']}) | {r['peak_increase_mib']:.0f} | "
            f"{r['largest_output']} |"
        )
    return "\n".join(lines)


def worst_case_main(args):
    exports = find_exports(args.paths)
    if not exports:
        print(f"no exports found under {args.paths}", file=sys.stderr)
        return 1
    rows, failures = [], []
    for version_dir in exports:
        try:
            plan = worst_case_plan(version_dir, args.signature)
        except (ValueError, OSError) as e:
            failures.append(f"{version_dir}: {e}")
            continue
        for signature, shape, over in plan:
            label = f"{version_dir} {signature} {shape}{' +1 row' if over else ''}"
            print(f"running {label}", file=sys.stderr, flush=True)
            try:
                rows.append(
                    run_worst_case_child(
                        version_dir, signature, shape, args.repeats, over, args.timeout
                    )
                )
            except Exception as e:  # noqa: BLE001 - report and continue with the others
                failures.append(f"{label}: {e}")
    print(format_worst_case(rows, device_description()))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


def _child_main(spec_json):
    import json

    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    spec = json.loads(spec_json)
    print("RESULT " + json.dumps(run_worst_case(**spec)), flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=["saved_models"])
    parser.add_argument(
        "--signature",
        action="append",
        help="signature to run (repeatable; default serving_default, or every "
        "signature with --worst-case)",
    )
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--xla", choices=["off", "on", "both"], default="both")
    parser.add_argument(
        "--worst-case",
        action="store_true",
        help="time the largest accepted request of each signature, one fresh "
        "process each, with its peak memory (see the module docstring)",
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="--worst-case: runs after the first"
    )
    parser.add_argument(
        "--timeout", type=float, default=900, help="--worst-case: seconds per process"
    )
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [WORST_CASE_CHILD]:
        return _child_main(argv[1])
    args = parser.parse_args(argv)
    if args.worst_case:
        return worst_case_main(args)

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
                for signature in args.signature or ["serving_default"]:
                    rows += bench_export(
                        version_dir, signature, args.batch_sizes, args.iterations, xla
                    )
            except Exception as e:  # noqa: BLE001 - report and continue with the others
                failures.append(f"{version_dir} (XLA {'on' if xla else 'off'}): {e}")
    print(format_table(rows, device_description()))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
