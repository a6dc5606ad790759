"""The steps the text-classifier recipes (HAN, the sentence embedder) share.

Plain functions a recipe calls in order:

- `TextClassificationConfig`: the options both recipes have (columns, vocabulary,
  embeddings, warm-up texts);
- `prepare_inputs`: `zoo.data.labelled.LabelledSplits` -> seeded samples, the word
  vocabulary of the training texts (`word_vocabulary`) set as the preprocessor's and
  the length-bucketed datasets (`labelled_dataset`), in a `TextClassificationInputs`;
- `initial_embeddings`: the word vectors a classifier starts from (a vector file,
  word2vec, or none);
- `evaluate_texts`: a task's predictions and attention over the raw test texts,
  test metrics;
- `write_report`: `metrics.txt` and the seeded test examples drawn in attention
  reports; `document_report` (HAN's) and `hop_report` (the sentence embedder's);
- `export_classifier`: the trained task's export (its family's) with the manifest
  entries and warm-up texts.

Module-level imports are stdlib-only: a recipe's `--help` needs no TensorFlow.
"""

import dataclasses
import os
import pathlib
import shutil

from zoo.errors import ConfigError
from zoo.io import atomic_path, atomic_write, content_keyed
from zoo.training.flags import RecipeConfig, option
from zoo.training.resume import fingerprint
from zoo.training.steps import data_name, read_example_texts

VOCABULARIES = "vocabularies"
HEADLINE_METRICS = ("accuracy", "macro_f1", "mean_attention_penalty_norm")
"""The metrics an export's manifest carries, those a recipe reports."""


def column(text):
    """A column flag: a name, or a 0-based position when it is a number."""
    return int(text) if text.isdigit() else text


@dataclasses.dataclass
class TextClassificationConfig(RecipeConfig):
    """The options every text-classifier recipe has (see `RecipeConfig` for more).

    A recipe adds the options whose defaults its family's constructors hold
    (`flags.default_of`): `vocab_size` and `min_count` (its preprocessor's `adapt`),
    which `prepare_inputs` reads, `embedding_dim` and the network's sizes.
    """

    text_column: str = option(
        None,
        "text column of CSV/TSV/JSON-lines data, a name or a 0-based position "
        "(default: text)",
        type=column,
    )
    label_column: str = option(
        None, "label column, a name or a 0-based position (default: label)", type=column
    )
    embeddings: str = option(
        None,
        "initial word vectors, a word2vec/GloVe text file (sets --embedding-dim)",
        metavar="FILE",
    )
    encoding: str = option("utf-8", "encoding of class-folder files (e.g. latin-1)")
    skip_unreadable: bool = option(
        False,
        "skip class-folder files that are not text in --encoding (one line each, "
        "counted at the end) instead of stopping",
    )
    warmup_texts: str = option(
        None,
        "a UTF-8 file of example texts, one per line: the export's warm-up requests "
        "and the examples of REQUESTS.md (default: the first 4 test texts)",
        metavar="FILE",
    )

    def validate(self):
        super().validate()
        if self.warmup_texts is not None:  # a bad file is an error now
            read_example_texts(self.warmup_texts)
        if self.embeddings and not os.path.isfile(self.embeddings):
            raise ConfigError(f"--embeddings: no such file: {self.embeddings}")

    def data_paths(self):
        paths = super().data_paths()
        if self.warmup_texts is not None:
            paths.append(("--warmup-texts", self.warmup_texts))
        return paths


@dataclasses.dataclass
class TextClassificationInputs:
    """What a text classifier is trained, evaluated and exported with.

    Attributes:
        texts: the `LabelledSplits` (raw texts, class ids, names, description).
        preprocessor: the family's preprocessor layer, on the vocabulary.
        vocab_file: the vocabulary file.
        train, validation, test: `tf.data` datasets of `(model input, label)`.
        fingerprint: digest of the vocabulary, the class names and the training
            data (what a resumed run must match).
        embeddings: the `InitialEmbeddings`, once chosen.
        published_vocab_file: where `publish` copies the vocabulary (the
            `vocab_file` asked of `prepare_inputs`); trained word2vec vectors go
            beside it, as `word2vec.txt`.
    """

    texts: object
    preprocessor: object
    vocab_file: str
    train: object
    validation: object
    test: object
    fingerprint: str
    embeddings: object = None
    published_vocab_file: str = None

    def publish(self):
        """Copies the vocabulary to `published_vocab_file` (atomically) and writes
        the word2vec vectors the model started from, if any, beside it; called once
        the run folder's identity is checked. Returns the vocabulary's path."""
        target = self.published_vocab_file
        with atomic_path(target) as tmp:
            shutil.copyfile(self.vocab_file, tmp)
        if self.embeddings is not None and self.embeddings.word2vec:
            from zoo.text.vocabulary import Vocabulary
            from zoo.text.word2vec import write_word2vec

            vectors = os.path.join(os.path.dirname(target), "word2vec.txt")
            tokens = Vocabulary.load(self.vocab_file).tokens
            write_word2vec(vectors, tokens, self.embeddings.matrix)
        return target

    @property
    def vocabulary_size(self):
        return self.preprocessor.vocabulary_size


def prepare_inputs(config, texts, preprocessor, buckets=None, log=print, **kwargs):
    """Samples, vocabulary, preprocessor and datasets of a classifier's texts.

    The seeded samples of `--max-train-samples` / `--max-eval-samples` are taken
    first; the word vocabulary of the training texts (`--vocab-size`,
    `--min-count`, through the preprocessor's `tokenize`) is written to
    `RUN_DIR/vocabularies/<digest>/vocab.txt` (`zoo.io.content_keyed`), set as the
    preprocessor's asset, and copied to `RUN_DIR/vocab.txt` by
    `TextClassificationInputs.publish` once the run's identity is checked.

    Args:
        config: a `TextClassificationConfig`.
        texts: a `zoo.data.labelled.LabelledSplits`.
        preprocessor: the family's preprocessor layer (its settings, no vocabulary
            yet): string tensor `[B]` -> dict holding `"token_ids"`.
        buckets: byte-length bucket boundaries of the training batches.
        log: prints one line.
        **kwargs: keyword arguments of the preprocessor's call in the pipelines
            (e.g. `pad_to_limits=True`).

    Returns:
        A `TextClassificationInputs`.
    """
    from zoo.models.preprocessor import word_vocabulary

    seed = config.training.seed
    texts = texts.sample(config.max_train_samples, config.max_eval_samples, seed)
    per_class = ", ".join(f"{name} {n}" for name, n in texts.train.counts().items())
    log(
        f"examples: {texts.sizes()}; classes: {list(texts.label_names)}; "
        f"training examples per class: {per_class}"
    )
    requested = os.path.join(config.run_dir, "vocab.txt")
    vocab = word_vocabulary(
        texts.train.texts, preprocessor.tokenize, config.vocab_size, config.min_count
    )
    # In RUN_DIR/vocabularies/<digest of its bytes>/: no configuration overwrites
    # another's vocabulary.
    vocab_file = content_keyed(vocab.save, requested, VOCABULARIES)
    preprocessor.set_assets({"vocabulary.txt": vocab_file})
    datasets = {
        split: labelled_dataset(
            getattr(texts, split),
            lambda t: preprocessor(t, **kwargs)["token_ids"],
            config.training.batch_size,
            shuffle=split == "train",
            seed=seed,
            buckets=buckets,
        )
        for split in ("train", "validation", "test")
    }
    data = TextClassificationInputs(
        texts,
        preprocessor,
        str(vocab_file),
        **datasets,
        fingerprint=fingerprint(
            pathlib.Path(vocab_file),
            list(texts.label_names),
            texts.train.texts,
            texts.train.labels,
        ),
        published_vocab_file=requested,
    )
    log(f"vocabulary: {data.vocabulary_size} words")
    return data


def labelled_dataset(
    texts, preprocess, batch_size, shuffle=False, seed=0, buckets=None
):
    """`LabelledTexts` -> batches of `(preprocess(text batch), labels (B,))`.

    Args:
        texts: a `zoo.data.labelled.LabelledTexts`.
        preprocess: string tensor `[B]` -> the model's input (e.g.
            `lambda t: preprocessor(t)["token_ids"]`), run in the pipeline.
        batch_size: examples per batch.
        shuffle: reshuffle every epoch (seeded) and, with `buckets`, batch texts of
            similar byte length together (less compute spent on padding); without
            `shuffle` the order is kept.
        seed: the shuffle's seed.
        buckets: increasing byte-length boundaries of the shuffled batches.
    """
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices(
        (tf.constant(texts.texts, tf.string), texts.labels)
    )
    if shuffle:
        ds = ds.shuffle(len(texts), seed=seed, reshuffle_each_iteration=True)
    if shuffle and buckets:
        from zoo.training import bucket_by_length

        ds = bucket_by_length(
            ds, lambda t, y: tf.strings.length(t), list(buckets), batch_size, ([], [])
        )
    else:
        ds = ds.batch(batch_size)
    ds = ds.map(lambda t, y: (preprocess(t), y), num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)


@dataclasses.dataclass
class InitialEmbeddings:
    """What `initial_embeddings` chose.

    Attributes:
        matrix: float32 `(vocabulary_size, dim)` array, or None (learned from
            scratch).
        dim: the embedding size (the vector file's, when one is read).
        description: one line saying where the vectors come from.
        coverage: with a vector file, the fraction of the vocabulary it covers.
        word2vec: True when the vectors were trained here (word2vec).
    """

    matrix: object
    dim: int
    description: str
    coverage: float = None
    word2vec: bool = False


def initial_embeddings(
    vocab_file, dim, vectors=None, word2vec_epochs=0, corpus=None, seed=0, save_to=None
):
    """The embedding matrix a classifier starts from, for the words of `vocab_file`.

    - `vectors`: a word2vec/GloVe text file (`zoo.text.embeddings.load_embeddings`);
      its dimension replaces `dim`;
    - otherwise `word2vec_epochs > 0`: skip-gram vectors (`zoo.text.word2vec`) trained
      on `corpus`, the way Yang et al. 2016 initialise HAN; written to `save_to` in
      word2vec text format (so `vectors=save_to` reads them back; `bench.han` uses
      it; `TextClassificationInputs.publish` writes a recipe's);
    - otherwise None: the embeddings are learned from scratch.

    Args:
        vocab_file: the classifier's vocabulary file.
        dim: the embedding size (of word2vec's vectors).
        vectors: optional vector file.
        word2vec_epochs: passes of word2vec over `corpus` (0: no word2vec).
        corpus: iterable of 1-D int arrays of word ids of `vocab_file` (one per
            text), e.g. `HANTextClassifierPreprocessor.document_ids(texts)`.
        seed: word2vec's seed.
        save_to: optional path of the word2vec vectors written.

    Returns:
        An `InitialEmbeddings`.
    """
    from zoo.text.vocabulary import Vocabulary

    vocab = Vocabulary.load(vocab_file)
    if vectors:
        from zoo.text.embeddings import load_embeddings

        matrix, stats = load_embeddings(vectors, vocab)
        return InitialEmbeddings(
            matrix, stats.dim, f"pretrained vectors {vectors}: {stats}", stats.coverage
        )
    if not word2vec_epochs:
        return InitialEmbeddings(None, dim, "embeddings learned from scratch")
    if corpus is None:
        raise ValueError("`word2vec_epochs` > 0 needs a `corpus` of word ids.")
    from zoo.text.word2vec import train_word2vec, write_word2vec

    matrix, report = train_word2vec(
        corpus,
        vocabulary_size=len(vocab),
        dim=dim,
        epochs=word2vec_epochs,
        seed=seed,
        verbose=True,
        return_report=True,
    )
    if save_to:
        write_word2vec(save_to, vocab.tokens, matrix)
    description = f"word2vec ({word2vec_epochs} epochs): {report}"
    return InitialEmbeddings(matrix, dim, description, word2vec=True)


def evaluate_texts(task, texts, batch_size=64, extra=None):
    """Test metrics of a `TextClassifier` task on `LabelledTexts`, and its
    predictions (its network on its preprocessor's ids of the raw texts).

    Returns:
        `(report, results)`: `zoo.metrics.classification_report` of the predictions
        (accuracy, macro F1, per-class precision / recall / F1, confusion matrix),
        and `predict_texts`'s results, each with `"predicted"` (class id) and
        `"label"` (the true class id) added.
    """
    import numpy as np

    from zoo.metrics import classification_report
    from zoo.models.text_classifier import predict_texts

    results = predict_texts(
        task.backbone, task.preprocessor, texts.texts, batch_size, extra
    )
    for result, label in zip(results, texts.labels, strict=True):
        result["predicted"] = int(np.argmax(result["probabilities"]))
        result["label"] = int(label)
    report = classification_report(
        [r["label"] for r in results],
        [r["predicted"] for r in results],
        list(texts.label_names),
    )
    return report, results


def write_report(config, data, metrics, results, notes=()):
    """Writes `metrics.txt` in `--report-dir` (the data's description, then the
    table of `metrics` and `notes`), prints the table, and returns `(table,
    examples)`: the `--report-samples` seeded test results to draw in the recipe's
    attention report, with `"predicted"` and `"true"` (class names), `"probability"`
    (of the prediction) and `"index"` set."""
    import numpy as np

    from zoo.metrics import format_report

    text = "\n".join([format_report(metrics), *notes])
    os.makedirs(config.report_dir, exist_ok=True)
    with atomic_write(os.path.join(config.report_dir, "metrics.txt")) as f:
        f.write(f"{data.texts.description}\n\n{text}\n")
    print(text, flush=True)
    rng = np.random.default_rng(config.training.seed)
    examples = []
    for i in rng.permutation(len(results))[: config.report_samples]:
        predicted, label = results[i]["predicted"], results[i]["label"]
        examples.append(
            {
                **results[i],
                "index": int(i),
                "predicted": data.texts.label_names[predicted],
                "probability": float(results[i]["probabilities"][predicted]),
                "true": data.texts.label_names[label],
            }
        )
    return text, examples


def document_report(config, data, metrics, results, log=print):
    """HAN's report: `metrics.txt` and `attention.html` (the sentence and word
    attention of `--report-samples` seeded test documents, as in Yang et al.'s
    Figure 5)."""
    from zoo.report import attention_report_html

    text, examples = write_report(config, data, metrics, results)
    path = attention_report_html(
        os.path.join(config.report_dir, "attention.html"),
        examples,
        title=f"HAN attention: {data_name(config, 'demo documents')}",
        subtitle=data.texts.description,
        summary=text,
    )
    log(f"attention report: {path}")


def hop_report(config, data, metrics, results, log=print):
    """The sentence embedder's report: `metrics.txt`, `attention.html` (every hop's
    attention over the words of `--report-samples` test sentences) and a heat map
    `attention_<i>.png` of each (rows: hops)."""
    from zoo.report import attention_grid_html
    from zoo.viz import attention_heatmap

    norm = metrics["mean_attention_penalty_norm"]
    note = f"mean ||A A^T - I||_F over the test texts: {norm:.4f}"
    text, examples = write_report(config, data, metrics, results, ["", note])
    grids = []
    for example in examples:
        words = [w for w in example["tokens"] if w]
        attention = example["attention"][:, : len(words)]  # (r, T)
        hops = [f"hop {h + 1}" for h in range(attention.shape[0])]
        grids.append(
            {
                "rows": hops if words else [],
                "columns": words,
                "weights": attention.tolist() if words else [],
                "caption": f"test sentence {example['index'] + 1}: predicted "
                f"{example['predicted']} ({example['probability']:.3f}), true "
                f"{example['true']}",
                "ok": example["predicted"] == example["true"],
            }
        )
        if words:
            path = attention_heatmap(
                attention,
                hops,
                words,
                os.path.join(config.report_dir, f"attention_{example['index']}.png"),
                title=f"predicted {example['predicted']}, true {example['true']}",
            )
            log(f"attention heat map: {path}")
    path = attention_grid_html(
        os.path.join(config.report_dir, "attention.html"),
        [{"heading": "attention hops over the words", "examples": grids}],
        title="Structured self-attention: " + data_name(config, "demo sentences"),
        subtitle=data.texts.description,
        summary=text,
        legend="Rows: the attention hops (rows of A); columns: the words of the "
        "sentence; the darker a cell, the larger the hop's weight on that word.",
    )
    log(f"attention report: {path}")


def export_classifier(run, export_name, task, data, metrics, keys=HEADLINE_METRICS):
    """Exports the trained `task` (`TextClassifier.export`) to
    `--export-dir`/`export_name`/VERSION: the SavedModel of its network on its
    preprocessor (the run's vocabulary is the export's `assets/vocab.txt`) and
    `VERSION.keras`, the task itself; with the warm-up texts of `--warmup-texts` (or
    four test texts) and the manifest's recipe, data and `keys` of `metrics`.
    Returns the version folder."""
    config = run.config
    return task.export(
        config.export_dir,
        export_name,
        read_example_texts(config.warmup_texts)
        if config.warmup_texts
        else data.texts.test.texts[:4],
        metadata={
            "recipe": run.name,
            "data": data.texts.description,
            "metrics": {k: metrics[k] for k in keys if k in metrics},
        },
    )
