"""bAbI question answering (Weston et al. 2015): the reader, any language.

bAbI files hold numbered lines, the numbering restarting at 1 with every story: a
statement is `ID text`, a question `ID question<TAB>answer<TAB>supporting ids`. Every
question is one `BabiExample` whose memory is the most recent `memory_size` (50)
statements before it, as in the MemN2N paper. Word ids and batches are the model's
(`zoo.models.memn2n.babi_arrays`).

```python
folder = find_folder("../shared/data/babi", size="1k", language="en")
tasks = load_babi(folder, tasks=[1, 2])
```
"""

import dataclasses
import os
import pathlib
import random
import re

from zoo.data.files import check_exists, iter_lines
from zoo.errors import ConfigError, DataError
from zoo.text.babi_example import BabiExample

TASK_NAMES = """single-supporting-fact two-supporting-facts three-supporting-facts
two-arg-relations three-arg-relations yes-no-questions counting lists-sets
simple-negation indefinite-knowledge basic-coreference conjunction compound-coreference
time-reasoning basic-deduction basic-induction positional-reasoning size-reasoning
path-finding agents-motivations"""
TASK_NAMES = dict(enumerate(TASK_NAMES.split(), start=1))
"""The 20 bAbI tasks, by number."""

_LINE = re.compile(r"^\s*(\d+) (.*)$")
# The folders of the bAbI release: en, hn, shuffled (and en-valid), 1k or -10k.
_RELEASE_FOLDER = re.compile(
    r"^(?P<language>(?:en|hn|shuffled)(?:-valid)?)(?P<k>-10k)?$"
)


class TaskUnavailableError(DataError, FileNotFoundError):
    """A bAbI task file is missing (e.g. task 3 train of the 10k set)."""


@dataclasses.dataclass
class BabiTask:
    """The examples of one task: `train`, `valid` (split from train) and `test`;
    without a training file `train` and `valid` are None and `missing` says why."""

    task: int
    name: str
    train: list = None
    valid: list = None
    test: list = None
    missing: str = None

    def training_examples(self):
        """The examples a model may learn from or be chosen on (train, valid): the
        vocabulary and the sentence length come from these only."""
        return (self.train or []) + (self.valid or [])


@dataclasses.dataclass(frozen=True)
class BabiFolder:
    """The folder of `qa*_train.txt` / `qa*_test.txt` files found, with its bAbI
    `language` (`"en"`, `"hn"`, ...) and `size` (`"1k"`, `"10k"`): the subfolder
    asked for, or what a release folder's name says (None for any other name)."""

    path: str
    language: str = None
    size: str = None

    def describe(self):
        """`"bAbI hn 1k (path)"`, or `"bAbI-format tasks (path)"` when unnamed."""
        if self.language is None:
            return f"bAbI-format tasks ({self.path})"
        return f"bAbI {self.language} {self.size} ({self.path})"

    def to_dict(self):
        """`{"folder", "language", "size"}` (JSON-able)."""
        return {"folder": self.path, "language": self.language, "size": self.size}


def parse_babi(lines, source="<string>", task=0, memory_size=50):
    """The `BabiExample`s of bAbI-format `lines` (with or without line ends), in
    order, each of `task` with the `memory_size` most recent statements.

    Raises:
        DataError: naming `source` (the file) and the line of a malformed line: no
            leading id, an id that neither continues nor restarts the story, a
            question without answer or with bad supporting ids.
    """
    if not isinstance(memory_size, int) or memory_size <= 0:
        raise ConfigError(
            f"`memory_size` must be a positive int. Received: memory_size={memory_size!r}"
        )

    def fail(message):  # the error of the line being read
        return DataError(message, path=source, line=lineno)

    examples, statements, index_of, previous = [], [], {}, 0  # index_of: id -> index
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]  # utf-8-sig
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            raise fail(
                "a bAbI line must start with a number and a space. "
                f"Received: {line[:80]!r}"
            )
        line_id, text = int(match.group(1)), match.group(2)
        if line_id == 1:
            statements, index_of = [], {}
        elif line_id != previous + 1:
            raise fail(
                f"line ids must restart at 1 or follow {previous}. Received: id={line_id}"
            )
        previous = line_id
        if "\t" not in text:
            index_of[line_id] = len(statements)
            statements.append(text.strip())
            continue
        fields = [f.strip() for f in text.split("\t")] + [""]
        if not fields[0] or not fields[1]:
            raise fail(
                "a question line needs 'question<TAB>answer<TAB>supporting ids'. "
                f"Received: {line[:80]!r}"
            )
        try:
            support_ids = [int(s) for s in fields[2].split()]
        except ValueError:
            raise fail(
                f"supporting ids must be integers. Received: {fields[2]!r}"
            ) from None
        start = max(0, len(statements) - memory_size)
        for sid in support_ids:
            if sid not in index_of:
                raise fail(f"supporting id {sid} is not a statement of this story.")
        supporting = [index_of[s] - start for s in support_ids if index_of[s] >= start]
        example = BabiExample(
            story=tuple(statements[start:]),
            question=fields[0],
            answer=fields[1].lower(),
            supporting=tuple(supporting),
            task=task,
            source=f"{source}:{lineno}",
        )
        examples.append(example)
    return examples


def read_babi_file(path, task=0, memory_size=50):
    """`parse_babi` of a UTF-8 file (optional byte-order mark); a missing file is a
    `MissingPathError`, invalid UTF-8 a `DataError` with file and line."""
    path = check_exists(path, "bAbI file")
    lines = (text for _, text in iter_lines(path))  # every line, blank ones too
    return parse_babi(lines, source=path, task=task, memory_size=memory_size)


def read_example_stories(path, memory_size=50, limit=4, flag="--warmup-stories"):
    """The first `limit` questions (`BabiExample`s) of the bAbI-format file `path`,
    e.g. for an export's warm-up requests.

    Raises:
        ConfigError: `path` is no file (the message names `flag`).
        DataError: the file holds no question, or a malformed line (file and line).
    """
    if not os.path.isfile(path):
        raise ConfigError(f"{flag}: no such file: {path}")
    examples = read_babi_file(path, memory_size=memory_size)
    if not examples:
        raise DataError("no question in the file", path=path)
    return examples[:limit]


def parse_tasks(text):
    """`"1-3,7"` -> `(1, 2, 3, 7)`; a ValueError names what is wrong."""
    tasks = []
    try:
        for part in filter(None, (p.strip() for p in str(text).split(","))):
            lo, _, hi = part.partition("-")
            tasks.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise ValueError("takes e.g. 1-20 or 1,2,5") from None
    if not tasks or not all(1 <= t <= 20 for t in tasks):
        raise ValueError("bAbI tasks are 1..20")
    return tuple(dict.fromkeys(tasks))


def find_folder(data, size="1k", language="en"):
    """The `BabiFolder` of `data`: a bAbI root holding `en/`, `en-10k/`, `hn/`, ...
    (`language` and `size` pick one), or the folder of task files itself.

    Raises:
        ConfigError: a bad `size`. MissingPathError: `data` does not exist.
        TaskUnavailableError: no bAbI files in it.
    """
    if size not in ("1k", "10k"):
        raise ConfigError(f"`size` must be '1k' or '10k'. Received: size={size!r}")
    root = pathlib.Path(check_exists(data, "bAbI folder"))
    sub = root / (language if size == "1k" else f"{language}-10k")
    if sub.is_dir():
        return BabiFolder(os.fspath(sub), language, size)
    if root.is_dir() and any(root.glob("qa*_test.txt")):
        if (named := _RELEASE_FOLDER.match(root.resolve().name)) is None:
            return BabiFolder(os.fspath(root))
        size = "10k" if named["k"] else "1k"
        return BabiFolder(os.fspath(root), named["language"], size)
    raise TaskUnavailableError(
        f"no bAbI files (looked for qa*_test.txt and {sub.name}/). "
        f"Received: data={os.fspath(data)!r}, size={size!r}, language={language!r}",
        path=os.fspath(root),
    )


def find_task_file(directory, task, split):
    """The path of `qa{task}_*_{split}.txt` in `directory`, or None."""
    matches = sorted(pathlib.Path(directory).glob(f"qa{task}_*_{split}.txt"))
    matches = matches or sorted(pathlib.Path(directory).glob(f"qa{task}_{split}.txt"))
    return matches[0] if matches else None


def split_validation(examples, fraction=0.1, seed=0):
    """`(train, valid)`: a seeded `fraction` of the examples as validation."""
    if not 0.0 <= fraction < 1.0:
        raise ConfigError(
            f"`fraction` must be in [0, 1). Received: fraction={fraction!r}"
        )
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    n_valid = int(round(len(examples) * fraction))
    valid, train = sorted(order[:n_valid]), sorted(order[n_valid:])
    return [examples[i] for i in train], [examples[i] for i in valid]


def load_babi(
    data,
    tasks=None,
    size="1k",
    language="en",
    memory_size=50,
    validation_fraction=0.1,
    seed=0,
):
    """`{task: BabiTask}` of `tasks` (default: all 20) in `data` (a `BabiFolder`,
    or a path for `find_folder` with `size` and `language`): the test file, the
    training file less a seeded `validation_fraction`, `memory_size` statements per
    example. A missing training file is noted in `BabiTask.missing`; a missing test
    file is a `TaskUnavailableError`, a bad task number a `ConfigError`.
    """
    if not isinstance(data, BabiFolder):
        data = find_folder(data, size, language)
    directory, tasks = data.path, list(TASK_NAMES if tasks is None else tasks)
    if bad := [task for task in tasks if task not in TASK_NAMES]:
        raise ConfigError(f"bAbI tasks are 1..20. Received: task={bad[0]!r}")
    result = {}
    for task in tasks:
        entry = result[task] = BabiTask(task=task, name=TASK_NAMES[task])
        test_path = find_task_file(directory, task, "test")
        if test_path is None:
            raise TaskUnavailableError(
                f"bAbI task {task} has no test file in {directory}."
            )
        entry.test = read_babi_file(test_path, task, memory_size)
        train_path = find_task_file(directory, task, "train")
        if train_path is None:
            entry.missing = f"no qa{task}_*_train.txt in {directory}"
        else:
            examples = read_babi_file(train_path, task, memory_size)
            entry.train, entry.valid = split_validation(
                examples, validation_fraction, seed + task
            )
    return result
