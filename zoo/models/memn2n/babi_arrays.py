"""bAbI tasks as MemN2N's int arrays: vocabulary, joining tasks, predicting, errors.

The arrays are those of `zoo.data.babi.vectorize` (`sentences`, `memory`,
`question`, `answer`); `make_dataset` turns them into batches.
"""

import numpy as np

from zoo.data import babi

SPLITS = ("train", "valid", "test")


def build_arrays(tasks, memory_size):
    """The vocabulary, sentence length and arrays of every task and split.

    Args:
        tasks: dict task -> `zoo.data.babi.BabiTask`.
        memory_size: int, the memory slots.

    The vocabulary and the sentence length are those of the training and validation
    stories only (`BabiTask.training_examples`): a test word or answer never seen
    there maps to `[UNK]` (id 1, which no answer has), and words of a test sentence
    beyond the sentence length are cut, as serving does.

    Returns:
        `(vocab, sentence_length, arrays)`: a `zoo.text.vocabulary.Vocabulary` of
        every word and answer of the training and validation splits, their longest
        sentence or question in words, and `arrays[task][split]` (`split` in
        train/valid/test; None when the task has no such split).
    """
    examples = [ex for t in tasks.values() for ex in t.training_examples()]
    vocab = babi.build_vocabulary(examples)
    sentence_length = babi.max_sentence_length(examples)
    arrays = {}
    for task, entry in tasks.items():
        arrays[task] = {}
        for split in SPLITS:
            items = getattr(entry, split)
            arrays[task][split] = (
                None
                if items is None
                else babi.vectorize(items, vocab, memory_size, sentence_length)
            )
    return vocab, sentence_length, arrays


def concat_arrays(parts):
    """Joins `vectorize` outputs into one (re-indexing their sentence tables).

    None parts are skipped. Row 0 of every table is the empty sentence: it is kept
    once, and the other rows of each part are shifted past the earlier parts'.
    """
    parts = [p for p in parts if p is not None]
    sentences, memory, question, answer = [], [], [], []
    offset = 0
    for p in parts:
        table = p["sentences"] if not sentences else p["sentences"][1:]
        shift = offset if not sentences else offset - 1
        sentences.append(table)
        memory.append(np.where(p["memory"] > 0, p["memory"] + shift, 0))
        question.append(p["question"])
        answer.append(p["answer"])
        offset += len(table)
    return {
        "sentences": np.concatenate(sentences).astype(np.int32),
        "memory": np.concatenate(memory).astype(np.int32),
        "question": np.concatenate(question),
        "answer": np.concatenate(answer),
    }


def select(arrays, rows):
    """The examples `rows` of `arrays` (the sentence table is shared)."""
    return {k: (v if k == "sentences" else v[rows]) for k, v in arrays.items()}


def training_groups(tasks, joint):
    """The models to train: `[(label, [task, ...])]`.

    One group `"joint"` of every task with a training split when `joint`, else one
    group `"task<N>"` per such task. Tasks without training data are left out.
    """
    available = [t for t, entry in tasks.items() if entry.train]
    if not available:
        return []
    if joint:
        return [("joint", available)]
    return [(f"task{t}", [t]) for t in available]


def predict(model, arrays, batch_size=512):
    """`(predicted ids (N,), probabilities (N, V), attention (N, hops, M))`.

    Args:
        model: a `MemN2N`.
        arrays: `vectorize` output.
        batch_size: int.
    """
    ds = babi.make_dataset(arrays, batch_size=batch_size).map(lambda x, y: x)
    out = model.predict(ds, verbose=0)
    probabilities = np.asarray(out["probabilities"])
    return probabilities.argmax(-1), probabilities, np.asarray(out["attention"])


def error_rate(model, arrays):
    """Answer error (%) of `model` (a `MemN2N`) on `arrays`."""
    predicted, _, _ = predict(model, arrays)
    return float(100.0 * np.mean(predicted != arrays["answer"]))
