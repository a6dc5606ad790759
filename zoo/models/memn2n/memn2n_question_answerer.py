"""`MemN2NQuestionAnswerer`: the end-to-end memory network as a task on raw text.

`fit({"story": [...], "question": [...]}, answers)` with answers as words,
`predict(x)` -> answer probabilities `(B, V)`, `predict_answers(x)` -> words,
`explain(x)` -> per example the answer and each hop's attention over the story's
sentences (what the export's `serving_default` returns). A story longer than the
memory is read from its last `memory_size` sentences, and that is said:
`predict_answers` warns, `explain` and the export give `sentences_used` and
`story_truncated`. An empty story or question has the answer "".
"""

import warnings

import keras
import numpy as np
import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.models.memn2n.clipped_sgd import ClippedSGD
from zoo.models.memn2n.linear_start import LinearStart
from zoo.models.memn2n.memn2n import MemN2N
from zoo.models.memn2n.memn2n_question_answerer_preprocessor import (
    MemN2NQuestionAnswererPreprocessor,
)
from zoo.models.task import Task, _decoded, encode_ids
from zoo.text.vocabulary import RESERVED

INPUT_NAMES = ("story", "question")
INPUT_SIGNATURE = [tf.TensorSpec([None], tf.string, name=key) for key in INPUT_NAMES]
"""The inputs of the export's signatures: batches of raw stories and questions."""


@keras.saving.register_keras_serializable(package="zoo")
class MemN2NQuestionAnswerer(Task):
    """End-to-end memory network question answering on raw stories (bAbI style).

    `MemN2N` (the network, word ids in) with its
    `MemN2NQuestionAnswererPreprocessor`. Inputs are dicts of two string lists of
    one length: `"story"` (sentences separated by "\\n", oldest first) and
    `"question"`. The network answers with one word of its vocabulary (its output
    classes are the vocabulary's ids), so answers given to `fit`/`evaluate` are
    words of the preprocessor's vocabulary (stripped and lower-cased, as
    `zoo.data.babi` reads them) or their ids; an unknown answer is a `ValueError`
    naming it and its index. `fit` also takes the recipe's preprocessed
    `tf.data.Dataset` of `({"story", "question"} ids, answer ids)` batches.

    A backbone built with its defaults is the bAbI recipe's network with `--data`,
    linear start (LS) included: while the memory's attention is linear, `fit` adds
    a `LinearStart` callback (the softmax comes back at the first epoch whose
    validation loss, or training loss without validation data, did not fall) unless
    its callbacks hold one already, as the recipe's schedule does
    (`memn2n_training.linear_start_callbacks`).

    `save("x.keras")`, `save_to_preset(dir)` / `from_preset(dir)` and `export(...)`
    (the TF Serving SavedModel) keep the vocabulary with the weights.

    Args:
        backbone: a `MemN2N` whose memory size and sentence length are the
            preprocessor's.
        preprocessor: a `MemN2NQuestionAnswererPreprocessor` with its vocabulary
            (the network's `vocabulary_size` words).
        compile: compile with `default_compile()`, the recipe's optimizer and
            loss (the recipe compiles with its own `--learning-rate`).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Example:

    ```python
    stories = ["Mary went to the office.\\nJohn moved to the garden.", ...]
    questions = ["Where is Mary?", ...]
    answers = ["office", ...]
    pre = MemN2NQuestionAnswererPreprocessor()  # defaults: the recipe's with --data
    pre.adapt(stories, questions, answers)
    qa = MemN2NQuestionAnswerer(
        MemN2N(pre.vocabulary_size, sentence_length=pre.sentence_length), pre
    )
    qa.fit({"story": stories, "question": questions}, answers, epochs=20,
           validation_split=0.1)
    qa.predict_answers({"story": stories[:1], "question": ["Where is John?"]})
    ```
    """

    backbone_class = MemN2N
    preprocessor_class = MemN2NQuestionAnswererPreprocessor

    def __init__(self, backbone, preprocessor=None, compile=True, **kwargs):
        self.check_parts(backbone, preprocessor)
        if preprocessor is not None:
            for key in ("memory_size", "sentence_length"):
                if getattr(preprocessor, key) != getattr(backbone, key):
                    raise ValueError(
                        f"The preprocessor's {key} must be the network's "
                        f"({getattr(backbone, key)}). Received: {key}="
                        f"{getattr(preprocessor, key)!r}"
                    )
        self.check_vocabulary(preprocessor, backbone.vocabulary_size)
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional Model ===
        inputs = backbone.input
        outputs = backbone(inputs)["probabilities"]
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        if compile:
            self.default_compile()

    def default_compile(
        self, learning_rate=0.005, clipnorm=40.0, jit_compile="auto", **optimizer_kwargs
    ):
        """The paper's optimizer and loss, the recipe's (its `--learning-rate` and
        `--clipnorm` take their defaults from here).

        `ClippedSGD` (each weight's summed gradient norm clipped at `clipnorm`, as
        in the authors' code), cross-entropy summed over the batch (not averaged:
        the logged loss is a per-batch sum, and the rate and the clipping norm mean
        what they mean in the paper), answer accuracy. The rate is the paper's with
        linear start (0.01 without it).

        Args:
            learning_rate: float.
            clipnorm: float.
            jit_compile: `"auto"`, True or False (XLA).
            **optimizer_kwargs: more `ClippedSGD` arguments (e.g.
                `zoo.training.averaging(cfg)`).
        """
        self.compile(
            optimizer=ClippedSGD(
                learning_rate=learning_rate, clipnorm=clipnorm, **optimizer_kwargs
            ),
            loss=keras.losses.SparseCategoricalCrossentropy(reduction="sum"),
            metrics=[keras.metrics.SparseCategoricalAccuracy("accuracy")],
            jit_compile=jit_compile,
        )

    # --- Inputs and answers ---------------------------------------------------------

    def check_inputs(self, x):
        """Refuses inputs other than `{"story": [str], "question": [str]}` of one
        length, naming what was received."""
        keys = sorted(x) if isinstance(x, dict) else type(x).__name__
        if self.preprocessor is not None and keys != sorted(INPUT_NAMES):
            raise ValueError(
                "x must be a dict {'story': [str], 'question': [str]}. "
                f"Received: {keys}"
            )
        super().check_inputs(x)

    def encode_answers(self, answers):
        """Answer ids (int32) of answers given as words or as ids."""
        size = self.backbone.vocabulary_size
        if isinstance(answers, tf.Tensor):
            if answers.dtype != tf.string:
                return tf.cast(answers, tf.int32)
            self.preprocessor.check_vocabulary()
            words = tf.strings.lower(tf.strings.strip(answers), encoding="utf-8")
            ids = tf.cast(self.preprocessor.lookup(words), tf.int32)
            check = tf.debugging.assert_greater_equal(
                ids,
                len(RESERVED),
                message="an answer is not a word of the task's vocabulary",
            )
            with tf.control_dependencies([check]):
                return tf.identity(ids)
        values = np.asarray(answers)
        if values.ndim != 1:
            raise ValueError(
                f"y must be a list of answers, one per example. Received: shape "
                f"{values.shape}"
            )
        # the words are read only for answers given as words
        words = self.preprocessor.vocabulary if values.dtype.kind not in "iu" else []
        index = {w: i for i, w in enumerate(words) if w not in RESERVED}
        return encode_ids(
            values,
            index,
            size,
            f"an answer id (0..{size - 1})",
            f"not a word of the task's vocabulary ({size} words): answers are words "
            "of the vocabulary the preprocessor was adapted on",
            normalize=lambda word: word.strip().lower(),
        )

    encode_targets = encode_answers

    def fit(self, x=None, y=None, *args, **kwargs):
        validation = kwargs.get("validation_data")
        if isinstance(validation, (tuple, list)) and len(validation) >= 2:
            if not isinstance(validation[0], tf.data.Dataset):
                self.check_inputs(validation[0])
        memory = self.backbone.memory
        callbacks = list(kwargs.get("callbacks") or [])
        if memory.linear_start_enabled and not any(
            isinstance(c, LinearStart) for c in callbacks
        ):
            validated = validation is not None or kwargs.get("validation_split")
            monitor = "val_loss" if validated else "loss"
            kwargs["callbacks"] = [*callbacks, LinearStart(memory, monitor=monitor)]
        return super().fit(x, y, *args, **kwargs)

    # --- Answers ----------------------------------------------------------------------

    def predict_answers(self, x, batch_size=32):
        """The answer (a word) of each example, as the export's `serving_default`
        gives it: the most probable word of the vocabulary (never `[PAD]` or
        `[UNK]`), "" for an empty story or an empty question.

        A story with more sentences than the memory's slots is read from its last
        `memory_size` sentences; a `UserWarning` says how many stories were cut
        (`explain` gives each one's `sentences_used` and `story_truncated`).
        """
        self.check_tensorflow_backend("predict_answers")
        rows = self.explain(x, batch_size=batch_size)
        cut = sum(bool(row["story_truncated"]) for row in rows)
        if cut:
            slots = self.preprocessor.memory_size
            warnings.warn(
                f"{cut} of {len(rows)} stories were cut to their last {slots} "
                f"sentences (the memory's slots); their older sentences were not "
                "read (explain() gives each story's sentences_used and "
                "story_truncated)",
                stacklevel=2,
            )
        return [row["answer"] for row in rows]

    def explain(self, x, batch_size=32):
        """Answer, probabilities and attention of each example.

        Returns:
            One dict per example, the outputs of the export's `serving_default`
            for it: `"answer"` (str: see `predict_answers`), `"probabilities"`
            `(V,)`, `"attention"` `(hops, memory_size)` (each hop's weights over the
            memory slots, slot 0 = the most recent sentence), `"memory"`
            `(memory_size,)` (the sentence of each slot as the network read it, ""
            when empty), `"sentences_used"` (int: the slots filled) and
            `"story_truncated"` (bool: older sentences of the story were left out,
            the memory holding its last `memory_size`).
        """
        self.check_tensorflow_backend("explain")
        self.check_inputs(x)
        stories, questions = list(x["story"]), list(x["question"])
        self.preprocessor.check_vocabulary()  # one line, before the graph
        run = tf.function(self.answer_strings, reduce_retracing=True)
        rows = []
        for start in range(0, len(stories), batch_size):
            end = start + batch_size
            batch = run(
                tf.constant(stories[start:end], tf.string),
                tf.constant(questions[start:end], tf.string),
            )
            batch = {k: v.numpy() for k, v in batch.items()}
            for j in range(len(batch["answer"])):
                row = {k: _decoded(v[j]) for k, v in batch.items()}
                row["sentences_used"] = int(row["sentences_used"])
                row["story_truncated"] = bool(row["story_truncated"])
                rows.append(row)
        return rows

    def answer_strings(self, story, question):
        """`serving_default`'s outputs (see `export`) on string batches `[B]`,
        in graph (what `explain` runs and the export serves)."""
        pre = self.preprocessor
        features = pre({"story": story, "question": question}, return_sentences=True)
        inputs = {key: features[key] for key in INPUT_NAMES}
        out = self.backbone(inputs, training=False)
        probabilities = tf.cast(out["probabilities"], tf.float32)
        return {
            "answer": pre.answers(probabilities, features),
            "probabilities": probabilities,
            "attention": tf.cast(out["attention"], tf.float32),
            "memory": features["memory"],
            "sentences_used": features["sentences_used"],
            "story_truncated": features["story_truncated"],
        }

    # --- Export -----------------------------------------------------------------------

    def serving_module(self, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        """The `zoo.export.ServingModule` of `export`: `serving_default`
        (`answer_strings`) and `preprocess` (the preprocessor's ids) on this task's
        network and preprocessor, whose lookup tables (and vocabulary file) it
        tracks."""
        from zoo.export import ServingModule

        pre = self.preprocessor
        pre.check_vocabulary()

        def preprocess(story, question):
            return pre({"story": story, "question": question})

        return ServingModule(
            self.backbone,
            max_batch_size=max_batch_size,
            functions={
                "serving_default": self.answer_strings,
                "preprocess": preprocess,
            },
            input_signature=INPUT_SIGNATURE,
            resources=[pre.lookup],
        )

    def export(
        self,
        base_dir="saved_models",
        name="memn2n",
        examples=(),
        metadata=None,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
    ):
        """Exports this trained task as `base_dir/name/VERSION/` (TF Serving) and
        `VERSION.keras`; returns the version folder.

        The signatures of `serving_module`, warm-up requests made of `examples`,
        the check that `serving_default` gives the Keras model's probabilities and
        attention, and the input limits in the manifest (`memory_slots`,
        `words_per_sentence`, `max_story_bytes`, `story_sentence_separator`,
        `max_batch_size`; `zoo.export.export_model`). `VERSION.keras` is the task
        itself: it predicts on raw stories and questions, and its `.backbone` is
        the network that reads the `preprocess` signature's outputs. The
        vocabulary is the export's `assets/vocab.txt`.

        Signatures, each on `story: string [B]` (sentences separated by "\\n",
        oldest first) and `question: string [B]`:

        - `serving_default` -> `answer` string `[B]`, `probabilities` float32
          `[B, V]`, `attention` float32 `[B, hops, memory_slots]` (slot 0 = most
          recent sentence), `memory` string `[B, memory_slots]` (the sentence in
          each slot, "" when empty), `sentences_used` int32 `[B]` (the slots
          filled: a story with more sentences than `memory_slots` keeps its last
          ones) and `story_truncated` bool `[B]` (older sentences of the story were
          left out). `answer` is the most probable word of the vocabulary, never
          `[PAD]` or `[UNK]`, and "" for an empty story (no sentence with words) or
          an empty question, which have no answer;
        - `preprocess` -> `story` int32 `[B, memory_slots, J]`, `question` int32
          `[B, J]`, the network's inputs.

        Preprocessing is this task's `MemN2NQuestionAnswererPreprocessor` (see
        there for the limits and the handling of empty input). Both signatures
        first refuse a request of more than `max_batch_size` rows, or whose story
        and question batches differ in size (`ServingModule.check_batch`).

        Args:
            base_dir: the TF Serving base folder.
            name: the export's model name.
            examples: a few `BabiExample`s, or `{"story": [str], "question":
                [str]}`, for the warm-up requests (a short example story when
                empty).
            metadata: optional dict for the manifest (`limits` are added).
            max_batch_size: the most rows one request may hold.
        """
        self.check_tensorflow_backend("export")
        from zoo.export import export_model

        module = self.serving_module(max_batch_size)
        if not isinstance(examples, dict):
            examples = list(examples)
            examples = {
                "story": ["\n".join(ex.story) for ex in examples],
                "question": [ex.question for ex in examples],
            }
        warmup = {key: list(examples[key]) for key in INPUT_NAMES}
        pre = self.preprocessor
        limits = {
            "memory_slots": pre.memory_size,
            "words_per_sentence": pre.sentence_length,
            "max_story_bytes": pre.max_story_bytes,
            "story_sentence_separator": "\\n",
        }
        return export_model(
            module,
            name=name,
            signatures=module.signatures(),
            base_dir=base_dir,
            keras_model=self,
            warmup={"serving_default": warmup if warmup["story"] else DEFAULT_WARMUP},
            keras_check={
                "signature": "serving_default",
                "outputs": {"probabilities": "probabilities", "attention": "attention"},
            },
            metadata={**(metadata or {}), "limits": limits},
        )


DEFAULT_WARMUP = {
    "story": ["Mary went to the office.\nJohn moved to the garden."],
    "question": ["Where is Mary?"],
}
"""The warm-up request of an export given no examples."""
