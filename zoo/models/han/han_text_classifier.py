"""`HANTextClassifier`: the HAN document classifier as a task on raw text."""

import keras

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.models.han.han_classifier import HANClassifier
from zoo.models.han.han_serving import HANServing
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
    SavedModel of `zoo.models.han.export_han_classifier`).

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

    def __init__(
        self, backbone, preprocessor=None, label_names=None, compile=True, **kwargs
    ):
        self.check_parts(backbone, preprocessor)
        super().__init__(backbone, preprocessor, label_names, compile, **kwargs)

    def default_compile(self, learning_rate=2e-3, clipnorm=CLIPNORM):
        """Adam (`learning_rate`, gradient norm clipped at `clipnorm`), sparse
        categorical cross-entropy, accuracy: the recipe's training settings (its
        `--learning-rate` takes its default from here)."""
        # Batches vary in shape (S, W): XLA would recompile for every new shape.
        super().default_compile(learning_rate, clipnorm, jit_compile=False)

    def export(
        self, base_dir="saved_models", name="han", warmup_texts=None, metadata=None
    ):
        """Writes `base_dir/name/VERSION/` (TF Serving) and `VERSION.keras` (this
        task); returns the version folder. See `export_han_classifier`."""
        self.check_tensorflow_backend("export")
        return export_han_classifier(self, base_dir, name, warmup_texts, metadata)


def export_han_classifier(
    task,
    base_dir="saved_models",
    name="han",
    warmup_texts=None,
    metadata=None,
    max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    preprocessor=None,
):
    """Exports the trained `task` as `base_dir/name/VERSION/` and `VERSION.keras`
    (the task itself: it predicts on raw strings); returns the version folder.

    The task's network and class names, the in-graph `preprocessor` (a
    `HANPreprocessor`; the task's own by default, the recipe passes its run's, whose
    vocabulary file names the SavedModel's asset) and the batch limit make the
    `HANServing`; the rest is `TextClassifierServing.export`'s (warm-up documents: a
    short example when none are given). The manifest records the labels and the
    limits.
    """
    HANTextClassifier.check_task(task)
    if preprocessor is None:
        preprocessor = task.preprocessor.module
    module = HANServing(task.backbone, preprocessor, task.label_names, max_batch_size)
    return module.export(
        base_dir,
        name,
        warmup_texts or ["a short example document."],
        metadata,
        keras_outputs=("probabilities", "sentence_attention", "word_attention"),
        keras_model=task,
        limits={
            "max_sentences": preprocessor.max_sentences,
            "max_words": preprocessor.max_words,
        },
    )
