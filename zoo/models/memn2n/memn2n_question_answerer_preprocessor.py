"""`MemN2NQuestionAnswererPreprocessor`: stories and questions -> word ids, a layer.

`tokenize` is the family's word split and `build_vocabulary` its vocabulary, shared
by training (`babi_arrays`) and the exported graph, so both see the same word ids.
"""

import re

import keras
import tensorflow as tf

from zoo.layers.arguments import check_optional_positive_ints, check_positive_ints
from zoo.models.preprocessor import Preprocessor
from zoo.models.task import check_strings
from zoo.text.babi_example import BabiExample
from zoo.text.preprocessing import normalize, word_tokenize
from zoo.text.vocabulary import RESERVED, Vocabulary

MAX_STORY_BYTES = 262144
"""Serving limit: a longer story keeps its last 256 KiB (whole lines)."""

_PUNCT_TOKEN = r"[\p{P}\p{S}]+"

# A line is empty for the model when it holds only separators and punctuation or
# symbols: `tokenize` splits on the first and drops tokens made of the others, so
# these are exactly the lines that give no words.
_NO_WORD_LINE = r"[\s\p{Z}\p{P}\p{S}]*"
# The same of a raw line (not normalized: control characters and combining marks
# are no words either), for the lines before those read.
_NO_WORD_RAW_LINE = r"[\s\p{Z}\p{P}\p{S}\p{C}\p{M}]*"


def tokenize(text):
    """Normalized words of each string, punctuation tokens dropped.

    Args:
        text: string tensor (any shape) or ragged tensor of strings, already
            passed through `normalize` (or raw: case and spaces then matter).

    Returns:
        A `tf.RaggedTensor` with one more ragged dimension.
    """
    words = word_tokenize(text)
    keep = tf.logical_not(tf.strings.regex_full_match(words.flat_values, _PUNCT_TOKEN))
    return tf.ragged.boolean_mask(words, words.with_flat_values(keep))


def tokenize_sentences(sentences, batch_size=16384):
    """A list of raw sentences -> a list of word lists (str), via `tokenize`."""
    result = []
    for start in range(0, len(sentences), batch_size):
        chunk = tf.constant(list(sentences[start : start + batch_size]), tf.string)
        words = tokenize(normalize(chunk)).to_list()
        result.extend([[w.decode("utf-8") for w in row] for row in words])
    return result


def build_vocabulary(examples):
    """`(vocab, sentence_length)`: a `Vocabulary` of every story word, question word
    and answer, and the longest statement or question in words (after `tokenize`),
    at least 1."""
    examples = list(examples)
    texts = {s for ex in examples for s in ex.story} | {ex.question for ex in examples}
    token_lists = tokenize_sentences(sorted(texts))
    length = max([1] + [len(t) for t in token_lists])
    return Vocabulary.build([*token_lists, [ex.answer for ex in examples]]), length


@keras.saving.register_keras_serializable(package="zoo")
class MemN2NQuestionAnswererPreprocessor(Preprocessor):
    """Raw `{"story", "question"}` strings -> `MemN2N`'s word ids (TensorFlow ops).

    A story is split into sentences on "\\n"; sentences without words are skipped;
    the last `memory_size` sentences are kept, most recent in slot 0; each sentence
    and the question keep their first `sentence_length` words. Words are those of
    `tokenize` after `zoo.text.preprocessing.normalize`, the tokenization of
    training, so training and serving see the same ids; unknown words map to
    `[UNK]`. The word vocabulary is the layer's asset (`vocabulary.txt`): learned
    with `adapt(stories, questions, answers)` as the bAbI recipe builds it, or given
    as `assets={"vocabulary.txt": path}`. Answers are words of the same vocabulary:
    `MemN2N`'s output classes are its ids.

    The work per request is bounded by the model's limits, not by the input: a
    story longer than `max_story_bytes` keeps its last bytes (whole lines); only
    its last `4 * memory_size` lines are read (the lines before them are split off
    but never looked at, so a story whose last `4 * memory_size` lines hold no
    words gives an empty memory), and each line read and the question are cut to
    their first `64 * sentence_length` bytes (whole characters) before they are
    normalized and tokenized. An empty story gives an all-empty memory and an
    empty question a zero query, both well defined.

    What the memory holds is said, with `return_sentences`: `sentences_used`, the
    slots filled (the story's last sentences with words, at most `memory_size`), and
    `story_truncated`, whether older parts of the story were left out (more
    sentences with words than slots, or words in the lines or bytes beyond those
    read). `answers` turns the network's probabilities into answer words: never
    `[PAD]` or `[UNK]`, and "" for a story without sentences or a question without
    words, which have no answer.

    Args:
        memory_size: memory slots of the network (50 in the paper).
        sentence_length: words per sentence and per question; None: set by `adapt`
            to the longest story sentence or question, in words (as the recipe does).
        max_story_bytes: the longest story read (its last bytes, whole lines).
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        inputs: dict with `"story"` (strings `[B]`, sentences separated by "\\n")
            and `"question"` (strings `[B]`, the same `B`).
        return_sentences: also return the memory's sentences as text and what the
            memory kept of the story.

    Returns:
        A dict: `"story"` int32 `(B, memory_size, sentence_length)` and
        `"question"` int32 `(B, sentence_length)`, the `MemN2N` inputs; with
        `return_sentences` also `"memory"` string `(B, memory_size)`: the words of
        each slot joined by spaces (all those of the bytes read, not only the first
        `sentence_length`), "" when empty; `"sentences_used"` int32 `(B,)`: the
        slots filled; `"story_truncated"` bool `(B,)`: older parts of the story
        were left out; `"question_words"` int32 `(B,)`: the words of the question
        read.

    Raises:
        tf.errors.InvalidArgumentError: when story and question batches differ in
        size.

    Example:

    >>> pre = MemN2NQuestionAnswererPreprocessor(memory_size=10)
    >>> pre.adapt(["Mary went to the office.\\nJohn moved to the garden."],
    ...           ["Where is Mary?"], ["office"])
    >>> pre({"story": ["Mary went to the garden."], "question": ["Where is Mary?"]})[
    ...     "story"].shape
    TensorShape([1, 10, 5])
    """

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

        `build_vocabulary` of the examples: every word of the story
        sentences (the story's lines) and questions through the family's
        tokenization (`normalize`, then `tokenize`), and every answer as one word
        (lower-cased and stripped, as `zoo.data.babi` reads answers; `"n,w"` is one
        answer), most frequent first after `[PAD]` and `[UNK]`. When
        `sentence_length` is None it becomes the longest sentence or question in
        words (`build_vocabulary`).

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
                story=tuple(filter(None, map(str.strip, re.split(r"\r\n?|\n", story)))),
                question=question.strip(),
                answer=answer.strip().lower(),
                supporting=(),
                task=0,
                source=f"adapt[{i}]",
            )
            for i, (story, question, answer) in enumerate(rows)
        ]
        vocab, sentence_length = build_vocabulary(examples)
        self.sentence_length = self.sentence_length or sentence_length
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "vocabulary.txt")
            vocab.save(path)
            self.set_assets({"vocabulary.txt": path})
        return vocab

    @property
    def vocabulary(self):
        """The words in id order (`[PAD]`, `[UNK]`, ...): the answer of each class."""
        self.check_vocabulary()
        return Vocabulary.load(self.asset_paths["vocabulary.txt"]).tokens

    @property
    def max_lines(self):
        """The lines of a story read: its last 4 per memory slot."""
        return 4 * self.memory_size

    @property
    def max_sentence_bytes(self):
        """The bytes read of each line and of the question: 64 per word."""
        return 64 * self.sentence_length

    def get_config(self):
        return {
            **super().get_config(),
            "memory_size": self.memory_size,
            "sentence_length": self.sentence_length,
            "max_story_bytes": self.max_story_bytes,
        }

    def call(self, inputs, return_sentences=False):
        if not isinstance(inputs, dict) or sorted(inputs) != ["question", "story"]:
            keys = sorted(inputs) if isinstance(inputs, dict) else type(inputs).__name__
            raise ValueError(
                "MemN2NQuestionAnswererPreprocessor takes a dict with 'story' and "
                f"'question'. Received: {keys}"
            )
        self.check_vocabulary()
        story = tf.convert_to_tensor(inputs["story"], tf.string)
        question = tf.convert_to_tensor(inputs["question"], tf.string)
        batch = tf.shape(story)[0]
        check = tf.debugging.assert_equal(
            batch,
            tf.shape(question)[0],
            message="story and question must hold the same number of strings",
        )
        with tf.control_dependencies([check]):
            story = tf.identity(story)
        # (B, M), most recent first, "" = empty; (B,); (B,)
        lines, used, truncated = self._memory(story)
        words = tokenize(tf.reshape(lines, [-1]))  # (B * M, None)
        question_words = tokenize(self.normalize(question))
        shape = [batch, self.memory_size, self.sentence_length]
        outputs = {
            "story": tf.reshape(self._ids(words), shape),
            "question": self._ids(question_words),
        }
        if return_sentences:
            joined = tf.strings.reduce_join(words, axis=-1, separator=" ")
            outputs["memory"] = tf.reshape(joined, [batch, self.memory_size])
            outputs["sentences_used"] = used
            outputs["story_truncated"] = truncated
            outputs["question_words"] = tf.cast(question_words.row_lengths(), tf.int32)
        return outputs

    def answers(self, probabilities, features):
        """The answer word of each row: the most probable word of the vocabulary
        (`[PAD]` and `[UNK]` are no answers and never given), or "" for a row
        whose memory is empty or whose question has no words.

        Args:
            probabilities: float `(B, V)`, the network's output.
            features: this layer's outputs with `return_sentences`.

        Returns:
            string `(B,)`.
        """
        self.check_vocabulary()
        reserved = len(RESERVED)
        best = tf.argmax(probabilities[:, reserved:], axis=-1, output_type=tf.int32)
        words = self.lookup.inverse(best + reserved)
        answerable = tf.logical_and(
            features["sentences_used"] > 0, features["question_words"] > 0
        )
        return tf.where(answerable, words, tf.zeros_like(words))

    def _ids(self, words):
        """int32 `(N, sentence_length)` word ids of ragged words `(N, None)`: the
        first `sentence_length` of each row, padded with `[PAD]`."""
        dense = words.to_tensor(default_value="", shape=[None, self.sentence_length])
        return tf.cast(self.lookup(dense), tf.int32)

    def normalize(self, text):
        """`normalize` of the first `max_sentence_bytes` bytes of each string.

        The cut to whole characters comes first and reads only the start of each
        string, so the work does not grow with the length of the input.

        Args:
            text: string tensor (any shape) or ragged tensor of strings.

        Returns:
            The normalized strings, same shape.
        """
        budget = self.max_sentence_bytes
        # At most `budget` characters: at least `budget` bytes when the string is
        # longer; `normalize` then cuts to `budget` bytes on a character boundary.
        head = tf.ragged.map_flat_values(
            lambda t: tf.strings.substr(t, 0, budget, unit="UTF8_CHAR"), text
        )
        return normalize(head, max_bytes=budget)

    def _memory(self, story):
        """The last `memory_size` sentences with words, most recent first (string
        `(B, memory_size)`, normalized, "" after the oldest one kept), the number
        of sentences kept (int32 `(B,)`) and whether older parts of the story were
        left out (bool `(B,)`).

        Only the last `max_lines` lines of a story are read, each cut to its first
        `max_sentence_bytes` bytes before it is normalized. Normalizing lines one
        by one gives the words of normalizing the whole story, whose line breaks
        are "\n", "\r\n" and "\r".
        """
        length = tf.strings.length(story)
        limit = self.max_story_bytes
        tail = tf.strings.substr(
            story, tf.maximum(length - limit, 0), tf.fill(tf.shape(length), limit)
        )
        tail = tf.strings.regex_replace(tail, r"^[^\n]*(\n|$)", "")  # the cut line
        cut = length > limit
        story = tf.where(cut, tail, story)
        story = tf.strings.regex_replace(story, "\r\n?", "\n")
        lines = tf.strings.split(story, "\n")  # (B, S), raw
        take = tf.minimum(lines.row_lengths(), self.max_lines)
        index = tf.ragged.range(lines.row_limits() - take, lines.row_limits())
        text = self.normalize(tf.gather(lines.flat_values, index))
        has_words = tf.logical_not(
            tf.strings.regex_full_match(text.flat_values, _NO_WORD_LINE)
        )
        sentences = tf.ragged.boolean_mask(text, text.with_flat_values(has_words))
        slots = self.memory_size
        recent = sentences[:, -slots:]  # (B, <= M), oldest first
        dense = recent.to_tensor(default_value="", shape=[None, slots])
        memory = tf.reverse_sequence(
            dense, recent.row_lengths(), seq_axis=1, batch_axis=0
        )
        # Left out: sentences beyond the slots, and words in the lines not read.
        unread = tf.gather(
            lines.flat_values,
            tf.ragged.range(lines.row_starts(), lines.row_limits() - take),
        )
        unread_words = tf.reduce_any(
            tf.logical_not(tf.strings.regex_full_match(unread, _NO_WORD_RAW_LINE)),
            axis=1,
        )
        truncated = cut | unread_words | (sentences.row_lengths() > slots)
        return memory, tf.cast(recent.row_lengths(), tf.int32), truncated
