"""bench.long_pairs: longer pairs joined from short ones, split by source sentence."""

import pytest


def _pairs():
    # 40 source sentences, the first five with a second translation each.
    sources = [f"s{i} a b" for i in range(40)] + [f"s{i} a b" for i in range(5)]
    targets = [f"t{i} x" for i in range(40)] + [f"u{i} x" for i in range(5)]
    return sources, targets


def test_splits_share_no_source_sentence_and_join_k_pairs():
    from bench.long_pairs import join_pairs

    sources, targets = _pairs()
    splits = join_pairs(sources, targets, join=3, val=2, test=3, seed=7)
    assert [len(splits[s][0]) for s in ("valid", "test")] == [2, 3]
    pieces = {}
    for split, (src, tgt) in splits.items():
        assert len(src) == len(tgt)
        for joined_src, joined_tgt in zip(src, tgt, strict=True):
            words = joined_src.split()
            assert len(words) == 9  # three "sN a b" sentences
            heads = [w for w in words if w.startswith("s")]
            # Each joined target holds the translations of the same three sources.
            assert [w[1:] for w in joined_tgt.split() if w != "x"] == [
                h[1:] for h in heads
            ]
            pieces.setdefault(split, set()).update(heads)
    assert not pieces["train"] & pieces["test"]
    assert not pieces["train"] & pieces["valid"]
    assert not pieces["valid"] & pieces["test"]
    # A split is deterministic under its seed.
    assert join_pairs(sources, targets, 3, 2, 3, seed=7) == splits


def test_too_few_pairs_is_an_error_naming_the_counts():
    from bench.long_pairs import join_pairs
    from zoo.errors import ConfigError

    sources, targets = _pairs()
    with pytest.raises(ConfigError, match="45 pairs are too few for 10 validation"):
        join_pairs(sources, targets, join=3, val=10, test=10)


def test_writes_a_folder_the_recipe_reads_and_never_overwrites(tmp_path, capsys):
    from bench.long_pairs import main
    from zoo.data.parallel import load_parallel
    from zoo.errors import ConfigError

    sources, targets = _pairs()
    tsv = tmp_path / "pairs.txt"
    tsv.write_text(
        "".join(
            f"{s}\t{t}\tattribution\n" for s, t in zip(sources, targets, strict=True)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "long"
    argv = ["--tsv", str(tsv), "--source", "en", "--target", "es", "--join", "3"]
    argv += ["--val", "2", "--test", "2", "--out", str(out)]
    main(argv)
    assert "test: 2 pairs; en words: mean 9.0" in capsys.readouterr().out
    splits = load_parallel(str(out), "en", "es")
    assert len(splits["test"].sources) == 2
    assert len(splits["val"].sources) == 2
    assert splits["train"].targets[0].count(" x") == 3
    with pytest.raises(ConfigError, match=r"train\.en exists"):
        main(argv)
