"""Skip-gram word vectors with negative sampling (word2vec), trained in TensorFlow.

Mikolov et al. 2013 ("Distributed Representations of Words and Phrases and their
Compositionality"): for every word of the corpus and every word within a random
window of up to `window` words around it (in the same document), raise
`log sigmoid(v_center . u_context)` and lower `log sigmoid(v_center . u_noise)` for
`negatives` noise words drawn from the unigram distribution raised to 3/4. Frequent
words are subsampled (threshold `subsample`, word2vec's formula), the learning rate
decays linearly to 0.01% of its start, and the input vectors are returned.

Departure from word2vec's C code, for speed on CPUs: pairs are trained in batches
(plain SGD, one scatter update per batch instead of Hogwild threads), and the noise
words are drawn once per batch and shared by its pairs, their loss scaled so that
each pair still weighs `negatives` noise words in expectation.

It trains vectors for the ids of an existing vocabulary (the model's own), so the
matrix drops straight into an `Embedding` layer: this is how Yang et al. 2016
initialise HAN's embeddings (word2vec on the training and validation documents).
`write_word2vec` saves them in word2vec's text format, which
`zoo.text.embeddings.load_embeddings` (and the recipes' `--embeddings`) read.

Example:

>>> sequences = [np.array([5, 6, 7, 5, 6]), np.array([8, 9, 8])]
>>> vectors = train_word2vec(sequences, vocabulary_size=10, dim=8, epochs=1)
>>> vectors.shape
(10, 8)
"""

import dataclasses
import os
import time

import numpy as np
import tensorflow as tf

from zoo.io import atomic_write

# Size of the noise-word table (word2vec uses 1e8; 1e7 keeps the table at 40 MB).
_TABLE_SIZE = 10_000_000


@dataclasses.dataclass
class Word2VecReport:
    """What `train_word2vec` did, for logs and benchmarks.

    Attributes:
        tokens: corpus tokens with an id >= `reserved` (before subsampling).
        pairs: (center, context) pairs trained on, all epochs together.
        loss: mean negative-sampling loss of each epoch.
        seconds: wall time.
    """

    tokens: int
    pairs: int
    loss: list
    seconds: float

    def __str__(self):
        losses = ", ".join(f"{v:.3f}" for v in self.loss)
        return (
            f"skip-gram on {self.tokens:,} tokens: {self.pairs:,} pairs in "
            f"{self.seconds:.0f} s, loss per epoch {losses}"
        )


def _corpus(sequences, vocabulary_size, reserved):
    """Concatenated ids and document numbers, reserved ids (padding, unknown) dropped."""
    ids, docs = [], []
    for n, seq in enumerate(sequences):
        seq = np.asarray(seq)
        if seq.ndim != 1 or (seq.size and not np.issubdtype(seq.dtype, np.integer)):
            raise ValueError(
                f"Sequence {n} must be a 1-D array of integer ids. "
                f"Received: shape {seq.shape}, dtype {seq.dtype}"
            )
        if seq.size and (seq.min() < 0 or seq.max() >= vocabulary_size):
            bad = seq[(seq < 0) | (seq >= vocabulary_size)][0]
            raise ValueError(
                f"Sequence {n} holds id {int(bad)}, outside [0, {vocabulary_size})."
            )
        seq = seq[seq >= reserved].astype(np.int32)
        ids.append(seq)
        docs.append(np.full(len(seq), n, np.int32))
    if not ids or sum(len(s) for s in ids) < 2:
        raise ValueError(
            "The corpus has fewer than 2 known words: nothing to train word vectors on."
        )
    return np.concatenate(ids), np.concatenate(docs)


def _pairs(ids, docs, keep_prob, window, rng):
    """(center, context) pairs of one epoch, shuffled (word2vec's dynamic window)."""
    kept = rng.random(len(ids)) < keep_prob[ids]
    ids, docs = ids[kept], docs[kept]
    reach = rng.integers(1, window + 1, size=len(ids))  # each center's window
    centers, contexts = [], []
    for d in range(1, window + 1):
        same_doc = docs[:-d] == docs[d:]
        left, right = ids[:-d], ids[d:]
        forward = same_doc & (reach[:-d] >= d)  # center on the left
        backward = same_doc & (reach[d:] >= d)  # center on the right
        centers += [left[forward], right[backward]]
        contexts += [right[forward], left[backward]]
    centers, contexts = np.concatenate(centers), np.concatenate(contexts)
    order = rng.permutation(len(centers))
    return centers[order], contexts[order]


def train_word2vec(
    sequences,
    vocabulary_size,
    dim=200,
    window=5,
    negatives=5,
    epochs=5,
    subsample=1e-3,
    learning_rate=0.025,
    batch_size=1024,
    reserved=2,
    seed=0,
    verbose=False,
    return_report=False,
):
    """Skip-gram with negative sampling over id sequences.

    Args:
        sequences: iterable of 1-D integer arrays (one per document, ids of a
            vocabulary of `vocabulary_size`); windows never cross documents.
        vocabulary_size: number of ids (reserved ids included).
        dim: vector size.
        window: largest distance between a center and a context word; each center
            draws its own window in `1..window` (word2vec's weighting of near words).
        negatives: noise words per pair.
        epochs: passes over the corpus (new subsampling, windows and order each).
        subsample: threshold `t` of frequent-word subsampling (a word of relative
            frequency `f` is kept with probability `(sqrt(f / t) + 1) * t / f`).
        learning_rate: starting SGD step; it decays linearly to 1e-4 of itself.
        batch_size: pairs per step.
        reserved: ids below this (padding 0, unknown 1) are removed from the text
            first, as word2vec removes out-of-vocabulary words; their rows are 0.
        seed: seed of every random draw (same seed, same vectors on one machine).
        verbose: print the loss of each epoch.
        return_report: also return a `Word2VecReport`.

    Returns:
        float32 array `(vocabulary_size, dim)` (the input vectors); ids that never
        occur keep their small random initial rows. With `return_report`, the pair
        `(vectors, report)`.
    """
    reals = {"subsample": subsample, "learning_rate": learning_rate}
    integers = dict(vocabulary_size=vocabulary_size, dim=dim, window=window)
    integers.update(negatives=negatives, epochs=epochs, batch_size=batch_size)
    for name, value in {**integers, **reals}.items():
        kind = float if name in reals else int
        wrong_type = isinstance(value, bool) or not isinstance(value, (kind, int))
        if wrong_type or not 0 < value < np.inf:
            raise ValueError(
                f"`{name}` must be a positive {kind.__name__}. Received: {value!r}"
            )
    if not isinstance(reserved, int) or not 0 <= reserved < vocabulary_size:
        raise ValueError(
            f"`reserved` must be an integer in [0, {vocabulary_size}). "
            f"Received: {reserved!r}"
        )
    start = time.time()
    ids, docs = _corpus(sequences, vocabulary_size, reserved)
    counts = np.bincount(ids, minlength=vocabulary_size).astype(np.float64)
    freq = counts / counts.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        keep_prob = (np.sqrt(freq / subsample) + 1) * subsample / freq
    keep_prob = np.minimum(np.where(freq > 0, keep_prob, 0.0), 1.0)
    noise = counts**0.75
    noise_table = np.searchsorted(
        np.cumsum(noise / noise.sum()), (np.arange(_TABLE_SIZE) + 0.5) / _TABLE_SIZE
    ).astype(np.int32)
    noise_table = np.minimum(noise_table, vocabulary_size - 1)

    rng = np.random.default_rng(seed)
    w_in = tf.Variable(
        rng.uniform(-0.5 / dim, 0.5 / dim, (vocabulary_size, dim)).astype(np.float32)
    )
    w_out = tf.Variable(tf.zeros((vocabulary_size, dim)))
    table = tf.constant(noise_table)
    # Noise words are drawn once per batch and shared by its pairs (one matmul, and
    # far fewer rows to update than `negatives` per pair); each pair still weighs
    # `negatives` noise words in expectation: their loss is scaled by K / N.
    shared_noise = max(64, 4 * negatives)
    weight = negatives / shared_noise

    @tf.function(reduce_retracing=True, autograph=False)
    def step(centers, contexts, lr, noise_seed):
        draws = tf.random.stateless_uniform(
            (shared_noise,), noise_seed, 0, _TABLE_SIZE, dtype=tf.int32
        )
        noise_ids = tf.gather(table, draws)  # (N,)
        v = tf.gather(w_in, centers)  # (B, D)
        u_pos = tf.gather(w_out, contexts)  # (B, D)
        u_neg = tf.gather(w_out, noise_ids)  # (N, D), shared by the batch
        pos = tf.reduce_sum(v * u_pos, axis=1)  # (B,)
        neg = tf.matmul(v, u_neg, transpose_b=True)  # (B, N)
        loss = tf.reduce_sum(tf.nn.softplus(-pos))
        loss += weight * tf.reduce_sum(tf.nn.softplus(neg))
        g_pos = tf.sigmoid(pos) - 1.0  # d loss / d pos
        g_neg = weight * tf.sigmoid(neg)  # d loss / d neg
        grad_v = g_pos[:, None] * u_pos + tf.matmul(g_neg, u_neg)
        grad_pos = g_pos[:, None] * v
        grad_neg = tf.matmul(g_neg, v, transpose_a=True)  # (N, D)
        w_in.scatter_sub(tf.IndexedSlices(lr * grad_v, centers))
        grad_out = lr * tf.concat([grad_pos, grad_neg], 0)
        w_out.scatter_sub(
            tf.IndexedSlices(grad_out, tf.concat([contexts, noise_ids], 0))
        )
        return loss

    @tf.function(reduce_retracing=True, autograph=False)
    def run_epoch(centers, contexts, first_step, total_steps):
        # The whole epoch in one graph (an explicit while loop: no Python between
        # steps, and no AutoGraph conversion that needs the source file).
        n = tf.shape(centers)[0]
        steps = (n + batch_size - 1) // batch_size

        def body(i, total):
            global_step = first_step + tf.cast(i, tf.int64)
            done = tf.cast(global_step, tf.float32)
            lr = learning_rate * tf.maximum(1.0 - done / total_steps, 1e-4)
            batch = slice(i * batch_size, (i + 1) * batch_size)  # the last one clipped
            noise_seed = tf.stack([tf.constant(seed, tf.int64), global_step])
            loss = step(centers[batch], contexts[batch], lr, noise_seed)
            return i + 1, total + loss

        _, total = tf.while_loop(
            lambda i, total: i < steps, body, (tf.constant(0), tf.constant(0.0))
        )
        return total / tf.cast(tf.maximum(n, 1), tf.float32)

    centers, contexts = _pairs(ids, docs, keep_prob, window, rng)
    # The decay runs over the expected number of steps (epoch 1's count each epoch).
    total_steps = float(epochs * -(-len(centers) // batch_size))
    done, pairs_seen, losses = 0, 0, []
    for epoch in range(epochs):
        if epoch:
            centers, contexts = _pairs(ids, docs, keep_prob, window, rng)
        inputs = (centers, contexts, np.int64(done), np.float32(total_steps))
        loss = float(run_epoch(*map(tf.constant, inputs)))
        done += -(-len(centers) // batch_size)
        pairs_seen += len(centers)
        losses.append(loss)
        if not np.isfinite(loss):
            raise FloatingPointError(
                f"word2vec loss became {loss} in epoch {epoch + 1}; "
                f"lower learning_rate (now {learning_rate}) or batch_size "
                f"(now {batch_size})."
            )
        if verbose:
            print(
                f"word2vec epoch {epoch + 1}/{epochs}: loss {loss:.4f}, "
                f"{len(centers):,} pairs, {time.time() - start:.0f} s",
                flush=True,
            )
    vectors = w_in.numpy()
    vectors[:reserved] = 0.0
    report = Word2VecReport(
        tokens=len(ids), pairs=pairs_seen, loss=losses, seconds=time.time() - start
    )
    return (vectors, report) if return_report else vectors


def write_word2vec(path, tokens, vectors, skip=2):
    """Writes `vectors` in word2vec text format (`<count> <dim>` header), atomically.

    Args:
        path: output file (created or replaced only once it is complete).
        tokens: the vocabulary's tokens, in id order.
        vectors: array `(len(tokens), dim)`.
        skip: leading reserved ids (`[PAD]`, `[UNK]`) left out of the file.
    """
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or len(tokens) != vectors.shape[0]:
        raise ValueError(
            f"`vectors` must have shape ({len(tokens)}, dim). Received: {vectors.shape}"
        )
    rows = [(str(t), v) for t, v in zip(tokens[skip:], vectors[skip:], strict=True)]
    # The format separates fields with " " and lines with "\n" (readers open it in
    # text mode, where "\r" also ends a line); other characters, other Unicode spaces
    # included, round-trip.
    if bad := [t for t, _ in rows if not t or any(c in t for c in " \n\r")]:
        raise ValueError(
            f"Empty tokens and tokens with a space or line break cannot be written: "
            f"{bad[:5]!r}"
        )
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_write(path) as f:
        f.write(f"{len(rows)} {vectors.shape[1]}\n")
        for token, v in rows:
            f.write(token + " " + " ".join(f"{x:.6g}" for x in v) + "\n")
