"""End-to-end memory network (MemN2N) question answering on bAbI, servable.

Task: the 20 bAbI QA tasks (Weston et al. 2015): read a short story, answer a
question with one word. Paper: Sukhbaatar, Szlam, Weston, Fergus, "End-To-End
Memory Networks" (NIPS 2015). Model: `zoo.models.memn2n.MemN2N`: the paper's model
(K = 3 hops, answer = softmax(W (u_K + o_K)), adjacent tying, W^T = C^K), with
position encoding (PE), temporal encoding (TE), linear start (LS: softmax removed
at first), random noise (RN: 10% empty memories inserted in training), SGD with
gradients clipped at norm 40, learning rate 0.01 (0.005 with LS) halved every 25
epochs for 100 epochs (per task, d = 20) or every 15 epochs for 60 epochs (joint,
d = 50), batch 32, memory of the 50 most recent sentences, 10% of train held out
for validation, `--restarts N` keeping the run with the lowest training error.
Linear start follows the authors' code: a fixed 20 (per task) or 30 (joint) LS
epochs at the initial rate, then the softmax returns and the schedule above starts
afresh (so 120 / 90 epochs in all); `--ls-epochs 0` ends LS instead when validation
loss stops falling (the paper's wording). Empty memory slots are nil memories as in
the authors' code: score 0 and output vector 0, but they compete in the attention
softmax, so attention may go to "no sentence" (`--empty-slots mask` removes them).
Metric: test error per task (%), mean error, failed tasks (error > 5%).

Commands:

    python -m recipes.memn2n_babi                          # generated demo, < 1 min
    python -m recipes.memn2n_babi --data ../shared/data/babi --tasks 1-20 --joint
    python -m recipes.memn2n_babi --data ../shared/data/babi --tasks 1,2 --size 10k
    python -m recipes.memn2n_babi --data ../shared/data/babi --tasks 1-20 --restarts 10

Outputs: `runs/memn2n_babi/` (`vocab.txt`, per-run checkpoints and logs),
`reports/memn2n_babi/` (`test_errors.md`, `metrics.json`, and
`attention_task<N>_<i>.png`: per-hop attention over the story sentences for sample
test questions, rows = hops, columns = sentences oldest to newest, supporting facts
marked with `*`, like the paper's Figure 2) and, when one model was trained (joint
training, a single task or the demo), `saved_models/memn2n/VERSION/` with

- `serving_default(story: string [None], question: string [None])` ->
  `answer` string [None], `probabilities` float [None, V], `attention` float
  [None, hops, memory_slots] (slot 0 = most recent sentence), `memory` string
  [None, memory_slots] (the sentence in each slot, "" when empty);
- `preprocess(story, question)` -> `story` int32 [None, memory_slots, J],
  `question` int32 [None, J], the Keras model's inputs;

plus `saved_models/memn2n/VERSION.keras`. A story is split into sentences on "\\n";
empty lines are skipped; the 50 most recent sentences are kept (a longer story loses
its oldest ones; a story over 256 KiB is first cut to its last 256 KiB); each
sentence and the question keep their first J words (J = the longest training
sentence). Unknown words map to `[UNK]`. `attention` covers every slot: the weight
on empty slots (memory "") is the attention that went to no sentence. An empty
story gives the answer of the question alone (attention spread evenly over the
empty slots, or all zero with `--empty-slots mask`); an empty question gives uniform
attention over all slots; never NaN.
"""

import argparse
import dataclasses
import hashlib
import json
import os
import time

import keras
import numpy as np

from zoo import __version__ as zoo_version
from zoo.data import babi
from zoo.models.memn2n import MemN2N, MemN2NServing, train_memn2n
from zoo.training import (
    TrainingConfig,
    add_output_args,
    add_training_args,
    averaging,
    fit,
    get_strategy,
    set_seed,
)

NAME = "memn2n_babi"
EXPORT_NAME = "memn2n"

PAPER_1K_JOINT_PE_LS_RN = {
    1: 0.0, 2: 11.4, 3: 21.9, 4: 13.4, 5: 14.4, 6: 2.8, 7: 18.3, 8: 9.3, 9: 1.9,
    10: 6.5, 11: 0.3, 12: 0.1, 13: 0.2, 14: 6.9, 15: 0.0, 16: 2.7, 17: 40.4,
    18: 9.4, 19: 88.0, 20: 0.0,
}  # fmt: skip
"""Test error (%) of the paper (Table 1, 1k, PE LS RN, joint): mean 12.4, 11 failed."""


@dataclasses.dataclass
class Config:
    """Everything the recipe needs (filled from the command line by `parse_config`)."""

    data: str = None
    tasks: tuple = tuple(range(1, 21))
    joint: bool = False
    size: str = "1k"
    language: str = "en"
    memory_size: int = 50
    embedding_dim: int = None  # None: 20 per task, 50 joint (the paper's sizes)
    hops: int = 3
    tying: str = "adjacent"
    position_encoding: bool = True
    temporal_encoding: bool = True
    linear_start: bool = True
    ls_patience: int = 1
    ls_epochs: int = 0  # > 0: linear start lasts exactly this many epochs
    empty_slots: str = "nil"
    random_noise: float = 0.1
    clipnorm: float = 40.0
    decay_every: int = None  # None: 25 per task, 15 joint
    restarts: int = 1
    samples: int = 2
    demo_stories: int = 400
    jit_compile: bool = True
    export_dir: str = "saved_models"
    report_dir: str = f"reports/{NAME}"
    no_export: bool = False
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)

    @property
    def demo(self):
        return self.data is None


def parse_tasks(text):
    """`"1-3,7"` -> `(1, 2, 3, 7)`; raises ValueError naming the text."""
    tasks = []
    try:
        for part in str(text).split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(p) for p in part.split("-"))
                tasks.extend(range(lo, hi + 1))
            elif part:
                tasks.append(int(part))
    except ValueError:
        raise ValueError(
            f"--tasks takes e.g. 1-20 or 1,2,5. Received: {text!r}"
        ) from None
    if not tasks or any(t not in babi.TASK_NAMES for t in tasks):
        raise ValueError(f"bAbI tasks are 1..20. Received: tasks={text!r}")
    return tuple(dict.fromkeys(tasks))


def parse_config(argv=None):
    """Command line -> `Config` (paper defaults filled in)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m recipes.{NAME}", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--data", help="bAbI folder (holding en/, en-10k/ or qa*_*.txt); absent: demo"
    )
    parser.add_argument("--tasks", default="1-20", help="tasks, e.g. 1-20 or 1,2,5")
    parser.add_argument("--joint", action="store_true", help="one model for all tasks")
    parser.add_argument("--size", choices=("1k", "10k"), default="1k")
    parser.add_argument(
        "--language", default="en", help="subfolder prefix: en, hn, shuffled"
    )
    parser.add_argument("--memory-size", type=int, default=50)
    parser.add_argument(
        "--embedding-dim", type=int, default=None, help="default 20, joint 50"
    )
    parser.add_argument("--hops", type=int, default=3)
    parser.add_argument(
        "--tying", choices=("adjacent", "layerwise"), default="adjacent"
    )
    parser.add_argument(
        "--no-pe", action="store_true", help="bag of words instead of PE"
    )
    parser.add_argument("--no-te", action="store_true", help="no temporal encoding")
    parser.add_argument("--no-ls", action="store_true", help="no linear start")
    parser.add_argument(
        "--ls-patience",
        type=int,
        default=1,
        help="epochs without validation-loss improvement that end linear start",
    )
    parser.add_argument(
        "--ls-epochs",
        type=int,
        default=None,
        help="linear start for exactly N epochs, then the schedule restarts (default "
        "as in the authors' code: 20 per task, 30 joint; demo: 0); 0 = until "
        "validation loss stops falling",
    )
    parser.add_argument(
        "--empty-slots",
        choices=("mask", "nil"),
        default="nil",
        help="empty memory slots: nil memories competing in the softmax with score 0 "
        "(the authors' code, default) or masked out",
    )
    parser.add_argument(
        "--random-noise", type=float, default=0.1, help="RN rate, 0 = off"
    )
    parser.add_argument("--clipnorm", type=float, default=40.0)
    parser.add_argument(
        "--decay-every",
        type=int,
        default=None,
        help="halve lr every N epochs (25, joint 15)",
    )
    parser.add_argument(
        "--restarts",
        type=int,
        default=1,
        help="keep the lowest training error of N runs",
    )
    parser.add_argument(
        "--samples", type=int, default=2, help="attention PNGs per task"
    )
    parser.add_argument("--demo-stories", type=int, default=400)
    parser.add_argument(
        "--jit",
        choices=("auto", "on", "off"),
        default="auto",
        help="XLA compilation (auto: on for real data, off for the short demo)",
    )
    parser.add_argument(
        "--verbose",
        choices=("auto", "0", "1", "2"),
        default="auto",
        help="progress bars",
    )
    parser.add_argument(
        "--no-tensorboard",
        dest="tensorboard",
        action="store_false",
        help="no TensorBoard logs",
    )
    add_output_args(parser, NAME)
    add_training_args(
        parser, epochs=None, batch_size=32, learning_rate=None, run_dir=f"runs/{NAME}"
    )
    parser.set_defaults(patience=0)
    args = parser.parse_args(argv)

    demo = args.data is None
    joint = args.joint
    ls = not args.no_ls
    if args.ls_epochs is None:
        args.ls_epochs = 0 if demo or not ls else 30 if joint else 20
    # the authors' code: LS epochs, then the full schedule (60 joint, 100 per task)
    epochs = args.epochs or (15 if demo else (60 if joint else 100) + args.ls_epochs)
    learning_rate = args.learning_rate or (0.005 if ls else 0.01)
    for name in (
        "restarts",
        "hops",
        "memory_size",
        "samples",
        "demo_stories",
        "ls_epochs",
    ):
        low = 0 if name in ("samples", "ls_epochs") else 1
        if getattr(args, name) < low:
            raise ValueError(
                f"--{name.replace('_', '-')} must be >= {low}. "
                f"Received: {getattr(args, name)!r}"
            )
    if ls and args.ls_epochs >= epochs:
        raise ValueError(
            f"--ls-epochs ({args.ls_epochs}) must be smaller than --epochs ({epochs}), "
            "or the softmax never comes back; pass --ls-epochs 0 to end linear start "
            "when validation loss stops falling. "
            f"Received: ls_epochs={args.ls_epochs}, epochs={epochs}"
        )
    if not 0.0 <= args.random_noise < 1.0:
        raise ValueError(
            f"--random-noise must be in [0, 1). Received: {args.random_noise!r}"
        )
    verbose = args.verbose if args.verbose == "auto" else int(args.verbose)
    training = TrainingConfig.from_args(
        args, epochs=epochs, learning_rate=learning_rate, verbose=verbose
    )
    return Config(
        data=args.data,
        tasks=(babi.DEMO_TASK,) if demo else parse_tasks(args.tasks),
        joint=joint,
        size=args.size,
        language=args.language,
        memory_size=args.memory_size,
        embedding_dim=args.embedding_dim or (50 if joint else 20),
        hops=args.hops,
        tying=args.tying,
        position_encoding=not args.no_pe,
        temporal_encoding=not args.no_te,
        linear_start=ls,
        ls_patience=args.ls_patience,
        ls_epochs=args.ls_epochs,
        empty_slots=args.empty_slots,
        random_noise=args.random_noise,
        clipnorm=args.clipnorm,
        decay_every=args.decay_every or (15 if joint else 25),
        restarts=args.restarts,
        samples=args.samples,
        demo_stories=args.demo_stories,
        jit_compile=(args.jit == "on") or (args.jit == "auto" and not demo),
        export_dir=args.export_dir,
        report_dir=args.report_dir,
        no_export=args.no_export,
        training=training,
    )


# --- Data -----------------------------------------------------------------------------


def load_tasks(config):
    """dict task -> `babi.BabiTask` (the demo sample without `--data`)."""
    if config.demo:
        return babi.load_demo(
            num_stories=config.demo_stories,
            test_stories=max(50, config.demo_stories // 4),
            memory_size=config.memory_size,
            seed=config.training.seed,
        )
    return babi.load_babi(
        config.data,
        tasks=config.tasks,
        size=config.size,
        language=config.language,
        memory_size=config.memory_size,
        seed=config.training.seed,
    )


def describe(config):
    if config.demo:
        return f"generated bAbI-style demo ({config.demo_stories} stories)"
    return f"bAbI {config.language} {config.size} tasks {list(config.tasks)}"


def build_datasets(config, tasks, vocab_file):
    """Vocabulary (written to `vocab_file`), sentence length and int arrays.

    Returns:
        `(vocab, sentence_length, arrays)` with `arrays[task][split]` the
        `babi.vectorize` output (`split` in train/valid/test; None when the task
        has no training file).
    """
    examples = [ex for t in tasks.values() for ex in t.all_examples()]
    vocab = babi.build_vocabulary(examples)
    vocab.save(vocab_file)
    sentence_length = babi.max_sentence_length(examples)
    arrays = {}
    for task, entry in tasks.items():
        arrays[task] = {}
        for split in ("train", "valid", "test"):
            items = getattr(entry, split)
            arrays[task][split] = (
                None
                if items is None
                else babi.vectorize(items, vocab, config.memory_size, sentence_length)
            )
    return vocab, sentence_length, arrays


def concat_arrays(parts):
    """Concatenates `babi.vectorize` outputs (re-indexing their sentence tables)."""
    parts = [p for p in parts if p is not None]
    sentences, memory, question, answer = [], [], [], []
    offset = 0
    for p in parts:
        table = p["sentences"] if not sentences else p["sentences"][1:]
        shift = offset if not sentences else offset - 1
        sentences.append(table)
        memory.append(np.where(p["memory"] > 0, p["memory"] + shift, 0))
        question.append(p["question"])
        answer.append(p["answer"])
        offset += len(table)
    return {
        "sentences": np.concatenate(sentences).astype(np.int32),
        "memory": np.concatenate(memory).astype(np.int32),
        "question": np.concatenate(question),
        "answer": np.concatenate(answer),
    }


def training_groups(config, tasks):
    """The models to train: `[(label, [task, ...])]` (one group when joint)."""
    available = [t for t, entry in tasks.items() if entry.train]
    if config.joint or config.demo:
        return (
            [("joint" if config.joint else f"task{available[0]}", available)]
            if available
            else []
        )
    return [(f"task{t}", [t]) for t in available]


# --- Model and training ----------------------------------------------------------------


def build_model(config, vocabulary_size, sentence_length):
    """The paper's MemN2N (compiled for training by `train_memn2n`)."""
    return MemN2N(
        vocabulary_size=vocabulary_size,
        memory_size=config.memory_size,
        sentence_length=sentence_length,
        embedding_dim=config.embedding_dim,
        hops=config.hops,
        tying=config.tying,
        position_encoding=config.position_encoding,
        temporal_encoding=config.temporal_encoding,
        linear_start=config.linear_start,
        empty_slots=config.empty_slots,
    )


def predict(model, arrays, batch_size=512):
    """`(predicted ids (N,), probabilities (N, V), attention (N, hops, M))`."""
    ds = babi.make_dataset(arrays, batch_size=batch_size).map(lambda x, y: x)
    out = model.predict(ds, verbose=0)
    probabilities = np.asarray(out["probabilities"])
    return probabilities.argmax(-1), probabilities, np.asarray(out["attention"])


def error_rate(model, arrays):
    """Answer error (%) of `model` on `arrays`."""
    predicted, _, _ = predict(model, arrays)
    return float(100.0 * np.mean(predicted != arrays["answer"]))


def _fingerprint(config, label, restart, vocabulary_size, sentence_length):
    fields = dataclasses.asdict(config)
    fields.pop("report_dir"), fields.pop("export_dir"), fields.pop("no_export")
    fields.pop("samples"), fields.pop("restarts")  # more restarts reuse earlier ones
    fields["training"].pop("verbose", None)
    # The library version is part of the key: a run finished by an older version
    # (e.g. before 0.2.0's separate initial draws per table) is trained again.
    key = json.dumps(
        [fields, label, restart, vocabulary_size, sentence_length, zoo_version],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def train_one(
    config, train_arrays, valid_arrays, vocabulary_size, sentence_length, run_dir, seed
):
    """One training run; returns `(model, training error %, info dict)`."""
    set_seed(seed)
    strategy = get_strategy(config.training.distribute)
    with strategy.scope():
        model = build_model(config, vocabulary_size, sentence_length)
    cfg = dataclasses.replace(config.training, run_dir=run_dir, seed=seed)
    train_error, info = train_memn2n(
        model,
        train_arrays,
        valid_arrays,
        lambda *args, **kwargs: fit(*args[:3], cfg, **kwargs),
        learning_rate=config.training.learning_rate,
        decay_every=config.decay_every,
        batch_size=config.training.batch_size,
        seed=seed,
        noise_rate=config.random_noise,
        clipnorm=config.clipnorm,
        jit_compile=config.jit_compile,
        ls_epochs=config.ls_epochs,
        ls_patience=config.ls_patience,
        strategy=strategy,
        optimizer_kwargs=averaging(config.training),
    )
    return model, train_error, info


def train(config, arrays, tasks, vocabulary_size, sentence_length):
    """Trains every group `config.restarts` times; keeps the lowest training error.

    Finished runs are cached in their run folder (`final.keras`, `result.json`,
    keyed by the configuration), so a rerun of the same command skips them.

    Returns:
        dict label -> `{"model", "tasks", "train_error", "runs"}`.
    """
    results = {}
    for label, group in training_groups(config, tasks):
        train_arrays = concat_arrays([arrays[t]["train"] for t in group])
        valid_arrays = concat_arrays([arrays[t]["valid"] for t in group])
        best = None
        runs = []
        for restart in range(config.restarts):
            run_dir = os.path.join(config.training.run_dir, label, f"restart{restart}")
            final_path = os.path.join(run_dir, "final.keras")
            result_path = os.path.join(run_dir, "result.json")
            key = _fingerprint(config, label, restart, vocabulary_size, sentence_length)
            cached = None
            if os.path.exists(result_path) and os.path.exists(final_path):
                with open(result_path) as f:
                    cached = json.load(f)
                if cached.get("fingerprint") != key:
                    cached = None
            if cached is not None:
                model = keras.saving.load_model(final_path)
                train_error, info = cached["train_error"], cached["info"]
                print(f"[{label} restart {restart}] reused {final_path}")
            else:
                seed = config.training.seed + 1000 * restart
                model, train_error, info = train_one(
                    config,
                    train_arrays,
                    valid_arrays,
                    vocabulary_size,
                    sentence_length,
                    run_dir,
                    seed,
                )
                model.save(final_path)
                with open(result_path, "w") as f:
                    json.dump(
                        {"fingerprint": key, "train_error": train_error, "info": info},
                        f,
                    )
            print(
                f"[{label} restart {restart}] training error {train_error:.1f}% {info}"
            )
            runs.append({"train_error": train_error, **info})
            if best is None or train_error < best[1]:
                best = (model, train_error)
        results[label] = {
            "model": best[0],
            "tasks": group,
            "train_error": best[1],
            "runs": runs,
        }
    return results


# --- Evaluation ------------------------------------------------------------------------


def format_error_table(errors, paper=None):
    """Markdown table of test error per task (n/a where unavailable) and a summary."""
    header = "| task | name | test error (%) |" + (" paper (%) |" if paper else "")
    rule = "|---:|---|---:|" + ("---:|" if paper else "")
    lines = [header, rule]
    for task, error in errors.items():
        name = babi.TASK_NAMES.get(task, "demo")
        cell = "n/a" if error is None else f"{error:.1f}"
        row = f"| {task} | {name} | {cell} |"
        if paper:
            row += f" {paper.get(task, float('nan')):.1f} |"
        lines.append(row)
    measured = [e for e in errors.values() if e is not None]
    summary = summarize(errors)
    mean = "n/a" if not measured else f"{summary['mean_error']:.1f}"
    row = f"| mean | | {mean} |"
    if paper:
        row += f" {np.mean([paper[t] for t in paper]):.1f} |"
    lines.append(row)
    row = f"| failed (> 5%) | | {summary['failed']} |"
    if paper:
        row += f" {sum(e > 5.0 for e in paper.values())} |"
    lines.append(row)
    return "\n".join(lines)


def summarize(errors):
    """Mean error and failed-task count (> 5%) over the measured tasks."""
    measured = {t: e for t, e in errors.items() if e is not None}
    return {
        "mean_error": float(np.mean(list(measured.values()))) if measured else None,
        "failed": int(sum(e > 5.0 for e in measured.values())),
        "measured_tasks": sorted(measured),
        "unavailable_tasks": sorted(t for t, e in errors.items() if e is None),
    }


def _short(text, limit=32):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plot_attention(model, entry, arrays, vocab, report_dir, samples, prefix):
    """Per-hop attention PNGs (rows hops, columns sentences) for test questions."""
    from zoo.viz import attention_heatmap

    if samples <= 0 or not entry.test:
        return []
    pick = list(range(min(samples, len(entry.test))))
    subset = {k: (v[pick] if k != "sentences" else v) for k, v in arrays.items()}
    predicted, _, attention = predict(model, subset)
    paths = []
    for row, index in enumerate(pick):
        example = entry.test[index]
        n = len([s for s in example.story if s.strip()])
        n = min(n, attention.shape[-1])
        # Slot 0 is the most recent sentence: reverse to oldest -> newest.
        weights = attention[row, :, :n][:, ::-1]
        story = [s for s in example.story if s.strip()][-n:] if n else []
        offset = len([s for s in example.story if s.strip()]) - n
        labels = [
            ("* " if (i + offset) in example.supporting else "") + _short(text)
            for i, text in enumerate(story)
        ]
        if not labels:
            continue
        answer = vocab.id_to_token(int(predicted[row]))
        title = f"{example.question} -> {answer} (true: {example.answer})"
        path = os.path.join(report_dir, f"attention_{prefix}_{row}.png")
        attention_heatmap(
            weights,
            [f"hop {h + 1}" for h in range(weights.shape[0])],
            labels,
            path,
            title=title,
        )
        paths.append(path)
    return paths


def evaluate(config, results, tasks, arrays, vocab):
    """Per-task test errors, the table, attention PNGs; writes the report."""
    os.makedirs(config.report_dir, exist_ok=True)
    model_of = {t: r["model"] for r in results.values() for t in r["tasks"]}
    errors, pngs = {}, []
    for task, entry in tasks.items():
        model = model_of.get(task)
        if model is None:
            errors[task] = None
            continue
        errors[task] = error_rate(model, arrays[task]["test"])
        prefix = "demo" if config.demo else f"task{task}"
        pngs += plot_attention(
            model,
            entry,
            arrays[task]["test"],
            vocab,
            config.report_dir,
            config.samples,
            prefix,
        )
    paper = (
        None
        if config.demo or config.size != "1k" or not config.joint
        else {t: PAPER_1K_JOINT_PE_LS_RN[t] for t in errors}
    )
    table = format_error_table(errors, paper)
    summary = summarize(errors)
    notes = {t: tasks[t].missing for t in tasks if tasks[t].missing}
    with open(os.path.join(config.report_dir, "test_errors.md"), "w") as f:
        f.write(f"# MemN2N test error, {describe(config)}\n\n{table}\n")
        for t, why in notes.items():
            f.write(f"\nTask {t}: n/a ({why}).\n")
    metrics = {
        "test_error": {str(t): e for t, e in errors.items()},
        **summary,
        "train_error": {label: r["train_error"] for label, r in results.items()},
        "runs": {label: r["runs"] for label, r in results.items()},
        "unavailable": {str(t): why for t, why in notes.items()},
    }
    with open(os.path.join(config.report_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    return errors, table, metrics, pngs


# --- Export ----------------------------------------------------------------------------


def make_serving_module(model, vocab_file, memory_size, sentence_length):
    """The `MemN2NServing` behind the exported signatures (strings in, dict out)."""
    return MemN2NServing(model, vocab_file)


def export(config, model, vocab_file, sentence_length, tasks, metrics):
    """Exports `saved_models/memn2n/VERSION/` (+ `.keras`); returns the folder."""
    from zoo.export import export_model

    module = make_serving_module(model, vocab_file, config.memory_size, sentence_length)
    examples = [ex for entry in tasks.values() for ex in (entry.test or [])[:2]][:4]
    warmup = {
        "story": ["\n".join(ex.story) for ex in examples],
        "question": [ex.question for ex in examples],
    }
    version_dir = export_model(
        module,
        name=EXPORT_NAME,
        signatures={"serving_default": module.serve, "preprocess": module.preprocess},
        base_dir=config.export_dir,
        keras_model=model,
        warmup={"serving_default": warmup},
        keras_check={
            "signature": "serving_default",
            "outputs": {"probabilities": "probabilities"},
        },
        metadata={
            "recipe": NAME,
            "data": describe(config),
            "tasks": list(config.tasks),
            "limits": {
                "memory_slots": config.memory_size,
                "words_per_sentence": sentence_length,
                "max_story_bytes": babi.MAX_STORY_BYTES,
                "story_sentence_separator": "\\n",
            },
            "metrics": {
                "mean_test_error": metrics["mean_error"],
                "failed_tasks": metrics["failed"],
                "test_error": metrics["test_error"],
            },
        },
    )
    return version_dir


def main(argv=None):
    config = parse_config(argv)
    start = time.time()
    set_seed(config.training.seed)
    tasks = load_tasks(config)
    for t, entry in tasks.items():
        if entry.missing:
            print(f"task {t}: training file missing, reported as n/a ({entry.missing})")
    os.makedirs(config.training.run_dir, exist_ok=True)
    vocab_file = os.path.join(config.training.run_dir, "vocab.txt")
    vocab, sentence_length, arrays = build_datasets(config, tasks, vocab_file)
    print(
        f"{describe(config)}: vocabulary {len(vocab)}, sentence length {sentence_length}"
    )

    results = train(config, arrays, tasks, len(vocab), sentence_length)
    errors, table, metrics, pngs = evaluate(config, results, tasks, arrays, vocab)
    print(table)
    print(f"attention plots: {len(pngs)} in {config.report_dir}")

    version_dir = None
    if not config.no_export and len(results) == 1:
        model = next(iter(results.values()))["model"]
        version_dir = str(
            export(config, model, vocab_file, sentence_length, tasks, metrics)
        )
        print(f"exported: {version_dir}")
    elif not config.no_export:
        why = "no model was trained" if not results else "several per-task models"
        print(f"{why}: nothing exported (use --joint or one task)")
    print(f"done in {time.time() - start:.1f} s")
    return {
        "model": EXPORT_NAME,
        "metric": "mean_test_error_percent",
        "value": metrics["mean_error"],
        "export": version_dir,
    }


if __name__ == "__main__":
    main()
