import numpy as np
import pytest
import tensorflow as tf

from zoo.errors import DataError, MissingPathError
from zoo.text.subword import (
    END,
    PAD,
    RESERVED_TOKENS,
    START,
    SubwordTokenizer,
    learn_subword_vocabulary,
    load_vocabulary,
    save_vocabulary,
)

TEXTS = [
    "A man rides a horse.",
    "Two dogs run on the grass, happily!",
    "The horses and the riders are running.",
    "A woman (smiling) rides a bike.",
] * 20


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    tokens = learn_subword_vocabulary(TEXTS, vocab_size=120)
    path = save_vocabulary(tokens, str(tmp_path_factory.mktemp("v") / "vocab.txt"))
    return SubwordTokenizer(path)


def test_reserved_ids_and_asset(tokenizer):
    tokens = load_vocabulary(tokenizer.vocab_asset.asset_path.numpy().decode())
    assert tokens[:4] == RESERVED_TOKENS
    assert (PAD, START, END) == (0, 2, 3)
    assert tokenizer.vocab_size == len(tokens) <= 120


def test_round_trip(tokenizer):
    texts = [
        "A man rides a horse.",
        "Two dogs run on the grass, happily!",
        "A woman (smiling) rides a bike.",
    ]
    ids = tokenizer.tokenize(tf.constant(texts))
    assert isinstance(ids, tf.RaggedTensor)
    assert ids.dtype == tf.int64
    back = tokenizer.detokenize(ids).numpy().tolist()
    assert [b.decode() for b in back] == texts


def test_subword_pieces_for_unseen_words(tokenizer):
    ids = tokenizer.tokenize(tf.constant(["riders horses"]))
    pieces = tokenizer.ids_to_tokens(ids).to_list()[0]
    assert len(pieces) >= 2
    assert tokenizer.detokenize(ids).numpy()[0] == b"riders horses"


def test_encode_markers_truncation_and_padding(tokenizer):
    ids = tokenizer.encode(
        tf.constant(["A man rides a horse.", ""]), 5, add_start=True, add_end=True
    ).numpy()
    assert ids.shape == (2, 5)
    assert ids[0, 0] == START and ids[0, -1] == END  # truncated, end kept
    np.testing.assert_array_equal(ids[1], [START, END, 0, 0, 0])
    text = tokenizer.detokenize(tf.constant(ids)).numpy()
    assert text[0] == b"A man rides" and text[1] == b""


def test_detokenize_stops_at_end(tokenizer):
    ids = tokenizer.encode(tf.constant(["A man"]), 6, add_start=True).numpy()
    ids[0, 2] = END
    assert tokenizer.detokenize(tf.constant(ids)).numpy()[0] == b"A"


def test_bad_input_bytes(tokenizer):
    text = tf.constant([b"caf\xe9 \xff", b"x" * 100_000, b"   "])
    ids = tokenizer.encode(text, 8, add_start=True, add_end=True).numpy()
    assert ids.shape == (3, 8)
    np.testing.assert_array_equal(ids[2], [START, END, 0, 0, 0, 0, 0, 0])


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="Received: vocab_size=3"):
        learn_subword_vocabulary(TEXTS, vocab_size=3)
    bad = tmp_path / "bad.txt"
    bad.write_text("a\nb\n")
    with pytest.raises(ValueError, match=f"{bad}:1"):
        load_vocabulary(str(bad))


def test_nul_does_not_drop_the_rest_of_the_text(tokenizer):
    with_nul = tokenizer.tokenize(tf.constant(["A man\x00rides a horse."]))
    with_space = tokenizer.tokenize(tf.constant(["A man rides a horse."]))
    assert with_nul.to_list() == with_space.to_list()
    assert len(with_space.to_list()[0]) >= 5


def test_load_vocabulary_byte_order_mark_and_errors(tmp_path):
    path = tmp_path / "v.txt"
    path.write_bytes(
        ("\ufeff" + "\n".join(RESERVED_TOKENS + ["a", "b"]) + "\n").encode()
    )
    assert load_vocabulary(path) == RESERVED_TOKENS + ["a", "b"]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"[PAD]\n[UNK]\n[START]\n[END]\n\xff\n")
    with pytest.raises(DataError, match=rf"{bad}:5: invalid UTF-8"):
        load_vocabulary(bad)
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("a\nb\n")
    with pytest.raises(DataError, match=rf"{wrong}:1: a vocabulary must start with"):
        load_vocabulary(wrong)
    with pytest.raises(MissingPathError):
        load_vocabulary(tmp_path / "none.txt")
