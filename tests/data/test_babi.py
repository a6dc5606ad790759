import pytest

from zoo.data import babi
from zoo.errors import DataError, MissingPathError

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
    assert max(len(ex.story) for ex in task.train + task.valid + task.test) <= 50


def test_real_10k_task_3_is_na(shared_data):
    tasks = babi.load_babi(shared_data / "babi", tasks=[3], size="10k")
    assert tasks[3].train is None and tasks[3].missing
    assert len(tasks[3].test) == 1000


def test_the_folder_found_is_named_as_it_is(tmp_path):
    for folder in ("en", "hn-10k", "mine"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder, "qa1_single_test.txt", SAMPLE)
    found = babi.find_folder(tmp_path, "10k", "hn")  # a root: the subfolder asked
    assert (found.path, found.language, found.size) == (
        str(tmp_path / "hn-10k"),
        "hn",
        "10k",
    )
    assert found.describe() == f"bAbI hn 10k ({tmp_path / 'hn-10k'})"
    found = babi.find_folder(tmp_path / "en")  # the folder itself: its name says
    assert (found.language, found.size) == ("en", "1k")
    found = babi.find_folder(tmp_path / "hn-10k", size="1k", language="en")
    assert (found.language, found.size) == ("hn", "10k")  # as found, not as asked
    mine = babi.find_folder(tmp_path / "mine")  # any other name: not said
    assert (mine.language, mine.size) == (None, None)
    assert mine.describe() == f"bAbI-format tasks ({tmp_path / 'mine'})"
    assert mine.to_dict() == {"folder": str(tmp_path / "mine"), "language": None,
                              "size": None}  # fmt: skip
    tasks = babi.load_babi(mine, tasks=[1])
    assert tasks[1].train is None and len(tasks[1].test) == 3


def test_examples_are_the_model_family_type():
    # Word ids and batches are the model's (`zoo.models.memn2n.babi_arrays`).
    assert babi.BabiExample.__module__ == "zoo.text.babi_example"
    assert not hasattr(babi, "vectorize") and not hasattr(babi, "tokenize")


def test_example_stories_for_warmup_requests(tmp_path):
    from zoo.errors import ConfigError

    path = write(tmp_path, "w.txt", SAMPLE)
    examples = babi.read_example_stories(path, limit=2)
    assert [ex.question for ex in examples] == ["Where is Mary?", "Where is Daniel?"]
    assert examples[1].story[-1] == "Daniel went back to the hallway."
    with pytest.raises(ConfigError, match="^--warmup-stories: no such file: .*nope"):
        babi.read_example_stories(tmp_path / "nope")
    empty = write(tmp_path, "e.txt", "1 Mary moved to the bathroom.\n")
    with pytest.raises(DataError, match="e.txt: no question in the file"):
        babi.read_example_stories(empty)
    assert babi.parse_tasks("3,1-2") == (3, 1, 2)
