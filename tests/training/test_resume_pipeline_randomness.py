"""Random draws inside a tf.data pipeline after a resume.

The one recipe pipeline that draws random numbers in tf.data is bAbI's random noise
(its `make_dataset`: stateless draws seeded per batch by a
`Dataset.random(rerandomize_each_iteration=True)` stream, after a reshuffle). Both
are drawn when an iterator is created, so a resumed run gets the interrupted run's
noise and order, with one validation per epoch and with validation rounds.
"""

import keras
import numpy as np
import pytest

from tests.training.test_resume_data_order import Batches
from tests.training.training_test_utils import Interrupt, InterruptAt
from zoo import training
from zoo.models.memn2n.babi_arrays import make_dataset
from zoo.training import TrainingConfig


def _arrays(n=48, slots=6, words=4, sentences=24, vocabulary=16):
    rng = np.random.default_rng(0)
    table = rng.integers(1, vocabulary, size=(sentences, words)).astype("int32")
    table[0] = 0  # the empty sentence
    return {
        "sentences": table,
        "memory": rng.integers(0, sentences, size=(n, slots)).astype("int32"),
        "question": rng.integers(1, vocabulary, size=(n, words)).astype("int32"),
        "answer": rng.integers(0, 4, size=(n,)).astype("int32"),
    }


def _model(slots=6, words=4, vocabulary=16):
    story = keras.Input((slots, words), dtype="int32", name="story")
    question = keras.Input((words,), dtype="int32", name="question")
    embed = keras.layers.Embedding(vocabulary, 4)
    # Slot order matters (Flatten keeps it), so the noise changes the loss.
    s = keras.layers.Flatten()(keras.ops.sum(embed(story), axis=2))
    q = keras.ops.sum(embed(question), axis=1)
    h = keras.layers.Concatenate()([s, q])
    model = keras.Model(
        {"story": story, "question": question}, keras.layers.Dense(4)(h)
    )
    model.compile(
        keras.optimizers.SGD(0.1),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def _run(run_dir, interrupt_at=None, rounds=1):
    arrays = _arrays()
    keras.utils.set_random_seed(0)
    train = make_dataset(arrays, batch_size=8, shuffle=True, seed=3, noise_rate=0.3)
    val = make_dataset(arrays, batch_size=16)
    model = _model()
    cfg = TrainingConfig(
        epochs=3,
        validations_per_epoch=rounds,
        run_dir=str(run_dir),
        verbose=0,
        tensorboard=False,
        patience=0,
    )
    losses = Batches()
    training.fit(model, train, val, cfg, callbacks=[InterruptAt(interrupt_at), losses])
    return model, losses.losses


@pytest.mark.parametrize("rounds, interrupt_at", [(1, 1), (1, 2), (2, 3)])
def test_babi_noise_and_order_after_a_resume(tmp_path, rounds, interrupt_at):
    whole, whole_losses = _run(tmp_path / "whole", rounds=rounds)
    with pytest.raises(Interrupt):
        _run(tmp_path / "run", interrupt_at=interrupt_at, rounds=rounds)
    resumed, losses = _run(tmp_path / "run", rounds=rounds)
    steps = 6 // rounds  # 6 batches a pass
    np.testing.assert_allclose(losses, whole_losses[interrupt_at * steps :], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_the_noise_changes_the_training(tmp_path):
    """The test above would pass with no noise restored if the noise did nothing."""
    arrays = _arrays()
    noisy = make_dataset(arrays, batch_size=48, shuffle=False, seed=3, noise_rate=0.3)
    clean = make_dataset(arrays, batch_size=48)
    (a, _), (b, _) = next(iter(noisy)), next(iter(clean))
    assert not np.array_equal(a["story"].numpy(), b["story"].numpy())
