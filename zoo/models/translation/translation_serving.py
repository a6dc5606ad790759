"""TranslationServing: the translation export's string-in signatures."""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.models.translation.translator import TEXT_SPEC, Translator

_TEXT_SPEC = [TEXT_SPEC]


class TranslationServing(ServingModule):
    """The signatures of a translation export (`zoo.export.export_model`).

    - `serving_default(text: string (B,))`: beam search -> `translation` string
      `(B,)`, `score` float `(B,)` (GNMT score), `attention` float `(B, Tt, Ts)`,
      `source_tokens` string `(B, Ts)`, `target_tokens` string `(B, Tt)`
      (`""` = padding);
    - `translate_greedy(text)`: the same outputs from greedy search;
    - `preprocess(text)` -> `source_ids`, `target_ids` int32: the Keras model's
      inputs (the decoder input is `[START]` plus the greedy translation);
    - `teacher_forced(text)` -> `logits` `(B, Tt, V)`: the Keras model on those
      inputs, the output a verifier compares with the `.keras` file (beam search has
      no Keras counterpart).

    Each signature first refuses a request of more than `max_batch_size` texts
    (`ServingModule.check_batch`), before any tokenization or search. The functions
    are traced without autograph: the searches are explicit while loops.

    Args:
        model: a trained `Seq2SeqTranslator`.
        preprocessor: its `TranslationPreprocessor` (tracked: its vocabularies become
            the export's assets).
        beam_width, alpha, beta, length_a, length_b: the beam search of
            `serving_default` (see `Translator`; the defaults are
            `Seq2SeqTextTranslator`'s); greedy search uses the same penalties for
            its scores.
        max_batch_size: the most texts one request may hold.
    """

    def __init__(
        self,
        model,
        preprocessor,
        beam_width=5,
        alpha=1.0,
        beta=0.0,
        length_a=1.5,
        length_b=5,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    ):
        super().__init__(model, max_batch_size=max_batch_size)
        self.preprocessor = preprocessor
        search = dict(alpha=alpha, beta=beta, length_a=length_a, length_b=length_b)
        self.beam = Translator(model, preprocessor, beam_width=beam_width, **search)
        self.greedy = Translator(model, preprocessor, beam_width=1, **search)

    def signatures(self):
        """`{signature name: function}` for `export_model`."""
        return {
            "serving_default": self.serve,
            "translate_greedy": self.translate_greedy,
            "preprocess": self.preprocess,
            "teacher_forced": self.teacher_forced,
        }

    @staticmethod
    def _outputs(result):
        return {k: v for k, v in result.items() if k != "target_ids"}

    @tf.function(input_signature=_TEXT_SPEC, autograph=False)
    def serve(self, text):
        text = self.check_batch(text)
        return self._outputs(self.beam.translate(text))

    @tf.function(input_signature=_TEXT_SPEC, autograph=False)
    def translate_greedy(self, text):
        text = self.check_batch(text)
        return self._outputs(self.greedy.translate(text))

    @tf.function(input_signature=_TEXT_SPEC, autograph=False)
    def preprocess(self, text):
        text = self.check_batch(text)
        target = self.greedy.translate(text)["target_ids"]
        return {
            "source_ids": self.preprocessor.source_ids(text),
            "target_ids": self.preprocessor.decoder_inputs(target),
        }

    @tf.function(input_signature=_TEXT_SPEC, autograph=False)
    def teacher_forced(self, text):
        text = self.check_batch(text)
        inputs = self.preprocess(text)
        return {"logits": self.model(inputs, training=False)["logits"]}


# The scores of each search that an export's manifest keeps.
MANIFEST_SCORES = (
    "bleu",
    "bleu_signature",
    "bleu_lowercase",
    "bleu_moses_lowercase",
    "sentences_per_second",
)


def export_translator(
    module,
    base_dir="saved_models",
    name="translation",
    warmup_texts=None,
    metadata=None,
    task=None,
):
    """Exports `base_dir/name/VERSION/` (and `VERSION.keras`); returns the folder.

    `VERSION.keras` is the `Seq2SeqTextTranslator` task (`task`, or one made of the
    module's model, preprocessor and search settings): after `import zoo` it
    translates raw strings as the signatures do, and its `.backbone` is the
    network. The verifier's Keras check compares `teacher_forced` with that network
    (beam and greedy search have no Keras counterpart). The manifest records the
    searches' settings, the preprocessing (`TranslationPreprocessor.from_export`
    reads it back) and the model's architecture.

    Args:
        module: a `TranslationServing` (its traced functions become the signatures).
        base_dir: the TF Serving base folder.
        name: the model name (`saved_models/<name>/`).
        warmup_texts: example sources for TF Serving's warm-up requests (and the
            Keras check); a short example when empty.
        metadata: manifest entries (`"recipe"`, `"data"`, ...). A `"metrics"` entry
            of per-search score dicts keeps their `MANIFEST_SCORES`.
        task: the `Seq2SeqTextTranslator` saved as `VERSION.keras` (its network,
            vocabularies and searches must be the module's), or None.
    """
    from zoo.export import export_model

    task = _export_task(module, task)

    metadata = dict(metadata or {})
    if "metrics" in metadata:
        metadata["metrics"] = {
            search: {k: v for k, v in scores.items() if k in MANIFEST_SCORES}
            for search, scores in metadata["metrics"].items()
            if isinstance(scores, dict)
        }
    beam, config = module.beam, module.model.get_config()
    warmup_texts = list(warmup_texts or []) or ["a short example sentence ."]
    return export_model(
        module,
        name=name,
        signatures=module.signatures(),
        base_dir=base_dir,
        keras_model=task,
        warmup={
            signature: {"text": warmup_texts}
            for signature in ("serving_default", "translate_greedy", "teacher_forced")
        },
        keras_check={
            "signature": "teacher_forced",
            "outputs": {"logits": "logits"},
            "atol": 1e-4,
        },
        metadata={
            **metadata,
            "decoding": {
                "serving_default": {
                    "search": "beam",
                    "beam_width": beam.beam_width,
                    "length_penalty_alpha": beam.alpha,
                    "coverage_penalty_beta": beam.beta,
                    "max_length": f"ceil({beam.length_a} * |X| + {beam.length_b})",
                    "length_a": beam.length_a,
                    "length_b": beam.length_b,
                    "max_tokens": module.preprocessor.max_length,
                },
                "translate_greedy": {"search": "greedy"},
            },
            "preprocessing": module.preprocessor.config(),
            "keras_check_note": (
                "beam search and greedy search have no Keras counterpart; the "
                "verifier compares `teacher_forced` (the model on preprocess's "
                "source ids and greedy decoder input) with the .keras task's "
                "backbone"
            ),
            "model": {
                k: config[k]
                for k in (
                    "attention",
                    "score",
                    "window",
                    "rnn",
                    "embedding_dim",
                    "encoder_units",
                    "encoder_layers",
                    "decoder_units",
                )
            },
        },
    )


def _export_task(module, task):
    """The `Seq2SeqTextTranslator` of `module`: `task` checked against it, or a
    new uncompiled one."""
    from zoo.models.translation.seq2seq_text_translator import Seq2SeqTextTranslator
    from zoo.models.translation.seq2seq_translator_preprocessor import (
        Seq2SeqTranslatorPreprocessor,
    )

    beam = module.beam
    search = {
        "beam_width": beam.beam_width,
        "alpha": beam.alpha,
        "beta": beam.beta,
        "length_a": beam.length_a,
        "length_b": beam.length_b,
    }
    if task is None:
        return Seq2SeqTextTranslator(
            module.model,
            Seq2SeqTranslatorPreprocessor.from_module(module.preprocessor),
            compile=False,
            **search,
        )
    if not isinstance(task, Seq2SeqTextTranslator):
        raise ValueError(
            f"`task` must be a Seq2SeqTextTranslator. Received: {type(task).__name__}"
        )
    if task.backbone is not module.model:
        raise ValueError(
            "`task.backbone` must be the module's model. Received: "
            f"{task.backbone.name!r}, the module's {module.model.name!r}"
        )
    got = {k: getattr(task, k) for k in search}
    if got != search:
        raise ValueError(
            f"`task`'s searches must be the module's {search}. Received: {got}"
        )
    if task.preprocessor is None or not _same_preprocessing(
        task.preprocessor.module, module.preprocessor
    ):
        raise ValueError(
            "`task.preprocessor` must have the module's vocabularies, casing and "
            f"max_length. Received: {type(task.preprocessor).__name__}"
        )
    return task


def _same_preprocessing(a, b):
    if (a.lowercase, a.max_length) != (b.lowercase, b.max_length):
        return False
    for x, y in (
        (a.source_vocabulary, b.source_vocabulary),
        (a.target_vocabulary, b.target_vocabulary),
    ):
        with open(x, "rb") as f, open(y, "rb") as g:
            if f.read() != g.read():
                return False
    return True
