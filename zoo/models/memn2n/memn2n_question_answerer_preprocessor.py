"""`MemN2NQuestionAnswererPreprocessor`: stories and questions -> word ids, a layer."""

import re

import keras

from zoo.layers.arguments import check_optional_positive_ints, check_positive_ints
from zoo.models.memn2n.memn2n_preprocessor import MAX_STORY_BYTES, MemN2NPreprocessor
from zoo.models.preprocessor import Preprocessor
from zoo.models.task import check_strings
from zoo.text.babi_example import BabiExample


@keras.saving.register_keras_serializable(package="zoo")
class MemN2NQuestionAnswererPreprocessor(Preprocessor):
    """Raw `{"story", "question"}` strings -> `MemN2N`'s word ids.

    The Keras layer of `MemN2NPreprocessor` (its steps and limits: a story's
    sentences are its lines, the last `memory_size` with words kept, most recent in
    slot 0, each sentence and the question cut to `sentence_length` words; unknown
    words are `[UNK]`). The word vocabulary is the layer's asset (`vocabulary.txt`):
    learned with `adapt(stories, questions, answers)` as the bAbI recipe builds it,
    or given as `assets={"vocabulary.txt": path}`. Answers are words of the same
    vocabulary: `MemN2N`'s output classes are its ids.

    Args:
        memory_size: memory slots of the network (50 in the paper).
        sentence_length: words per sentence and per question; None: set by `adapt`
            to the longest story sentence or question, in words (as the recipe does).
        max_story_bytes: the longest story read (its last bytes, whole lines).
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        inputs: dict with `"story"` (strings `[B]`, sentences separated by "\\n")
            and `"question"` (strings `[B]`).
        return_sentences: also return `"memory"`, the sentence of each slot, and
            what the memory kept of the story.

    Returns:
        `MemN2NPreprocessor`'s dict: `"story"` int32 `(B, memory_size,
        sentence_length)`, `"question"` int32 `(B, sentence_length)` and, with
        `return_sentences`, `"memory"` string `(B, memory_size)` ("" when empty),
        `"sentences_used"` int32 `(B,)`, `"story_truncated"` bool `(B,)` and
        `"question_words"` int32 `(B,)`.

    Example:

    >>> pre = MemN2NQuestionAnswererPreprocessor(memory_size=10)
    >>> pre.adapt(["Mary went to the office.\\nJohn moved to the garden."],
    ...           ["Where is Mary?"], ["office"])
    >>> pre({"story": ["Mary went to the garden."], "question": ["Where is Mary?"]})[
    ...     "story"].shape
    TensorShape([1, 10, 5])
    """

    module_class = MemN2NPreprocessor
    module_arguments = ("memory_size", "sentence_length", "max_story_bytes")

    def __init__(
        self,
        memory_size=50,
        sentence_length=None,
        max_story_bytes=MAX_STORY_BYTES,
        assets=None,
        **kwargs,
    ):
        check_positive_ints(memory_size=memory_size, max_story_bytes=max_story_bytes)
        check_optional_positive_ints(sentence_length=sentence_length)
        self.memory_size = memory_size
        self.sentence_length = sentence_length
        self.max_story_bytes = max_story_bytes
        if assets is not None and sentence_length is None:
            raise ValueError(
                "`sentence_length` is needed with `assets` (only `adapt` learns it). "
                "Received: sentence_length=None"
            )
        super().__init__(assets=assets, **kwargs)

    def adapt(self, stories, questions, answers):
        """Learns the word vocabulary of bAbI-style examples, as the recipe does.

        `babi_arrays.build_vocabulary` of the examples: every word of the story
        sentences (the story's lines) and questions through the family's
        tokenization (`normalize`, then `tokenize`), and every answer as one word
        (lower-cased and stripped, as `zoo.data.babi` reads answers; `"n,w"` is one
        answer), most frequent first after `[PAD]` and `[UNK]`. When
        `sentence_length` is None it becomes the longest sentence or question in
        words (`babi_arrays.build_vocabulary`).

        Args:
            stories: list of str, sentences separated by "\\n" (or "\\r\\n", "\\r").
            questions: list of str, one per story.
            answers: list of str, one per story.

        Returns:
            The `zoo.text.vocabulary.Vocabulary`.

        Raises:
            ValueError: inputs that are not lists of strings of one length (one
                line).
        """
        import os
        import tempfile

        from zoo.models.memn2n import babi_arrays

        columns = {"stories": stories, "questions": questions, "answers": answers}
        for key, column in columns.items():
            column = column if isinstance(column, (str, bytes)) else list(column)
            check_strings(column, f"adapt: {key}")
            columns[key] = [c.decode() if isinstance(c, bytes) else c for c in column]
        lengths = {k: len(v) for k, v in columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(
                "adapt: stories, questions and answers must be lists of one length. "
                f"Received lengths {lengths}"
            )
        rows = zip(*columns.values(), strict=True)
        examples = [
            BabiExample(
                story=tuple(
                    s.strip() for s in re.split(r"\r\n?|\n", story) if s.strip()
                ),
                question=question.strip(),
                answer=answer.strip().lower(),
                supporting=(),
                task=0,
                source=f"adapt[{i}]",
            )
            for i, (story, question, answer) in enumerate(rows)
        ]
        vocab, sentence_length = babi_arrays.build_vocabulary(examples)
        self.sentence_length = self.sentence_length or sentence_length
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "vocabulary.txt")
            vocab.save(path)
            self.set_assets({"vocabulary.txt": path})
        return vocab

    @property
    def vocabulary(self):
        """The words in id order (`[PAD]`, `[UNK]`, ...): the answer of each class."""
        from zoo.text.vocabulary import Vocabulary

        self.module  # noqa: B018 - a ValueError when there is no vocabulary yet
        return Vocabulary.load(self.asset_paths["vocabulary.txt"]).tokens

    def call(self, inputs, return_sentences=False):
        if not isinstance(inputs, dict) or sorted(inputs) != ["question", "story"]:
            keys = sorted(inputs) if isinstance(inputs, dict) else type(inputs).__name__
            raise ValueError(
                "MemN2NQuestionAnswererPreprocessor takes a dict with 'story' and "
                f"'question'. Received: {keys}"
            )
        return self.module(
            inputs["story"], inputs["question"], return_sentences=return_sentences
        )
