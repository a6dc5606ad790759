"""Time to quality: test BLEU against minutes of training, the peer and the zoo.

Both systems train on the same pairs, one after the other, on the same machine, and
both keep their weights at every `--every` minutes of training
(`zoo.training.TimedSnapshots`: the clock runs from the start of training through the
training steps, validation and callbacks, and is paused while a snapshot is written,
so writing snapshots costs neither system training time).

- The peer (`bench.translation_peer`: the TensorFlow NMT-with-attention tutorial as
  written, with letters of every script kept so that German or Vietnamese words
  survive its standardization) trains on the tutorial's schedule
  (`fit_tutorial`: 100-step epochs, 20 validation batches after each, at most 100
  epochs, `EarlyStopping(patience=3)` on the validation loss) or until `--minutes`,
  whichever ends first; when it ends before the limit its last weights are one more
  snapshot (`end` in the JSON), and it has no later points.
- The zoo is `python -m zoo.recipes.translation` with its defaults for `--data` plus
  `--time-limit MINUTES --snapshot-minutes EVERY`: it ends at its own epoch count or
  at the limit, whichever comes first, and exports the model it selects.

The two are not the same kind of weights: the zoo's snapshots are its weight average
(`--ema`, as its validation and export use them) and its training steps may compute
the logits product in bfloat16 (`--training-logits-dtype auto`), while the peer's are
its raw float32 weights. Every comparison printed says so, as read from the zoo's run.

Every snapshot of both systems is decoded greedily here, on the test set, and scored
by one function (`score`, the same references for both): the table's score is
lowercased BLEU on sacrebleu's 13a tokenization of detokenized output (the peer writes
lowercased words, which the Moses detokenizer joins: "¿ qué hora es ?" -> "¿qué hora
es?"; the zoo's output is text already); the JSON also holds cased BLEU and
lowercased BLEU on Moses-tokenized text, the published Multi30k scoring, and for the
zoo the score its recipe recorded for each snapshot (a check: the same number). The
zoo's end point is its export (the epoch it selects) decoded with its beam search and
scored by the same function. Beside the points, each system's training speed: target
tokens/s and pairs/s, the median over its complete epochs (`zoo.training.Throughput`,
the meter of `bench.translation_peer`; the peer's 100-step epochs are credited with
the expected tokens of 100 of its batches). Output: a Markdown table, a JSON file and
a PNG plot of BLEU against minutes.

    python -m bench.translation_time --data ../shared/data/multi30k \\
        --source de --target en --minutes 30 --every 2

`--rescore` decodes and scores the snapshots of an earlier run again (same
`--run-dir`), without training. `--order peer` or `--order zoo` runs one system; the
other's results are kept from the JSON already in `--out` (each entry records when
its system trained), so the two can run at different times with one table.
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
        help="no training: decode and score the snapshots in --run-dir again",
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


def score(hypotheses, references, lang):
    """The one scoring of both systems: lowercased BLEU on 13a tokens
    (`bleu_lowercase`, the table's), cased BLEU (`bleu`) and lowercased BLEU on
    Moses-tokenized text (`bleu_moses_lowercase`)."""
    from zoo.metrics import corpus_bleu, moses_bleu

    lowercase, signature = corpus_bleu(hypotheses, references, lowercase=True)
    return {
        "bleu_lowercase": lowercase,
        "bleu": corpus_bleu(hypotheses, references)[0],
        "bleu_moses_lowercase": moses_bleu(hypotheses, references, lang)[0],
        "bleu_lowercase_signature": signature,
    }


def score_snapshots(folder, load, translate, test, lang):
    """Every snapshot `folder/snapshots.json` lists, put into the model (`load(path)`),
    decoded (`translate(sources)` -> list of str) and scored by `score` on the test
    references.

    Returns:
        `(points, hypotheses)`: one dict per snapshot (its `snapshots.json` entry and
        `score`'s numbers) and the last snapshot's translations.
    """
    with open(os.path.join(folder, "snapshots.json"), encoding="utf-8") as f:
        snapshots = json.load(f)
    points, hypotheses = [], []
    for snapshot in snapshots:
        load(os.path.join(folder, snapshot["file"]))
        hypotheses = translate(test.sources)
        points.append({**snapshot, **score(hypotheses, test.targets, lang)})
    return points, hypotheses


def peer_clock(folder, every, minutes):
    """`TimedSnapshots` for the peer, which also keeps its last weights as a snapshot
    (marked `end`) when it stops before the limit (early stopping, 100 epochs)."""
    from zoo.training import TimedSnapshots

    class PeerSnapshots(TimedSnapshots):
        def on_train_end(self, logs=None):
            seconds = self.elapsed()
            if self.limit is not None and seconds >= self.limit:
                return
            if not self.snapshots or self.snapshots[-1]["step"] != self._step:
                self._save(seconds)
                self.snapshots[-1]["end"] = True
                self._save_listing()

        def _save_listing(self):
            from zoo.io import atomic_write

            with atomic_write(os.path.join(self.folder, "snapshots.json")) as f:
                json.dump(self.snapshots, f, indent=1)

    return PeerSnapshots(folder, every, minutes)


def peer_translator(peer, lang):
    """`(load, translate)` of the peer: its snapshot loader and its greedy
    translations, detokenized."""
    from bench.translation_peer import peer_translate
    from zoo.training import load_snapshot

    def translate(sources):
        return detokenize(peer_translate(peer, sources), lang)

    return (lambda path: load_snapshot(peer.model, path)), translate


def run_peer(args, splits, train=True):
    """Trains the peer on the tutorial's schedule for at most `args.minutes`,
    snapshots every `args.every`, and scores the snapshots; with `train=False` only
    scores the snapshots in `args.run_dir`."""
    import keras

    from bench.translation_peer import (
        PADDING,
        PRECISION,
        TUTORIAL_FIT,
        fit_tutorial,
        prepare_peer,
        speed,
    )
    from zoo.training import Throughput

    keras.utils.set_random_seed(1234)
    peer = prepare_peer(splits["train"], args.units, "unicode", val=splits["val"])
    folder = os.path.join(args.run_dir, "peer", "snapshots")
    result = {"precision": PRECISION}
    if train:
        os.makedirs(folder, exist_ok=True)
        clock = peer_clock(folder, args.every, args.minutes)
        steps = TUTORIAL_FIT["steps_per_epoch"]
        per_epoch = peer.tokens * steps / peer.batches  # expected tokens of an epoch
        meter = Throughput(per_epoch, steps)
        history = fit_tutorial(peer, [clock, meter])
        pairs = len(splits["train"].sources) * steps / peer.batches
        result["speed"] = speed("peer", meter.rates, per_epoch, pairs, PADDING)
        result["stopped"] = {
            "minutes": round(clock.elapsed() / 60.0, 4),
            "epochs": len(history.history.get("loss", [])),
            "steps": clock._step,
        }
    load, translate = peer_translator(peer, args.target)
    points, hypotheses = score_snapshots(
        folder, load, translate, splits["test"], args.target
    )
    for p in points:
        print(f"peer {p['minutes']:6.2f} min: {p['bleu_lowercase']:.2f}", flush=True)
    return {**result, "points": points, "examples": hypotheses[:3]}


def zoo_translator(run_dir):
    """`(load, translate, translate_end, weights)` of the zoo's run: its export
    (`VERSION.keras` and preprocessor), a snapshot loader (into its training view),
    greedy and export-beam translation functions reading the current weights, and
    the export's own weights (to put back for the end point)."""
    from bench.translation import exported_translator, latest_export
    from zoo.export import load_manifest
    from zoo.models.translation import Seq2SeqTranslatorPreprocessor
    from zoo.models.translation.translator import Translator
    from zoo.training import load_snapshot

    version_dir = latest_export(run_dir)
    model = exported_translator(version_dir)
    preprocessor = Seq2SeqTranslatorPreprocessor.from_export(version_dir)
    decoding = load_manifest(version_dir)["metadata"]["decoding"]["serving_default"]
    search = {
        "alpha": decoding["length_penalty_alpha"],
        "beta": decoding["coverage_penalty_beta"],
        "length_a": decoding["length_a"],
        "length_b": decoding["length_b"],
    }
    greedy = Translator(model, preprocessor, 1, **search)
    beam = Translator(model, preprocessor, decoding["beam_width"], **search)
    exported = model.get_weights()

    def load(path):
        load_snapshot(model, path)  # the task's weights: its network's, in order

    def end(sources):
        model.set_weights(exported)
        return beam.translate_texts(list(sources))

    return load, (lambda s: greedy.translate_texts(list(s))), end, decoding


def run_zoo(args, splits, train=True):
    """Runs the recipe with its defaults, limited and snapshotted, then decodes and
    scores its snapshots and its export here (`score`); with `train=False` only
    scores an earlier run's."""
    import shlex

    from bench.translation_peer import speed, zoo_precision

    run_dir = os.path.join(args.run_dir, "zoo")
    report_dir = os.path.join(run_dir, "reports")
    command = [
        sys.executable, "-m", "zoo.recipes.translation",
        "--data", args.data,
        "--source", args.source,
        "--target", args.target,
        "--run-dir", run_dir,
        "--report-dir", report_dir,
        "--export-dir", os.path.join(run_dir, "export"),
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
    load, translate, translate_end, decoding = zoo_translator(run_dir)
    test = splits["test"]
    points, _ = score_snapshots(
        os.path.join(run_dir, "snapshots"), load, translate, test, args.target
    )
    recorded = {round(p["minutes"], 4): p for p in metrics.get("snapshots", [])}
    for p in points:
        mine = recorded.get(round(p["minutes"], 4), {})
        p["recipe_bleu_lowercase"] = mine.get("bleu_lowercase")
        print(f"zoo  {p['minutes']:6.2f} min: {p['bleu_lowercase']:.2f}", flush=True)
    hypotheses = translate_end(test.sources)
    search = f"beam{decoding['beam_width']}"
    return {
        "points": points,
        "end": {
            "minutes": metrics["train_seconds"] / 60.0,
            "search": search,
            "alpha": decoding["length_penalty_alpha"],
            **score(hypotheses, test.targets, args.target),
            "recipe_bleu_lowercase": metrics.get(search, {}).get("bleu_lowercase"),
        },
        "examples": hypotheses[:3],
        "command": " ".join(command[1:]),
        "precision": zoo_precision(run_dir, metrics),
        "speed": speed(
            "zoo",
            metrics["train_tokens_per_second_by_epoch"],
            metrics["train_target_tokens"],
            metrics["train_pairs"],
            "length buckets",
        ),
    }


def table(results, every):
    """The Markdown table: BLEU of each system at each multiple of `every`, then
    one line per system saying what its weights and precision are."""
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
    return "\n".join([*lines, "", *precision_notes(results)])


def precision_notes(results):
    """`name: precision` of every system (weight averaging, dtype of the logits)."""
    return [
        f"{name}: {result['precision']}"
        for name, result in results.items()
        if result.get("precision")
    ]


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
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.text(0.01, 0.01, "\n".join(precision_notes(results)), fontsize=6.5)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def earlier_results(args, path):
    """The results of each system in the JSON at `path` (an earlier run; `{}` when
    there is none), each with the time its run trained; exits before any training
    when this run trains one system and that run had other data, languages or
    budget (its table would mix the two)."""
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        earlier = json.load(f)
    same = ("data", "source", "target", "minutes", "every")
    changed = [k for k in same if earlier["args"].get(k) != getattr(args, k)]
    if changed and "," not in args.order:
        raise SystemExit(
            f"{path}: its run had other --{', --'.join(changed)}; give this run its "
            "own --out to keep both"
        )
    for result in earlier["results"].values():  # a run of one system or of both
        result.setdefault(
            "trained", {"started": earlier["started"], "ended": earlier["ended"]}
        )
    return earlier["results"]


def main(argv=None):
    args = parse_args(argv)
    from zoo.data.parallel import load_parallel

    splits = load_parallel(args.data, args.source, args.target, max_words=80, seed=1234)
    pair = f"{args.source}-{args.target}"
    before = earlier_results(args, os.path.join(args.out, f"{pair}.json"))
    results = {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    train = not args.rescore
    for name in args.order.split(","):
        begun = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        if name == "peer":
            results[name] = run_peer(args, splits, train)
        else:
            results[name] = run_zoo(args, splits, train)
        if train:
            ended = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            results[name]["trained"] = {"started": begun, "ended": ended}
    if args.rescore:  # the speeds and times of the run that trained
        for name, result in results.items():
            for key in ("speed", "stopped", "trained"):
                if key not in result and key in before.get(name, {}):
                    result[key] = before[name][key]
    # a system not in --order keeps its results from the earlier run at --out, so
    # the two may train one at a time (each on an otherwise idle machine)
    results = {
        name: results[name] if name in results else before[name]
        for name in ("peer", "zoo")
        if name in results or name in before
    }
    os.makedirs(args.out, exist_ok=True)
    text = table(results, args.every)
    print(text, flush=True)
    for name, result in results.items():
        s = result.get("speed")
        if not s or s["median_tokens_per_second"] is None:
            continue
        print(
            f"{name}: {s['median_tokens_per_second']} target tokens/s, "
            f"{s['median_pairs_per_second']} pairs/s (median of "
            f"{len(s['tokens_per_second'])} complete epochs; {result['precision']})",
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
