"""`SentencePreprocessor`: raw sentences -> word ids `(B, T)`, in the graph.

The same `tf.Module` runs in the `tf.data` training pipeline and inside the exported
serving signatures. Steps (all in-graph, tensorflow-text):

1. `zoo.text.preprocessing.normalize`: invalid UTF-8 replaced, inputs longer than
   64 KiB truncated at a character boundary, NFKC, case folding, whitespace collapsed;
2. `word_tokenize` (words, punctuation as separate tokens);
3. the first `max_length` tokens are kept (default `MAX_LENGTH` = 128); longer texts
   are truncated, never rejected;
4. vocabulary lookup (`VocabularyLookup`: unknown words -> 1, padding -> 0), padded
   with 0 / "" to the longest text of the batch, at least 1 position, so an empty or
   whitespace-only text is a single padded token: fully masked, zero attention, finite
   outputs.
"""

import tensorflow as tf

from zoo.layers.arguments import check_positive_ints
from zoo.models.preprocessor import pad_batch
from zoo.text.preprocessing import normalize, word_tokenize
from zoo.text.vocabulary import VocabularyLookup

MAX_LENGTH = 128
"""Default limit on tokens per text (later tokens are dropped)."""


def tokenize_sentences(text, max_length=MAX_LENGTH, lowercase=True):
    """Raw strings `[B]` -> ragged words `[B, None]`, at most `max_length` each."""
    text = tf.convert_to_tensor(text, dtype=tf.string)
    words = word_tokenize(normalize(text, lowercase=lowercase))
    return words[:, :max_length]


class SentencePreprocessor(tf.Module):
    """Raw sentences -> padded word ids `(B, T)` in the graph (tensorflow-text).

    See the module docstring for the steps and limits. The vocabulary file is kept
    as `vocab_file` (an export copies it beside the standalone encoder).

    Args:
        vocab_file: vocabulary file (`zoo.text.vocabulary.Vocabulary.save`); tracked
            as an asset, so exports carry it.
        max_length: tokens kept per text (later tokens are dropped).
        lowercase: whether `normalize` case-folds.

    Call arguments:
        text: string tensor `[B]`.

    Returns:
        A dict: `"token_ids"` int32 `(B, T)` and `"tokens"` string `(B, T)` ("" where
        padded); `T` is the batch maximum after truncation, at least 1.
    """

    def __init__(self, vocab_file, max_length=MAX_LENGTH, lowercase=True):
        super().__init__(name="sentence_preprocessor")
        check_positive_ints(max_length=max_length)
        self.vocab_file = str(vocab_file)
        self.max_length = max_length
        self.lowercase = lowercase
        self.lookup = VocabularyLookup(vocab_file)

    def __call__(self, text):
        words = tokenize_sentences(text, self.max_length, lowercase=self.lowercase)
        ids = tf.cast(self.lookup(words), tf.int32)
        return {"token_ids": pad_batch(ids, 0), "tokens": pad_batch(words, "")}
