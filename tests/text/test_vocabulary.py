import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from zoo.errors import DataError, MissingPathError
from zoo.text.vocabulary import Vocabulary, VocabularyLookup


def test_build_counts_ties_and_limits():
    vocab = Vocabulary.build(
        [["b", "a", "a", ""], [b"c", "b", "a", "[UNK]"], ["d"]], max_size=5, min_count=1
    )
    assert vocab.tokens == ["[PAD]", "[UNK]", "a", "b", "c"]
    assert len(vocab) == 5
    assert vocab.encode(["a", "zzz", ""]) == [2, 1, 0]
    assert vocab.decode([4, 99]) == ["c", "[UNK]"]
    assert Vocabulary.build([["x", "y", "y"]], min_count=2).tokens == [
        "[PAD]",
        "[UNK]",
        "y",
    ]


def test_save_load_round_trip(tmp_path):
    vocab = Vocabulary.build([["héllo", "wörld", "héllo"]])
    path = vocab.save(tmp_path / "v" / "vocab.txt")
    assert open(path, encoding="utf-8").read() == "[PAD]\n[UNK]\nhéllo\nwörld\n"
    assert Vocabulary.load(path) == vocab


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty"),
        (b"[UNK]\n[PAD]\n", ":1: expected the reserved token"),
        (b"[PAD]\n[UNK]\na\n\nb\n", ":4: Tokens must not be empty"),
        (b"[PAD]\n[UNK]\na\nb\na\n", ":5: duplicate token 'a'"),
        (b"[PAD]\n[UNK]\n\xff\n", ":3: invalid UTF-8"),
    ],
)
def test_load_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as info:
        Vocabulary.load(path)
    assert str(path) in str(info.value)


def test_bad_build_arguments():
    with pytest.raises(ValueError, match="max_size=1"):
        Vocabulary.build([["a"]], max_size=1)
    with pytest.raises(ValueError, match="min_count=0"):
        Vocabulary.build([["a"]], min_count=0)


def test_lookup_and_inverse(tmp_path):
    path = Vocabulary(["[PAD]", "[UNK]", "good", "film"]).save(tmp_path / "vocab.txt")
    lookup = VocabularyLookup(path)
    ids = lookup(tf.constant([["good", ""], ["zzz", "film"]]))
    assert ids.dtype == tf.int64
    assert ids.numpy().tolist() == [[2, 0], [1, 3]]
    ragged = lookup(tf.ragged.constant([["film"], []]))
    assert ragged.to_list() == [[3], []]
    assert lookup.inverse(tf.constant([3, 2, 7])).numpy().tolist() == [
        b"film",
        b"good",
        b"[UNK]",
    ]
    assert lookup.size == 4


def test_lookups_made_after_freed_ones_read_their_own_file(tmp_path):
    # TensorFlow names a file-initialised table after its file argument (for an Asset,
    # the object's address) and reuses a table of the same name: once an earlier
    # lookup's Asset was freed and its address reused, a new lookup read the earlier
    # vocabulary and mapped every token to [UNK]. Run in a fresh process: there each
    # `gc.collect()` is quick (in a test worker's large heap the 50 rounds took about a
    # minute), and with the table names TensorFlow gives, a fifth to a third of the rounds
    # read an earlier vocabulary.
    code = textwrap.dedent(
        f"""
        import gc
        import tensorflow as tf
        from zoo.text.vocabulary import Vocabulary, VocabularyLookup
        wrong = []
        for i in range(50):
            path = Vocabulary(["[PAD]", "[UNK]", f"word{{i}}"]).save(
                {str(tmp_path)!r} + f"/v{{i}}.txt"
            )
            lookup = VocabularyLookup(path)
            got = lookup(tf.constant([f"word{{i}}"])).numpy().tolist()
            back = lookup.inverse(tf.constant([2])).numpy().tolist()
            if got != [2] or back != [f"word{{i}}".encode()]:
                wrong.append((i, got, back))
            del lookup
            gc.collect()
        print("rounds read another vocabulary:", wrong)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("another vocabulary: []"), result.stdout


def test_lookup_asset_survives_export_and_move(tmp_path):
    vocab_dir = tmp_path / "src"
    path = Vocabulary(["[PAD]", "[UNK]", "good", "film"]).save(vocab_dir / "vocab.txt")

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.lookup = VocabularyLookup(path)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def ids(self, tokens):
            return {"ids": self.lookup(tokens), "back": self.lookup.inverse([2, 3])}

    export_dir = tmp_path / "export"
    module = M()
    tf.saved_model.save(
        module, str(export_dir), signatures={"serving_default": module.ids}
    )
    assert sorted(os.listdir(export_dir / "assets")) == ["vocab.txt"]
    # Remove the source file and move the export: the table must read its asset.
    os.remove(path)
    moved = tmp_path / "moved"
    os.rename(export_dir, moved)
    code = textwrap.dedent(
        f"""
        import tensorflow as tf
        fn = tf.saved_model.load({str(moved)!r}).signatures["serving_default"]
        out = fn(tf.constant(["film", "nope", ""]))
        print(out["ids"].numpy().tolist(), out["back"].numpy().tolist())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("[3, 1, 0] [b'good', b'film']")


def test_load_names_byte_order_mark_and_bad_lines(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf[PAD]\n[UNK]\na\n")
    with pytest.raises(DataError, match=rf"{path}:1: .*byte-order mark"):
        Vocabulary.load(path)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"[PAD]\n[UNK]\na\n\xff\n")
    with pytest.raises(DataError, match=rf"{bad}:4: invalid UTF-8"):
        Vocabulary.load(bad)
    duplicate = tmp_path / "dup.txt"
    duplicate.write_text("[PAD]\n[UNK]\na\na\n")
    with pytest.raises(DataError, match=rf"{duplicate}:4: duplicate token 'a'"):
        Vocabulary.load(duplicate)
    with pytest.raises(MissingPathError, match="no such vocabulary file"):
        Vocabulary.load(tmp_path / "none.txt")
