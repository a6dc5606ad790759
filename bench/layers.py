"""Speed of the zoo attention layers against the Keras built-ins that compute the same math.

Pairs (each zoo layer and its Keras equivalent, with the same weights shapes):

- `bahdanau`: `BahdanauAttention(units=W)` vs `Dense(W)` on query and key +
  `AdditiveAttention(use_scale=True)`; query length `Tq = 8` (a block of decoder
  steps: the additive score materialises a `(B, Tq, Tv, W)` tensor), source length `L`.
- `luong_dot`: `LuongAttention("dot")` vs `Attention()`, `Tq = Tv = L`.
- `self`: `SelfAttention(8, W // 8)` vs `MultiHeadAttention(8, W // 8)`, `T = L`.

Each is timed forward and forward+backward (gradients of the summed output with respect
to inputs and weights), inside `tf.function` without XLA (`graph`) and with XLA (`xla`).
Zoo and Keras calls alternate within one run; the table reports the best time per
call of each (the estimate least disturbed by other processes) and the ratio zoo/keras
(below 1 = the zoo layer is faster).

    python -m bench.layers --quick             # a few small sizes (about 2 minutes)
    python -m bench.layers                     # batch 64, L 32..512, W 256..1024
    python -m bench.layers --quick --markdown  # Markdown table (for BENCHMARKS.md)
"""

import argparse
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from zoo.layers.bahdanau_attention import BahdanauAttention  # noqa: E402
from zoo.layers.luong_attention import LuongAttention  # noqa: E402
from zoo.layers.self_attention import SelfAttention  # noqa: E402

# (length, width) pairs: the full grid is every combination, --quick two small sizes.
FULL_GRID = {
    "batch": 64,
    "sizes": [(n, w) for w in (256, 512, 1024) for n in (32, 128, 512)],
}
QUICK_GRID = {"batch": 16, "sizes": [(32, 64), (64, 128)]}
BAHDANAU_TQ = 8
HEADS = 8


class KerasAdditive(keras.layers.Layer):
    """Dense projections + keras.layers.AdditiveAttention: Bahdanau's math in Keras."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.query_dense = keras.layers.Dense(units, use_bias=False)
        self.key_dense = keras.layers.Dense(units, use_bias=False)
        self.attention = keras.layers.AdditiveAttention(use_scale=True)

    def call(self, inputs):
        query, value = inputs
        return self.attention([self.query_dense(query), value, self.key_dense(value)])


def _pair(name, width, length, batch, rng):
    """(zoo_fn, keras_fn, inputs, description) with built layers."""
    if name == "bahdanau":
        q = rng.normal(size=(batch, BAHDANAU_TQ, width)).astype("float32")
        v = rng.normal(size=(batch, length, width)).astype("float32")
        zoo = BahdanauAttention(width)
        ref = KerasAdditive(width)
        inputs = [tf.constant(q), tf.constant(v)]
        desc = f"Tq={BAHDANAU_TQ} Tv={length}"
    elif name == "luong_dot":
        q = rng.normal(size=(batch, length, width)).astype("float32")
        v = rng.normal(size=(batch, length, width)).astype("float32")
        zoo = LuongAttention("dot")
        ref = keras.layers.Attention()
        inputs = [tf.constant(q), tf.constant(v)]
        desc = f"Tq=Tv={length}"
    elif name == "self":
        x = rng.normal(size=(batch, length, width)).astype("float32")
        zoo = SelfAttention(HEADS, width // HEADS)
        mha = keras.layers.MultiHeadAttention(HEADS, width // HEADS)
        inputs = [tf.constant(x)]

        def ref(args):
            return mha(args[0], args[0])

        ref.layer = mha
        desc = f"T={length} heads={HEADS}"
    else:
        raise ValueError(f"Unknown benchmark. Received: name={name!r}")
    zoo(inputs if name != "self" else inputs[0])
    ref(inputs)
    zoo_layer = zoo
    ref_layer = getattr(ref, "layer", ref)

    def zoo_fn(args):
        return zoo_layer(args if name != "self" else args[0])

    return zoo_fn, zoo_layer, ref, ref_layer, inputs, desc


def _compiled(fn, layer, inputs, backward, jit):
    variables = layer.trainable_variables

    if backward:

        def step(*args):
            args = list(args)
            with tf.GradientTape() as tape:
                tape.watch(args)
                out = fn(args)
                loss = tf.reduce_sum(out)
            grads = tape.gradient(loss, args + list(variables))
            return tf.add_n([tf.reduce_sum(g) for g in grads])

    else:

        def step(*args):
            return tf.reduce_sum(fn(list(args)))

    compiled = tf.function(step, jit_compile=jit)
    return lambda: compiled(*inputs).numpy()


def _time(fn_a, fn_b, repeats, min_seconds):
    """Best (minimum) time per call in ms of two functions, sampled alternately.

    The minimum is the estimate least disturbed by other processes on a shared
    machine; each sample runs enough calls to last about 5 ms.
    """
    for _ in range(2):  # trace/compile and warm up
        fn_a()
        fn_b()
    t0 = time.perf_counter()
    fn_a()
    fn_b()
    per_pair = time.perf_counter() - t0
    calls = max(1, int(0.01 / max(per_pair, 1e-6)))
    best_a = best_b = float("inf")
    start = time.perf_counter()
    samples = 0
    while samples < repeats or time.perf_counter() - start < min_seconds:
        for fn, which in ((fn_a, "a"), (fn_b, "b")):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            elapsed = (time.perf_counter() - t0) / calls
            if which == "a":
                best_a = min(best_a, elapsed)
            else:
                best_b = min(best_b, elapsed)
        samples += 1
    return best_a * 1e3, best_b * 1e3


def run(grid, names, repeats, min_seconds, modes, compilers):
    rng = np.random.default_rng(0)
    rows = []
    for name in names:
        for length, width in grid["sizes"]:
            keras.backend.clear_session()
            zoo_fn, zoo_layer, ref_fn, ref_layer, inputs, desc = _pair(
                name, width, length, grid["batch"], rng
            )
            for backward in modes:
                for jit in compilers:
                    a = _compiled(zoo_fn, zoo_layer, inputs, backward, jit)
                    b = _compiled(ref_fn, ref_layer, inputs, backward, jit)
                    zoo_ms, keras_ms = _time(a, b, repeats, min_seconds)
                    row = {
                        "layer": name,
                        "batch": grid["batch"],
                        "shape": desc,
                        "width": width,
                        "pass": "fwd+bwd" if backward else "fwd",
                        "compile": "xla" if jit else "graph",
                        "zoo_ms": zoo_ms,
                        "keras_ms": keras_ms,
                        "ratio": zoo_ms / keras_ms,
                    }
                    rows.append(row)
                    print(_format_row(row), file=sys.stderr, flush=True)
    return rows


COLUMNS = ("layer", "batch", "shape", "width", "pass", "compile")


def _format_row(row):
    return (
        f"{row['layer']:<10} {row['batch']:>5} {row['shape']:<18} {row['width']:>5} "
        f"{row['pass']:<7} {row['compile']:<5} {row['zoo_ms']:>10.2f} "
        f"{row['keras_ms']:>10.2f} {row['ratio']:>6.2f}"
    )


def format_table(rows, markdown=False):
    if markdown:
        lines = [
            "| layer | batch | shape | width | pass | compile | zoo ms | keras ms "
            "| zoo/keras |",
            "|---|---:|---|---:|---|---|---:|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {r['layer']} | {r['batch']} | {r['shape']} | {r['width']} | "
                f"{r['pass']} | {r['compile']} | {r['zoo_ms']:.2f} | "
                f"{r['keras_ms']:.2f} | {r['ratio']:.2f} |"
            )
        return "\n".join(lines)
    header = (
        f"{'layer':<10} {'batch':>5} {'shape':<18} {'width':>5} {'pass':<7} "
        f"{'comp':<5} {'zoo ms':>10} {'keras ms':>10} {'ratio':>6}"
    )
    return "\n".join([header, "-" * len(header)] + [_format_row(r) for r in rows])


def summary(rows):
    ratios = [r["ratio"] for r in rows]
    worst = max(rows, key=lambda r: r["ratio"])
    return (
        f"{len(rows)} timings; ratio zoo/keras: median {statistics.median(ratios):.2f}, "
        f"max {worst['ratio']:.2f} ({worst['layer']} {worst['shape']} "
        f"W={worst['width']} {worst['pass']} {worst['compile']}); "
        f"{sum(r <= 1.10 for r in ratios)}/{len(ratios)} within 1.10"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small sizes")
    parser.add_argument("--markdown", action="store_true", help="Markdown table")
    parser.add_argument(
        "--layers",
        default="bahdanau,luong_dot,self",
        help="comma-separated subset of bahdanau,luong_dot,self",
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed samples per row"
    )
    parser.add_argument(
        "--min-seconds", type=float, default=None, help="minimum timing per row"
    )
    parser.add_argument("--no-xla", action="store_true", help="skip jit_compile=True")
    parser.add_argument("--output", default=None, help="also write the table here")
    args = parser.parse_args(argv)

    grid = QUICK_GRID if args.quick else FULL_GRID
    repeats = args.repeats or (12 if args.quick else 10)
    min_seconds = args.min_seconds if args.min_seconds is not None else 0.0
    names = [n.strip() for n in args.layers.split(",") if n.strip()]
    compilers = (False,) if args.no_xla else (False, True)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    t0 = time.perf_counter()
    rows = run(grid, names, repeats, min_seconds, (False, True), compilers)
    elapsed = time.perf_counter() - t0
    header = (
        f"bench.layers {'--quick ' if args.quick else ''}on {started}: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}, float32, "
        f"best of {repeats} alternating samples; {elapsed:.0f} s"
    )
    table = format_table(rows, markdown=args.markdown)
    text = f"{header}\n\n{table}\n\n{summary(rows)}"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    return rows


if __name__ == "__main__":
    main()
