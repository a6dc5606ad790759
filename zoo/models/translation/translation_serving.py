"""TranslationServing: the translation export's string-in signatures."""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.models.translation.translator import TEXT_SPEC, Translator


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
        preprocessor: its `Seq2SeqTranslatorPreprocessor`, with vocabularies (its
            tokenizers are tracked: their files become the export's assets).
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
        preprocessor.check_vocabulary()
        self.preprocessor = preprocessor  # a Keras layer: no SavedModel child
        # its tokenizers are: their vocabulary files become the export's assets
        self.tokenizers = (preprocessor.source_tokenizer, preprocessor.target_tokenizer)
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

    @tf.function(input_signature=[TEXT_SPEC], autograph=False)
    def serve(self, text):
        text = self.check_batch(text)
        return _outputs(self.beam.translate(text))

    @tf.function(input_signature=[TEXT_SPEC], autograph=False)
    def translate_greedy(self, text):
        text = self.check_batch(text)
        return _outputs(self.greedy.translate(text))

    @tf.function(input_signature=[TEXT_SPEC], autograph=False)
    def preprocess(self, text):
        text = self.check_batch(text)
        target = self.greedy.translate(text)["target_ids"]
        return {
            "source_ids": self.preprocessor.source_ids(text),
            "target_ids": self.preprocessor.decoder_inputs(target),
        }

    @tf.function(input_signature=[TEXT_SPEC], autograph=False)
    def teacher_forced(self, text):
        text = self.check_batch(text)
        inputs = self.preprocess(text)
        return {"logits": self.model(inputs, training=False)["logits"]}


def _outputs(result):
    """A `Translator`'s outputs less the target ids (not a signature output)."""
    return {k: v for k, v in result.items() if k != "target_ids"}
