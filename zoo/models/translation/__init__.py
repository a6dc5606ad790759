"""Translation: `Seq2SeqTranslator`, its preprocessor, serving module and training pieces.

- `Seq2SeqTranslator`: bidirectional RNN encoder + attention decoder (Bahdanau,
  Luong or none); `model(inputs)` returns `{"logits", "attention"}`.
- `TranslationPreprocessor`: the source and target subword tokenizers, in the graph
  (`vocabulary_cache_key` names what a vocabulary was learned from).
- `Seq2SeqTextTranslator`: the task on raw text (`fit(sources, targets)` or on the
  recipe's preprocessed batches, `translate(texts)`, `choose_alpha`, `.keras` with
  its vocabularies, presets, `export`), with its `Seq2SeqTranslatorPreprocessor`
  layer (sentence pairs -> ids and labels): the model the recipe compiles, fits,
  evaluates and exports. The constructors' defaults are the configuration the
  recipe trains with `--data`.
- `Translator`, `translate_corpus`: text to translations with greedy or beam search;
  `evaluate_translations`: a test corpus translated, timed and scored (BLEU),
  `evaluate_searches` for several searches; `score_snapshots`: the same for each
  weight snapshot of a timed run.
- `plot_translation_attention`, `heatmap_title`: the attention heat maps.
- `TranslationServing`, `export_translator`: the export's signatures
  (`serving_default` beam search, `translate_greedy`, `preprocess`,
  `teacher_forced`) and the export with its manifest.
- Training: `MaskedSparseCrossentropy` (the loss), `ValidationBleu` (the callback
  that adds `val_bleu`), `choose_on_validation` and `choose_length_penalty` (the
  search setting of the best validation BLEU; `penalty_list`, `number_or_auto`,
  `non_negative_or_auto` read length penalties), `load_translation_splits` (the
  recipe's sentence pairs), `translation_dataset` (length-bucketed batches over
  `BUCKETS`), `count_target_tokens`.

Importing this package registers the Keras classes (`package="zoo"`).
"""

from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy
from zoo.models.translation.seq2seq_text_translator import (
    Seq2SeqTextTranslator,
    export_translator,
)
from zoo.models.translation.seq2seq_translator import Seq2SeqTranslator
from zoo.models.translation.seq2seq_translator_preprocessor import (
    Seq2SeqTranslatorPreprocessor,
)
from zoo.models.translation.translation_dataset import (
    BUCKETS,
    count_target_tokens,
    load_translation_splits,
    translation_dataset,
)
from zoo.models.translation.translation_preprocessor import (
    TranslationPreprocessor,
    vocabulary_cache_key,
)
from zoo.models.translation.translation_report import (
    heatmap_title,
    plot_translation_attention,
)
from zoo.models.translation.translation_serving import TranslationServing
from zoo.models.translation.translator import (
    Translator,
    as_text,
    evaluate_searches,
    evaluate_translations,
    score_snapshots,
    translate_corpus,
)
from zoo.models.translation.validation_bleu import (
    ValidationBleu,
    choose_length_penalty,
    choose_on_validation,
    non_negative_or_auto,
    number_or_auto,
    penalty_list,
)

__all__ = [
    "BUCKETS",
    "MaskedSparseCrossentropy",
    "Seq2SeqTextTranslator",
    "Seq2SeqTranslator",
    "Seq2SeqTranslatorPreprocessor",
    "TranslationPreprocessor",
    "TranslationServing",
    "Translator",
    "ValidationBleu",
    "as_text",
    "choose_length_penalty",
    "choose_on_validation",
    "count_target_tokens",
    "evaluate_searches",
    "evaluate_translations",
    "export_translator",
    "heatmap_title",
    "load_translation_splits",
    "non_negative_or_auto",
    "number_or_auto",
    "penalty_list",
    "plot_translation_attention",
    "score_snapshots",
    "translate_corpus",
    "translation_dataset",
    "vocabulary_cache_key",
]
