import numpy as np
import pytest
import tensorflow as tf

from zoo.data import babi
from zoo.errors import DataError, MissingPathError
from zoo.text.vocabulary import VocabularyLookup

SAMPLE = """1 Mary moved to the bathroom.
2 John went to the hallway.
3 Where is Mary? \tbathroom\t1
4 Daniel went back to the hallway.
5 Where is Daniel? \thallway\t4
1 Sandra travelled to the office.
2 Where is Sandra? \toffice\t1
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reader_parses_stories_with_restarting_ids(tmp_path):
    path = write(tmp_path, "qa1_single-supporting-fact_train.txt", SAMPLE)
    examples = babi.read_babi_file(path, task=1)
    assert [ex.question for ex in examples] == [
        "Where is Mary?",
        "Where is Daniel?",
        "Where is Sandra?",
    ]
    assert [ex.answer for ex in examples] == ["bathroom", "hallway", "office"]
    # Questions are not memories; the second story starts empty.
    assert examples[1].story == (
        "Mary moved to the bathroom.",
        "John went to the hallway.",
        "Daniel went back to the hallway.",
    )
    assert examples[1].supporting == (2,)
    assert examples[2].story == ("Sandra travelled to the office.",)
    assert examples[2].supporting == (0,)
    assert examples[2].source == f"{path}:7"
    assert all(ex.task == 1 for ex in examples)


@pytest.mark.parametrize(
    "text, line, match",
    [
        ("1 Mary moved.\nMary went.\n", 2, "must start with a number"),
        ("1 Mary moved.\n3 John went.\n", 2, "restart at 1 or follow 1"),
        ("1 Mary moved.\n2 Where is Mary?\t\t1\n", 2, "question<TAB>answer"),
        ("1 Mary moved.\n2 Where is Mary?\tkitchen\tx\n", 2, "must be integers"),
        ("1 Mary moved.\n2 Where is Mary?\tkitchen\t7\n", 2, "supporting id 7"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, text, line, match):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match=match) as info:
        babi.read_babi_file(path)
    assert f"{path}:{line}:" in str(info.value)


def test_memory_keeps_the_most_recent_50_statements():
    lines = [f"{i} Mary moved to room{i}." for i in range(1, 61)]
    lines.append("61 Where is Mary? \troom60\t60 3")
    (example,) = babi.parse_babi(lines, memory_size=50)
    assert len(example.story) == 50
    assert example.story[0] == "Mary moved to room11."
    assert example.story[-1] == "Mary moved to room60."
    assert example.supporting == (49,)  # fact 3 fell out of the memory window
    (small,) = babi.parse_babi(lines, memory_size=5)
    assert small.story[0] == "Mary moved to room56."


def test_missing_train_file_is_reported_not_fatal(tmp_path):
    write(tmp_path, "qa1_single-supporting-fact_test.txt", SAMPLE)
    write(tmp_path, "qa2_two-supporting-facts_train.txt", SAMPLE * 4)
    write(tmp_path, "qa2_two-supporting-facts_test.txt", SAMPLE)
    tasks = babi.load_babi(tmp_path, tasks=[1, 2], validation_fraction=0.25)
    assert tasks[1].train is None and "qa1_*_train.txt" in tasks[1].missing
    assert len(tasks[1].test) == 3
    assert len(tasks[2].train) == 9 and len(tasks[2].valid) == 3
    with pytest.raises(babi.TaskUnavailableError, match="task 3"):
        babi.load_babi(tmp_path, tasks=[3])
    with pytest.raises(ValueError, match="task=21"):
        babi.load_babi(tmp_path, tasks=[21])
    with pytest.raises(ValueError, match="size='2k'"):
        babi.load_babi(tmp_path, size="2k")


def test_missing_folder_and_folder_without_babi_files(tmp_path):
    with pytest.raises(MissingPathError, match=r"nope: no such bAbI folder"):
        babi.load_babi(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(babi.TaskUnavailableError) as info:
        babi.load_babi(tmp_path / "empty")
    assert str(info.value).startswith(f"{tmp_path / 'empty'}: no bAbI files")
    assert isinstance(info.value, DataError)
    with pytest.raises(MissingPathError, match="no such bAbI file"):
        babi.read_babi_file(tmp_path / "qa1_x_train.txt")


def test_byte_order_mark_and_invalid_utf8_name_the_line(tmp_path):
    path = tmp_path / "qa1_bom_train.txt"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.encode())
    examples = babi.read_babi_file(path)
    assert examples[0].story[0] == "Mary moved to the bathroom."
    # parse_babi strips the mark too, for lines read by other means.
    lines = ("\ufeff" + SAMPLE).splitlines()
    assert babi.parse_babi(lines)[0].story == examples[0].story
    path.write_bytes(SAMPLE.encode().replace(b"hallway.\n3", b"hallway \xe9.\n3"))
    with pytest.raises(DataError, match=rf"^{path}:2: invalid UTF-8"):
        babi.read_babi_file(path)


def test_validation_split_is_seeded_and_disjoint():
    items = list(range(100))
    train, valid = babi.split_validation(items, 0.1, seed=3)
    assert len(valid) == 10 and sorted(train + valid) == items
    assert babi.split_validation(items, 0.1, seed=3) == (train, valid)


def test_demo_sample_is_seeded_and_consistent():
    lines = babi.generate_demo_lines(20, seed=5)
    assert lines == babi.generate_demo_lines(20, seed=5)
    examples = babi.parse_babi(lines)
    for ex in examples:
        (support,) = ex.supporting
        person = ex.question.split()[-1].rstrip("?")
        assert ex.story[support].startswith(person)
        assert ex.story[support].rstrip(".").endswith(ex.answer)
    tasks = babi.load_demo(num_stories=30, test_stories=10)
    demo = tasks[babi.DEMO_TASK]
    assert len(demo.train) > len(demo.valid) > 0 and len(demo.test) > 0


@pytest.fixture
def vocab_and_lookup(tmp_path):
    examples = babi.parse_babi(SAMPLE.splitlines())
    vocab = babi.build_vocabulary(examples)
    path = vocab.save(tmp_path / "vocab.txt")
    return examples, vocab, VocabularyLookup(path)


def test_vectorize_matches_the_serving_encoder(vocab_and_lookup):
    examples, vocab, lookup = vocab_and_lookup
    assert "mary" in vocab and "bathroom" in vocab and "." not in vocab
    arrays = babi.vectorize(examples, vocab, memory_size=4, sentence_length=5)
    stories = babi.dense_stories(arrays)
    assert stories.shape == (3, 4, 5)
    # Slot 0 holds the most recent statement.
    np.testing.assert_array_equal(
        stories[1, 0, :5], vocab.encode(["daniel", "went", "back", "to", "the"])
    )
    story_ids, question_ids = babi.encode_inputs(
        ["\n".join(ex.story) for ex in examples],
        [ex.question for ex in examples],
        lookup,
        4,
        5,
    )
    np.testing.assert_array_equal(story_ids.numpy(), stories)
    np.testing.assert_array_equal(question_ids.numpy(), arrays["question"])
    assert list(arrays["answer"]) == vocab.encode(["bathroom", "hallway", "office"])


def test_serving_encoder_bad_inputs(vocab_and_lookup):
    _, vocab, lookup = vocab_and_lookup
    long_story = "\n".join(f"Mary moved to the hallway{i}." for i in range(30))
    long_story += "\nJohn went to the office."
    story_ids, question_ids, sentences = babi.encode_inputs(
        ["", "  \n\n ", "Zork frobbed the bathroom!", long_story],
        ["Where is Mary?", "", "Where is Zork?", "where IS john"],
        lookup,
        3,
        4,
        return_sentences=True,
    )
    story_ids, question_ids = story_ids.numpy(), question_ids.numpy()
    np.testing.assert_array_equal(story_ids[0], 0)  # empty story
    np.testing.assert_array_equal(story_ids[1], 0)  # whitespace only
    np.testing.assert_array_equal(question_ids[1], 0)  # empty question
    unk = 1
    assert list(story_ids[2, 0]) == [
        unk,
        unk,
        vocab.token_to_id("the"),
        vocab.token_to_id("bathroom"),
    ]
    assert question_ids[2, 2] == unk
    # A story longer than the memory keeps its most recent sentences.
    assert sentences.numpy()[3].tolist() == [
        b"john went to the office",
        b"mary moved to the hallway29",
        b"mary moved to the hallway28",
    ]
    assert list(question_ids[3]) == vocab.encode(["where", "is", "john"]) + [0]
    empty = babi.encode_inputs(
        tf.zeros([0], tf.string), tf.zeros([0], tf.string), lookup, 3, 4
    )
    assert empty[0].shape == (0, 3, 4) and empty[1].shape == (0, 4)


def test_serving_encoder_cuts_huge_stories_from_the_end(vocab_and_lookup):
    _, _, lookup = vocab_and_lookup
    story = "x" * (babi.MAX_STORY_BYTES + 1000) + "\nMary moved to the bathroom."
    _, _, sentences = babi.encode_inputs(
        [story], ["where is mary"], lookup, 2, 4, return_sentences=True
    )
    assert sentences.numpy()[0].tolist() == [b"mary moved to the bathroom", b""]


def test_random_empty_memories_shift_but_keep_order():
    memory = np.tile(np.arange(1, 21, dtype=np.int32), (64, 1))
    np.testing.assert_array_equal(babi.random_empty_memories(memory, 0.0), memory)
    noisy = babi.random_empty_memories(memory, 0.1, seed=(1, 2)).numpy()
    assert noisy.shape == memory.shape
    for row in noisy:
        kept = row[row > 0]
        np.testing.assert_array_equal(kept, np.arange(1, len(kept) + 1))
    share_empty = np.mean(noisy == 0)
    assert 0.03 < share_empty < 0.2


def test_make_dataset_fixed_shapes(vocab_and_lookup):
    examples, vocab, _ = vocab_and_lookup
    arrays = babi.vectorize(examples * 10, vocab, memory_size=4, sentence_length=5)
    ds = babi.make_dataset(arrays, batch_size=8, shuffle=True, noise_rate=0.1)
    x, y = next(iter(ds))
    assert x["story"].shape == (8, 4, 5) and x["question"].shape == (8, 5)
    assert x["story"].dtype == tf.int32 and y.shape == (8,)
    plain = babi.make_dataset(arrays, batch_size=30)
    x, y = next(iter(plain))
    np.testing.assert_array_equal(x["story"].numpy(), babi.dense_stories(arrays))
    np.testing.assert_array_equal(y.numpy(), arrays["answer"])


def test_real_task_1(shared_data):
    tasks = babi.load_babi(shared_data / "babi", tasks=[1], size="1k")
    task = tasks[1]
    assert (len(task.train), len(task.valid), len(task.test)) == (900, 100, 1000)
    (first,) = babi.read_babi_file(
        next((shared_data / "babi" / "en").glob("qa1_*_train.txt")), task=1
    )[:1]
    assert first.story == ("Mary moved to the bathroom.", "John went to the hallway.")
    assert (first.question, first.answer, first.supporting) == (
        "Where is Mary?",
        "bathroom",
        (0,),
    )
    assert max(len(ex.story) for ex in task.all_examples()) <= 50


def test_real_10k_task_3_is_na(shared_data):
    tasks = babi.load_babi(shared_data / "babi", tasks=[3], size="10k")
    assert tasks[3].train is None and tasks[3].missing
    assert len(tasks[3].test) == 1000


def test_random_noise_is_seeded_and_changes_every_epoch():
    sentences = np.arange(60 * 3, dtype="int32").reshape(60, 3)
    sentences[0] = 0  # sentence 0 is the empty one
    arrays = {
        "sentences": sentences,
        "memory": np.tile(np.arange(1, 11, dtype="int32"), (40, 1)),
        "question": np.ones((40, 3), "int32"),
        "answer": np.arange(40, dtype="int32"),
    }

    def epochs(ds, n=2):
        return [np.concatenate([x["story"].numpy() for x, _ in ds]) for _ in range(n)]

    first = epochs(babi.make_dataset(arrays, 8, shuffle=True, seed=3, noise_rate=0.3))
    tf.random.uniform([5])  # other random ops in between must not matter
    again = epochs(babi.make_dataset(arrays, 8, shuffle=True, seed=3, noise_rate=0.3))
    other = epochs(babi.make_dataset(arrays, 8, shuffle=True, seed=4, noise_rate=0.3))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # new noise (and order) each epoch
    assert not np.array_equal(first[0], other[0])
    # some memories were shifted by inserted empty slots
    assert (first[0][:, 0, :] == 0).all(axis=-1).any()
