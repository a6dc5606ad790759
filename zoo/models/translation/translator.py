"""Translator: text in, translations out, with greedy or beam search in the graph."""

import time

import tensorflow as tf

from zoo.decoding.beam_search import beam_search
from zoo.layers.arguments import check_positive_ints
from zoo.metrics import bleu_scores
from zoo.models.task import run_in_length_order as translate_corpus

TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")


class Translator:
    """Translates string batches and corpora with a `Seq2SeqTranslator`.

    `translate(text)` is the graph (tokenize, encode, search, detokenize) that the
    serving signatures and the validation callback trace; `translate_corpus(texts)`
    runs it over a list of Python strings in batches of similar length.

    A plain object (not a `tf.Module`): a serving module tracks the preprocessor's
    tokenizers (its vocabularies) and
    `zoo.export.export_model` the model's variables, so the Keras model is never
    saved as a SavedModel child.

    Args:
        model: a `Seq2SeqTranslator`.
        preprocessor: its `Seq2SeqTranslatorPreprocessor` (`max_length` bounds the
            search).
        beam_width: 1 for greedy search, more for beam search.
        alpha: GNMT length penalty (Wu et al. 2016).
        beta: GNMT coverage penalty.
        length_a, length_b: a translation stops after `ceil(a * |X| + b)` subwords
            (and after `preprocessor.max_length`).

    The defaults (beam 5, alpha 1.0, beta 0, a 1.5, b 5) are
    `Seq2SeqTextTranslator`'s: the recipe's searches with `--data`.

    Example:

    >>> translator = Translator(model, preprocessor, beam_width=5)
    >>> translator.translate_texts(["Ein Hund läuft."])  # ["A dog runs."]
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
    ):
        check_positive_ints(beam_width=beam_width)
        self.model = model
        self.preprocessor = preprocessor
        self.beam_width = beam_width
        self.alpha = alpha
        self.beta = beta
        self.length_a = length_a
        self.length_b = length_b
        # `translate` traced once for every batch (no autograph: the searches are
        # explicit while loops)
        self._function = tf.function(
            self.translate, input_signature=[TEXT_SPEC], autograph=False
        )

    def translate(self, text):
        """string `(B,)` -> the serving outputs and the target ids.

        Returns:
            A dict: `translation` string `(B,)`, `score` float `(B,)` (GNMT score),
            `attention` float `(B, Tt, Ts)`, `source_tokens` string `(B, Ts)`,
            `target_tokens` string `(B, Tt)` (`""` = padding) and `target_ids`
            int32 `(B, Tt)`.
        """
        pre = self.preprocessor
        source_ids = pre.source_ids(text)  # (B, Ts)
        memory, state, source_mask = self.model.encode(source_ids, training=False)
        result = beam_search(  # greedy search with beam_width 1
            self.model.decoder.step, state, memory, source_mask, pre.max_length,
            self.beam_width, self.alpha, self.beta, self.length_a, self.length_b,
        )  # fmt: skip
        longest = tf.reduce_max(tf.concat([result["lengths"], [0]], axis=0))
        tokens = result["tokens"][:, :longest]  # (B, Tt)
        return {
            "translation": pre.detokenize(tokens),
            "score": result["scores"],
            "attention": result["attention"][:, :longest, :],  # (B, Tt, Ts)
            "source_tokens": pre.source_tokens(source_ids),
            "target_tokens": pre.target_tokens(tokens),
            "target_ids": tokens,
        }

    def __call__(self, text):
        """`translate` as a traced function (one trace for every batch)."""
        return self._function(tf.convert_to_tensor(text, tf.string))

    def translate_texts(self, texts, batch_size=64):
        """The translations of `texts` (a list of str), as a list of str."""
        outputs = translate_corpus(self, texts, batch_size)
        return [as_text(o["translation"]) for o in outputs]


def evaluate_translations(
    translate_fn, sources, references, target_lang=None, batch_size=64, examples=3
):
    """Translates a test corpus, times it and scores it with `zoo.metrics.bleu_scores`.

    One untimed call on the first two sources traces the function first, so the
    speed is that of the translation alone.

    Args:
        translate_fn: a string-batch function (a serving signature, a `Translator`).
        sources, references: the test sentences (lists of str).
        target_lang: the target language code for the Moses-tokenized BLEU, or
            `None`.
        batch_size: sources per call (batched by length, see `translate_corpus`).
        examples: how many `(source, reference, hypothesis)` examples to keep.

    Returns:
        `(scores, outputs)`: `scores` holds `bleu_scores`'s entries,
        `sentences_per_second`, `examples` and `hypotheses` (all translations, str);
        `outputs` are `translate_corpus`'s per-sentence dicts.
    """
    translate_corpus(translate_fn, sources[:2], batch_size)  # tracing
    start = time.perf_counter()
    outputs = translate_corpus(translate_fn, sources, batch_size)
    seconds = max(time.perf_counter() - start, 1e-9)
    hypotheses = [as_text(o["translation"]) for o in outputs]
    scores = bleu_scores(hypotheses, references, target_lang)
    scores["sentences_per_second"] = len(sources) / seconds
    triples = zip(sources, references, hypotheses[:examples], strict=False)
    scores["examples"] = [
        {"source": s, "reference": r, "hypothesis": h} for s, r, h in triples
    ]
    scores["hypotheses"] = hypotheses
    return scores, outputs


def evaluate_searches(searches, sources, references, target_lang=None, log=print):
    """`evaluate_translations` of each `{name: translate_fn}` of `searches`, logged.

    Returns:
        `(metrics, outputs)`: `metrics` maps each name to its scores (less the
        hypotheses) and holds `search` and `bleu`, the last search's; `outputs` are
        the last search's per-sentence outputs.
    """
    metrics, outputs = {}, None
    for search, translate in searches.items():
        scores, outputs = evaluate_translations(
            translate, sources, references, target_lang
        )
        del scores["hypotheses"]
        metrics[search] = scores
        numbers = [f"{k} {v:.2f}" for k, v in scores.items() if type(v) is float]
        log(f"{search}: {', '.join(numbers)} ({scores['bleu_signature']})")
    metrics["search"], metrics["bleu"] = search, metrics[search]["bleu"]
    return metrics, outputs


def score_snapshots(
    trainer, translate_fn, folder, sources, references, target_lang=None, log=None
):
    """Test BLEU of every weight snapshot `zoo.training.TimedSnapshots` wrote.

    Each snapshot of `folder` (listed in its `snapshots.json`) is put into `trainer`
    (the model that was fit, whose weights they are) and `sources` are translated by
    `translate_fn` (a function reading the model's current weights, e.g. a greedy
    `Translator`) and scored with `zoo.metrics.bleu_scores`; the trainer's weights are
    put back afterwards.

    Returns:
        One dict per snapshot, in training order: `minutes`, `epoch`, `step` and the
        BLEU scores (`bleu`, `bleu_lowercase`, and `bleu_moses_lowercase` with
        `target_lang`); an empty list when `folder` holds no snapshots. `log`, when
        given, gets one line per snapshot.
    """
    import json
    import os

    from zoo.training import load_snapshot

    listing = os.path.join(folder, "snapshots.json")
    if not os.path.isfile(listing):
        return []
    with open(listing, encoding="utf-8") as f:
        snapshots = json.load(f)
    kept, rows = trainer.get_weights(), []
    try:
        for snapshot in snapshots:
            load_snapshot(trainer, os.path.join(folder, snapshot["file"]))
            outputs = translate_corpus(translate_fn, sources)
            hypotheses = [as_text(o["translation"]) for o in outputs]
            scores = bleu_scores(hypotheses, references, target_lang)
            row = {k: snapshot[k] for k in ("minutes", "epoch", "step")}
            row.update((k, v) for k, v in scores.items() if not k.endswith("signature"))
            rows.append(row)
            if log is not None:
                log(f"{row['minutes']:6.2f} min: greedy BLEU {row['bleu']:.2f}")
    finally:
        trainer.set_weights(kept)
    return rows


def as_text(value):
    """A string output (bytes) as str; invalid UTF-8 is replaced."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
