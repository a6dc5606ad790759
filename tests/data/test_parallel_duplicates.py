"""Held-out splits made from training pairs are split by unique source sentence: no
held-out sentence is trained on, repeats are dropped from the held-out splits and
counted."""

import random

from zoo.data.parallel import ParallelCorpus, load_parallel, split_corpus


def _tripled_tsv(path, n=2000):
    """An Anki-style TSV (`english<TAB>spanish`) of `n` pairs, each three times."""
    lines = [f"sentence {i} here\tfrase {i} aqui\n" for i in range(n)] * 3
    random.Random(0).shuffle(lines)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_tripled_pairs_never_reach_the_test_split_from_training(tmp_path):
    splits = load_parallel(_tripled_tsv(tmp_path / "spa.txt"), "en", "es")
    train, val, test = (splits[k] for k in ("train", "val", "test"))
    assert (len(val), len(test)) == (40, 40)  # 2% of the 2,000 distinct sentences
    assert len(train) == 6000 - 3 * 80
    assert not set(test.sources) & set(train.sources)
    assert not set(val.sources) & set(train.sources)
    assert not set(val.sources) & set(test.sources)
    assert len(set(test.sources)) == len(test)  # each held-out sentence once
    assert (val.duplicates_dropped, test.duplicates_dropped) == (80, 80)
    assert train.report.held_out_duplicates == 160
    assert "80 pairs repeating its source sentences dropped" in test.description
    assert "by unique source sentence" in test.description
    assert "160 pairs repeating a held-out source sentence dropped" in str(train.report)


def test_other_translations_of_a_held_out_sentence_leave_training():
    sources = ["hello", "hello ", "bye", "thanks", "yes", "no"] * 5
    targets = [f"t{i}" for i in range(len(sources))]
    corpus = ParallelCorpus(sources, targets)
    train, test = split_corpus(corpus, (0.2,), seed=3)
    held = {" ".join(s.split()) for s in test.sources}
    assert len(test) == 1 and test.duplicates_dropped == 9
    assert not held & {" ".join(s.split()) for s in train.sources}
    assert len(train) == len(corpus) - 10


def test_without_repeats_the_split_is_the_seeded_permutation():
    corpus = ParallelCorpus(
        [f"s{i}" for i in range(500)], [f"t{i}" for i in range(500)]
    )
    parts = split_corpus(corpus, (0.1, 0.1), seed=7)
    order = list(range(500))
    random.Random(7).shuffle(order)
    assert parts[1].sources == [corpus.sources[i] for i in sorted(order[:50])]
    assert parts[2].sources == [corpus.sources[i] for i in sorted(order[50:100])]
    assert [p.duplicates_dropped for p in parts] == [0, 0, 0]
    assert corpus.report.held_out_duplicates == 0
