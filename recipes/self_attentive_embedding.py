"""Structured self-attentive sentence embedding: classify, embed, export, reuse.

Task: sentence classification (SST-5, SST-2, any labelled texts) through a sentence
embedding that is a matrix, one row per attention hop over the words.
Paper: Lin et al., 2017, "A Structured Self-Attentive Sentence Embedding" (ICLR); the
task trained, evaluated and exported is `zoo.models.sentence_embedder.
SelfAttentiveTextClassifier` (its network: `SelfAttentiveClassifier`).
Metric: test accuracy (plus per-class precision/recall/F1, the confusion matrix and
the mean `||A A^T - I||_F` of the test sentences).

    python -m zoo.recipes.self_attentive_embedding              # demo corpus, < 1 min
    python -m zoo.recipes.self_attentive_embedding --data ../shared/data/sst --task sst2
    python -m zoo.recipes.self_attentive_embedding --data yelp.csv --label-column stars

The model's options take their defaults from the constructors of
`SelfAttentiveEncoder`, `SelfAttentiveClassifier`,
`SelfAttentiveTextClassifierPreprocessor` (and its `adapt`) and
`SelfAttentiveTextClassifier`'s `default_compile`: the task built with its defaults is
the one trained with `--data` (less `--ema`, a setting of the run). The paper's sizes
are `--embedding-dim 300 --lstm-units 300 --attention-units 350 --num-hops 30
--hidden-units 3000 --penalty 1`. Data layouts, training and outputs (the `embed`
signature, the `.keras` encoder): docs/recipes.md#self_attentive_embedding.
"""

import dataclasses
import functools
import os

from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SelfAttentiveTextClassifier,
    SelfAttentiveTextClassifierPreprocessor,
)
from zoo.models.sentence_embedder.self_attentive_text_classifier import (
    LENGTH_BUCKETS,
    penalty_norms,
)
from zoo.training import steps
from zoo.training.flags import default_of, option
from zoo.training.text_classification import TextClassificationConfig

encoder = functools.partial(default_of, SelfAttentiveEncoder)
net = functools.partial(default_of, SelfAttentiveClassifier)
pre = functools.partial(default_of, SelfAttentiveTextClassifierPreprocessor)
adapt = functools.partial(default_of, SelfAttentiveTextClassifierPreprocessor.adapt)
compiled = functools.partial(default_of, SelfAttentiveTextClassifier.default_compile)
POS = "positive"
NAME = "self_attentive_embedding"
EXPORT_NAME = "sentence_embedder"
SPLIT_SEED = 0  # of the validation and test sets held out of the training data
# The best of eight validations in two passes (one pass over the SST phrases is long
# enough to overfit within it), with a moving average of the weights.
TRAINING = dict(
    epochs=2,
    batch_size=32,
    learning_rate=compiled("learning_rate"),
    validations_per_epoch=4,
    monitor="val_accuracy",
    patience=8,
    ema=0.999,
)
# The demo corpus is learned in two short epochs.
DEMO_TRAINING = dict(
    epochs=2,
    batch_size=16,
    learning_rate=5e-3,
    patience=0,
    verbose=2,
    validations_per_epoch=1,
    monitor="val_loss",
    ema=0.0,
)


@dataclasses.dataclass
class Config(TextClassificationConfig):
    """The recipe's options (the command-line flags)."""

    # fmt: off
    task: str = option("sst5", "labels of SST trees (sst5, sst2), or csv/tsv: read "
        "--data as that format", choices=("sst5", "sst2", "csv", "tsv"))
    phrases: bool = option(True, "train on every phrase of the SST training trees")
    max_length: int = option(pre("max_length"), "tokens kept per text", check=POS)
    vocab_size: int = option(adapt("vocab_size"), "largest vocabulary, [PAD] and [UNK] "
        "included", check=POS)
    min_count: int = option(adapt("min_count"), "words seen fewer times in training "
        "map to [UNK]", check=POS)
    embedding_dim: int = option(encoder("embedding_dim"), "word embedding size "
        "(--embeddings sets it)", demo=32, check=POS)
    lstm_units: int = option(encoder("lstm_units"), "u, LSTM units per direction",
        demo=32, check=POS)
    attention_units: int = option(encoder("attention_units"), "d_a, attention size",
        demo=32, check=POS)
    num_hops: int = option(encoder("num_hops"), "r, attention hops", demo=4, check=POS)
    hidden_units: int = option(net("hidden_units"), "MLP hidden units", demo=64,
        check=POS)
    penalty: float = option(encoder("penalty"), "coefficient of the penalty "
        "||A A^T - I||_F^2", check="non_negative")
    dropout: float = option(net("dropout"), "dropout before the MLP layers",
        check="open_fraction")
    clipnorm: float = option(compiled("clipnorm"), "gradient-norm clipping", check=POS)
    demo_size: int = option(1200, "sentences in the demo corpus", check=POS,
        metavar="N")
    report_samples: int = option(3, "test sentences drawn as heat maps",
        check="non_negative", metavar="N")
    # fmt: on


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def read_texts(config):
    """The labelled sentences of `--data` (or the demo corpus): `LabelledSplits`."""
    c = config
    if c.demo:
        from zoo.demo.sentences import demo_splits

        return demo_splits(c.demo_size, c.training.seed)
    from zoo.data.labelled import load_labelled

    sst = c.task in ("sst5", "sst2")
    return load_labelled(
        c.data,
        c.text_column,  # none given: a TSV is label<TAB>sentence lines or SST trees
        c.label_column,
        format=None if sst else c.task,
        task=c.task if sst else "sst5",
        phrases=c.phrases,
        encoding=c.encoding,
        skip_unreadable=c.skip_unreadable,
        seed=SPLIT_SEED,
    )


def load_data(config, log=print):
    """Sentences -> vocabulary, `SelfAttentiveTextClassifierPreprocessor`, datasets
    and the initial word vectors (`--embeddings` or none): a
    `TextClassificationInputs`."""
    from zoo.training.text_classification import initial_embeddings, prepare_inputs

    c = config
    data = prepare_inputs(
        c,
        read_texts(c),
        SelfAttentiveTextClassifierPreprocessor(c.max_length),
        buckets=LENGTH_BUCKETS,
        log=log,
    )
    data.embeddings = initial_embeddings(data.vocab_file, c.embedding_dim, c.embeddings)
    log(data.embeddings.description)
    return data


def build_model(config, data, run):
    """The `SelfAttentiveTextClassifier` (a `SelfAttentiveClassifier` over its
    `SelfAttentiveEncoder`, the preprocessor of `data`, the class names), compiled
    with the run's optimizer (`--learning-rate`, `--clipnorm`, `--ema`)."""
    from zoo.models.text_classifier import compile_classifier

    c = config
    encoder = SelfAttentiveEncoder(
        vocabulary_size=data.vocabulary_size,
        embedding_dim=data.embeddings.dim,
        lstm_units=c.lstm_units,
        attention_units=c.attention_units,
        num_hops=c.num_hops,
        penalty=c.penalty,
        name="sentence_encoder",
    )
    if data.embeddings.matrix is not None:
        encoder.set_embedding_matrix(data.embeddings.matrix)
    backbone = SelfAttentiveClassifier(
        encoder,
        num_classes=len(data.texts.label_names),
        hidden_units=c.hidden_units,
        dropout=c.dropout,
        name="sentence_classifier",
    )
    task = SelfAttentiveTextClassifier(
        backbone, data.preprocessor, list(data.texts.label_names), compile=False
    )
    optimizer = run.optimizer(clipnorm=c.clipnorm)
    return compile_classifier(task, optimizer, jit_compile=True if c.xla else "auto")


def evaluate(task, data):
    """The test metrics, with the mean penalty norm `||A A^T - I||_F` of the test
    texts, and the per-text results."""
    from zoo.training.text_classification import evaluate_texts

    metrics, results = evaluate_texts(task, data.texts.test, extra=penalty_norms)
    norms = [r["penalty_norm"] for r in results]
    metrics["mean_attention_penalty_norm"] = sum(norms) / max(len(norms), 1)
    return metrics, results


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        from zoo.training import save_model_atomic
        from zoo.training.text_classification import export_classifier, hop_report

        data = load_data(config, run.log)
        run.log(data.texts.description)
        with run.strategy.scope():
            task = build_model(config, data, run)
        run.fit(task, data.train, data.validation, data_fingerprint=data.fingerprint)
        # The encoder alone, for other Keras programs (the export has it too).
        encoder = task.backbone.encoder
        save_model_atomic(encoder, os.path.join(config.run_dir, "encoder.keras"))
        data.publish()  # RUN_DIR/vocab.txt, now that the run's identity is checked
        run.log("trained")
        metrics, results = evaluate(task, data)
        run.write_metrics(data.texts.description, metrics)
        hop_report(config, data, metrics, results, run.log)
        version = None
        if not config.no_export:
            version = export_classifier(run, EXPORT_NAME, task, data, metrics)
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)


if __name__ == "__main__":
    main()
