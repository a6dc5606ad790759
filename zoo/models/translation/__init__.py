"""Translation: `Seq2SeqTranslator`, its preprocessor, its task and its export.

- `Seq2SeqTranslator`: bidirectional RNN encoder + attention decoder (Bahdanau,
  Luong or none); `model(inputs)` returns `{"logits", "attention"}`.
- `Seq2SeqTextTranslator`: the task on raw text (`fit(sources, targets)` or on the
  recipe's preprocessed batches, `translate(texts)`, `choose_alpha`, `.keras` with
  its vocabularies, presets, `export`: the signatures `serving_default` beam
  search, `translate_greedy`, `preprocess`, `teacher_forced`), with its
  `Seq2SeqTranslatorPreprocessor` layer (the subword tokenizers, in the graph:
  sentence pairs -> ids and labels, ids -> text): the model the recipe compiles, fits, evaluates and exports. The
  constructors' defaults are the configuration the recipe trains with `--data`.

The training and evaluation pieces the recipe wires (the loss, the searches, the
validation BLEU, the length-bucketed batches, the heat maps) are imported from their
modules (`zoo.models.translation.translator`, ...).

Importing this package registers the Keras classes (`package="zoo"`).
"""

from zoo.models.translation.seq2seq_text_translator import Seq2SeqTextTranslator
from zoo.models.translation.seq2seq_translator import Seq2SeqTranslator
from zoo.models.translation.seq2seq_translator_preprocessor import (
    Seq2SeqTranslatorPreprocessor,
)

__all__ = [
    "Seq2SeqTextTranslator",
    "Seq2SeqTranslator",
    "Seq2SeqTranslatorPreprocessor",
]
