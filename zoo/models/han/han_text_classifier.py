"""`HANTextClassifier`: the HAN document classifier as a task on raw text."""

import keras

from zoo.models.han.han_classifier import HANClassifier
from zoo.models.han.han_text_classifier_preprocessor import (
    HANTextClassifierPreprocessor,
)
from zoo.models.text_classifier import TextClassifier

LENGTH_BUCKETS = (400, 800, 1200, 1800, 2600, 4000)
"""Bucket boundaries, in bytes of raw text, of the recipe's shuffled training
batches: documents of similar length are batched together (less padding)."""

CLIPNORM = 5.0
"""Gradient-norm clipping of the optimizer (the RNNs see up to 50-step sequences)."""


@keras.saving.register_keras_serializable(package="zoo")
class HANTextClassifier(TextClassifier):
    """Hierarchical Attention Network classifier on raw documents (Yang et al. 2016).

    `HANClassifier` (the network, word ids in) with its
    `HANTextClassifierPreprocessor`: `fit(texts, labels)`, `predict(texts)` ->
    probabilities `(B, C)`, `predict_labels(texts)`, `explain(texts)` (sentence and
    word attention with the sentences and words they weigh), `save("x.keras")`,
    `save_to_preset(dir)` / `from_preset(dir)` and `export(...)` (the TF Serving
    SavedModel: `serving_default` -> probabilities, label and both attention maps,
    `explain` -> the same with the sentences and words they weigh, `preprocess`;
    the manifest records the labels and the limits).

    The defaults of `HANClassifier`, of `HANTextClassifierPreprocessor` (and its
    `adapt`) and of `default_compile` are the configuration the recipe trains with
    `--data` (BENCHMARKS.md). The recipe also starts the embeddings from word2vec
    vectors of the training texts: `zoo.training.text_classification.
    initial_embeddings(..., word2vec_epochs=5)`, loaded with
    `backbone.set_embedding_matrix` before `fit`.

    Args:
        backbone: a `HANClassifier`.
        preprocessor: a `HANTextClassifierPreprocessor` (with its vocabulary).
        label_names: the class names in class-id order.
        compile: compile with `default_compile`: Adam (2e-3, gradient norm
            clipped at 5), the recipe's training settings.
        **kwargs: `keras.Model` keyword arguments.

    Example:

    ```python
    texts = ["A wonderful film. I loved it.", "Dull and far too long.", ...]
    labels = ["pos", "neg", ...]
    preprocessor = HANTextClassifierPreprocessor()  # 30 sentences of 50 words
    preprocessor.adapt(texts)  # words seen at least twice
    classifier = HANTextClassifier(
        backbone=HANClassifier(preprocessor.vocabulary_size, num_classes=2),
        preprocessor=preprocessor,
        label_names=["neg", "pos"],
    )
    classifier.fit(texts, labels, epochs=2)
    classifier.predict_labels(["What a fine film."])  # ["pos"]
    ```
    """

    backbone_class = HANClassifier
    preprocessor_class = HANTextClassifierPreprocessor
    signature_names = ("serving_default", "explain", "preprocess")
    export_name = "han"
    example_text = "a short example document."
    keras_outputs = ("probabilities", "sentence_attention", "word_attention")

    def default_compile(self, learning_rate=2e-3, clipnorm=CLIPNORM):
        """Adam (`learning_rate`, gradient norm clipped at `clipnorm`), sparse
        categorical cross-entropy, accuracy: the recipe's training settings (its
        `--learning-rate` takes its default from here)."""
        # Batches vary in shape (S, W): XLA would recompile for every new shape.
        super().default_compile(learning_rate, clipnorm, jit_compile=False)
