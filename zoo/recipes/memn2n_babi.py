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
run with the lowest training error (the paper: 10). Metric: test error per task (%),
mean error, failed tasks (error > 5%).

Commands:

    python -m zoo.recipes.memn2n_babi                          # generated demo, < 1 min
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi   # 1k, one joint model
        # of the 20 tasks (about 7 min on 2 cores)
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --restarts 10
        # the paper's protocol: the restart with the lowest training error is kept
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --no-joint  # per task
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --tasks 1,2 --size 10k

Outputs: `runs/memn2n_babi/` (`vocab.txt`, a folder per model and restart: a rerun of
the same command reuses finished runs), `reports/memn2n_babi/` (`test_errors.md`,
`metrics.json`, `attention_task<N>_<i>.png`: per-hop attention over the sentences,
supporting facts marked `*`, as the paper's Figure 2) and, when one model was trained
(joint, one task or the demo), `saved_models/memn2n/VERSION/` and `VERSION.keras`
(the `MemN2NQuestionAnswerer` task: `predict_answers({"story": [...], "question":
[...]})` on raw text after `import zoo`; `.backbone` is the `MemN2N` network):

- `serving_default(story: string [None], question: string [None])` -> `answer` string
  [None], `probabilities` float [None, V], `attention` float [None, hops, slots] (slot
  0 = most recent sentence), `memory` string [None, slots] ("" = empty slot);
- `preprocess(story, question)` -> `story` int32 [None, slots, J], `question` int32
  [None, J], the network's inputs (of `VERSION.keras`'s `.backbone`).

A story's lines are its sentences: the last 50 with words are kept (of its last 256
KiB), each cut to J words (the longest training sentence); see `MemN2NPreprocessor`.
"""

import argparse
import dataclasses
import os
import shutil
import sys

from zoo.recipe import Recipe, RecipeConfig, option, parse_config


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


def ls_epochs_default(demo, joint, no_ls):
    """Linear-start epochs of the authors' code: 20 per task, 30 joint (demo: 0)."""
    return 0 if demo or no_ls else 30 if joint else 20


@dataclasses.dataclass
class Config(RecipeConfig):
    tasks: str = option("1-20", "bAbI tasks, e.g. 1-20 or 1,2,5", check=parse_tasks)
    joint: bool = option(
        True,
        "one model for all tasks (--no-joint: one model per task)",
        demo=False,
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
        "nil",
        "empty slots: nil memories in the softmax, or masked",
        choices=("nil", "mask"),
    )
    random_noise: float = option(0.1, "RN rate, 0 = off", check="open_fraction")
    clipnorm: float = option(40.0, "gradient norm clip per weight", check="positive")
    decay_every: int = option(
        None, "halve lr every N [None: 25, joint 15]", check="positive"
    )
    restarts: int = option(1, "keep the lowest train error of N", check="positive")
    demo_size: int = option(400, "stories of the generated demo", check="positive")
    report_samples: int = option(2, "attention PNGs per task", check="non_negative")
    xla: bool = option(True, "compile the training step with XLA", demo=False)

    def __post_init__(self):
        self.embedding_dim = self.embedding_dim or (50 if self.joint else 20)
        self.decay_every = self.decay_every or (15 if self.joint else 25)
        if self.ls_epochs is None:
            self.ls_epochs = ls_epochs_default(self.demo, self.joint, self.no_ls)

    def validate(self):
        from zoo.errors import ConfigError

        epochs = self.training.epochs
        if not self.no_ls and self.ls_epochs >= epochs:
            raise ConfigError(
                f"--ls-epochs ({self.ls_epochs}) must be smaller than --epochs "
                f"({epochs}), or the softmax never comes back (--ls-epochs 0 ends "
                "linear start when validation loss stops falling)"
            )

    @property
    def task_list(self):
        return (0,) if self.demo else parse_tasks(self.tasks)


class MemN2NBabi(Recipe):
    name = "memn2n_babi"
    export_name = "memn2n"
    metric = "mean_error"
    metric_description = "mean_test_error_percent"
    config_class = Config

    @classmethod
    def parse(cls, argv=None):
        """The flags, with the paper's defaults for what is trained: 100 epochs after
        linear start per task, 60 joint (demo: 15 in all); lr 0.005, 0.01 without LS."""
        argv = list(sys.argv[1:] if argv is None else argv)
        scan = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        for flag in ("--data", "--ls-epochs"):
            scan.add_argument(flag)
        scan.add_argument("--joint", action=argparse.BooleanOptionalAction)
        scan.add_argument("--no-ls", action="store_true")
        known = scan.parse_known_args(argv)[0]
        if known.joint is None:  # joint with --data, one model on the demo
            known.joint = known.data is not None
        ls = ls_epochs_default(known.data is None, known.joint, known.no_ls)
        ls = int(known.ls_epochs) if (known.ls_epochs or "").isdigit() else ls
        lr = 0.01 if known.no_ls else 0.005
        return parse_config(
            cls.config_class,
            argv,
            prog=f"python -m zoo.recipes.{cls.name}",
            description=__doc__,
            name=cls.name,
            training_defaults=dict(
                epochs=(60 if known.joint else 100) + ls, learning_rate=lr, patience=0
            ),
            demo_training_defaults=dict(epochs=15),
        )

    def load_data(self):
        from zoo.data import babi
        from zoo.models.memn2n import build_arrays
        from zoo.training import fingerprint

        c = self.config
        if self.demo:
            tasks = babi.load_demo(
                c.demo_size, max(50, c.demo_size // 4), c.memory_size, c.training.seed
            )
            description = f"generated bAbI-style demo ({c.demo_size} stories)"
        else:
            tasks = babi.load_babi(
                c.data, c.task_list, c.size, c.language, c.memory_size,
                seed=c.training.seed,
            )  # fmt: skip
            description = f"bAbI {c.language} {c.size} tasks {list(c.task_list)}"
        for t, e in tasks.items():
            if e.missing:
                self.log(f"task {t}: no training file, reported as n/a ({e.missing})")
            tasks[t] = dataclasses.replace(
                e,
                train=self._sample(e.train, c.max_train_samples),
                valid=self._sample(e.valid, c.max_eval_samples),
                test=self._sample(e.test, c.max_eval_samples),
            )
        vocab, sentence_length, arrays = build_arrays(tasks, c.memory_size)
        # keyed by its contents: nothing of this run's configuration is written
        # into RUN_DIR before the run's identity is checked
        from zoo.io import content_keyed

        vocab_file = content_keyed(
            vocab.save, os.path.join(c.run_dir, "vocab.txt"), "vocabularies"
        )
        self.log(
            f"vocabulary {len(vocab)} and sentence length {sentence_length} "
            "(training and validation stories)"
        )
        data = dict(tasks=tasks, vocab=vocab, vocab_file=vocab_file, arrays=arrays)
        fp = fingerprint(vocab.tokens, sentence_length, arrays)

        def publish():  # RUN_DIR/vocab.txt, once the run's identity is checked
            from zoo.io import atomic_path

            with atomic_path(os.path.join(c.run_dir, "vocab.txt")) as tmp:
                shutil.copyfile(vocab_file, tmp)

        return argparse.Namespace(**data, sentence_length=sentence_length,
                                  description=description, fingerprint=fp,
                                  publish=publish)  # fmt: skip

    def _sample(self, items, limit):
        picked = None if items is None else self.sample_indices(len(items), limit)
        return items if picked is None else [items[i] for i in picked]

    def build_model(self, data):
        """Filled by `train`: label -> the best run of each task's model (or joint)."""
        return {}

    def train(self, models, data):
        from zoo.models.memn2n import best_of_restarts, concat_arrays, training_groups

        c = self.config
        skip = ("run_dir", "verbose", "tensorboard", "resume")  # not what is trained
        training = {k: v for k, v in vars(c.training).items() if k not in skip}
        key = {**c.identity(), "restarts": 0, "training": training}
        for label, group in training_groups(data.tasks, c.joint):
            parts = {
                split: concat_arrays([data.arrays[t][split] for t in group])
                for split in ("train", "valid")
            }
            models[label] = {"tasks": group} | best_of_restarts(
                lambda run_dir, seed, parts=parts: self._train_run(
                    data, parts, run_dir, seed
                ),
                c.restarts,
                os.path.join(c.run_dir, label),
                {**key, "label": label, "data": data.fingerprint},
                seed=c.training.seed,
                log=lambda line, label=label: self.log(f"[{label}] {line}"),
            )

    def _train_run(self, data, parts, run_dir, seed):
        """One run: `(model, training error %, info)`."""
        from zoo.models.memn2n import MemN2N, train_memn2n
        from zoo.training import averaging, fit, get_strategy, set_seed

        c = self.config
        set_seed(seed)
        strategy = get_strategy(c.training.distribute)
        with strategy.scope():
            model = MemN2N(
                len(data.vocab), c.memory_size, data.sentence_length,
                embedding_dim=c.embedding_dim, hops=c.hops, tying=c.tying,
                position_encoding=not c.no_pe, temporal_encoding=not c.no_te,
                linear_start=not c.no_ls, empty_slots=c.empty_slots,
            )  # fmt: skip
        cfg = dataclasses.replace(c.training, run_dir=run_dir, seed=seed)
        identity = self.run_identity(data.fingerprint)
        error, info = train_memn2n(
            model, parts["train"], parts["valid"],
            lambda *args, **kw: fit(*args, cfg, run_identity=identity, **kw),
            learning_rate=c.training.learning_rate, decay_every=c.decay_every,
            batch_size=c.training.batch_size, seed=seed, noise_rate=c.random_noise,
            clipnorm=c.clipnorm, jit_compile=c.xla, ls_epochs=c.ls_epochs,
            ls_patience=c.ls_patience, strategy=strategy,
            optimizer_kwargs=averaging(c.training),
        )  # fmt: skip
        return model, error, info

    def evaluate(self, models, data):
        from zoo.models.memn2n import evaluate_tasks

        return evaluate_tasks(models, data.tasks, data.arrays)

    def headline(self, metrics):
        return self.metric_description, metrics["mean_error"]

    def report(self, models, data, metrics):
        from zoo.models.memn2n import PAPER_1K_JOINT_PE_LS_RN as PAPER
        from zoo.models.memn2n import plot_task_attention, write_error_report

        c = self.config
        paper = PAPER if c.joint and not self.demo and c.size == "1k" else None
        path = os.path.join(c.report_dir, "test_errors.md")
        title = f"MemN2N test error, {data.description}"
        print(write_error_report(path, title, metrics, paper), flush=True)
        pngs = plot_task_attention(
            models, data.tasks, data.arrays, data.vocab, c.report_dir,
            c.report_samples, lambda t: "demo" if self.demo else f"task{t}",
        )  # fmt: skip
        self.log(f"attention plots: {len(pngs)} in {c.report_dir}")

    def export(self, models, data, metrics):
        from zoo.models.memn2n import export_memn2n

        if len(models) != 1:
            why = "no model was trained" if not models else "several per-task models"
            self.log(f"{why}: nothing exported (use --joint or one task)")
            return None
        (result,) = models.values()
        tests = [ex for e in data.tasks.values() for ex in (e.test or [])[:2]][:4]
        summary = {
            "mean_test_error": metrics["mean_error"],
            "failed_tasks": metrics["failed"],
            "test_error": metrics["test_error"],
        }
        metadata = {"recipe": self.name, "data": data.description, "metrics": summary}
        metadata["tasks"] = list(self.config.task_list)
        return export_memn2n(
            result["model"], data.vocab_file, self.config.export_dir, tests, metadata
        )


main = MemN2NBabi.main

if __name__ == "__main__":
    main()
