"""Evaluation metrics shared by the recipes: classification reports and corpus BLEU.

`classification_report` works on plain Python/NumPy labels; `corpus_bleu` computes
BLEU the standard way with sacrebleu on detokenized text and returns the signature
string sacrebleu prints, so numbers are comparable across papers and runs;
`moses_bleu` is the scoring of published Multi30k numbers; `bleu_scores` gives the
three BLEU variants a translation report holds.
"""

import numpy as np


def classification_report(y_true, y_pred, labels):
    """Accuracy, per-class precision/recall/F1 and the confusion matrix.

    Args:
        y_true: sequence of true labels (values from `labels`, or int indices into
            `labels`).
        y_pred: sequence of predicted labels, same convention and length.
        labels: sequence of the class names, in the order used for the matrix.

    Returns:
        A dict: `{"accuracy": float, "macro_f1": float, "support": int,
        "labels": [str], "per_class": {label: {"precision", "recall", "f1",
        "support"}}, "confusion_matrix": [[int]]}` where
        `confusion_matrix[i][j]` counts examples of class i predicted as class j.
        A class that is never predicted (or never present) gets precision (or
        recall) 0.0, never NaN.
    """
    labels = [str(label) for label in labels]
    if not labels or len(set(labels)) != len(labels):
        raise ValueError(f"`labels` must be non-empty and unique. Received: {labels!r}")
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(
            "`y_true` and `y_pred` must have the same length. "
            f"Received: len(y_true)={len(y_true)}, len(y_pred)={len(y_pred)}"
        )
    index = {label: i for i, label in enumerate(labels)}

    def to_index(v, name):
        v = v.decode("utf-8") if isinstance(v, bytes) else v  # np.bytes_ too
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if 0 <= v < len(labels):
                return int(v)
            raise ValueError(
                f"Label index out of range in `{name}`. Received: {v!r} "
                f"with {len(labels)} labels"
            )
        if str(v) not in index:
            raise ValueError(
                f"Unknown label in `{name}`. Received: {v!r}; known labels: {labels!r}"
            )
        return index[str(v)]

    n = len(labels)
    pairs = zip(y_true, y_pred, strict=True)
    cells = [to_index(t, "y_true") * n + to_index(p, "y_pred") for t, p in pairs]
    matrix = np.bincount(np.asarray(cells, dtype=np.int64), minlength=n * n)
    matrix = matrix.reshape(n, n)
    tp, predicted, actual = np.diag(matrix), matrix.sum(axis=0), matrix.sum(axis=1)
    precision = np.divide(tp, predicted, out=np.zeros(n), where=predicted > 0)
    recall = np.divide(tp, actual, out=np.zeros(n), where=actual > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros(n), where=both > 0)
    scores = {"precision": precision, "recall": recall, "f1": f1}
    per_class = {
        label: {k: float(v[i]) for k, v in scores.items()} | {"support": int(actual[i])}
        for i, label in enumerate(labels)
    }
    total = int(matrix.sum())
    return {
        "accuracy": float(np.trace(matrix) / total) if total else 0.0,
        "macro_f1": float(f1.mean()),
        "support": total,
        "labels": labels,
        "per_class": per_class,
        "confusion_matrix": matrix.tolist(),
    }


def format_report(report):
    """Formats a `classification_report` dict as a plain-text table.

    Returns:
        str: per-class precision/recall/F1/support, accuracy, macro F1 and the
        confusion matrix (rows = true class, columns = predicted class).
    """
    import pandas as pd

    labels = report["labels"]
    per_class = pd.DataFrame(report["per_class"]).T
    per_class["support"] = per_class["support"].astype(int)
    matrix = pd.DataFrame(report["confusion_matrix"], index=labels, columns=labels)
    return "\n".join(
        [
            per_class.to_string(float_format="{:.4f}".format),
            "",
            f"accuracy  {report['accuracy']:.4f}  (n={report['support']})",
            f"macro F1  {report['macro_f1']:.4f}",
            "",
            "confusion matrix (rows: true, columns: predicted)",
            matrix.to_string(),
        ]
    )


def corpus_bleu(hypotheses, references, lowercase=False, tokenize="13a"):
    """Corpus BLEU with sacrebleu on detokenized text.

    Args:
        hypotheses: list of str, one system output per segment.
        references: list of str (one reference per segment) or list of lists of str
            (several reference streams, each as long as `hypotheses`).
        lowercase: bool, case-insensitive BLEU.
        tokenize: sacrebleu tokenizer name ("13a", "intl", "none", ...).

    Returns:
        `(score, signature)`: the BLEU score (0-100, float) and sacrebleu's signature
        string, e.g. `"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"`.
    """
    import sacrebleu

    hypotheses = [str(h) for h in hypotheses]
    if references and isinstance(references[0], str):
        streams = [list(references)]
    else:
        streams = [list(r) for r in references]
    for s in streams:
        if len(s) != len(hypotheses):
            raise ValueError(
                "Each reference stream must have one entry per hypothesis. "
                f"Received: {len(hypotheses)} hypotheses and a stream of {len(s)}"
            )
    bleu = sacrebleu.metrics.BLEU(lowercase=lowercase, tokenize=tokenize)
    result = bleu.corpus_score(hypotheses, streams)
    return float(result.score), str(bleu.get_signature())


def moses_bleu(hypotheses, references, lang, lowercase=True):
    """BLEU on Moses-tokenized (and by default lowercased) text.

    This is the scoring of `multi-bleu.perl` on lowercased, tokenized output that
    published Multi30k / WMT16 task-1 results use: hypotheses and references are
    tokenized with sacremoses' Moses tokenizer for `lang` (no XML escaping), then
    scored by sacrebleu with its own tokenization switched off. Prefer
    `corpus_bleu` (detokenized, 13a) for new comparisons.

    Args:
        hypotheses: list of str.
        references: list of str, one per hypothesis.
        lang: the target language code for the Moses tokenizer ("en", "de", ...).
        lowercase: bool, lowercase before tokenizing (the published scoring).

    Returns:
        `(score, signature)`; the signature is sacrebleu's (`tok:none`, `case:lc`
        when lowercased) prefixed with `moses:<lang>|` so the tokenization is on
        record.
    """
    from sacremoses import MosesTokenizer

    if len(references) != len(hypotheses):
        raise ValueError(
            "`references` must have one entry per hypothesis. "
            f"Received: {len(hypotheses)} hypotheses and {len(references)} references"
        )
    tokenizer = MosesTokenizer(lang=lang)

    def prepare(text):
        text = str(text).lower() if lowercase else str(text)
        return tokenizer.tokenize(text, escape=False, return_str=True)

    score, signature = corpus_bleu(
        list(map(prepare, hypotheses)), list(map(prepare, references)), tokenize="none"
    )
    if lowercase:  # lowercased here, so sacrebleu itself saw "mixed" case
        signature = signature.replace("case:mixed", "case:lc")
    return score, f"moses:{lang}|" + signature


def bleu_scores(hypotheses, references, target_lang=None):
    """Cased detokenized BLEU and lowercased BLEU, with sacrebleu's signatures.

    With `target_lang` also lowercased BLEU on Moses-tokenized text (`moses_bleu`),
    the scoring of published Multi30k numbers.

    Args:
        hypotheses: list of str.
        references: list of str, one per hypothesis.
        target_lang: the target language code for the Moses tokenizer, or `None`.

    Returns:
        A dict: `bleu`, `bleu_signature`, `bleu_lowercase`,
        `bleu_lowercase_signature` and, with `target_lang`, `bleu_moses_lowercase`
        and `bleu_moses_lowercase_signature`.
    """
    scores = {
        "bleu": corpus_bleu(hypotheses, references),
        "bleu_lowercase": corpus_bleu(hypotheses, references, lowercase=True),
    }
    if target_lang:
        scores["bleu_moses_lowercase"] = moses_bleu(hypotheses, references, target_lang)
    return {
        f"{key}{suffix}": value
        for key, pair in scores.items()
        for suffix, value in zip(("", "_signature"), pair, strict=True)
    }
