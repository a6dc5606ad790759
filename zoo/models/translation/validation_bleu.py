"""BLEU of validation translations: every epoch (`ValidationBleu`) and to choose a
search setting (`choose_on_validation`, e.g. the length penalty of
`Seq2SeqTextTranslator.choose_alpha`; `penalty_list` and
`number_or_auto` read the length penalties of a command line)."""

import keras

from zoo.metrics import corpus_bleu
from zoo.models.translation.translator import as_text, translate_corpus


class ValidationBleu(keras.callbacks.Callback):
    """Adds `val_bleu` to each epoch's logs: cased BLEU of the validation translations.

    Published translation systems choose their epoch on a validation translation
    metric rather than on the loss; with `monitor="val_bleu"` (and `mode="max"`) the
    best checkpoint, early stopping and the learning-rate decay of
    `zoo.training.fit` follow it. Put it in `fit`'s extra callbacks, which run
    before the built-in ones. Greedy decoding of a validation split is fast and
    runs after the epoch's last training batch, outside its timing.

    Args:
        translator: a `Translator` (greedy: `beam_width=1`).
        sources, references: the validation sentences (lists of str).
        log: where the epoch's line goes (`None`: nowhere).

    Attributes:
        scores: the BLEU of each epoch so far.
    """

    def __init__(self, translator, sources, references, log=print):
        super().__init__()
        if len(sources) != len(references):
            raise ValueError(
                "`sources` and `references` must have the same length. Received: "
                f"{len(sources)} sources and {len(references)} references"
            )
        self.translator = translator
        self.sources = list(sources)
        self.references = list(references)
        self.log = log
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        hypotheses = self.translator.translate_texts(self.sources)
        bleu, _ = corpus_bleu(hypotheses, self.references)
        self.scores.append(float(bleu))
        if logs is not None:
            logs["val_bleu"] = float(bleu)
        if self.log is not None:
            self.log(f"epoch {epoch + 1}: validation BLEU (greedy, cased) {bleu:.2f}")


def choose_on_validation(searches, sources, references, log=print, name=str):
    """The search whose translations of the validation `sources` score best.

    Each string-batch function of `searches` (a `Translator`, a serving signature)
    translates `sources` (`translate_corpus`) and gets the cased BLEU of its
    translations against `references`; the best wins, and on a tie the earlier one
    (dict order).

    Args:
        searches: `{key: translate_fn}`, e.g. one `Translator` per length penalty.
        sources, references: the validation sentences (lists of str).
        log: gets one line per search (`None`: nowhere).
        name: the text of a key in those lines.

    Returns:
        `(best key, {key: BLEU})`.
    """
    if not searches:
        raise ValueError("`searches` is empty: give at least one search to choose")
    scores = {}
    for key, translate in searches.items():
        outputs = translate_corpus(translate, list(sources))
        hypotheses = [as_text(o["translation"]) for o in outputs]
        scores[key] = float(corpus_bleu(hypotheses, list(references))[0])
        if log is not None:
            log(f"validation BLEU (cased) {scores[key]:.2f}: {name(key)}")
    return max(scores, key=scores.get), scores


def number_or_auto(text):
    """A float, or the word `auto` (a length penalty chosen on validation)."""
    return "auto" if text == "auto" else float(text)


def non_negative_or_auto(value):
    """Refuses (`ValueError`) a value that is neither `"auto"` nor >= 0."""
    if value != "auto" and not value >= 0:
        raise ValueError("must be >= 0 or auto")


def penalty_list(text):
    """The floats of `text`, a comma-separated list of finite numbers >= 0
    (`ValueError` naming the first bad part otherwise)."""
    values = []
    for part in text.split(","):
        try:
            values.append(float(part))
        except ValueError:
            raise ValueError(f"not a number: {part.strip()!r}") from None
    if not all(0 <= v < float("inf") for v in values):
        raise ValueError("every value must be a finite number >= 0")
    return values
