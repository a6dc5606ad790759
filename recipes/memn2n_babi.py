"""End-to-end memory network (MemN2N) question answering on bAbI, servable.

Task: the 20 bAbI QA tasks (Weston et al. 2015): answer a question about a short story
with one word. Paper: Sukhbaatar, Szlam, Weston, Fergus, "End-To-End Memory Networks"
(NIPS 2015), trained with its protocol (3 hops, adjacent tying, position and temporal
encoding, linear start, random noise). Metric: mean test error in percent over the
tasks, and the failed tasks (error > 5%). Details: docs/recipes.md#memn2n_babi.

    python recipes/memn2n_babi.py                          # generated demo, < 1 min
    python recipes/memn2n_babi.py --data ../shared/data/babi   # 1k, one joint model
    python recipes/memn2n_babi.py --data ../shared/data/babi --restarts 10
    python recipes/memn2n_babi.py --data ../shared/data/babi --no-joint  # per task
    python recipes/memn2n_babi.py --data DIR --tasks 1-3   # a folder of qaN_* files

The network's options take their defaults from `MemN2N`, the preprocessor and
`MemN2NQuestionAnswerer.default_compile`: the task built with its defaults is the joint
model trained with `--data`. Defaults that are None follow the paper: linear start for
20 epochs per task (30 joint; the demo: 0, until validation loss stops falling), then
`--epochs` 100 (60 joint) more at `--learning-rate` 0.005 (0.01 with `--no-ls`), halved
every 25 (15) epochs; `--embedding-dim` 20 per task and on the demo. The task trained
(joint, one task or the demo) is exported to `saved_models/memn2n/VERSION/` and
`VERSION.keras`.
"""

import dataclasses
import os
import shutil
import types

from zoo.data.babi import find_folder, load_babi, parse_tasks, read_example_stories
from zoo.demo.babi import load_demo
from zoo.errors import ConfigError
from zoo.io import atomic_path, content_keyed
from zoo.models.memn2n import (
    MemN2N,
    MemN2NQuestionAnswerer,
    MemN2NQuestionAnswererPreprocessor,
)
from zoo.models.memn2n.babi_arrays import build_arrays
from zoo.models.memn2n.babi_report import evaluate_tasks, write_task_reports
from zoo.models.memn2n.memn2n_training import train_groups, train_memn2n
from zoo.training import averaging, fingerprint, fit, set_seed, steps
from zoo.training.flags import RecipeConfig, default_of, option

NAME, EXPORT_NAME, METRIC = "memn2n_babi", "memn2n", "mean_test_error_percent"
# The paper's schedule: batches of 32, no early stopping. Epochs None: linear start
# plus 100 (joint: 60); learning rate None: the task's 0.005, 0.01 with --no-ls.
TRAINING = dict(epochs=None, learning_rate=None, patience=0)
DEMO_TRAINING = dict(epochs=15)
LEARNING_RATE = default_of(MemN2NQuestionAnswerer.default_compile, "learning_rate")
CLIPNORM = default_of(MemN2NQuestionAnswerer.default_compile, "clipnorm")
EMBEDDING_DIM = default_of(MemN2N, "embedding_dim")  # joint; the paper's 20 per task


def _net(argument):
    return default_of(MemN2N, argument)


@dataclasses.dataclass
class Config(RecipeConfig):
    """The recipe's options (the command-line flags)."""

    DERIVED = {  # how `validate` sets a training default of None (in --help)
        "epochs": "--ls-epochs + 60 (--no-joint: + 100), the paper's",
        "learning_rate": f"{LEARNING_RATE}, or 0.01 with --no-ls, the paper's",
    }

    tasks: str = option("1-20", "bAbI tasks, e.g. 1-20 or 1,2,5", check=parse_tasks)
    joint: bool = option(
        True, "one model for all tasks (--no-joint: one model per task)", demo=False
    )
    size: str = option("1k", "training set size", choices=("1k", "10k"))
    language: str = option("en", "bAbI subfolder prefix: en, hn, shuffled")
    memory_size: int = option(_net("memory_size"), "memory slots", check="positive")
    embedding_dim: int = option(
        None, f"size d [None: 20, joint {EMBEDDING_DIM}]", check="positive"
    )
    hops: int = option(_net("hops"), "memory hops K", check="positive")
    tying: str = option(_net("tying"), "tying", choices=("adjacent", "layerwise"))
    no_pe: bool = option(not _net("position_encoding"), "bag of words instead of PE")
    no_te: bool = option(not _net("temporal_encoding"), "no temporal encoding")
    no_ls: bool = option(not _net("linear_start"), "no linear start")
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
        _net("empty_slots"),
        "empty slots: nil memories in the softmax, or masked",
        choices=("nil", "mask"),
    )
    random_noise: float = option(0.1, "RN rate, 0 = off", check="open_fraction")
    clipnorm: float = option(CLIPNORM, "gradient clip per weight", check="positive")
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

    def validate(self):
        """Derives the defaults that are None (the paper's) and checks them."""
        self.embedding_dim = self.embedding_dim or (EMBEDDING_DIM if self.joint else 20)
        self.decay_every = self.decay_every or (15 if self.joint else 25)
        if self.ls_epochs is None:
            self.ls_epochs = 0 if self.demo or self.no_ls else 30 if self.joint else 20
        training = self.training
        if training.epochs is None:
            training.epochs = (60 if self.joint else 100) + self.ls_epochs
        if training.learning_rate is None:
            training.learning_rate = 0.01 if self.no_ls else LEARNING_RATE
        if not self.no_ls and self.ls_epochs >= training.epochs:
            raise ConfigError(
                f"--ls-epochs ({self.ls_epochs}) must be smaller than --epochs "
                f"({training.epochs}), or the softmax never comes back (--ls-epochs 0 "
                "ends linear start when validation loss stops falling)"
            )
        if self.warmup_stories is not None:  # a bad file is an error now
            read_example_stories(self.warmup_stories, self.memory_size)

    @property
    def task_list(self):
        return (0,) if self.demo else parse_tasks(self.tasks)


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log):
    """The tasks (seeded samples with --max-*-samples), their vocabulary and arrays."""
    c, seed, folder = config, config.training.seed, None
    if c.demo:
        test_size = max(50, c.demo_size // 4)
        tasks = load_demo(c.demo_size, test_size, c.memory_size, seed)
        description = f"generated bAbI-style demo ({c.demo_size} stories)"
    else:
        folder = find_folder(c.data, c.size, c.language)
        tasks = load_babi(folder, c.task_list, memory_size=c.memory_size, seed=seed)
        description = f"{folder.describe()}, tasks {list(c.task_list)}"
    log(description)
    limits = dict(train=c.max_train_samples, valid=c.max_eval_samples)
    limits["test"] = c.max_eval_samples
    for t, e in tasks.items():
        if e.missing:
            log(f"task {t}: no training file, reported as n/a ({e.missing})")
        samples = {s: _sample(getattr(e, s), n, seed) for s, n in limits.items()}
        tasks[t] = dataclasses.replace(e, **samples)
    counts = [sum(len(getattr(e, s) or []) for e in tasks.values()) for s in limits]
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


def build_task(config, data, run):
    """The `MemN2NQuestionAnswerer` of the options (the network for the data's
    vocabulary and sentences, the preprocessor with that vocabulary), compiled with
    the run's rate, clipping, weight averaging and XLA switch."""
    c = config
    preprocessor = MemN2NQuestionAnswererPreprocessor(
        c.memory_size, data.sentence_length, assets={"vocabulary.txt": data.vocab_file}
    )
    with run.strategy.scope():
        backbone = MemN2N(
            preprocessor.vocabulary_size, c.memory_size, data.sentence_length,
            embedding_dim=c.embedding_dim, hops=c.hops, tying=c.tying,
            position_encoding=not c.no_pe, temporal_encoding=not c.no_te,
            linear_start=not c.no_ls, empty_slots=c.empty_slots,
        )  # fmt: skip
        task = MemN2NQuestionAnswerer(backbone, preprocessor, compile=False)
        task.default_compile(
            learning_rate=c.training.learning_rate, clipnorm=c.clipnorm,
            jit_compile=c.xla, **averaging(c.training),
        )  # fmt: skip
    return task


def train(config, data, run):
    """label -> the best of --restarts runs of each task (joint, or per bAbI task)."""
    c = config
    skip = ("run_dir", "verbose", "tensorboard", "resume")  # not what is trained
    training = {k: v for k, v in vars(c.training).items() if k not in skip}
    key = {**c.identity(), "restarts": 0, "training": training}
    key.update(data=data.fingerprint, kept="MemN2NQuestionAnswerer")
    identity = run.identity(data.fingerprint)

    def train_run(train_arrays, valid_arrays, run_dir, seed):  # -> task, error, info
        set_seed(seed)
        task = build_task(c, data, run)
        cfg = dataclasses.replace(c.training, run_dir=run_dir, seed=seed)
        error, info = train_memn2n(
            task, train_arrays, valid_arrays,
            lambda *args, **kw: fit(*args, cfg, run_identity=identity, **kw),
            learning_rate=c.training.learning_rate, decay_every=c.decay_every,
            batch_size=c.training.batch_size, seed=seed, noise_rate=c.random_noise,
            ls_epochs=c.ls_epochs, ls_patience=c.ls_patience,
        )  # fmt: skip
        return task, error, info

    return train_groups(
        data.tasks, data.arrays, c.joint, train_run, c.restarts, c.run_dir, key,
        seed=c.training.seed, log=run.log,
    )  # fmt: skip


def publish_vocabulary(config, data):
    """RUN_DIR/vocab.txt: written once the run's identity is checked."""
    with atomic_path(os.path.join(config.run_dir, "vocab.txt")) as tmp:
        shutil.copyfile(data.vocab_file, tmp)


def export(config, results, data, metrics, log):
    """The SavedModel and `VERSION.keras` of the one task trained, else None."""
    if len(results) != 1:
        why = "no model was trained" if not results else "several per-task models"
        log(f"{why}: nothing exported (use --joint or one task)")
        return None
    (task,) = (result["model"] for result in results.values())
    examples = [ex for e in data.tasks.values() for ex in (e.test or [])[:2]][:4]
    if config.warmup_stories is not None:
        examples = read_example_stories(config.warmup_stories, config.memory_size)
    keys = ("mean_test_error_percent", "failed_tasks", "test_error_percent")
    metadata = {
        "recipe": NAME, "data": data.description,
        "data_source": metrics["data_source"],
        "metrics": {k: metrics[k] for k in keys}, "tasks": list(config.task_list),
    }  # fmt: skip
    return task.export(config.export_dir, EXPORT_NAME, examples, metadata)


def main(argv=None):
    config = parse(argv)  # --help and bad flags end here, before training starts
    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)
        results = train(config, data, run)  # label -> {"model": the task, ...}
        publish_vocabulary(config, data)
        run.log("trained")
        metrics = evaluate_tasks(results, data.tasks, data.arrays)
        metrics["data_source"] = data.folder and data.folder.to_dict()
        run.write_metrics(data.description, metrics)
        write_task_reports(
            config.report_dir, results, data.tasks, data.arrays, data.vocab, metrics,
            description=data.description, joint=config.joint, log=run.log,
            data_name=steps.data_name(config, "demo stories"),
            samples=config.report_samples,
        )  # fmt: skip
        version = None
        if not config.no_export:
            version = export(config, results, data, metrics, run.log)
    return run.result(EXPORT_NAME, METRIC, metrics[METRIC], version)


if __name__ == "__main__":
    main()
