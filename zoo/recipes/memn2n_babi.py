"""End-to-end memory network (MemN2N) question answering on bAbI, servable.

Task: the 20 bAbI QA tasks (Weston et al. 2015): read a short story, answer a question
with one word. Paper: Sukhbaatar, Szlam, Weston, Fergus, "End-To-End Memory Networks"
(NIPS 2015). Model: `zoo.models.memn2n.MemN2N` trained with the paper's protocol
(`train_memn2n`): 3 hops, adjacent tying, position and temporal encoding, linear start
(LS), 10% random-noise empty memories, SGD clipped at norm 40 per weight, batch 32,
memory of the 50 most recent sentences, 10% of train for validation. As in the
authors' code, LS lasts 20 epochs per task (30 joint) at lr 0.005, then the softmax
returns and the lr, from 0.005, halves every 25 epochs for 100 epochs (every 15 for 60
joint; d = 20 per task, 50 joint). `--ls-epochs 0` ends LS when validation loss stops
falling; `--no-ls`: lr 0.01 from the start. Empty slots compete in the attention
softmax as nil memories (`--empty-slots mask` removes them). `--restarts N` keeps the
run with the lowest training error (the paper: 10). Metric: test error per task in
percent (`test_error_percent`), its mean (`mean_test_error_percent`, the headline),
failed tasks (error > 5%, `failed_tasks`). The paper's per-task errors are shown next
to a joint model's only on the data it measured, the English bAbI 1k (`en/`).

Commands:

    python -m zoo.recipes.memn2n_babi                          # generated demo, < 1 min
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi   # 1k, one joint model
        # of the 20 tasks (about 7 min on 2 cores)
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --restarts 10
        # the paper's protocol: the restart with the lowest training error is kept
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --no-joint  # per task
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --tasks 1,2 --size 10k
    python -m zoo.recipes.memn2n_babi --data DIR --tasks 1-3   # a folder of qaN_* files

`--data` is a bAbI root (`--language` and `--size` pick `en/`, `hn-10k/`, ...) or the
folder of `qaN_*_train.txt` / `qaN_*_test.txt` files itself; logs, reports and the
manifest name the folder read and the language and size its name gives.

Outputs: `runs/memn2n_babi/` (`vocab.txt`, a folder per model and restart: a rerun of
the same command reuses finished runs), `reports/memn2n_babi/` (`test_errors.md`,
`metrics.json`, `attention_task<N>_<i>.png`: per-hop attention over the sentences,
supporting facts marked `*`, as the paper's Figure 2) and, when one model was trained
(joint, one task or the demo), `saved_models/memn2n/VERSION/` (`serving_default(story,
question)` -> `answer`, `probabilities`, `attention`, `memory`; `preprocess`: see
`MemN2NServing` and `MemN2NPreprocessor` for shapes and limits) and `VERSION.keras`,
the `MemN2NQuestionAnswerer` task on raw text (`.backbone` is the `MemN2N` network).
"""

import dataclasses
import os
import types

from zoo.recipes import steps
from zoo.recipes.config import RecipeConfig, option

NAME, EXPORT_NAME, METRIC = "memn2n_babi", "memn2n", "mean_test_error_percent"
SPLITS = ("train", "valid", "test")


def parse_tasks(text):
    """`"1-3,7"` -> `(1, 2, 3, 7)`; a ValueError names what is wrong."""
    tasks = []
    try:
        for part in filter(None, (p.strip() for p in str(text).split(","))):
            lo, _, hi = part.partition("-")
            tasks.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise ValueError("takes e.g. 1-20 or 1,2,5") from None
    if not tasks or not all(1 <= t <= 20 for t in tasks):
        raise ValueError("bAbI tasks are 1..20")
    return tuple(dict.fromkeys(tasks))


class PaperEpochs(int):
    """The `--epochs` default, the paper's, set by `Config.__post_init__`."""

    __repr__ = __str__ = lambda self: "LS epochs + 100, joint + 60"  # noqa: E731


class PaperRate(float):
    """The `--learning-rate` default, set by `Config.__post_init__`."""

    __repr__ = __str__ = lambda self: "0.005, 0.01 with --no-ls"  # noqa: E731


@dataclasses.dataclass
class Config(RecipeConfig):
    """The recipe's options (the command-line flags)."""

    tasks: str = option("1-20", "bAbI tasks, e.g. 1-20 or 1,2,5", check=parse_tasks)
    joint: bool = option(
        True, "one model for all tasks (--no-joint: one model per task)", demo=False
    )
    size: str = option("1k", "training set size", choices=("1k", "10k"))
    language: str = option("en", "bAbI subfolder prefix: en, hn, shuffled")
    memory_size: int = option(50, "memory slots", check="positive")
    embedding_dim: int = option(None, "size d [None: 20, joint 50]", check="positive")
    hops: int = option(3, "memory hops K", check="positive")
    tying: str = option("adjacent", "weight tying", choices=("adjacent", "layerwise"))
    no_pe: bool = option(False, "bag of words instead of position encoding")
    no_te: bool = option(False, "no temporal encoding")
    no_ls: bool = option(False, "no linear start")
    ls_epochs: int = option(
        None,
        "linear start for exactly N epochs [None: 20, joint 30, demo 0]; 0 = until "
        "validation loss stops falling",
        check="non_negative",
    )
    ls_patience: int = option(
        1, "with --ls-epochs 0: epochs without a lower val. loss", check="positive"
    )
    empty_slots: str = option(
        "nil", "empty slots: nil memories in the softmax, or masked",
        choices=("nil", "mask"),
    )  # fmt: skip
    random_noise: float = option(0.1, "RN rate, 0 = off", check="open_fraction")
    clipnorm: float = option(40.0, "gradient norm clip per weight", check="positive")
    decay_every: int = option(
        None, "halve lr every N [None: 25, joint 15]", check="positive"
    )
    restarts: int = option(1, "keep the lowest train error of N", check="positive")
    demo_size: int = option(400, "stories of the generated demo", check="positive")
    report_samples: int = option(2, "attention PNGs per task", check="non_negative")
    warmup_stories: str = option(
        None,
        "a file of stories and questions in bAbI's format: the export's warm-up "
        "requests and the example of REQUESTS.md (default: 4 test questions)",
        metavar="FILE",
    )
    xla: bool = option(True, "compile the training step with XLA", demo=False)

    def __post_init__(self):
        self.embedding_dim = self.embedding_dim or (50 if self.joint else 20)
        self.decay_every = self.decay_every or (15 if self.joint else 25)
        if self.ls_epochs is None:
            self.ls_epochs = 0 if self.demo or self.no_ls else 30 if self.joint else 20
        training = self.training
        if isinstance(training.epochs, PaperEpochs):
            training.epochs = (60 if self.joint else 100) + self.ls_epochs
        if isinstance(training.learning_rate, PaperRate):
            training.learning_rate = 0.01 if self.no_ls else 0.005

    def validate(self):
        from zoo.errors import ConfigError

        epochs = self.training.epochs
        if not self.no_ls and self.ls_epochs >= epochs:
            raise ConfigError(
                f"--ls-epochs ({self.ls_epochs}) must be smaller than --epochs "
                f"({epochs}), or the softmax never comes back (--ls-epochs 0 ends "
                "linear start when validation loss stops falling)"
            )
        self.warmup_examples()  # a bad file is an error now, not after training

    def warmup_examples(self):
        """The questions of `--warmup-stories` (at most 4), or None without it."""
        if self.warmup_stories is None:
            return None
        from zoo.data.babi import read_babi_file
        from zoo.errors import ConfigError, DataError

        if not os.path.isfile(self.warmup_stories):
            raise ConfigError(f"--warmup-stories: no such file: {self.warmup_stories}")
        examples = read_babi_file(self.warmup_stories, memory_size=self.memory_size)
        if not examples:
            raise DataError("no question in the file", path=self.warmup_stories)
        return examples[:4]

    @property
    def task_list(self):
        return (0,) if self.demo else parse_tasks(self.tasks)


# The paper's schedule: batches of 32, no early stopping; epochs and learning rate
# follow --joint and linear start (`Config.__post_init__`) unless given.
TRAINING = dict(epochs=PaperEpochs(120), learning_rate=PaperRate(0.005), patience=0)
DEMO_TRAINING = dict(epochs=15)

parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log):
    """The tasks (sampled with --max-*-samples), their vocabulary and arrays."""
    from zoo.data import babi
    from zoo.io import content_keyed
    from zoo.models.memn2n import build_arrays
    from zoo.training import fingerprint

    c, seed = config, config.training.seed
    folder = None
    if c.demo:
        from zoo.demo.babi import load_demo

        tasks = load_demo(c.demo_size, max(50, c.demo_size // 4), c.memory_size, seed)
        description = f"generated bAbI-style demo ({c.demo_size} stories)"
    else:
        folder = babi.find_folder(c.data, c.size, c.language)
        tasks = babi.load_babi(
            folder, c.task_list, memory_size=c.memory_size, seed=seed
        )
        description = f"{folder.describe()}, tasks {list(c.task_list)}"
    log(description)
    for t, e in tasks.items():
        if e.missing:
            log(f"task {t}: no training file, reported as n/a ({e.missing})")
        tasks[t] = dataclasses.replace(
            e, train=_sample(e.train, c.max_train_samples, seed),
            valid=_sample(e.valid, c.max_eval_samples, seed),
            test=_sample(e.test, c.max_eval_samples, seed),
        )  # fmt: skip
    counts = [sum(len(getattr(e, s) or []) for e in tasks.values()) for s in SPLITS]
    log("questions: {} training, {} validation, {} test".format(*counts))
    vocab, sentence_length, arrays = build_arrays(tasks, c.memory_size)
    # keyed by its contents: RUN_DIR/vocab.txt is written once the run's identity
    # is checked (`publish_vocabulary`)
    path = os.path.join(c.run_dir, "vocab.txt")
    vocab_file = content_keyed(vocab.save, path, "vocabularies")
    log(f"vocabulary {len(vocab)} and sentence length {sentence_length} "
        "(training and validation stories)")  # fmt: skip
    return types.SimpleNamespace(
        tasks=tasks, folder=folder, description=description, vocab=vocab,
        vocab_file=vocab_file, sentence_length=sentence_length, arrays=arrays,
        fingerprint=fingerprint(vocab.tokens, sentence_length, arrays),
    )  # fmt: skip


def _sample(items, limit, seed):
    picked = None if items is None else steps.sample_indices(len(items), limit, seed)
    return items if picked is None else [items[i] for i in picked]


def build_model(config, data):
    """A `MemN2N` of the configuration, for the data's vocabulary and sentences."""
    from zoo.models.memn2n import MemN2N

    c = config
    return MemN2N(
        len(data.vocab), c.memory_size, data.sentence_length,
        embedding_dim=c.embedding_dim, hops=c.hops, tying=c.tying,
        position_encoding=not c.no_pe, temporal_encoding=not c.no_te,
        linear_start=not c.no_ls, empty_slots=c.empty_slots,
    )  # fmt: skip


def train(config, data, run):
    """label -> the best of --restarts runs of each model (joint, or per task)."""
    from zoo.models.memn2n import train_groups

    c = config
    skip = ("run_dir", "verbose", "tensorboard", "resume")  # not what is trained
    training = {k: v for k, v in vars(c.training).items() if k not in skip}
    key = {**c.identity(), "restarts": 0, "training": training}
    return train_groups(
        data.tasks, data.arrays, c.joint,
        lambda *args: _train_run(c, data, run, *args), c.restarts, c.run_dir,
        {**key, "data": data.fingerprint}, seed=c.training.seed, log=run.log,
    )  # fmt: skip


def _train_run(c, data, run, train_arrays, valid_arrays, run_dir, seed):
    """One run: `(model, training error %, info)`."""
    from zoo.models.memn2n import train_memn2n
    from zoo.training import averaging, fit, set_seed

    set_seed(seed)
    with run.strategy.scope():
        model = build_model(c, data)
    cfg = dataclasses.replace(c.training, run_dir=run_dir, seed=seed)
    identity = run.identity(data.fingerprint)
    error, info = train_memn2n(
        model, train_arrays, valid_arrays,
        lambda *args, **kw: fit(*args, cfg, run_identity=identity, **kw),
        learning_rate=c.training.learning_rate, decay_every=c.decay_every,
        batch_size=c.training.batch_size, seed=seed, noise_rate=c.random_noise,
        clipnorm=c.clipnorm, jit_compile=c.xla, ls_epochs=c.ls_epochs,
        ls_patience=c.ls_patience, strategy=run.strategy,
        optimizer_kwargs=averaging(c.training),
    )  # fmt: skip
    return model, error, info


def publish_vocabulary(config, data):
    """RUN_DIR/vocab.txt: written once the run's identity is checked."""
    import shutil

    from zoo.io import atomic_path

    with atomic_path(os.path.join(config.run_dir, "vocab.txt")) as tmp:
        shutil.copyfile(data.vocab_file, tmp)


def evaluate(results, data):
    """`evaluate_tasks`' metrics and `data_source` (folder, language, size)."""
    from zoo.models.memn2n import evaluate_tasks

    metrics = evaluate_tasks(results, data.tasks, data.arrays)
    return {**metrics, "data_source": data.folder and data.folder.to_dict()}


def report(config, results, data, metrics, log):
    """`test_errors.md` (the paper's column on its data only), attention PNGs and
    `attention.html` (every task's sample questions, the hops over the sentences)."""
    from zoo.models.memn2n import paper_errors, plot_task_attention, write_error_report

    c, source = config, metrics["data_source"] or {}
    paper = paper_errors(source.get("language"), source.get("size"), c.joint)
    path = os.path.join(c.report_dir, "test_errors.md")
    title = f"MemN2N test error, {data.description}"
    table = write_error_report(path, title, metrics, paper)
    print(table, flush=True)
    if source and paper is None:
        log("no paper column: the paper measured a joint model on bAbI en 1k")
    sections = []
    pngs = plot_task_attention(
        results, data.tasks, data.arrays, data.vocab, c.report_dir,
        c.report_samples, lambda t: "demo" if c.demo else f"task{t}", sections,
    )  # fmt: skip
    log(f"attention plots: {len(pngs)} in {c.report_dir}")
    if sections:
        from zoo.report import attention_grid_html

        page = attention_grid_html(
            os.path.join(c.report_dir, "attention.html"),
            sections,
            title=f"MemN2N attention: {steps.data_name(c, 'demo stories')}",
            subtitle=data.description,
            summary=table,
            legend="Rows: the story's sentences, oldest first (* marks the "
            "supporting facts); columns: the hops; the darker a cell, the more "
            "weight that hop gave that sentence.",
        )
        log(f"attention report: {page}")


def export(config, results, data, metrics, log):
    """The SavedModel and `VERSION.keras` of the one model trained, else None."""
    from zoo.models.memn2n import export_memn2n

    if len(results) != 1:
        why = "no model was trained" if not results else "several per-task models"
        log(f"{why}: nothing exported (use --joint or one task)")
        return None
    (result,) = results.values()
    tests = [ex for e in data.tasks.values() for ex in (e.test or [])[:2]][:4]
    tests = config.warmup_examples() or tests
    keys = ("mean_test_error_percent", "failed_tasks", "test_error_percent")
    metadata = {
        "recipe": NAME, "data": data.description,
        "data_source": metrics["data_source"],
        "metrics": {k: metrics[k] for k in keys}, "tasks": list(config.task_list),
    }  # fmt: skip
    return export_memn2n(
        result["model"], data.vocab_file, config.export_dir, tests, metadata
    )


def main(argv=None):
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)
        results = train(config, data, run)
        publish_vocabulary(config, data)
        run.log("trained")
        metrics = evaluate(results, data)
        run.write_metrics(data.description, metrics)
        report(config, results, data, metrics, run.log)
        version = None
        if not config.no_export:
            version = export(config, results, data, metrics, run.log)
    return run.result(EXPORT_NAME, METRIC, metrics[METRIC], version)


if __name__ == "__main__":
    main()
