"""Structured self-attentive sentence embedding: classify, embed, export, reuse.

Task: sentence classification (SST-5, SST-2, any labelled texts) with a sentence
embedding that is a matrix, one row per attention hop, each row a weighting of the
words; delivered as a classifier, as an `embed` signature for TF Serving and as a
`.keras` encoder that other Keras programs load and fine-tune.
Paper: Lin et al., 2017, "A Structured Self-Attentive Sentence Embedding" (ICLR).
Model: `zoo.models.sentence_embedder.SelfAttentiveClassifier` (word embeddings ->
BiLSTM -> `StructuredSelfAttention` with penalty `||A A^T - I||_F^2` -> flatten -> ReLU
MLP -> softmax).
Metric: test accuracy (plus per-class precision/recall/F1, confusion matrix, and the
mean `||A A^T - I||_F` of the test sentences).

Commands:

    python -m zoo.recipes.self_attentive_embedding              # generated demo, < 1 min
    python -m zoo.recipes.self_attentive_embedding --data ../shared/data/sst --task sst5
    python -m zoo.recipes.self_attentive_embedding --data ../shared/data/sst --task sst2
        # SST trains on every labelled phrase of the training trees by default
        # (--no-phrases: root sentences only)
    python -m zoo.recipes.self_attentive_embedding --data ../shared/data/yelp_10k/yelp.csv \\
        --label-column stars
    ... --embeddings glove.840B.300d.txt   # optional pretrained word vectors

Data: SST tree folders, CSV/TSV/JSON lines (columns by name or 0-based position; a TSV
without them is `label<TAB>sentence`), split files or one folder per class
(`zoo.data.sentences.load_sentences`); data without validation or test sets is split
80/10/10 (fixed seed). Real data uses embeddings, BiLSTM (per direction) and d_a of
128, r 16, an MLP of 1000 and no penalty, 2 epochs validated 4 times each with the best
validation accuracy kept, and a moving average of the weights (`--ema 0.999`): the best
measured per minute of training on 2 CPU cores (see BENCHMARKS.md). The paper's sizes are

    --embedding-dim 300 --lstm-units 300 --attention-units 350 --num-hops 30 \
        --hidden-units 3000 --penalty 1

The demo uses a small model (r = 4), 2 epochs at learning rate 5e-3 with batches of 16.

Outputs: `runs/self_attentive_embedding/` (`vocab.txt`, checkpoints, logs, and
`encoder.keras`, the trained encoder alone), `reports/self_attentive_embedding/`
(`metrics.json`, `metrics.txt`, `attention_<i>.png`: per-hop attention over the words
of sample test sentences, rows = hops, columns = words) and
`saved_models/sentence_embedder/VERSION/` with the signatures of
`zoo.models.sentence_embedder.SentenceEmbedderServing`: `serving_default(text)` ->
`probabilities`, `label`; `embed(text)` -> `embedding` [None, r, 2u], `attention`
[None, r, T] and the `tokens` the attention columns refer to; `preprocess(text)` ->
`token_ids`, the Keras model's input. Beside it, read by `keras.saving.load_model`
after `import zoo`, vocabulary included: `VERSION.keras` (the
`SelfAttentiveTextClassifier` task: raw texts -> `predict`, `explain`, `embed`; the
classifier network, token ids in, is its `.backbone`) and `VERSION.encoder.keras` (the
`SentenceEmbedder` task: raw texts -> `embed`; the `SelfAttentiveEncoder` alone, token
ids -> {"embedding", "attention"}, is its `.backbone`); and `VERSION.encoder.vocab.txt`
(the vocabulary, for `SentencePreprocessor`).

Preprocessing runs in the graph (`SentencePreprocessor`); truncation, limits and
empty texts are described in `zoo.models.sentence_embedder.SentenceEmbedderServing`.
"""

import dataclasses
import os

from zoo.recipes import steps
from zoo.recipes.config import option
from zoo.recipes.text_classification import TextClassificationConfig

NAME = "self_attentive_embedding"
EXPORT_NAME = "sentence_embedder"
EXPORT_METRICS = ("accuracy", "macro_f1", "mean_attention_penalty_norm")
# Two passes validated four times each, the best of the eight validations kept (one
# pass over the SST phrases is long enough to overfit within it), with a moving
# average of the weights.
TRAINING = dict(
    epochs=2,
    batch_size=32,
    learning_rate=1e-3,
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

    task: str = option(
        "sst5",
        "labels of SST trees (sst5, sst2); csv or tsv: read a file as that format "
        "whatever its name",
        choices=("sst5", "sst2", "csv", "tsv"),
    )
    phrases: bool = option(
        True,
        "train on every labelled phrase of the SST training trees (the usual "
        "protocol; --no-phrases: the sentences)",
    )
    max_length: int = option(
        128, "tokens kept per text (later ones are dropped)", check="positive"
    )
    embedding_dim: int = option(
        128, "word embedding size (--embeddings sets it)", demo=32, check="positive"
    )
    lstm_units: int = option(
        128, "u, LSTM units per direction", demo=32, check="positive"
    )
    attention_units: int = option(
        128, "d_a, attention units", demo=32, check="positive"
    )
    num_hops: int = option(16, "r, attention hops", demo=4, check="positive")
    hidden_units: int = option(
        1000, "the MLP's hidden units", demo=64, check="positive"
    )
    penalty: float = option(
        0.0,
        "coefficient of the penalty ||A A^T - I||_F^2 (0: off)",
        check="non_negative",
    )
    dropout: float = option(
        0.5, "dropout before the MLP's layers", check="open_fraction"
    )
    clipnorm: float = option(0.5, "gradient-norm clipping", check="positive")
    demo_size: int = option(
        1200,
        "sentences in the generated demo corpus (2/3 training, 1/6 validation, "
        "1/6 test)",
        check="positive",
        metavar="N",
    )
    report_samples: int = option(
        3,
        "test sentences drawn as attention heat maps",
        check="non_negative",
        metavar="N",
    )


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def read_texts(config):
    """The labelled sentences of `--data` (or the demo corpus), a
    `ClassificationData`."""
    from zoo.data.sentences import demo_corpus, is_tree_file, load_sentences
    from zoo.recipes.labelled_texts import ClassificationData

    c = config
    if c.demo:
        n = c.demo_size
        splits = demo_corpus(n - 2 * (n // 6), n // 6, n // 6, c.training.seed)
        return ClassificationData.from_sentences(splits, "generated demo corpus")
    sst = c.task in ("sst5", "sst2")
    splits = load_sentences(
        c.data,
        task=c.task if sst else "sst5",
        text_column=c.text_column,
        label_column=c.label_column,
        phrases=c.phrases,
        format=None if sst else c.task,
        seed=0,
    )
    train_file = os.path.join(c.data, "train.txt")
    trees = sst and os.path.isfile(train_file) and is_tree_file(train_file)
    level = ", phrase-level training" if c.phrases else ""
    described = f"{c.data} ({c.task}{level})" if trees else c.data
    return ClassificationData.from_sentences(splits, described)


def load_data(config, log=print):
    """Sentences -> vocabulary, `SentencePreprocessor`, datasets and the initial word
    vectors (`--embeddings` or none): a `TextClassificationInputs`."""
    from zoo.models.sentence_embedder import (
        LENGTH_BUCKETS,
        SentencePreprocessor,
        tokenize_sentences,
    )
    from zoo.recipes.text_classification import initial_embeddings, prepare_inputs

    c = config
    data = prepare_inputs(
        c,
        read_texts(c),
        lambda text: tokenize_sentences(text, c.max_length),
        lambda vocab: SentencePreprocessor(vocab, max_length=c.max_length),
        buckets=LENGTH_BUCKETS,
        log=log,
    )
    data.embeddings = initial_embeddings(data.vocab_file, c.embedding_dim, c.embeddings)
    log(data.embeddings.description)
    return data


def build_model(config, data, optimizer):
    """The `SelfAttentiveClassifier` over its `SelfAttentiveEncoder`, compiled."""
    from zoo.models.sentence_embedder import (
        SelfAttentiveClassifier,
        SelfAttentiveEncoder,
    )
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
    model = SelfAttentiveClassifier(
        encoder,
        num_classes=len(data.label_names),
        hidden_units=c.hidden_units,
        dropout=c.dropout,
        name="sentence_classifier",
    )
    compile_classifier(model, optimizer, jit_compile=True if c.xla else "auto")
    return model


def evaluate(model, data):
    """The test metrics, with the mean penalty norm `||A A^T - I||_F` of the test
    texts, and the per-text results."""
    from zoo.models.sentence_embedder import penalty_norms
    from zoo.recipes.text_classification import evaluate_texts

    metrics, results = evaluate_texts(
        model,
        data.preprocessor,
        data.texts.test,
        data.label_names,
        extra=penalty_norms,
    )
    norms = [r["penalty_norm"] for r in results]
    metrics["mean_attention_penalty_norm"] = sum(norms) / max(len(norms), 1)
    return metrics, results


def report(config, data, metrics, results, log=print):
    """`metrics.txt`, `attention.html` (every hop's attention over the words of the
    sample test sentences) and one heat map per sentence (rows: hops)."""
    from zoo.recipes.text_classification import write_report
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
        title="Structured self-attention: " + steps.data_name(config, "demo sentences"),
        subtitle=data.description,
        summary=text,
        legend="Rows: the attention hops (rows of A); columns: the words of the "
        "sentence; the darker a cell, the larger the hop's weight on that word.",
    )
    log(f"attention report: {path}")


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        from zoo.models.sentence_embedder import export_sentence_embedder
        from zoo.recipes.text_classification import export_classifier
        from zoo.training import save_model_atomic

        data = load_data(config, run.log)
        run.log(data.description)
        with run.strategy.scope():
            model = build_model(config, data, run.optimizer(clipnorm=config.clipnorm))
        run.fit(
            model.training_model(),
            data.train,
            data.validation,
            data_fingerprint=data.fingerprint,
        )
        # The encoder alone, for reuse in other Keras programs (also in the export).
        save_model_atomic(model.encoder, os.path.join(config.run_dir, "encoder.keras"))
        data.publish()  # RUN_DIR/vocab.txt, now that the run's identity is checked
        run.log("trained")
        metrics, results = evaluate(model, data)
        run.write_metrics(data.description, metrics)
        report(config, data, metrics, results, run.log)
        version = None
        if not config.no_export:
            version = export_classifier(
                run,
                export_sentence_embedder,
                EXPORT_NAME,
                model,
                data,
                metrics,
                EXPORT_METRICS,
            )
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)


if __name__ == "__main__":
    main()
