"""Mixed precision and XLA check of the zoo layers, on the device Keras runs on.

For each layer the same weights run one masked batch (random lengths, one row with
every position masked) under `float32`, `mixed_float16` and `mixed_bfloat16`. Per
policy it reports:

- `err`: the largest absolute difference of the layer's output from float32's,
  divided by the largest absolute float32 output (a relative error);
- `sum-1`: the largest `|sum of attention weights - 1|` over rows with at least
  one unmasked position (local-p: by how much a row exceeds 1, since its
  Gaussian leaves rows below 1), and `masked`: the largest weight on a masked position or
  in the fully masked row (must be 0);
- `finite`: outputs, the loss and every gradient-updated weight after one SGD step
  are finite (float16 trains through Keras' loss-scale optimizer, as
  `compile` sets it up under `mixed_float16`);
- `ms`: time per training step (forward + backward + update of a model that is
  only this layer), compiled with XLA (`jit_compile=True`) and without it (a
  `tf.function` graph under TensorFlow, op-by-op execution under JAX);
  `--no-xla` skips the XLA column, `--xla-only` the other.

The layers use `keras.ops` only, so it runs under any Keras backend:
`KERAS_BACKEND=jax python -m bench.mixed_precision` on a GPU machine that has JAX
but not TensorFlow, `python -m bench.mixed_precision --quick` here. Exit status 1
when a check fails (non-finite values, weight on a masked position, rows that do
not sum to 1 within the policy's tolerance, or an error above it).

    python -m bench.mixed_precision --quick      # small sizes, a CPU is enough
    python -m bench.mixed_precision --markdown   # batch 64, T 128, width 512
"""

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from zoo.layers import (  # noqa: E402
    AttentionPooling,
    BahdanauAttention,
    LuongAttention,
    MemoryNetwork,
    SelfAttention,
    StructuredSelfAttention,
)

POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
# Relative output error allowed per policy: float16 keeps 10 mantissa bits,
# bfloat16 7; a few roundings in a row stay well inside these.
TOLERANCE = {"float32": 1e-6, "mixed_float16": 2e-2, "mixed_bfloat16": 1e-1}
SUM_TOLERANCE = {"float32": 1e-5, "mixed_float16": 1e-2, "mixed_bfloat16": 5e-2}
LAYERS = (
    "bahdanau",
    "luong_dot",
    "luong_general",
    "luong_concat",
    "luong_local_p",
    "self",
    "structured",
    "pooling",
    "memory",
)
FULL = {"batch": 64, "length": 128, "width": 512, "query": 16}
QUICK = {"batch": 8, "length": 16, "width": 32, "query": 4}


def make_inputs(size, rng):
    """Random float inputs and a padding mask whose row 1 is fully masked."""
    batch, length, width, tq = (size[k] for k in ("batch", "length", "width", "query"))
    lengths = rng.integers(1, length + 1, size=batch)
    lengths[0] = length
    lengths[1] = 0  # the fully masked row
    mask = np.arange(length)[None, :] < lengths[:, None]
    return {
        "query": rng.normal(size=(batch, tq, width)).astype("float32"),
        "value": rng.normal(size=(batch, length, width)).astype("float32"),
        "mask": mask,
        "question": rng.integers(1, 50, size=(batch, 6)).astype("int32"),
        "story": np.where(
            mask[:, :, None] & (rng.random((batch, length, 7)) < 0.8),
            rng.integers(1, 50, size=(batch, length, 7)),
            0,
        ).astype("int32"),
    }


def build(name, size, data):
    """A functional model `inputs -> [output, attention]` holding the layer."""
    width, length = size["width"], size["length"]
    tq = size["query"]
    query = keras.Input((tq, width), name="query")
    value = keras.Input((length, width), name="value")
    mask = keras.Input((length,), dtype="bool", name="mask")
    if name == "memory":
        question = keras.Input((6,), dtype="int32", name="question")
        story = keras.Input((length, 7), dtype="int32", name="story")
        layer = MemoryNetwork(
            vocabulary_size=50, embedding_dim=width, memory_size=length, hops=3
        )
        out, att = layer([question, story], return_attention_scores=True)
        inputs, feed = [question, story], [data["question"], data["story"]]
        # Attention (B, hops, M); a slot is "masked" when it holds no sentence.
        att_mask = np.broadcast_to(
            data["story"].any(-1)[:, None, :], (len(data["story"]), 3, length)
        )
        return keras.Model(inputs, [out, att]), feed, att_mask
    if name == "bahdanau":
        layer = BahdanauAttention(width)
    elif name.startswith("luong"):
        kind = name.split("_", 1)[1]
        layer = (
            LuongAttention("general", window="local-p", window_size=8)
            if kind == "local_p"
            else LuongAttention(kind, units=width if kind == "concat" else None)
        )
    elif name in ("self", "structured", "pooling"):
        layer = {
            "self": lambda: SelfAttention(8, width // 8),
            "structured": lambda: StructuredSelfAttention(width // 2, 8),
            "pooling": lambda: AttentionPooling(width // 2),
        }[name]()
        out, att = layer(value, mask=mask, return_attention_scores=True)
        feed = [data["value"], data["mask"]]
        if name == "self":  # (B, heads, T, T): padded queries attend nowhere
            m = data["mask"]
            att_mask = np.broadcast_to(
                m[:, None, :, None] & m[:, None, None, :], (len(m), 8, length, length)
            )
        elif name == "structured":  # (B, r, T)
            att_mask = np.broadcast_to(
                data["mask"][:, None, :], (len(data["mask"]), 8, length)
            )
        else:
            att_mask = data["mask"]
        return keras.Model([value, mask], [out, att]), feed, att_mask
    else:
        raise ValueError(f"Unknown layer. Received: name={name!r}")
    out, att = layer([query, value], mask=[None, mask], return_attention_scores=True)
    feed = [data["query"], data["value"], data["mask"]]
    att_mask = np.broadcast_to(
        data["mask"][:, None, :], (len(data["mask"]), tq, length)
    )
    return keras.Model([query, value, mask], [out, att]), feed, att_mask


def attention_checks(att, att_mask, sums_to_one=True):
    """`(max |row sum - 1| over rows with a real position, max masked weight)`.

    With `sums_to_one=False` (Luong's local-p, whose softmax is multiplied by a
    Gaussian around the predicted position) rows must sum to at most 1: the first
    value is then how far a row sum exceeds 1.
    """
    att = np.asarray(att, dtype="float64")
    att_mask = np.asarray(att_mask, dtype=bool)
    masked = float(np.abs(np.where(att_mask, 0.0, att)).max())
    has_real = att_mask.any(-1)
    sums = att.sum(-1)
    excess = sums - 1.0 if sums_to_one else np.maximum(sums - 1.0, 0.0)
    sum_err = float(np.abs(np.where(has_real, excess, 0.0)).max())
    return sum_err, masked


def time_steps(model, feed, targets, jit, steps):
    """Milliseconds per `train_on_batch` (fwd + bwd + SGD update), after warm-up."""
    model.compile(
        optimizer=keras.optimizers.SGD(1e-3),
        loss=["mse", None],
        jit_compile=jit,
    )
    loss = model.train_on_batch(feed, targets)
    model.train_on_batch(feed, targets)
    start = time.perf_counter()
    for _ in range(steps):
        loss = model.train_on_batch(feed, targets)
    # Reading the loss waits for the device to finish the queued steps.
    loss = float(np.asarray(loss[0] if isinstance(loss, (list, tuple)) else loss))
    return (time.perf_counter() - start) / steps * 1e3, loss


def check_layer(name, size, steps, compilers, seed=0):
    rows = []
    reference = None
    weights = None
    data = make_inputs(size, np.random.default_rng(seed))
    for policy in POLICIES:
        keras.backend.clear_session()
        keras.config.set_dtype_policy(policy)
        keras.utils.set_random_seed(seed)
        try:
            model, feed, att_mask = build(name, size, data)
            if weights is None:
                weights = model.get_weights()
            else:
                model.set_weights(weights)
            out, att = model.predict_on_batch(feed)
            out = np.asarray(out, dtype="float32")
            if reference is None:
                reference = out
            scale = max(float(np.abs(reference).max()), 1e-12)
            err = float(np.abs(out - reference).max()) / scale
            sum_err, masked = attention_checks(
                att, att_mask, sums_to_one=name != "luong_local_p"
            )
            finite = bool(
                np.isfinite(out).all() and np.isfinite(np.asarray(att, "float32")).all()
            )
            row = {
                "layer": name,
                "policy": policy,
                "err": err,
                "sum_err": sum_err,
                "masked": masked,
            }
            targets = [np.zeros_like(reference), None]
            for jit in compilers:
                model.set_weights(weights)
                ms, loss = time_steps(model, feed, targets, jit, steps)
                finite = (
                    finite
                    and np.isfinite(loss)
                    and all(np.isfinite(w).all() for w in model.get_weights())
                )
                row["xla_ms" if jit else "noxla_ms"] = ms
            row["finite"] = finite
            row["ok"] = bool(
                finite
                and masked == 0.0
                and sum_err <= SUM_TOLERANCE[policy]
                and err <= TOLERANCE[policy]
            )
        finally:
            keras.config.set_dtype_policy("float32")
        rows.append(row)
        print(format_row(row), file=sys.stderr, flush=True)
    return rows


def _ms(row, key):
    return f"{row[key]:.2f}" if key in row else "-"


def format_row(row):
    return (
        f"{row['layer']:<14} {row['policy']:<15} {row['err']:>9.2e} "
        f"{row['sum_err']:>9.2e} {row['masked']:>7.1e} {str(row['finite']):>6} "
        f"{_ms(row, 'noxla_ms'):>9} {_ms(row, 'xla_ms'):>9} "
        f"{'ok' if row['ok'] else 'FAIL':>4}"
    )


def format_table(rows, markdown=False):
    if markdown:
        lines = [
            "| layer | policy | rel. error vs float32 | max \\|sum-1\\| | max masked "
            "weight | finite | step ms (no XLA) | step ms (XLA) | check |",
            "|---|---|---:|---:|---:|---|---:|---:|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r['layer']} | {r['policy']} | {r['err']:.1e} | "
                f"{r['sum_err']:.1e} | {r['masked']:.0e} | {r['finite']} | "
                f"{_ms(r, 'noxla_ms')} | {_ms(r, 'xla_ms')} | "
                f"{'ok' if r['ok'] else 'FAIL'} |"
            )
        return "\n".join(lines)
    header = (
        f"{'layer':<14} {'policy':<15} {'err':>9} {'sum-1':>9} {'masked':>7} "
        f"{'finite':>6} {'noxla ms':>9} {'xla ms':>9} {'':>4}"
    )
    return "\n".join([header, "-" * len(header)] + [format_row(r) for r in rows])


def device_name():
    """What Keras computes on: the first GPU's name, else the CPU."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        device = jax.devices()[0]
        return f"{device.platform}: {getattr(device, 'device_kind', device)}"
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            details = tf.config.experimental.get_device_details(gpus[0])
            return f"gpu: {details.get('device_name', gpus[0].name)}"
    return f"cpu: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--markdown", action="store_true", help="Markdown table")
    parser.add_argument(
        "--layers", default=",".join(LAYERS), help=f"subset of {','.join(LAYERS)}"
    )
    parser.add_argument("--steps", type=int, default=None, help="timed steps per row")
    xla = parser.add_mutually_exclusive_group()
    xla.add_argument("--no-xla", action="store_true", help="without XLA only")
    xla.add_argument("--xla-only", action="store_true", help="XLA only")
    parser.add_argument("--output", default=None, help="also write the table here")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.layers.split(",") if n.strip()]
    for name in names:
        if name not in LAYERS:
            parser.error(f"unknown layer {name!r}; choose from {', '.join(LAYERS)}")
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be >= 1. Received: {args.steps}")
    size = QUICK if args.quick else FULL
    steps = args.steps or (5 if args.quick else 20)
    compilers = (True,) if args.xla_only else (False,) if args.no_xla else (False, True)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    t0 = time.perf_counter()
    rows = []
    for name in names:
        rows += check_layer(name, size, steps, compilers)
    header = (
        f"bench.mixed_precision {'--quick ' if args.quick else ''}on {started}: "
        f"{device_name()}; Keras {keras.__version__}, backend "
        f"{keras.backend.backend()}; batch {size['batch']}, length {size['length']}, "
        f"width {size['width']}; mean of {steps} steps; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    failed = [r for r in rows if not r["ok"]]
    verdict = f"{len(rows) - len(failed)}/{len(rows)} checks passed" + (
        "; failed: " + ", ".join(f"{r['layer']} {r['policy']}" for r in failed)
        if failed
        else ""
    )
    text = f"{header}\n\n{format_table(rows, args.markdown)}\n\n{verdict}"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
