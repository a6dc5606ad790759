"""bAbI examples as MemN2N's int arrays and batches: vocabulary, ids, tf.data.

`vectorize` turns `BabiExample`s into compact arrays (`sentences`, `memory`,
`question`, `answer`); `make_dataset` turns them into batches, with the paper's
random-noise empty memories for training. Words come from `tokenize` (the zoo's
`normalize` + `word_tokenize`, punctuation tokens dropped), the tokenization of the
exported graph (`MemN2NQuestionAnswererPreprocessor`), so training and serving see
the same ids.

```python
tasks = zoo.data.babi.load_babi("../shared/data/babi", tasks=[1, 2])
vocab, sentence_length, arrays = build_arrays(tasks, memory_size=50)
train_ds = make_dataset(arrays[1]["train"], batch_size=32, shuffle=True,
                        noise_rate=0.1)
```
"""

import numpy as np
import tensorflow as tf

from zoo.models.memn2n.memn2n_question_answerer_preprocessor import (
    build_vocabulary,
    tokenize_sentences,
)


def vectorize(examples, vocab, memory_size=50, sentence_length=11):
    """Turns examples into compact int arrays.

    Unique sentences are stored once: `sentences[k]` holds the word ids of sentence
    `k` (row 0 = the empty sentence), and `memory[n, i]` the sentence index of slot
    `i` of example `n`, slot 0 = most recent statement. `make_dataset` gathers the
    dense `(B, memory_size, sentence_length)` stories per batch
    (`sentences[memory]`). Words beyond `sentence_length` are cut (the first ones
    kept) and statements without words are dropped, as
    `MemN2NQuestionAnswererPreprocessor` does.

    Returns:
        dict of NumPy arrays: `sentences (U, J)`, `memory (N, M)`, `question
        (N, J)`, `answer (N,)`, all int32.
    """
    examples = list(examples)

    def rows(token_lists):  # word ids, cut or padded to `sentence_length`
        out = np.zeros((len(token_lists), sentence_length), np.int32)
        for i, tokens in enumerate(token_lists):
            ids = vocab.encode(tokens[:sentence_length])
            out[i, : len(ids)] = ids
        return out

    texts = sorted({s for ex in examples for s in ex.story})
    kept = [(t, w) for t, w in zip(texts, tokenize_sentences(texts), strict=True) if w]
    index = {text: k + 1 for k, (text, _) in enumerate(kept)}
    memory = np.zeros((len(examples), memory_size), np.int32)
    for n, ex in enumerate(examples):
        slots = [index[s] for s in reversed(ex.story) if s in index][:memory_size]
        memory[n, : len(slots)] = slots
    return {
        "sentences": rows([[]] + [words for _, words in kept]),
        "memory": memory,
        "question": rows(tokenize_sentences([ex.question for ex in examples])),
        "answer": np.array([vocab.token_to_id(ex.answer) for ex in examples], np.int32),
    }


def random_empty_memories(memory, rate, seed):
    """Random noise (RN): inserts empty memory slots at random places.

    Before each slot an empty slot is inserted with probability `rate`; the
    following slots shift towards older positions (the oldest fall out of the
    memory). This breaks the link between a sentence and a fixed temporal slot.

    Args:
        memory: int tensor `(B, M)` of sentence indices (0 = empty).
        rate: float in [0, 1).
        seed: int pair, for `tf.random` stateless draws.

    Returns:
        int tensor `(B, M)`.
    """
    memory = tf.convert_to_tensor(memory)
    slots = tf.shape(memory)[1]
    draw = tf.random.stateless_uniform(tf.shape(memory), seed=seed)
    insert = tf.cast(draw < rate, tf.int32)  # (B, M) 1 = empty slot before this one
    new_position = tf.range(slots)[tf.newaxis, :] + tf.cumsum(insert, axis=1)
    moves = tf.one_hot(new_position, slots, dtype=memory.dtype)  # (B, M, M), 0 if >= M
    return tf.reduce_sum(memory[:, :, tf.newaxis] * moves, axis=1)


def make_dataset(
    arrays, batch_size=32, shuffle=False, seed=0, noise_rate=0.0, drop_remainder=False
):
    """A `tf.data.Dataset` of `({"story", "question"}, answer)` batches.

    Args:
        arrays: `vectorize` output.
        batch_size: int.
        shuffle: reshuffle each epoch (seeded).
        seed: shuffle and RN seed (both change every epoch, reproducibly).
        noise_rate: RN rate (0.1 in the paper for training), 0 = off.
        drop_remainder: fixed batch shape (avoids a retrace for the last batch).

    Returns:
        Dataset of `({"story": (B, M, J) int32, "question": (B, J) int32},
        answer (B,) int32)`.
    """
    table = tf.constant(arrays["sentences"])
    ds = tf.data.Dataset.from_tensor_slices(
        (arrays["memory"], arrays["question"], arrays["answer"])
    )
    if shuffle:
        ds = ds.shuffle(len(arrays["answer"]), seed=seed, reshuffle_each_iteration=True)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    # One stateless seed pair per batch from a seeded stream that changes every epoch:
    # the noise differs from epoch to epoch but does not depend on thread timing (a
    # stateful draw inside a parallel map would) or on what ran before in the process.
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    ds = tf.data.Dataset.zip((ds, seeds))

    def assemble(batch, noise_seed):
        memory, question, answer = batch
        if noise_rate > 0:
            memory = random_empty_memories(memory, noise_rate, seed=noise_seed)
        story = tf.gather(table, memory)  # (B, M, J)
        return {"story": story, "question": question}, answer

    return ds.map(assemble, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)


def build_arrays(tasks, memory_size):
    """The vocabulary, sentence length and arrays of every task and split.

    Args:
        tasks: dict task -> `zoo.data.babi.BabiTask` (its `train`, `valid`,
            `test` lists of `BabiExample`).
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
    vocab, sentence_length = build_vocabulary(examples)
    arrays = {
        task: {
            split: None
            if getattr(entry, split) is None
            else vectorize(getattr(entry, split), vocab, memory_size, sentence_length)
            for split in ("train", "valid", "test")
        }
        for task, entry in tasks.items()
    }
    return vocab, sentence_length, arrays


def concat_arrays(parts):
    """Joins `vectorize` outputs into one (re-indexing their sentence tables).

    None parts are skipped. Row 0 of every table is the empty sentence: it is kept
    once, and the other rows of each part are shifted past the earlier parts'.
    """
    parts = [p for p in parts if p is not None]
    shifts = np.cumsum([0] + [len(p["sentences"]) - 1 for p in parts])
    tables = [parts[0]["sentences"][:1]] + [p["sentences"][1:] for p in parts]
    memory = [
        np.where(p["memory"] > 0, p["memory"] + shifts[i], 0)
        for i, p in enumerate(parts)
    ]
    return {
        "sentences": np.concatenate(tables).astype(np.int32),
        "memory": np.concatenate(memory).astype(np.int32),
        "question": np.concatenate([p["question"] for p in parts]),
        "answer": np.concatenate([p["answer"] for p in parts]),
    }


def select(arrays, rows):
    """The examples `rows` of `arrays` (the sentence table is shared)."""
    return {k: (v if k == "sentences" else v[rows]) for k, v in arrays.items()}


def predict(model, arrays, batch_size=512):
    """`(predicted ids (N,), probabilities (N, V), attention (N, hops, M))`.

    Args:
        model: a `MemN2NQuestionAnswerer` (its backbone gives the attention) or a
            `MemN2N`.
        arrays: `vectorize` output.
        batch_size: int.
    """
    network = getattr(model, "backbone", None) or model
    ds = make_dataset(arrays, batch_size=batch_size).map(lambda x, y: x)
    out = network.predict(ds, verbose=0)
    probabilities = np.asarray(out["probabilities"])
    return probabilities.argmax(-1), probabilities, np.asarray(out["attention"])


def error_rate(model, arrays):
    """Answer error in percent of `model` (the task or its `MemN2N`) on `arrays`."""
    predicted, _, _ = predict(model, arrays)
    return float(100.0 * np.mean(predicted != arrays["answer"]))
