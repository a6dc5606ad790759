"""Document classification with a Hierarchical Attention Network, servable on TF Serving.

Task: classify whole documents (reviews) and show which sentences and words decided.
Paper: Yang et al., 2016, "Hierarchical Attention Networks for Document
Classification" (NAACL). Model: `zoo.models.han_classifier.HANClassifier` (word BiGRU +
word attention per sentence, sentence BiGRU + sentence attention, softmax).
Metric: test accuracy (plus per-class precision/recall/F1 and the confusion matrix).

Commands:

    python -m recipes.han_classification                 # generated demo corpus, < 1 min
    python -m recipes.han_classification --data ../shared/data/aclImdb   # IMDB (folder
        # or its .tar.gz), binary
    python -m recipes.han_classification --data ../shared/data/yelp_10k/yelp.csv \\
        --text-column text --label-column stars            # Yelp, 5 classes
    python -m recipes.han_classification --data ... --word2vec-epochs 0
        # embeddings from scratch; by default real data first trains skip-gram
        # vectors for 5 epochs on the training + validation documents (the paper's
        # initialisation; also written to RUN_DIR/word2vec.txt)
    python -m recipes.han_classification --data ... --embeddings vectors.txt
        # start from your own word2vec/GloVe text vectors

Outputs: `runs/han_classification/` (checkpoints, logs), `reports/han_classification/`
(`metrics.json`, `metrics.txt`, `attention.html`: the highest-weighted sentences and
words of sample test documents, as in the paper's Figure 5), and
`saved_models/han/VERSION/` with the signatures

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None], `sentence_attention` float [None, S], `word_attention` float
  [None, S, W];
- `explain(text)` -> the same plus `sentences` string [None, S] and `words` string
  [None, S, W], the units the weights refer to ("" where padded);
- `preprocess(text)` -> `token_ids` int32 [None, S, W], the Keras model's input.

Preprocessing runs in the graph (`HANPreprocessor`); documents are truncated to
`--max-sentences` sentences of `--max-words` words (never rejected), inputs over 64 KiB
are cut first. `S` and `W` are the longest (truncated) document and sentence of the
request, at least 1 (defaults: 30 sentences of 50 words; the demo uses 8 of 16, 3
epochs, no early stopping). An empty or whitespace-only text has no words: all its attention
weights are 0 and its probabilities are the classifier's output for an all-zero
document vector (finite, never NaN).
"""

import argparse
import dataclasses
import json
import os
import time

import keras
import numpy as np
import tensorflow as tf

from zoo.data.documents import demo_splits, encode_labels, load_documents
from zoo.metrics import classification_report, format_report
from zoo.models.han_classifier import (
    MAX_SENTENCES,
    MAX_WORDS,
    HANClassifier,
    HANPreprocessor,
    tokenize_documents,
)
from zoo.report import attention_report_html
from zoo.text.vocabulary import Vocabulary
from zoo.training import (
    TrainingConfig,
    add_output_args,
    add_training_args,
    averaging,
    fit,
    get_strategy,
    set_seed,
)

NAME = "han_classification"
EXPORT_NAME = "han"


@dataclasses.dataclass
class Config:
    """Recipe options (the command-line flags)."""

    data: str = None
    text_column: str = "text"
    label_column: str = None
    export_dir: str = "saved_models"
    report_dir: str = f"reports/{NAME}"
    no_export: bool = False
    max_sentences: int = MAX_SENTENCES
    max_words: int = MAX_WORDS
    vocab_size: int = 30000
    min_count: int = 2
    embedding_dim: int = 200
    rnn_units: int = 50
    context_units: int = 100
    dropout: float = 0.0
    pooling: str = "attention"
    embeddings: str = None
    word2vec_epochs: int = 0
    max_train_documents: int = None
    max_eval_documents: int = None
    demo_documents: int = 400
    report_documents: int = 8
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)

    @property
    def demo(self):
        return self.data is None


def parse_config(argv=None):
    parser = argparse.ArgumentParser(
        prog=f"python -m recipes.{NAME}", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--data",
        default=None,
        help="IMDB folder or .tar.gz, or a CSV/TSV file; absent = generated demo corpus",
    )
    parser.add_argument("--text-column", default="text", help="CSV/TSV text column")
    parser.add_argument(
        "--label-column", default=None, help="CSV/TSV label column (default 'label')"
    )
    add_output_args(parser, NAME)
    parser.add_argument(
        "--max-sentences",
        type=int,
        default=MAX_SENTENCES,
        help="sentences kept per document (later ones are dropped)",
    )
    parser.add_argument(
        "--max-words",
        type=int,
        default=MAX_WORDS,
        help="words kept per sentence (later ones are dropped)",
    )
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--min-count", type=int, default=None)
    parser.add_argument("--embedding-dim", type=int, default=200)
    parser.add_argument("--rnn-units", type=int, default=50)
    parser.add_argument("--context-units", type=int, default=100)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--pooling", choices=("attention", "mean"), default="attention")
    parser.add_argument(
        "--embeddings",
        default=None,
        help="initial word vectors, word2vec/GloVe text file (sets --embedding-dim)",
    )
    parser.add_argument(
        "--word2vec-epochs",
        type=int,
        default=None,
        help="first train skip-gram vectors on the training and validation documents "
        "for this many epochs and start from them, as the paper does (0 = off; "
        "default 5 with --data, 0 on the demo corpus or with --embeddings)",
    )
    parser.add_argument(
        "--max-train-documents",
        type=int,
        default=None,
        help="train on a seeded sample of at most this many documents",
    )
    parser.add_argument(
        "--max-eval-documents",
        type=int,
        default=None,
        help="validate and test on seeded samples of at most this many documents each",
    )
    parser.add_argument("--demo-documents", type=int, default=400)
    parser.add_argument("--report-documents", type=int, default=8)
    pre = argparse.ArgumentParser(add_help=False)  # demo or real data: defaults
    pre.add_argument("--data", default=None)
    demo = pre.parse_known_args(argv)[0].data is None
    add_training_args(
        parser,
        epochs=3 if demo else 10,
        batch_size=32,
        learning_rate=2e-3,
        run_dir=f"runs/{NAME}",
    )
    if demo:  # short generated documents: small fixed limits, no early stopping
        parser.set_defaults(patience=0, max_sentences=8, max_words=16)
    args = parser.parse_args(argv)
    for flag in ("max_train_documents", "max_eval_documents"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    if args.word2vec_epochs is not None and args.word2vec_epochs < 0:
        parser.error(f"--word2vec-epochs must be >= 0, got {args.word2vec_epochs}")
    if args.embeddings and args.word2vec_epochs:
        parser.error("use either --embeddings or --word2vec-epochs, not both")
    if args.word2vec_epochs is None:
        args.word2vec_epochs = 0 if demo or args.embeddings else 5
    if args.embeddings and not os.path.isfile(args.embeddings):
        parser.error(f"--embeddings: no such file: {args.embeddings}")
    training = TrainingConfig.from_args(args, tensorboard=not demo)
    fields = {f.name for f in dataclasses.fields(Config)} - {"training"}
    values = {k: v for k, v in vars(args).items() if k in fields}
    if values["min_count"] is None:
        values["min_count"] = 1 if demo else 2
    return Config(training=training, **values)


# --- Data -----------------------------------------------------------------------------


def load_splits(config):
    """The `DocumentSplits` of `config.data` (or of the demo corpus)."""
    if config.demo:
        return demo_splits(config.demo_documents, seed=config.training.seed)
    splits = load_documents(
        config.data, text_column=config.text_column, label_column=config.label_column
    )
    if config.max_train_documents and len(splits.train) > config.max_train_documents:
        rng = np.random.default_rng(config.training.seed)
        keep = rng.permutation(len(splits.train))[: config.max_train_documents]
        splits.train = splits.train.subset(sorted(keep.tolist()))
        splits.description += f"; {len(splits.train)} training documents sampled"
    if config.max_eval_documents:
        for part in ("validation", "test"):
            docs = getattr(splits, part)
            if len(docs) > config.max_eval_documents:
                rng = np.random.default_rng(config.training.seed)
                keep = rng.permutation(len(docs))[: config.max_eval_documents]
                setattr(splits, part, docs.subset(sorted(keep.tolist())))
                splits.description += f"; {config.max_eval_documents} {part} sampled"
    return splits


def build_vocabulary(texts, config, path):
    """Builds the word vocabulary from the in-graph tokenization of `texts`."""
    texts = list(texts)

    def token_lists(chunk=2000):
        for start in range(0, len(texts), chunk):
            _, words = tokenize_documents(
                tf.constant(texts[start : start + chunk]),
                config.max_sentences,
                config.max_words,
            )
            yield words.flat_values.numpy().tolist()  # every word of the chunk

    vocab = Vocabulary.build(
        token_lists(), max_size=config.vocab_size, min_count=config.min_count
    )
    vocab.save(path)
    return vocab


def make_dataset(
    texts, labels, preprocessor, batch_size, shuffle=False, seed=0, fixed_shape=False
):
    """Raw (text, label) pairs -> batches of `(token_ids (B, S, W), label (B,))`.

    When shuffling, documents of similar byte length are batched together (less
    padding); the order is kept otherwise. `fixed_shape=True` pads every batch to the
    preprocessor's limits (one graph trace; worth it when the limits are small).
    """
    ds = tf.data.Dataset.from_tensor_slices((list(texts), np.asarray(labels, "int32")))
    if shuffle:
        from zoo.training import bucket_by_length

        ds = ds.shuffle(len(texts), seed=seed, reshuffle_each_iteration=True)
        ds = bucket_by_length(
            ds,
            lambda t, y: tf.strings.length(t),
            boundaries=[400, 800, 1200, 1800, 2600, 4000],
            batch_size=batch_size,
            padded_shapes=([], []),
        )
    else:
        ds = ds.batch(batch_size)
    ds = ds.map(
        lambda t, y: (preprocessor(t, pad_to_limits=fixed_shape)["token_ids"], y),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    return ds.prefetch(tf.data.AUTOTUNE)


def build_datasets(config, splits, vocab_file):
    """Vocabulary file, preprocessor and the train/validation/test datasets."""
    build_vocabulary(splits.train.texts, config, vocab_file)
    preprocessor = HANPreprocessor(vocab_file, config.max_sentences, config.max_words)
    bs = config.training.batch_size
    data = {}
    for name in ("train", "validation", "test"):
        docs = getattr(splits, name)
        labels = encode_labels(docs, splits.label_names)
        data[name] = make_dataset(
            docs.texts,
            labels,
            preprocessor,
            bs,
            shuffle=name == "train",
            seed=config.training.seed,
            fixed_shape=config.demo,
        )
    return preprocessor, data


def document_ids(texts, preprocessor, max_sentences=200, max_words=200, chunk=500):
    """Yields each document's word ids (1-D int32, sentences concatenated).

    The tokenization is the model's (`tokenize_documents` + its vocabulary), with
    generous limits: word vectors learn from the whole document, not only from the
    part the classifier reads.
    """
    texts = list(texts)
    for start in range(0, len(texts), chunk):
        _, words = tokenize_documents(
            tf.constant(texts[start : start + chunk]), max_sentences, max_words
        )
        ids = tf.cast(preprocessor.lookup(words.merge_dims(1, 2)), tf.int32)
        yield from (row.numpy() for row in ids)


def initial_embeddings(config, splits, preprocessor, vocab_file):
    """The starting embedding matrix (or None) and a line describing it.

    `--embeddings FILE` loads vectors for the vocabulary; `--word2vec-epochs N` trains
    skip-gram vectors on the training and validation documents (Yang et al. 2016) and
    also writes them to `RUN_DIR/word2vec.txt` (word2vec text format).
    """
    vocab = Vocabulary.load(vocab_file)
    if config.embeddings:
        from zoo.data.embeddings import load_embeddings

        matrix, stats = load_embeddings(config.embeddings, vocab)
        config.embedding_dim = stats.dim
        return matrix, f"pretrained vectors {config.embeddings}: {stats}"
    if not config.word2vec_epochs:
        return None, "embeddings learned from scratch"
    from zoo.text.word2vec import train_word2vec, write_word2vec

    texts = list(splits.train.texts) + list(splits.validation.texts)
    matrix, report = train_word2vec(
        document_ids(texts, preprocessor),
        vocabulary_size=preprocessor.lookup.size,
        dim=config.embedding_dim,
        epochs=config.word2vec_epochs,
        seed=config.training.seed,
        verbose=True,
        return_report=True,
    )
    write_word2vec(
        os.path.join(config.training.run_dir, "word2vec.txt"), vocab.tokens, matrix
    )
    return matrix, f"word2vec on {len(texts)} training + validation documents: {report}"


# --- Model ----------------------------------------------------------------------------


def build_model(config, vocabulary_size, num_classes, embedding_matrix=None):
    """The `HANClassifier` and the compiled probabilities view that is trained."""
    model = HANClassifier(
        vocabulary_size=vocabulary_size,
        num_classes=num_classes,
        embedding_dim=config.embedding_dim,
        rnn_units=config.rnn_units,
        context_units=config.context_units,
        dropout=config.dropout,
        pooling=config.pooling,
        name="han_classifier",
    )
    if embedding_matrix is not None:
        model.set_embedding_matrix(embedding_matrix)
    trainer = model.probabilities_model()
    trainer.compile(
        optimizer=keras.optimizers.Adam(
            config.training.learning_rate,
            clipnorm=5.0,
            **averaging(config.training),
        ),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        # Batches vary in shape (S, W): XLA would recompile for every new shape.
        jit_compile=False,
    )
    return model, trainer


def train(config, trainer, data):
    return fit(trainer, data["train"], data["validation"], config.training)


# --- Evaluation -------------------------------------------------------------------------


def predict_documents(model, preprocessor, texts, batch_size=64):
    """Runs preprocessing + model on raw texts; returns a list of per-document dicts."""
    results = []
    for start in range(0, len(texts), batch_size):
        batch = tf.constant(texts[start : start + batch_size])
        pre = preprocessor(batch)
        out = model(pre["token_ids"], training=False)
        probs = keras.ops.convert_to_numpy(out["probabilities"])
        s_att = keras.ops.convert_to_numpy(out["sentence_attention"])
        w_att = keras.ops.convert_to_numpy(out["word_attention"])
        sentences = pre["sentences"].numpy()
        words = pre["words"].numpy()
        for i in range(len(probs)):
            results.append(
                {
                    "probabilities": probs[i],
                    "sentences": [s.decode("utf-8") for s in sentences[i]],
                    "words": [[w.decode("utf-8") for w in ws] for ws in words[i]],
                    "sentence_attention": s_att[i].tolist(),
                    "word_attention": w_att[i].tolist(),
                }
            )
    return results


def evaluate(config, model, preprocessor, splits):
    """Test metrics (`zoo.metrics.classification_report`) and the HTML report."""
    docs = splits.test
    y_true = encode_labels(docs, splits.label_names)
    results = predict_documents(model, preprocessor, docs.texts)
    y_pred = np.array([int(np.argmax(r["probabilities"])) for r in results], "int32")
    report = classification_report(y_true.tolist(), y_pred.tolist(), splits.label_names)
    text = format_report(report)
    os.makedirs(config.report_dir, exist_ok=True)
    with open(os.path.join(config.report_dir, "metrics.json"), "w") as f:
        json.dump({"data": splits.description, **report}, f, indent=2)
    with open(os.path.join(config.report_dir, "metrics.txt"), "w") as f:
        f.write(splits.description + "\n\n" + text + "\n")

    # Sample documents: right and wrong predictions of every class, seeded.
    rng = np.random.default_rng(config.training.seed)
    order = rng.permutation(len(results))[: config.report_documents]
    examples = []
    for i in order:
        r = results[i]
        k = int(y_pred[i])
        examples.append(
            {
                **r,
                "predicted": splits.label_names[k],
                "probability": float(r["probabilities"][k]),
                "true": splits.label_names[int(y_true[i])],
            }
        )
    html_path = attention_report_html(
        os.path.join(config.report_dir, "attention.html"),
        examples,
        title=f"HAN attention: {splits.description}",
        summary=text,
    )
    return report, html_path


# --- Export -----------------------------------------------------------------------------


def make_serving_module(model, preprocessor, label_names):
    """The `ServingModule` behind the exported signatures (string in, dict out)."""
    from zoo.export import ServingModule

    text_spec = tf.TensorSpec([None], tf.string, name="text")

    class HANServing(ServingModule):
        def __init__(self, model, preprocessor, label_names):
            super().__init__(model)
            self.preprocessor = preprocessor
            self.label_names = tf.constant(list(label_names), tf.string)

        def _run(self, text):
            pre = self.preprocessor(text)
            out = self.model(pre["token_ids"], training=False)
            probabilities = tf.cast(out["probabilities"], tf.float32)
            label = tf.gather(self.label_names, tf.argmax(probabilities, axis=-1))
            result = {
                "probabilities": probabilities,
                "label": label,
                "sentence_attention": tf.cast(out["sentence_attention"], tf.float32),
                "word_attention": tf.cast(out["word_attention"], tf.float32),
            }
            return pre, result

        @tf.function(input_signature=[text_spec])
        def preprocess(self, text):
            return {"token_ids": self.preprocessor(text)["token_ids"]}

        @tf.function(input_signature=[text_spec])
        def explain(self, text):
            pre, result = self._run(text)
            result["sentences"] = pre["sentences"]
            result["words"] = pre["words"]
            return result

        @tf.function(input_signature=[text_spec])
        def serve(self, text):
            result = self.explain(text)  # one traced model graph for both
            return {k: v for k, v in result.items() if k not in ("sentences", "words")}

    return HANServing(model, preprocessor, label_names)


def export(config, model, preprocessor, splits, metrics):
    """Exports `saved_models/han/VERSION/` (+ the `.keras` file); returns its path."""
    from zoo.export import export_model

    module = make_serving_module(model, preprocessor, splits.label_names)
    warmup_texts = list(splits.test.texts[:4]) or ["a short example document."]
    return export_model(
        module,
        name=EXPORT_NAME,
        signatures={
            "serving_default": module.serve,
            "explain": module.explain,
            "preprocess": module.preprocess,
        },
        base_dir=config.export_dir,
        keras_model=model,
        warmup={"serving_default": {"text": warmup_texts}},
        keras_check={
            "signature": "serving_default",
            "outputs": {
                "probabilities": "probabilities",
                "sentence_attention": "sentence_attention",
                "word_attention": "word_attention",
            },
        },
        metadata={
            "recipe": NAME,
            "data": splits.description,
            "labels": list(splits.label_names),
            "limits": {
                "max_sentences": config.max_sentences,
                "max_words": config.max_words,
                "max_input_bytes": 65536,
            },
            "metrics": metrics,
        },
    )


def main(argv=None):
    config = parse_config(argv)
    start = time.time()
    clock = lambda what: print(f"[{time.time() - start:6.1f} s] {what}")  # noqa: E731
    set_seed(config.training.seed)
    splits = load_splits(config)
    print(splits.description)
    os.makedirs(config.training.run_dir, exist_ok=True)
    vocab_file = os.path.join(config.training.run_dir, "vocab.txt")
    preprocessor, data = build_datasets(config, splits, vocab_file)
    vocab_size = preprocessor.lookup.size
    clock(f"vocabulary: {vocab_size} words; classes: {splits.label_names}")
    embedding_matrix, how = initial_embeddings(config, splits, preprocessor, vocab_file)
    clock(how)

    strategy = get_strategy(config.training.distribute)
    with strategy.scope():
        model, trainer = build_model(
            config, vocab_size, len(splits.label_names), embedding_matrix
        )
    train(config, trainer, data)
    clock("trained")

    report, html_path = evaluate(config, model, preprocessor, splits)
    print(format_report(report))
    clock(f"attention report: {html_path}")
    metrics = {"accuracy": report["accuracy"], "macro_f1": report["macro_f1"]}
    version_dir = None
    if not config.no_export:
        version_dir = str(export(config, model, preprocessor, splits, metrics))
        clock(f"exported: {version_dir}")
    return {
        "model": EXPORT_NAME,
        "metric": "accuracy",
        "value": float(report["accuracy"]),
        "export": version_dir,
    }


if __name__ == "__main__":
    main()
