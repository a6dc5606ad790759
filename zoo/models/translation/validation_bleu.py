"""ValidationBleu: BLEU of greedy translations of the validation split, every epoch."""

import keras

from zoo.metrics import corpus_bleu


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
