"""`Seq2SeqTextTranslator`: the attentional translator as a task on raw text."""

import keras
import numpy as np
import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.layers.arguments import check_positive_ints
from zoo.models.task import Task, check_strings
from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy
from zoo.models.translation.seq2seq_translator import Seq2SeqTranslator
from zoo.models.translation.seq2seq_translator_preprocessor import (
    Seq2SeqTranslatorPreprocessor,
)
from zoo.models.translation.translator import (
    TEXT_SPEC,
    Translator,
    as_text,
    translate_corpus,
)
from zoo.models.translation.validation_bleu import choose_on_validation

# The task's search settings (those of its export's `serving_default`).
SEARCH = ("beam_width", "alpha", "beta", "length_a", "length_b")


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
    `serving_default` signatures do; `export(...)` writes that export with this
    task as `VERSION.keras`.

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

    backbone_class = Seq2SeqTranslator
    preprocessor_class = Seq2SeqTranslatorPreprocessor

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
        self.check_parts(backbone, preprocessor)
        check_positive_ints(beam_width=beam_width)
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
        self._translators = {}  # by beam width and search setting
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
        elif isinstance(validation, tf.data.Dataset):
            self._check_pairs(validation, None, "fit: validation_data")
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
        _as_texts(x, "x")
        _as_texts(y, "y")

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
        self._check_preprocessor("translate")
        translator = self.translator(1 if beam_width is None else beam_width)
        outputs = translate_corpus(translator, texts, batch_size)
        if not return_attention:
            return [as_text(o["translation"]) for o in outputs]
        return [_with_attention(o) for o in outputs]

    def translator(self, beam_width=1):
        """The `Translator` of `translate` (one per beam width and search setting,
        traced once)."""
        self.check_tensorflow_backend("translator")
        pre = self.preprocessor
        pre.check_vocabulary()
        search = (self.alpha, self.beta, self.length_a, self.length_b)
        key = (beam_width, id(pre.source_tokenizer), search)  # new vocabularies: anew
        if key not in self._translators:
            self._translators[key] = Translator(self.backbone, pre, beam_width, *search)
        return self._translators[key]

    def choose_alpha(self, sources, references, alphas, log=print):
        """Sets `alpha` to the GNMT length penalty whose beam search translates the
        validation pairs best.

        Each penalty of `alphas` is tried with this task's beam search
        (`beam_width`, `beta`, `length_a`, `length_b`) on `sources`; the one of the
        best cased BLEU against `references` wins (ties: the earlier;
        `choose_on_validation`). With `beam_width` 1 no search is run and `alpha`
        becomes 1.0: the penalty changes no greedy translation, only its score.

        Args:
            sources, references: the validation sentences (lists of str).
            alphas: the penalties tried, in order.
            log: gets one line per penalty and the choice (`None`: nowhere).

        Returns:
            `{alpha: BLEU}` (empty with `beam_width` 1).
        """
        self.check_tensorflow_backend("choose_alpha")
        self._check_preprocessor("choose_alpha")
        self.alpha, scores, width = 1.0, {}, self.beam_width
        if width > 1:
            args = (self.backbone, self.preprocessor, width)
            search = (self.beta, self.length_a, self.length_b)
            searches = {a: Translator(*args, a, *search) for a in alphas}
            self.alpha, scores = choose_on_validation(
                searches, sources, references, log, lambda a: f"beam {width}, alpha {a}"
            )
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
        if isinstance(x, tf.data.Dataset):  # of sources or of (source, target) pairs
            sources = x.map(lambda s, *_: tf.reshape(s, [-1]))  # batched or not
            x = list(sources.unbatch().as_numpy_iterator())
        return self.translate(x, batch_size=batch_size or 64)

    # --- Export and config ---------------------------------------------------------

    def serving_module(self, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        """The `zoo.export.ServingModule` of `export` (see there): this task's
        searches on its network, tracking its preprocessor's tokenizers (their
        vocabulary files become the export's assets)."""
        from zoo.export import ServingModule

        self.check_tensorflow_backend("serving_module")
        self._check_preprocessor("serving_module")
        pre, network = self.preprocessor, self.backbone
        beam, greedy = self.translator(self.beam_width), self.translator(1)

        def preprocess(text):
            target = greedy.translate(text)["target_ids"]
            return {
                "source_ids": pre.source_ids(text),
                "target_ids": pre.decoder_inputs(target),
            }

        def teacher_forced(text):
            return {"logits": network(preprocess(text), training=False)["logits"]}

        functions = {
            "serving_default": lambda text: _outputs(beam.translate(text)),
            "translate_greedy": lambda text: _outputs(greedy.translate(text)),
            "preprocess": preprocess,
            "teacher_forced": teacher_forced,
        }
        return ServingModule(
            network,
            max_batch_size=max_batch_size,
            functions=functions,
            input_signature=[TEXT_SPEC],
            resources=[pre.source_tokenizer, pre.target_tokenizer],
            autograph=False,  # the searches are explicit while loops
        )

    def export(
        self,
        base_dir="saved_models",
        name="translation",
        warmup_texts=None,
        metadata=None,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    ):
        """Writes `base_dir/name/VERSION/` (TF Serving) and `VERSION.keras`; returns
        the version folder.

        Signatures, each on `text: string (B,)` (source sentences):

        - `serving_default`: beam search (`beam_width`) -> `translation` string
          `(B,)`, `score` float `(B,)` (GNMT score), `attention` float
          `(B, Tt, Ts)`, `source_tokens` string `(B, Ts)`, `target_tokens` string
          `(B, Tt)` (`""` = padding);
        - `translate_greedy`: the same outputs from greedy search (with the same
          penalties for its scores);
        - `preprocess` -> `source_ids`, `target_ids` int32: the network's inputs
          (the decoder input is `[START]` plus the greedy translation);
        - `teacher_forced` -> `logits` `(B, Tt, V)`: the network on those inputs,
          the output the verifier compares with the `.keras` file (beam search
          has no Keras counterpart).

        Each signature first refuses a request of more than `max_batch_size` texts
        (`ServingModule.check_batch`), before any tokenization or search; the
        searches are this task's `Translator`s (`translate`). The vocabularies are
        the export's assets.

        `VERSION.keras` is this task: after `import zoo` it translates raw strings
        as the signatures do, and its `.backbone` is the network. The verifier's
        Keras check compares `teacher_forced` with that network. The manifest
        records the searches' settings, the preprocessing
        (`Seq2SeqTranslatorPreprocessor.from_export` reads it back) and the
        model's architecture.

        Args:
            base_dir: the TF Serving base folder.
            name: the model name (`saved_models/<name>/`).
            warmup_texts: example sources for TF Serving's warm-up requests (and
                the Keras check); a short example when empty.
            metadata: manifest entries (`"recipe"`, `"data"`, ...). A `"metrics"`
                entry of per-search score dicts keeps their `MANIFEST_SCORES`.
            max_batch_size: the most texts one request may hold.
        """
        from zoo.export import export_model

        self.check_tensorflow_backend("export")
        module = self.serving_module(max_batch_size)
        metadata = dict(metadata or {})
        if "metrics" in metadata:
            metadata["metrics"] = {
                search: {k: v for k, v in scores.items() if k in MANIFEST_SCORES}
                for search, scores in metadata["metrics"].items()
                if isinstance(scores, dict)
            }
        config, pre = self.backbone.get_config(), self.preprocessor
        texts = list(warmup_texts or []) or ["a short example sentence ."]
        signatures = module.signatures()
        return export_model(
            module,
            name=name,
            signatures=signatures,
            base_dir=base_dir,
            keras_model=self,
            warmup={s: {"text": texts} for s in signatures if s != "preprocess"},
            keras_check=dict(
                signature="teacher_forced", outputs={"logits": "logits"}, atol=1e-4
            ),
            metadata={
                **metadata,
                "decoding": {
                    "serving_default": {
                        "search": "beam",
                        "beam_width": self.beam_width,
                        "length_penalty_alpha": self.alpha,
                        "coverage_penalty_beta": self.beta,
                        "max_length": f"ceil({self.length_a} * |X| + {self.length_b})",
                        "length_a": self.length_a,
                        "length_b": self.length_b,
                        "max_tokens": pre.max_length,
                    },
                    "translate_greedy": {"search": "greedy"},
                },
                "preprocessing": {  # what `from_export` reads back
                    "vocabularies": list(pre.asset_names),
                    "lowercase": pre.lowercase,
                    "max_length": pre.max_length,
                },
                "keras_check_note": (
                    "beam search and greedy search have no Keras counterpart; the "
                    "verifier compares `teacher_forced` (the model on preprocess's "
                    "source ids and greedy decoder input) with the .keras task's "
                    "backbone"
                ),
                "model": {k: config[k] for k in MANIFEST_MODEL},
            },
        )

    def get_config(self):
        return {**super().get_config(), **{k: getattr(self, k) for k in SEARCH}}

    def _check_preprocessor(self, method):
        if self.preprocessor is None:
            raise ValueError(
                f"{method} needs the task's preprocessor (raw text in). Received: "
                "preprocessor=None"
            )


def _as_texts(texts, name):
    """A batch of texts as a list of str; one string, or a batch holding anything
    but strings, is refused naming it."""
    if isinstance(texts, tf.Tensor):
        texts = texts.numpy()
    if not isinstance(texts, (str, bytes)):
        texts = np.asarray(texts, dtype=object).reshape(-1).tolist()
    check_strings(texts, name)
    return [as_text(t) for t in texts]


def _with_attention(output):
    """One text's `Translator` outputs, padding (`""`) cut from the attention map."""
    source = [as_text(t) for t in output["source_tokens"] if t]
    target = [as_text(t) for t in output["target_tokens"] if t]
    return {
        "translation": as_text(output["translation"]),
        "score": float(output["score"]),
        "attention": np.asarray(output["attention"])[: len(target), : len(source)],
        "source_tokens": source,
        "target_tokens": target,
    }


# What an export's manifest keeps of each search's scores, and of the model's config.
MANIFEST_SCORES = (
    "bleu bleu_signature bleu_lowercase bleu_moses_lowercase sentences_per_second"
).split()
MANIFEST_MODEL = (
    "attention score window rnn embedding_dim encoder_units encoder_layers decoder_units"
).split()


def _outputs(result):
    """A `Translator`'s outputs less the target ids (not a signature output)."""
    return {k: v for k, v in result.items() if k != "target_ids"}
