"""End-to-end memory network (MemN2N) question answering on bAbI, servable.

Task: the 20 bAbI QA tasks (Weston et al. 2015): answer a question about a short story
with one word. Paper: Sukhbaatar, Szlam, Weston, Fergus, "End-To-End Memory Networks"
(NIPS 2015), trained with its protocol (3 hops, adjacent tying, position and temporal
encoding, linear start, random noise). Metric: mean test error in percent over the
tasks, and the failed tasks (error > 5%). Details: docs/recipes.md#memn2n_babi.

    python -m zoo.recipes.memn2n_babi                          # generated demo, < 1 min
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi   # 1k, one joint model
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --restarts 10
    python -m zoo.recipes.memn2n_babi --data ../shared/data/babi --no-joint  # per task
    python -m zoo.recipes.memn2n_babi --data DIR --tasks 1-3   # a folder of qaN_* files

Defaults that are None follow the paper: linear start for 20 epochs per task (30
joint; the demo: 0, until validation loss stops falling), then `--epochs` 100 (60
joint) more at `--learning-rate` 0.005 (0.01 with `--no-ls`), halved every 25 (15)
epochs; `--embedding-dim` 20 (50 joint). One model trained (joint, one task or the
demo) is exported to `saved_models/memn2n/VERSION/` and `VERSION.keras`.
"""

import dataclasses
import os
import types

from zoo.training import steps
from zoo.recipes.memn2n_babi_config import DEMO_TRAINING, TRAINING, Config

NAME, EXPORT_NAME, METRIC = "memn2n_babi", "memn2n", "mean_test_error_percent"
parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log):
    """The tasks (seeded samples with --max-*-samples), their vocabulary and arrays."""
    from zoo.data import babi
    from zoo.demo.babi import load_demo
    from zoo.io import content_keyed
    from zoo.models.memn2n import build_arrays
    from zoo.training import fingerprint

    c, seed, folder = config, config.training.seed, None
    if c.demo:
        test_size = max(50, c.demo_size // 4)
        tasks = load_demo(c.demo_size, test_size, c.memory_size, seed)
        description = f"generated bAbI-style demo ({c.demo_size} stories)"
    else:
        folder = babi.find_folder(c.data, c.size, c.language)
        tasks = babi.load_babi(
            folder, c.task_list, memory_size=c.memory_size, seed=seed
        )
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
    from zoo.models.memn2n import train_groups, train_memn2n
    from zoo.training import averaging, fit, set_seed

    c = config
    skip = ("run_dir", "verbose", "tensorboard", "resume")  # not what is trained
    training = {k: v for k, v in vars(c.training).items() if k not in skip}
    key = {**c.identity(), "restarts": 0, "training": training}
    identity = run.identity(data.fingerprint)

    def train_run(train_arrays, valid_arrays, run_dir, seed):  # -> model, error, info
        set_seed(seed)
        with run.strategy.scope():
            model = build_model(c, data)
        cfg = dataclasses.replace(c.training, run_dir=run_dir, seed=seed)
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

    return train_groups(
        data.tasks, data.arrays, c.joint, train_run, c.restarts, c.run_dir,
        {**key, "data": data.fingerprint}, seed=c.training.seed, log=run.log,
    )  # fmt: skip


def export(config, results, data, metrics, log):
    """The SavedModel and `VERSION.keras` of the one model trained, else None."""
    from zoo.models.memn2n import export_memn2n

    if len(results) != 1:
        why = "no model was trained" if not results else "several per-task models"
        log(f"{why}: nothing exported (use --joint or one task)")
        return None
    (result,) = results.values()
    tests = [ex for e in data.tasks.values() for ex in (e.test or [])[:2]][:4]
    keys = ("mean_test_error_percent", "failed_tasks", "test_error_percent")
    metadata = {
        "recipe": NAME, "data": data.description,
        "data_source": metrics["data_source"],
        "metrics": {k: metrics[k] for k in keys}, "tasks": list(config.task_list),
    }  # fmt: skip
    examples = config.warmup_examples() or tests
    return export_memn2n(
        result["model"], data.vocab_file, config.export_dir, examples, metadata
    )


def publish_vocabulary(config, data):
    """RUN_DIR/vocab.txt: written once the run's identity is checked."""
    import shutil

    from zoo.io import atomic_path

    with atomic_path(os.path.join(config.run_dir, "vocab.txt")) as tmp:
        shutil.copyfile(data.vocab_file, tmp)


def main(argv=None):
    config = parse(argv)  # --help and bad flags end here, before TensorFlow loads
    from zoo.models.memn2n import evaluate_tasks, write_task_reports

    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)
        results = train(config, data, run)
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
