"""`SelfAttentiveTextClassifier` and `SentenceEmbedder`: the family's tasks on raw text.

- `SelfAttentiveTextClassifier`: the classifier (`fit`, `predict`, `predict_labels`,
  `explain`: the attention hops over the tokens, `embed`: the sentence embeddings);
  the export's `VERSION.keras`.
- `SentenceEmbedder`: the encoder alone on raw text (`embed` / `predict` -> the
  sentence embeddings); the export's `VERSION.encoder.keras`.
"""

import shutil

import keras
import numpy as np

from zoo.layers.structured_self_attention import orthogonality_penalty
from zoo.models.sentence_embedder.self_attentive_classifier import (
    SelfAttentiveClassifier,
)
from zoo.models.sentence_embedder.self_attentive_encoder import SelfAttentiveEncoder
from zoo.models.sentence_embedder.self_attentive_text_classifier_preprocessor import (
    SelfAttentiveTextClassifierPreprocessor,
)
from zoo.models.task import Task
from zoo.models.text_classifier import TextClassifier, predict_texts

LENGTH_BUCKETS = (30, 60, 100, 150, 220, 400)
"""Bucket boundaries, in bytes of raw text, of the recipe's shuffled training
batches: sentences of similar length are batched together (less padding)."""

CLIPNORM = 0.5
"""Gradient-norm clipping of the optimizer (the paper's value)."""


def penalty_norms(outputs, features):
    """Per-text `||A A^T - I||_F` of a classifier's attention, 0 for a text without
    tokens: how far the hops are from attending to different words.

    The signature is `zoo.models.text_classifier.predict_texts`'s `extra`: `outputs`
    are the `SelfAttentiveClassifier`'s, `features` the
    `SelfAttentiveTextClassifierPreprocessor`'s.
    """
    mask = features["token_ids"] != 0
    return {"penalty_norm": orthogonality_penalty(outputs["attention"], mask, False)}


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveTextClassifier(TextClassifier):
    """Structured self-attentive sentence classifier on raw text (Lin et al. 2017).

    `SelfAttentiveClassifier` (the network, word ids in) with its
    `SelfAttentiveTextClassifierPreprocessor`: `fit(texts, labels)` (labels as class
    ids or names), `predict(texts)` -> probabilities `(B, C)`,
    `predict_labels(texts)`, `explain(texts)` (each hop's attention over the tokens),
    `embed(texts)` (the sentence embedding matrices, as the export's `embed`
    signature gives them), `save("x.keras")`, `save_to_preset(dir)` /
    `from_preset(dir)` and `export(...)` (the TF Serving SavedModel:
    `serving_default`, `embed` -> the embedding matrices, attention and tokens,
    `preprocess`; `VERSION.keras` and the standalone encoder of `export_files`).

    The encoder's penalty `penalty * mean ||A A^T - I||_F^2` is one of the network's
    `losses` (`add_loss`); Keras adds `task.losses` to the compiled loss, so `fit`
    (and `evaluate`) on the task train with it.

    The defaults of `SelfAttentiveEncoder`, `SelfAttentiveClassifier`,
    `SelfAttentiveTextClassifierPreprocessor` (and its `adapt`) and of
    `default_compile` are the configuration the recipe trains with `--data`
    (BENCHMARKS.md), less its moving average of the weights (see `compile`).

    Args:
        backbone: a `SelfAttentiveClassifier`.
        preprocessor: a `SelfAttentiveTextClassifierPreprocessor` with the
            network's `vocabulary_size` words.
        label_names: the class names in class-id order.
        compile: compile with `default_compile`, the recipe's training settings:
            Adam (1e-3, gradient norm clipped at `CLIPNORM` = 0.5), sparse
            categorical cross-entropy plus the penalty, accuracy. The recipe's moving average of the weights
            (`--ema 0.999` on real data) is a setting of its runs, not of this
            compile (on a small data set the average would stay near the
            initial weights): pass `keras.optimizers.Adam(..., use_ema=True)` to
            `compile` for it.
        **kwargs: `keras.Model` keyword arguments.

    Example:

    ```python
    texts = ["a wonderful film .", "dull and far too long .", ...]
    labels = ["pos", "neg", ...]
    preprocessor = SelfAttentiveTextClassifierPreprocessor()  # 128 tokens a text
    preprocessor.adapt(texts)
    encoder = SelfAttentiveEncoder(preprocessor.vocabulary_size)  # r = 16, u = 128
    classifier = SelfAttentiveTextClassifier(
        backbone=SelfAttentiveClassifier(encoder, num_classes=2),
        preprocessor=preprocessor,
        label_names=["neg", "pos"],
    )
    classifier.fit(texts, labels, epochs=2)
    classifier.predict_labels(["what a fine film ."])  # ["pos"]
    classifier.embed(["what a fine film ."]).shape  # (1, 16, 256)
    ```
    """

    backbone_class = SelfAttentiveClassifier
    preprocessor_class = SelfAttentiveTextClassifierPreprocessor
    explain_extra = staticmethod(penalty_norms)
    signature_names = ("serving_default", "embed", "preprocess")
    export_name = "sentence_embedder"
    example_text = "a short example sentence ."
    warmup_signatures = ("serving_default", "embed")

    def __init__(
        self, backbone, preprocessor=None, label_names=None, compile=True, **kwargs
    ):
        self.check_parts(backbone, preprocessor)
        self.check_vocabulary(preprocessor, backbone.encoder.vocabulary_size)
        super().__init__(backbone, preprocessor, label_names, compile, **kwargs)

    def default_compile(self, learning_rate=1e-3, clipnorm=CLIPNORM):
        """Adam (`learning_rate`, gradient norm clipped at `clipnorm`), sparse
        categorical cross-entropy (plus the penalty), accuracy: the recipe's
        training settings (its `--learning-rate` and `--clipnorm` take their
        defaults from here)."""
        # jit_compile "auto", as the recipe compiles (XLA where there is an
        # accelerator). The compiled loss is the cross-entropy; Keras' train and
        # test steps add `self.losses` (the encoder's penalty) to it.
        super().default_compile(learning_rate, clipnorm)

    def explain(self, texts, batch_size=32):
        """Label, probabilities and the attention hops of each text.

        Returns:
            One dict per text: `"label"`, `"probabilities"` `(C,)`, `"attention"`
            `(r, T)` (hop by token: each hop's weights over the text's tokens, 0 at
            the padded positions; all 0 for a text without tokens), `"tokens"`
            `(T,)` (the words the columns refer to, "" where padded) and
            `"penalty_norm"` (`||A A^T - I||_F`, how far the hops are from
            attending to different words; 0 for a text without tokens). `T` is
            the longest text of its batch of `batch_size` texts of similar length.
        """
        rows = super().explain(texts, batch_size)
        for row in rows:
            row["penalty_norm"] = float(row["penalty_norm"])
        return rows

    def embed(self, texts, batch_size=32):
        """The sentence embedding matrices `M` `(B, r, 2u)`, float32, of `texts`.

        What the export's `embed` signature returns as `"embedding"` for the same
        texts (its `"attention"` and `"tokens"` are `explain`'s);
        `.reshape(len(texts), -1)` gives the `(B, r * 2u)` vectors the classifier's
        MLP reads. An empty or whitespace-only text gets all zeros.
        """
        return _embed(self.backbone.encoder, self, texts, batch_size)

    def export_files(self):
        """The standalone encoder beside the version folder: `VERSION.encoder.keras`
        (a `SentenceEmbedder` of the encoder with the same vocabulary, raw strings
        in; the encoder is its `.backbone`) and `VERSION.encoder.vocab.txt`, and
        the manifest's `"encoder"` entry (its files and sizes)."""
        encoder, preprocessor = self.backbone.encoder, self.preprocessor
        embedder = SentenceEmbedder(
            encoder, preprocessor, name=f"{encoder.name}_embedder"
        )
        metadata = {
            "encoder": {
                "file": "../<VERSION>.encoder.keras (beside this version folder): "
                "a SentenceEmbedder (raw strings in), the encoder is its .backbone",
                "vocabulary": "../<VERSION>.encoder.vocab.txt",
                "num_hops": encoder.num_hops,
                "embedding_width": encoder.output_dim,
            }
        }
        files = {
            ".encoder.keras": embedder.save,
            ".encoder.vocab.txt": lambda path: shutil.copyfile(
                preprocessor.asset_paths["vocabulary.txt"], path
            ),
        }
        return metadata, files


@keras.saving.register_keras_serializable(package="zoo")
class SentenceEmbedder(Task):
    """The structured self-attentive sentence encoder on raw text: texts -> `M`.

    `SelfAttentiveEncoder` (the backbone, word ids in) with its
    `SelfAttentiveTextClassifierPreprocessor`. `embed(texts)` (and `predict(texts)`)
    -> the sentence embedding matrices `(B, r, 2u)`, as the export's `embed`
    signature returns them. The export writes one as `VERSION.encoder.keras`:
    `keras.saving.load_model` reads it after `import zoo`, vocabulary included.
    To train the encoder under a new head, build the head on `.backbone` (token
    ids `(B, T)` -> `{"embedding", "attention"}`) and feed it
    `preprocessor(texts)["token_ids"]`.

    The task has no targets of its own: it is built uncompiled (`compile=False`);
    `fit` needs a `compile(loss=...)` of your choice on the embeddings.

    Args:
        backbone: a `SelfAttentiveEncoder`.
        preprocessor: a `SelfAttentiveTextClassifierPreprocessor` with the
            encoder's `vocabulary_size` words.
        **kwargs: `keras.Model` keyword arguments.

    Example:

    ```python
    embedder = keras.saving.load_model("saved_models/sentence_embedder/1.encoder.keras")
    embedder.embed(["a fine film ."]).shape  # (1, r, 2u)
    ```
    """

    backbone_class = SelfAttentiveEncoder
    preprocessor_class = SelfAttentiveTextClassifierPreprocessor

    def __init__(self, backbone, preprocessor=None, **kwargs):
        self.check_parts(backbone, preprocessor)
        self.check_vocabulary(preprocessor, backbone.vocabulary_size)
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional Model ===
        inputs = backbone.input
        outputs = backbone(inputs)["embedding"]
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def embed(self, texts, batch_size=32):
        """The sentence embedding matrices `M` `(B, r, 2u)`, float32 (the export's
        `embed` signature's `"embedding"`); all zeros for a text without tokens."""
        return _embed(self.backbone, self, texts, batch_size)


def _embed(encoder, task, texts, batch_size):
    """`encoder`'s float32 embeddings of raw `texts`, through `task`'s preprocessor,
    in the order of `texts`."""
    import tensorflow as tf

    task.check_tensorflow_backend("embed")
    if task.preprocessor is None:
        raise ValueError("embed reads raw texts: the task has no preprocessor")
    texts = task.checked_texts(texts)
    rows = predict_texts(
        lambda ids, training=False: {
            "embedding": tf.cast(
                encoder(ids, training=training)["embedding"], tf.float32
            )
        },
        task.preprocessor,
        texts,
        batch_size,
    )
    if not rows:
        return np.zeros((0, encoder.num_hops, encoder.output_dim), "float32")
    return np.stack([row["embedding"] for row in rows])
