"""Time to quality: test BLEU against minutes of training, the peer and the zoo.

Both systems train on the same pairs, one after the other, on the same machine, and
both keep their weights at every `--every` minutes of training
(`zoo.training.TimedSnapshots`: the clock runs from the start of training through the
training steps, validation and callbacks, and stops while a snapshot is written).

- The peer (`bench.translation_peer`: the TensorFlow NMT tutorial's model from Keras
  built-ins, with letters of every script kept so that German or Vietnamese words
  survive its standardization) trains until `--minutes`.
- The zoo is `python -m recipes.translation` with its defaults for `--data` plus
  `--time-limit MINUTES --snapshot-minutes EVERY`: it ends at its own epoch count or
  at the limit, whichever comes first, and scores its snapshots itself.

Every snapshot is scored on the test set with greedy decoding; the table's score is
lowercased BLEU on sacrebleu's 13a tokenization of detokenized output (the peer writes
lowercased words, which the Moses detokenizer joins: "¿ qué hora es ?" -> "¿qué hora
es?"; the score of its words as written is in the JSON too);
the JSON file also holds lowercased BLEU on Moses-tokenized text, the published
Multi30k scoring.
The zoo's end point is also scored as the recipe delivers it (the epoch it selects,
beam search). Beside the points, each system's training speed: target tokens/s and
pairs/s, the median over its complete epochs (`zoo.training.Throughput`, the meter of
`bench.translation_peer`). Output: a Markdown table, a JSON file and a PNG plot of
BLEU against minutes.

    python -m bench.translation_time --data ../shared/data/multi30k \\
        --source de --target en --minutes 30 --every 2

`--rescore` scores the peer's snapshots of an earlier run again (same `--run-dir`) and
reads the zoo's recorded scores, without training.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.translation_time", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="as the recipe's --data")
    parser.add_argument("--source", default="de")
    parser.add_argument("--target", default="en")
    parser.add_argument("--minutes", type=float, default=30.0, help="training budget")
    parser.add_argument("--every", type=float, default=2.0, help="minutes per point")
    parser.add_argument("--units", type=int, default=256, help="the peer's width")
    parser.add_argument(
        "--order", default="peer,zoo", choices=("peer,zoo", "zoo,peer", "peer", "zoo")
    )
    parser.add_argument(
        "--zoo-flags", default="", help="more recipe flags, one string (default none)"
    )
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="no training: score the peer's snapshots in --run-dir again and read "
        "the zoo's recorded scores (its recipe scored its own snapshots)",
    )
    parser.add_argument("--run-dir", default="runs/bench_translation_time")
    parser.add_argument("--out", default="reports/bench_translation_time")
    args = parser.parse_args(argv)
    for name in ("minutes", "every"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name} must be > 0. Received: {getattr(args, name)}")
    if args.every > args.minutes:
        parser.error(f"--every ({args.every}) must not exceed --minutes")
    if args.units < 1:
        parser.error(f"--units must be >= 1. Received: {args.units}")
    return args


def detokenize(hypotheses, lang):
    """The peer's words, joined by spaces, as text (sacremoses' Moses detokenizer):
    both systems are scored on detokenized output, as sacrebleu expects (13a splits
    only ASCII punctuation, so a spaced "¿ qué" would not match a reference's "¿Qué")."""
    from sacremoses import MosesDetokenizer

    detokenizer = MosesDetokenizer(lang=lang)
    return [detokenizer.detokenize(h.split()) for h in hypotheses]


def run_peer(args, splits, train=True):
    """Trains the peer for `args.minutes`, snapshots every `args.every`, and scores
    the snapshots; with `train=False` only scores the snapshots in `args.run_dir`."""
    import keras

    from bench.translation_peer import PADDING, peer_translate, prepare_peer, speed
    from zoo.metrics import corpus_bleu, moses_bleu
    from zoo.training import Throughput, TimedSnapshots, load_snapshot

    keras.utils.set_random_seed(1234)
    peer = prepare_peer(splits["train"], args.units, letters="unicode")
    folder = os.path.join(args.run_dir, "peer", "snapshots")
    result = {}
    if train:
        clock = TimedSnapshots(folder, args.every, args.minutes)
        meter = Throughput(peer.tokens)
        peer.model.fit(
            peer.dataset,
            epochs=10_000,
            callbacks=[clock, meter],
            verbose=2,
            shuffle=False,
        )
        pairs = len(splits["train"].sources)
        result["speed"] = speed("peer", meter.rates, peer.tokens, pairs, PADDING)
    with open(os.path.join(folder, "snapshots.json"), encoding="utf-8") as f:
        snapshots = json.load(f)
    test, points = splits["test"], []
    for snapshot in snapshots:
        load_snapshot(peer.model, os.path.join(folder, snapshot["file"]))
        spaced = peer_translate(peer, test.sources)
        hypotheses = detokenize(spaced, args.target)
        bleu, _ = corpus_bleu(hypotheses, test.targets, lowercase=True)
        as_spaced, _ = corpus_bleu(spaced, test.targets, lowercase=True)
        moses, _ = moses_bleu(hypotheses, test.targets, args.target)
        points.append(
            {
                **snapshot,
                "bleu_lowercase": bleu,
                "bleu_moses_lowercase": moses,
                "bleu_lowercase_spaced_words": as_spaced,
            }
        )
        print(f"peer {snapshot['minutes']:6.2f} min: {bleu:.2f}", flush=True)
    return {**result, "points": points, "examples": hypotheses[:3]}


def run_zoo(args, train=True):
    """Runs the recipe with its defaults, limited and snapshotted; returns its
    scored points and end point (from its metrics.json, which `train=False` only
    reads)."""
    import shlex

    from bench.translation_peer import speed

    run_dir = os.path.join(args.run_dir, "zoo")
    report_dir = os.path.join(run_dir, "reports")
    command = [
        sys.executable, "-m", "recipes.translation",
        "--data", args.data,
        "--source", args.source,
        "--target", args.target,
        "--run-dir", run_dir,
        "--report-dir", report_dir,
        "--no-export",
        "--resume", "never",
        "--time-limit", str(args.minutes),
        "--snapshot-minutes", str(args.every),
        *shlex.split(args.zoo_flags),
    ]  # fmt: skip
    print(" ".join(command[1:]), flush=True)
    if train:
        subprocess.run(command, check=True)
    with open(os.path.join(report_dir, "metrics.json"), encoding="utf-8") as f:
        metrics = json.load(f)
    search = metrics["search"]
    return {
        "points": metrics["snapshots"],
        "end": {
            "minutes": metrics["train_seconds"] / 60.0,
            "search": search,
            "bleu_lowercase": metrics[search]["bleu_lowercase"],
            "greedy_bleu_lowercase": metrics["greedy"]["bleu_lowercase"],
        },
        "command": " ".join(command[1:]),
        "speed": speed(
            "zoo",
            metrics["train_tokens_per_second_by_epoch"],
            metrics["train_target_tokens"],
            metrics["train_pairs"],
            None,
        ),
    }


def table(results, every):
    """The Markdown table: BLEU of each system at each multiple of `every`."""
    marks = sorted(
        {round(p["minutes"], 2) for r in results.values() for p in r["points"]}
    )
    names = list(results)
    lines = [
        "| minutes | " + " | ".join(names) + " |",
        "|---:|" + "---:|" * len(names),
    ]
    for mark in marks:
        cells = []
        for name in names:
            found = [
                p["bleu_lowercase"]
                for p in results[name]["points"]
                if round(p["minutes"], 2) == mark
            ]
            cells.append(f"{found[0]:.2f}" if found else "")
        lines.append(f"| {mark:g} | " + " | ".join(cells) + " |")
    if "zoo" in results:
        end = results["zoo"]["end"]
        lines.append(
            f"| {end['minutes']:.1f} (zoo's end, {end['search']}) | "
            + " | ".join(
                f"{end['bleu_lowercase']:.2f}" if n == "zoo" else "" for n in names
            )
            + " |"
        )
    return "\n".join(lines)


def plot(results, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, result in results.items():
        xs = [p["minutes"] for p in result["points"]]
        ys = [p["bleu_lowercase"] for p in result["points"]]
        ax.plot(xs, ys, marker="o", label=f"{name} (greedy)")
        if "end" in result:
            end = result["end"]
            ax.plot(
                [end["minutes"]],
                [end["bleu_lowercase"]],
                marker="*",
                markersize=12,
                linestyle="none",
                label=f"{name} end ({end['search']})",
            )
    ax.set_xlabel("minutes of training")
    ax.set_ylabel("test BLEU (lowercased, 13a)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    args = parse_args(argv)
    from zoo.data.parallel import load_parallel

    splits = load_parallel(args.data, args.source, args.target, max_words=80, seed=1234)
    results = {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    train = not args.rescore
    for name in args.order.split(","):
        if name == "peer":
            results[name] = run_peer(args, splits, train)
        else:
            results[name] = run_zoo(args, train)
    pair = f"{args.source}-{args.target}"
    if args.rescore:  # the speeds of the run that trained
        previous = os.path.join(args.out, f"{pair}.json")
        if os.path.isfile(previous):
            with open(previous, encoding="utf-8") as f:
                before = json.load(f)["results"]
            for name, result in results.items():
                result.setdefault("speed", before.get(name, {}).get("speed"))
    os.makedirs(args.out, exist_ok=True)
    text = table(results, args.every)
    print(text, flush=True)
    for name, result in results.items():
        s = result.get("speed")
        if not s or s["median_tokens_per_second"] is None:
            continue
        print(
            f"{name}: {s['median_tokens_per_second']} target tokens/s, "
            f"{s['median_pairs_per_second']} pairs/s (median of {len(s['tokens_per_second'])}"
            " complete epochs)",
            flush=True,
        )
    png = plot(
        results,
        os.path.join(args.out, f"{pair}.png"),
        f"{os.path.basename(os.path.normpath(args.data))} {pair}: BLEU by minute",
    )
    with open(os.path.join(args.out, f"{pair}.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "results": results,
                "table": text,
                "plot": png,
                "args": vars(args),
                "machine": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "started": started,
                "ended": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            },
            f,
            indent=1,
        )
    print(f"plot: {png}", flush=True)
    return results


if __name__ == "__main__":
    main()
