"""Cost of Luong local attention against global attention as the source grows.

Luong et al. (2015) introduce local attention to make long sources cheap: a window of
`2D + 1` source positions around an aligned position `p_t` instead of all `Tv`. This
benchmark times `LuongAttention` ("general" score, `D = 10`, the paper's) at source
lengths `L` = 16 .. 1024 (or `--lengths`):

- `global`: every source position scored;
- `local-m`, `local-p`: the window gathered (`window_gather=True`): the scores cost
  O(D), the weights are scattered back into `L` positions;
- `local-p masked`: every position scored, then masked to the window
  (`window_gather=False`), which costs at least what global attention costs.

The layer's default, `window_gather="auto"`, gathers for single decoder steps and
scores every position for teacher-forced blocks: the `train` columns show why.

Two workloads, inside `tf.function` (no XLA), batch 64, width 256:

- `step`: one decoder step (`attend` with a single query against the projected
  source), what beam or greedy decoding runs per target token;
- `train`: a teacher-forced block of 32 target rows over the source, forward and
  backward (gradients with respect to the inputs and weights).

The calls of all variants alternate within one run; the table gives the median of
`--repeats` timed calls per cell, in milliseconds.

    python -m bench.local_attention                      # L 16..1024
    python -m bench.local_attention --lengths 16,64,256 --repeats 10
    python -m bench.local_attention --json out.json --plot out.png
"""

import argparse
import json
import os
import platform
import statistics
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

VARIANTS = {
    "global": {"window": None},
    "local-m": {"window": "local-m"},
    "local-p": {"window": "local-p"},
    "local-p masked": {"window": "local-p", "window_gather": False},
}
BATCH, WIDTH, TARGET_ROWS, HALF_WIDTH = 64, 256, 32, 10


def _layer(config, value_shape):
    from zoo.layers.luong_attention import LuongAttention

    window = config.get("window")
    layer = LuongAttention(
        "general",
        window=window,
        window_size=HALF_WIDTH,
        window_gather=config.get("window_gather", True),
    )
    layer.build([(BATCH, TARGET_ROWS, WIDTH), value_shape])
    return layer


def _functions(layer, value):
    import tensorflow as tf

    keys = layer.project_keys(value)

    @tf.function(reduce_retracing=True)
    def step(query, position):
        return layer.attend(query, keys, value, position=position)[0]

    @tf.function(reduce_retracing=True)
    def train(query, value):
        with tf.GradientTape() as tape:
            tape.watch([query, value])
            context = layer([query, value])
            loss = tf.reduce_sum(context)
        return tape.gradient(loss, [query, value, *layer.trainable_variables])

    return step, train


def measure(lengths, repeats, seed=0):
    """`{workload: {variant: {length: median ms}}}`, the variants interleaved."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    results = {"step": {}, "train": {}}
    for length in lengths:
        value = tf.constant(rng.normal(size=(BATCH, length, WIDTH)), tf.float32)
        step_query = tf.constant(rng.normal(size=(BATCH, WIDTH)), tf.float32)
        rows = tf.constant(rng.normal(size=(BATCH, TARGET_ROWS, WIDTH)), tf.float32)
        position = tf.constant(length // 2, tf.int32)
        fns = {}
        for name, config in VARIANTS.items():
            layer = _layer(config, (BATCH, length, WIDTH))
            fns[name] = _functions(layer, value)
            step, train = fns[name]
            step(step_query, position)  # trace and warm up
            train(rows, value)
        times = {(w, n): [] for w in results for n in VARIANTS}
        for _ in range(repeats):
            for name, (step, train) in fns.items():
                start = time.perf_counter()
                step(step_query, position).numpy()
                times["step", name].append(time.perf_counter() - start)
                start = time.perf_counter()
                [g.numpy() for g in train(rows, value)]
                times["train", name].append(time.perf_counter() - start)
        for (workload, name), values in times.items():
            median = 1000.0 * statistics.median(values)
            results[workload].setdefault(name, {})[length] = median
        print(
            f"L={length}: "
            + ", ".join(
                f"{w}/{n} {results[w][n][length]:.2f} ms"
                for w in results
                for n in VARIANTS
            ),
            flush=True,
        )
    return results


def markdown(results, lengths):
    lines = []
    for workload, title in (
        ("step", "one decoder step (ms)"),
        ("train", f"teacher-forced {TARGET_ROWS} rows, forward + backward (ms)"),
    ):
        lines.append(f"{title}:\n")
        lines.append("| L | " + " | ".join(VARIANTS) + " |")
        lines.append("|---:|" + "---:|" * len(VARIANTS))
        for length in lengths:
            cells = " | ".join(f"{results[workload][n][length]:.2f}" for n in VARIANTS)
            lines.append(f"| {length} | {cells} |")
        lines.append("")
    return "\n".join(lines)


def plot(results, lengths, path):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    for ax, workload, title in (
        (axes[0], "step", "one decoder step"),
        (axes[1], "train", f"{TARGET_ROWS} target rows, fwd + bwd"),
    ):
        for name in VARIANTS:
            ax.plot(
                lengths, [results[workload][name][n] for n in lengths], "o-", label=name
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("source length (positions)")
        ax.set_ylabel("ms per call (median)")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    axes[0].legend()
    fig.suptitle(
        f"LuongAttention general, D={HALF_WIDTH}, batch {BATCH}, width {WIDTH}"
    )
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="16,32,64,128,256,512,1024")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--plot", help="write the curves (PNG) here")
    args = parser.parse_args(argv)
    try:
        lengths = [int(x) for x in args.lengths.split(",")]
    except ValueError:
        parser.error(f"--lengths: comma-separated integers. Received: {args.lengths!r}")
    if any(n < 1 for n in lengths) or args.repeats < 1:
        parser.error("--lengths and --repeats must be positive")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    results = measure(lengths, args.repeats)
    print(markdown(results, lengths))
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    print(f"machine: {machine}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "command": "python -m bench.local_attention --lengths "
                    + args.lengths
                    + f" --repeats {args.repeats}",
                    "batch": BATCH,
                    "width": WIDTH,
                    "target_rows": TARGET_ROWS,
                    "half_width": HALF_WIDTH,
                    "machine": machine,
                    "started": started,
                    "ms": results,
                },
                f,
                indent=2,
            )
    if args.plot:
        print(f"plot: {plot(results, lengths, args.plot)}")
    return results


if __name__ == "__main__":
    main()
