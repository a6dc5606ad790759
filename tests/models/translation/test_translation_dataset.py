import types

import numpy as np

from zoo.models.translation.translation_dataset import (
    BUCKETS,
    count_target_tokens,
    translation_dataset,
)
from zoo.text.subword import END, PAD, START


def _corpus(n):
    words = ["the", "dog", "sees", "a", "cat", "big"]
    rng = np.random.default_rng(0)
    sources, targets = [], []
    for i in range(n):
        length = 1 + i % 5
        sources.append(" ".join(rng.choice(words, length)) + " .")
        targets.append(" ".join(["der"] * (1 + (i * 7) % 6)) + " .")
    return types.SimpleNamespace(sources=sources, targets=targets)


def test_batches_shift_the_target_and_group_lengths(preprocessor):
    corpus = _corpus(40)
    ds = translation_dataset(corpus, preprocessor, batch_size=8)
    seen = 0
    for inputs, labels in ds:
        source = inputs["source_ids"].numpy()
        decoder_input = inputs["target_ids"].numpy()
        labels = labels.numpy()
        assert source.dtype == decoder_input.dtype == labels.dtype == np.int32
        assert decoder_input.shape == labels.shape and len(source) == len(labels) <= 8
        assert np.all(decoder_input[:, 0] == START)
        # labels are the decoder input shifted by one, ending with [END]
        for row_in, row_out in zip(decoder_input, labels, strict=True):
            n = int((row_out != PAD).sum())
            assert row_out[n - 1] == END
            np.testing.assert_array_equal(row_in[1:n], row_out[: n - 1])
        # one bucket per batch: key = max(source, target) length, padded to the
        # longest pair of the batch only
        keys = np.maximum((source != PAD).sum(1), (labels != PAD).sum(1))
        assert source.shape[1] == (source != PAD).sum(1).max()
        buckets = np.searchsorted(BUCKETS, keys, side="right")
        assert len(set(buckets.tolist())) == 1
        seen += len(labels)
    assert seen == 40


def test_shuffle_is_seeded_and_count_target_tokens(preprocessor):
    corpus = _corpus(30)

    def first_labels(seed):
        ds = translation_dataset(corpus, preprocessor, 4, shuffle=True, seed=seed)
        return [labels.numpy().tolist() for _, labels in ds.take(3)]

    assert first_labels(1) == first_labels(1)
    assert first_labels(1) != first_labels(2)
    ds = translation_dataset(corpus, preprocessor, batch_size=4)
    tokens, batches = count_target_tokens(ds)
    # labels: the subwords (cut to max_length - 1 = 5 to leave room for the
    # markers) and [END]
    expected = sum(min(len(t.split()), 5) + 1 for t in corpus.targets)
    assert tokens == expected
    assert batches == sum(1 for _ in ds) >= 30 // 4


def test_load_translation_splits_samples_each_split_with_its_limit():
    from zoo.models.translation.translation_dataset import load_translation_splits

    lines = []
    splits = load_translation_splits(
        None, ("src", "tgt"), 0, demo_size=200, limits=(50, 5), log=lines.append
    )
    assert {name: len(c) for name, c in splits.items()} == {
        "train": 50,
        "val": 5,
        "test": 5,
    }
    assert [line.split("]")[0] for line in lines] == ["[train", "[val", "[test"]
    again = load_translation_splits(None, ("src", "tgt"), 0, demo_size=200, log=None)
    assert len(again["train"]) > 150  # no limit: all of the 90% split
    assert set(splits["train"].sources) <= set(again["train"].sources)
