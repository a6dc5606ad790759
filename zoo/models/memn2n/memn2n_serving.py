"""`MemN2NServing`: the serving signatures of a trained `MemN2N` (strings in)."""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.models.memn2n.memn2n_question_answerer_preprocessor import (
    MAX_STORY_BYTES,
    MemN2NQuestionAnswererPreprocessor,
)

_SPECS = [
    tf.TensorSpec([None], tf.string, name="story"),
    tf.TensorSpec([None], tf.string, name="question"),
]


class MemN2NServing(ServingModule):
    """The `tf.Module` exported for a `MemN2N`: two string-in signatures.

    - `serving_default(story: string [B], question: string [B])` -> `answer`
      string `[B]`, `probabilities` float32 `[B, V]`, `attention` float32
      `[B, hops, memory_slots]` (slot 0 = most recent sentence), `memory`
      string `[B, memory_slots]` (the sentence in each slot, "" when empty),
      `sentences_used` int32 `[B]` (the slots filled: a story with more
      sentences than `memory_slots` keeps its last ones) and `story_truncated`
      bool `[B]` (older sentences of the story were left out). `answer` is the
      most probable word of the vocabulary, never `[PAD]` or `[UNK]`, and ""
      for an empty story (no sentence with words) or an empty question, which
      have no answer;
    - `preprocess(story, question)` -> `story` int32 `[B, memory_slots, J]`,
      `question` int32 `[B, J]`, the Keras model's inputs.

    Preprocessing is `MemN2NQuestionAnswererPreprocessor` with the model's memory
    size and sentence length (see there for the limits and the handling of empty
    input), held as `self.preprocessor`.
    Both signatures first refuse a request of more than `max_batch_size` rows, or
    whose story and question batches differ in size (`ServingModule.check_batch`).

    Args:
        model: the trained `MemN2N`.
        vocab_file: its vocabulary file (copied into the export's `assets/` as
            `vocab.txt`).
        max_story_bytes: the longest story read (its last bytes).
        max_batch_size: the most rows one request may hold.

    Example:

    ```python
    module = MemN2NServing(model, "runs/memn2n_babi/vocab.txt")
    export_model(module, name="memn2n", signatures=module.signatures(), ...)
    ```
    """

    def __init__(
        self,
        model,
        vocab_file,
        max_story_bytes=MAX_STORY_BYTES,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    ):
        super().__init__(model, max_batch_size=max_batch_size)
        self.preprocessor = MemN2NQuestionAnswererPreprocessor(
            model.memory_size,
            model.sentence_length,
            max_story_bytes,
            assets={"vocabulary.txt": vocab_file},
        )
        # The module tracks no Keras object (`ServingModule`): it tracks the
        # layer's lookup tables, whose file becomes the export's asset.
        self.lookup = self.preprocessor.lookup

    @tf.function(input_signature=_SPECS)
    def preprocess(self, story, question):
        story, question = self.check_batch(story, question)
        return self.preprocessor({"story": story, "question": question})

    @tf.function(input_signature=_SPECS)
    def serve(self, story, question):
        story, question = self.check_batch(story, question)
        return serving_outputs(self.model, self.preprocessor, story, question)

    def signatures(self):
        """`{"serving_default": serve, "preprocess": preprocess}` for `export_model`."""
        return {"serving_default": self.serve, "preprocess": self.preprocess}

    def limits(self):
        """The input limits, for the export's manifest (`export_model` adds
        `max_batch_size`)."""
        return {
            "memory_slots": self.preprocessor.memory_size,
            "words_per_sentence": self.preprocessor.sentence_length,
            "max_story_bytes": self.preprocessor.max_story_bytes,
            "story_sentence_separator": "\\n",
        }


def serving_outputs(model, preprocessor, story, question):
    """`serving_default`'s outputs (see `MemN2NServing`) of `model` (a `MemN2N`) on
    string batches, through `preprocessor` (a
    `MemN2NQuestionAnswererPreprocessor`)."""
    inputs = {"story": story, "question": question}
    features = preprocessor(inputs, return_sentences=True)
    out = model(
        {"story": features["story"], "question": features["question"]}, training=False
    )
    probabilities = tf.cast(out["probabilities"], tf.float32)
    return {
        "answer": preprocessor.answers(probabilities, features),
        "probabilities": probabilities,
        "attention": tf.cast(out["attention"], tf.float32),
        "memory": features["memory"],
        "sentences_used": features["sentences_used"],
        "story_truncated": features["story_truncated"],
    }
