"""`Seq2SeqTextTranslator`: the attentional translator as a task on raw text."""

import keras
import numpy as np
import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.models.task import Task
from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy
from zoo.models.translation.seq2seq_translator import Seq2SeqTranslator
from zoo.models.translation.seq2seq_translator_preprocessor import (
    Seq2SeqTranslatorPreprocessor,
)
from zoo.models.translation.translator import Translator, as_text, translate_corpus
from zoo.models.translation.validation_bleu import choose_length_penalty


@keras.saving.register_keras_serializable(package="zoo")
class Seq2SeqTextTranslator(Task):
    """Attentional encoder-decoder translation (Bahdanau / Luong) on raw sentences.

    `Seq2SeqTranslator` (the network, ids in) with its
    `Seq2SeqTranslatorPreprocessor`. `fit(x=sources, y=targets)` or
    `fit(tf.data.Dataset of (source, target) strings)` trains with teacher forcing
    on the pairs encoded as the recipe's training batches are (the decoder reads
    `[START] subwords`, the labels are `subwords [END]`). A `tf.data.Dataset` of
    batches already encoded, `({"source_ids", "target_ids"}, labels)`, is fit as
    it is: the recipe fits its length-bucketed batches (`translation_dataset`)
    that way. `evaluate` takes the same pairs and gives the loss. The compiled
    graph's output is the logits `(B, Tt, V)`: the task is the model that is
    compiled and fit.

    `translate(texts)` decodes with the family's `Translator` (greedy, or beam search
    with `beam_width`), exactly as the export's `translate_greedy` and
    `serving_default` signatures do; `export(...)` writes that export
    (`zoo.models.translation.export_translator`) with this task as `VERSION.keras`.

    `predict(texts)` is `translate(texts)` (greedy search, a list of str): the
    network's teacher-forced logits need a target sentence, which a source alone
    does not give, and the translations are what a prediction of this task is.
    With `task.preprocessor = None`, `predict` is Keras' on preprocessed inputs
    (`{"source_ids", "target_ids"}` -> logits).

    The defaults of this task (its searches and `default_compile`), of
    `Seq2SeqTranslator` and of `Seq2SeqTranslatorPreprocessor` (and its `adapt`)
    are the configuration the recipe trains with `--data` and BENCHMARKS.md
    measures; only the vocabulary sizes and `max_length` come from the data. The
    recipe chooses the length penalty on validation after training
    (`choose_alpha`, among 0.6, 1.0, 1.3, 1.6 and 2.0); the default `alpha=1.0` is
    what it chose on Multi30k de->en (docs/results/translation_alpha_auto.json).
    The recipe also keeps the epoch of the best validation BLEU, halves the rate
    when it stops improving, averages the weights and groups pairs of similar
    length into batches (docs/recipes.md#translation).

    Args:
        backbone: a `Seq2SeqTranslator`.
        preprocessor: a `Seq2SeqTranslatorPreprocessor` whose vocabulary sizes are
            the network's, or None.
        beam_width: the beam of `serving_default` in an export and of
            `translate(texts, beam_width=task.beam_width)` (5).
        alpha, beta: GNMT length and coverage penalties (greedy and beam search;
            1.0 and 0).
        length_a, length_b: a translation stops after `ceil(a * |X| + b)` subwords
            (and after the preprocessor's `max_length`; 1.5 and 5).
        compile: compile with the recipe's training settings (`default_compile`).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Example:

    ```python
    pre = Seq2SeqTranslatorPreprocessor()  # cased; max_length: the longest pair
    pre.adapt(sources, targets)  # up to 8000 subwords per language
    backbone = Seq2SeqTranslator(pre.source_vocab_size, pre.target_vocab_size)
    translator = Seq2SeqTextTranslator(backbone, pre)  # beam 5, alpha 1.0, beta 0
    translator.fit(sources, targets, epochs=22)
    translator.translate(["Ein Hund läuft."], beam_width=5)  # ["A dog runs."]
    ```
    """

    def __init__(
        self,
        backbone,
        preprocessor=None,
        beam_width=5,
        alpha=1.0,
        beta=0.0,
        length_a=1.5,
        length_b=5,
        compile=True,
        **kwargs,
    ):
        if not isinstance(backbone, Seq2SeqTranslator):
            raise ValueError(
                "`backbone` must be a Seq2SeqTranslator. Received: "
                f"{type(backbone).__name__}"
            )
        if preprocessor is not None and not isinstance(
            preprocessor, Seq2SeqTranslatorPreprocessor
        ):
            raise ValueError(
                "`preprocessor` must be a Seq2SeqTranslatorPreprocessor. Received: "
                f"{type(preprocessor).__name__}"
            )
        _check_beam_width(beam_width)
        if preprocessor is not None and preprocessor.asset_paths:
            sizes = (preprocessor.source_vocab_size, preprocessor.target_vocab_size)
            expected = (backbone.source_vocab_size, backbone.target_vocab_size)
            if sizes != expected:
                raise ValueError(
                    "The preprocessor's (source, target) vocabulary sizes must be the "
                    f"network's {expected}. Received: {sizes}"
                )
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional Model ===
        inputs = backbone.input  # {"source_ids", "target_ids"}
        outputs = backbone(inputs)["logits"]  # (B, Tt, V)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.beam_width = beam_width
        self.alpha = alpha
        self.beta = beta
        self.length_a = length_a
        self.length_b = length_b
        self._translators = _Translators()
        if compile:
            self.default_compile()

    @classmethod
    def from_config(cls, config):
        # A saved task's compile config names `zoo>FusedAdam`: registered here,
        # before `keras.saving.load_model` compiles the task from it (importing it
        # with the family would load the fast paths with `import zoo`).
        import zoo.fastpath.fused_adam  # noqa: F401

        return super().from_config(config)

    def default_compile(
        self,
        learning_rate=2e-3,
        clipnorm=5.0,
        label_smoothing=0.1,
        jit_compile=False,
        **optimizer_kwargs,
    ):
        """The recipe's optimizer and loss (its `--learning-rate` and
        `--label-smoothing` take their defaults from here).

        `FusedAdam` (Keras' Adam, fused; each weight's gradient norm clipped at
        `clipnorm`) and the label-smoothed `MaskedSparseCrossentropy`. The recipe
        passes its rate schedule, weight averaging and XLA switch.

        Args:
            learning_rate: a float or a `keras.optimizers.schedules` schedule.
            clipnorm: float.
            label_smoothing: float in [0, 1).
            jit_compile: `keras.Model.compile`'s (default False: batches of
                free lengths vary in shape, which XLA would recompile for; the
                recipe's length buckets bound the shapes).
            **optimizer_kwargs: more `FusedAdam` arguments (e.g.
                `zoo.training.averaging(cfg)`).
        """
        from zoo.fastpath.fused_adam import FusedAdam

        self.compile(
            optimizer=FusedAdam(learning_rate, clipnorm=clipnorm, **optimizer_kwargs),
            loss=MaskedSparseCrossentropy(label_smoothing),
            jit_compile=jit_compile,
        )

    # --- Training on sentence pairs -----------------------------------------------

    def preprocess_samples(self, x, y=None, sample_weight=None):
        """A batch of `(source, target)` strings -> `({"source_ids", "target_ids"},
        labels[, sample_weight])` (`Seq2SeqTranslatorPreprocessor`)."""
        if self.preprocessor is None:
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} fits and evaluates on (source, target) pairs: "
                "the dataset gives sources only. Received: y=None"
            )
        return self.preprocessor(x, y, sample_weight)

    def fit(self, x=None, y=None, *args, **kwargs):
        self._check_pairs(x, y, "fit")
        validation = kwargs.get("validation_data")
        if isinstance(validation, (tuple, list)):
            self._check_pairs(*validation[:2], "fit: validation_data")
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        if not kwargs.get("_use_cached_eval_dataset"):
            self._check_pairs(x, y, "evaluate")
        return super().evaluate(x, y, *args, **kwargs)

    def _check_pairs(self, x, y=None, method="fit"):
        if self.preprocessor is None:
            return
        if isinstance(x, tf.data.Dataset):
            spec = x.element_spec
            if not isinstance(spec, tuple) or len(spec) < 2:
                raise ValueError(
                    f"{method} needs a tf.data.Dataset of (source, target) strings. "
                    f"Received: elements {spec}, y=None"
                )
            return
        if y is None:
            raise ValueError(
                f"{method} needs the target texts: x=sources, y=targets, or a "
                "tf.data.Dataset of (source, target) strings. Received: y=None"
            )
        self.check_inputs(x)
        _check_texts(y, "y")

    # --- Translation -------------------------------------------------------------

    def translate(self, texts, beam_width=None, return_attention=False, batch_size=64):
        """Translates source sentences.

        The search of the export's signatures (`Translator`): greedy search when
        `beam_width` is None or 1 (`translate_greedy`), beam search otherwise
        (`serving_default` with `beam_width=task.beam_width`), with the task's
        penalties and length limits. Texts are batched in order of length.

        Args:
            texts: source sentences (a list, tuple or array of str).
            beam_width: None or 1 for greedy search, more for beam search.
            return_attention: also return the attention weights of each text.
            batch_size: texts per decoding call.

        Returns:
            A list of str. With `return_attention`, one dict per text:
            `"translation"` str, `"score"` float (GNMT score), `"attention"` float
            `(Tt, Ts)` (the weights each target subword gives the source subwords),
            `"source_tokens"` and `"target_tokens"` (lists of str, the rows and
            columns of `"attention"`).
        """
        self.check_tensorflow_backend("translate")
        texts = _as_texts(texts, "texts")
        beam_width = 1 if beam_width is None else beam_width
        _check_beam_width(beam_width)
        if self.preprocessor is None:
            raise ValueError(
                "translate needs the task's preprocessor (raw text in). Received: "
                "preprocessor=None"
            )
        outputs = translate_corpus(self.translator(beam_width), texts, batch_size)
        if not return_attention:
            return [as_text(o["translation"]) for o in outputs]
        return [_with_attention(o) for o in outputs]

    def translator(self, beam_width=1):
        """The `Translator` of `translate` (one per beam width and search setting,
        traced once)."""
        self.check_tensorflow_backend("translator")
        module = self.preprocessor.module
        search = (self.alpha, self.beta, self.length_a, self.length_b)
        key = (beam_width, id(module), search)
        found = self._translators.by_key.get(key)
        if found is None:
            found = Translator(
                self.backbone,
                module,
                beam_width=beam_width,
                alpha=self.alpha,
                beta=self.beta,
                length_a=self.length_a,
                length_b=self.length_b,
            )
            self._translators.by_key[key] = found
        return found

    def choose_alpha(self, sources, references, alphas, log=print):
        """Sets `alpha` to the GNMT length penalty whose beam search translates the
        validation pairs best.

        Each penalty of `alphas` is tried with this task's beam search
        (`beam_width`, `beta`, `length_a`, `length_b`) on `sources`; the one of the
        best cased BLEU against `references` wins (ties: the earlier;
        `choose_length_penalty`). With `beam_width` 1 no search is run and `alpha`
        becomes 1.0: the penalty changes no greedy translation, only its score.

        Args:
            sources, references: the validation sentences (lists of str).
            alphas: the penalties tried, in order.
            log: gets one line per penalty and the choice (`None`: nowhere).

        Returns:
            `{alpha: BLEU}` (empty with `beam_width` 1).
        """
        self.check_tensorflow_backend("choose_alpha")
        if self.preprocessor is None:
            raise ValueError(
                "choose_alpha needs the task's preprocessor (raw text in). Received: "
                "preprocessor=None"
            )
        search = dict(beta=self.beta, length_a=self.length_a, length_b=self.length_b)
        self.alpha, scores = choose_length_penalty(
            self.backbone, self.preprocessor.module, self.beam_width, alphas,
            sources, references, log, **search,
        )  # fmt: skip
        if log is not None:
            why = "best validation BLEU of the grid" if scores else "greedy: no search"
            log(f"length penalty: alpha {self.alpha} ({why})")
        return scores

    def predict(self, x=None, batch_size=None, **kwargs):
        """Greedy translations of `x` (sources: a list or array of str, or a
        `tf.data.Dataset` of sources or of `(source, target)` pairs), as
        `translate(x)`; `verbose` is accepted and ignored. With no preprocessor,
        Keras' `predict` on the network's inputs (the logits)."""
        if self.preprocessor is None:
            return super().predict(x, batch_size=batch_size, **kwargs)
        self.check_tensorflow_backend("predict")
        kwargs.pop("verbose", None)
        if kwargs:
            raise ValueError(
                "predict translates (greedy search, as translate); it takes no "
                f"Keras predict options. Received: {sorted(kwargs)}"
            )
        if isinstance(x, tf.data.Dataset):
            x = _dataset_sources(x)
        return self.translate(x, batch_size=batch_size or 64)

    # --- Export and config ---------------------------------------------------------

    def serving_module(self, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        """The `TranslationServing` of this task (its searches, its vocabularies)."""
        self.check_tensorflow_backend("serving_module")
        from zoo.models.translation.translation_serving import TranslationServing

        return TranslationServing(
            self.backbone,
            self.preprocessor.module,
            beam_width=self.beam_width,
            alpha=self.alpha,
            beta=self.beta,
            length_a=self.length_a,
            length_b=self.length_b,
            max_batch_size=max_batch_size,
        )

    def export(
        self,
        base_dir="saved_models",
        name="translation",
        warmup_texts=None,
        metadata=None,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    ):
        """Writes `base_dir/name/VERSION/` (TF Serving) and `VERSION.keras` (this
        task); returns the version folder. See `export_translator`."""
        self.check_tensorflow_backend("export")
        from zoo.models.translation.translation_serving import export_translator

        return export_translator(
            self.serving_module(max_batch_size),
            base_dir=base_dir,
            name=name,
            warmup_texts=warmup_texts,
            metadata=metadata,
            task=self,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "beam_width": self.beam_width,
            "alpha": self.alpha,
            "beta": self.beta,
            "length_a": self.length_a,
            "length_b": self.length_b,
        }


class _Translators:
    """The traced `Translator`s by beam width, out of Keras' attribute tracking."""

    __slots__ = ("by_key",)

    def __init__(self):
        self.by_key = {}


def _check_beam_width(beam_width):
    if (
        not isinstance(beam_width, (int, np.integer))
        or isinstance(beam_width, bool)
        or beam_width < 1
    ):
        raise ValueError(
            f"`beam_width` must be a positive int. Received: beam_width={beam_width!r}"
        )


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_texts(texts, name):
    """Refuses one string or a batch holding a non-string, naming it."""
    if isinstance(texts, (str, bytes)):
        raise ValueError(
            f"{name} must be a batch of strings (a list), not one string. "
            f"Received: {name}={_short(texts)}"
        )
    if isinstance(texts, tf.Tensor):
        if texts.dtype != tf.string:
            raise ValueError(
                f"{name} must hold strings. Received: a {texts.dtype.name} tensor"
            )
        return
    if isinstance(texts, np.ndarray) and texts.dtype.kind in "US":
        return
    if not isinstance(texts, (list, tuple, np.ndarray)):
        raise ValueError(
            f"{name} must be a list of strings. Received: {type(texts).__name__} "
            f"{_short(texts)}"
        )
    for i, item in enumerate(texts):
        if not isinstance(item, (str, bytes)):
            raise ValueError(
                f"{name}[{i}] must be a string. Received: {type(item).__name__} "
                f"{_short(item)}"
            )


def _as_texts(texts, name):
    """A batch of texts as a list of str (checked by `_check_texts`)."""
    _check_texts(texts, name)
    if isinstance(texts, tf.Tensor):
        texts = texts.numpy()
    values = np.asarray(texts, dtype=object).reshape(-1).tolist() if len(texts) else []
    return [as_text(t) for t in values]


def _dataset_sources(ds):
    """The source strings of a dataset of sources or of `(source, target)` pairs,
    batched or not."""
    texts = []
    for element in ds.as_numpy_iterator():
        if isinstance(element, (tuple, list)):
            element = element[0]
        texts.extend(np.asarray(element, dtype=object).reshape(-1).tolist())
    return [as_text(t) for t in texts]


def _with_attention(output):
    """One text's `Translator` outputs, padding cut from the attention map."""
    source = [as_text(t) for t in output["source_tokens"]]
    target = [as_text(t) for t in output["target_tokens"]]
    source = source[: _length(source)]
    target = target[: _length(target)]
    return {
        "translation": as_text(output["translation"]),
        "score": float(output["score"]),
        "attention": np.asarray(output["attention"])[: len(target), : len(source)],
        "source_tokens": source,
        "target_tokens": target,
    }


def _length(tokens):
    """The tokens before the padding (`""`) at the end."""
    n = len(tokens)
    while n and not tokens[n - 1]:
        n -= 1
    return n
