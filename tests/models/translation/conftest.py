"""An untrained tiny translator and a preprocessor over whole-word vocabularies."""

import pytest

from zoo.text.subword import RESERVED_TOKENS, save_vocabulary

SOURCE_WORDS = ["the", "dog", "sees", "a", "cat", "big", "."]
TARGET_WORDS = ["der", "hund", "sieht", "ein", "katze", "gross", "."]


@pytest.fixture
def vocabularies(tmp_path):
    """`(source, target)` vocabulary files: the reserved tokens and whole words."""
    return (
        save_vocabulary(RESERVED_TOKENS + SOURCE_WORDS, str(tmp_path / "src.txt")),
        save_vocabulary(RESERVED_TOKENS + TARGET_WORDS, str(tmp_path / "tgt.txt")),
    )


@pytest.fixture
def preprocessor(vocabularies):
    from zoo.models.translation import Seq2SeqTranslatorPreprocessor

    assets = dict(
        zip(Seq2SeqTranslatorPreprocessor.asset_names, vocabularies, strict=True)
    )
    return Seq2SeqTranslatorPreprocessor(max_length=6, assets=assets)


@pytest.fixture
def translator_model():
    from tests.models.translation.tiny import TINY
    from zoo.models.translation import Seq2SeqTranslator

    size = len(RESERVED_TOKENS) + len(SOURCE_WORDS)
    return Seq2SeqTranslator(size, size, **TINY)
