"""bAbI question answering: the reader and a generated demo sample.

The standard bAbI format (Weston et al. 2015) holds numbered lines; the numbering
restarts at 1 with every new story. A statement line is `ID text`; a question line is
`ID question<TAB>answer<TAB>supporting ids` (the ids of the statements that answer
it). Every question is one example (`zoo.models.memn2n.BabiExample`) whose memory is
the most recent `memory_size` (default 50) statements before it, as in the MemN2N
paper. Any language of the same format reads the same way.

Typical use:

```python
folder = find_folder("../shared/data/babi", size="1k", language="en")
tasks = load_babi(folder, tasks=[1, 2])
print(folder.describe(), len(tasks[1].train), len(tasks[1].test))
```

Word ids and batches are the model's: `zoo.models.memn2n.babi_arrays`.
"""

import dataclasses
import os
import pathlib
import random
import re

from zoo.data.files import check_exists, iter_lines
from zoo.errors import ConfigError, DataError
from zoo.text.babi_example import BabiExample

TASK_NAMES = {
    1: "single-supporting-fact",
    2: "two-supporting-facts",
    3: "three-supporting-facts",
    4: "two-arg-relations",
    5: "three-arg-relations",
    6: "yes-no-questions",
    7: "counting",
    8: "lists-sets",
    9: "simple-negation",
    10: "indefinite-knowledge",
    11: "basic-coreference",
    12: "conjunction",
    13: "compound-coreference",
    14: "time-reasoning",
    15: "basic-deduction",
    16: "basic-induction",
    17: "positional-reasoning",
    18: "size-reasoning",
    19: "path-finding",
    20: "agents-motivations",
}
"""The 20 bAbI tasks, by number."""

DEMO_TASK = 0
"""Task number of the generated demo sample."""

_LINE = re.compile(r"^\s*(\d+) (.*)$")
# The folders of the bAbI release: en, hn, shuffled (and en-valid), 1k or -10k.
_RELEASE_FOLDER = re.compile(
    r"^(?P<language>(?:en|hn|shuffled)(?:-valid)?)(?P<k>-10k)?$"
)

__all__ = [
    "DEMO_TASK",
    "TASK_NAMES",
    "BabiExample",
    "BabiFolder",
    "BabiTask",
    "TaskUnavailableError",
    "find_folder",
    "find_task_file",
    "generate_demo_lines",
    "load_babi",
    "load_demo",
    "parse_babi",
    "read_babi_file",
    "split_validation",
]


class TaskUnavailableError(DataError, FileNotFoundError):
    """A bAbI task file is missing (e.g. task 3 train of the 10k set)."""


@dataclasses.dataclass
class BabiTask:
    """The examples of one task: `train`, `valid` (split from train) and `test`.

    `train`/`valid` are `None` when the training file is missing; `missing` then
    names what is absent (reported as n/a).
    """

    task: int
    name: str
    train: list = None
    valid: list = None
    test: list = None
    missing: str = None

    def all_examples(self):
        """Every example of the task (train, valid, test)."""
        return (self.train or []) + (self.valid or []) + (self.test or [])

    def training_examples(self):
        """The examples a model may learn from or be chosen on (train, valid): the
        vocabulary and the sentence length come from these only."""
        return (self.train or []) + (self.valid or [])


@dataclasses.dataclass(frozen=True)
class BabiFolder:
    """The folder of `qa*_train.txt` / `qa*_test.txt` files that was found.

    Attributes:
        path: the folder.
        language: the bAbI language (`"en"`, `"hn"`, `"shuffled"`, ...): the
            subfolder asked for, or the release folder's name; None when the
            folder's name does not say (any other folder of bAbI-format files).
        size: `"1k"` or `"10k"`, as the folder's name says; None when it does not.
    """

    path: str
    language: str = None
    size: str = None

    @property
    def english(self):
        """True for the English bAbI (`en/`, `en-10k/`), the data of the paper."""
        return self.language == "en"

    def describe(self):
        """`"bAbI hn 1k (path)"`, or `"bAbI-format tasks (path)"` when unnamed."""
        if self.language is None:
            return f"bAbI-format tasks ({self.path})"
        return f"bAbI {self.language} {self.size} ({self.path})"

    def to_dict(self):
        """`{"folder", "language", "size"}` (JSON-able)."""
        return {"folder": self.path, "language": self.language, "size": self.size}


def parse_babi(lines, source="<string>", task=0, memory_size=50):
    """Parses bAbI-format lines into examples.

    Args:
        lines: iterable of str (with or without line ends).
        source: name used in error messages (the file name).
        task: the task number stored in each example.
        memory_size: how many of the most recent statements each example keeps.

    Returns:
        A list of `BabiExample`, in file order.

    Raises:
        DataError: naming `source` and the line number of a malformed line (no
            leading id, an id that does not continue or restart the story, a
            question without answer or with bad supporting ids).
    """
    if not isinstance(memory_size, int) or memory_size <= 0:
        raise ConfigError(
            f"`memory_size` must be a positive int. Received: memory_size={memory_size!r}"
        )
    examples = []
    statements = []  # (line id, text) of the current story
    index_of = {}  # line id -> index into statements
    previous = 0
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]  # utf-8-sig
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        match = _LINE.match(line)
        if match is None:
            raise DataError(
                "a bAbI line must start with a number and a space. "
                f"Received: {line[:80]!r}",
                path=source,
                line=lineno,
            )
        line_id, text = int(match.group(1)), match.group(2)
        if line_id == 1:
            statements, index_of = [], {}
        elif line_id != previous + 1:
            raise DataError(
                f"line ids must restart at 1 or follow {previous}. "
                f"Received: id={line_id}",
                path=source,
                line=lineno,
            )
        previous = line_id
        if "\t" not in text:
            index_of[line_id] = len(statements)
            statements.append(text.strip())
            continue
        fields = text.split("\t")
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise DataError(
                "a question line needs 'question<TAB>answer<TAB>supporting ids'. "
                f"Received: {line[:80]!r}",
                path=source,
                line=lineno,
            )
        question, answer = fields[0].strip(), fields[1].strip().lower()
        support_text = fields[2].strip() if len(fields) > 2 else ""
        try:
            support_ids = [int(s) for s in support_text.split()]
        except ValueError:
            raise DataError(
                f"supporting ids must be integers. Received: {support_text!r}",
                path=source,
                line=lineno,
            ) from None
        start = max(0, len(statements) - memory_size)
        supporting = []
        for sid in support_ids:
            if sid not in index_of:
                raise DataError(
                    f"supporting id {sid} is not a statement of this story.",
                    path=source,
                    line=lineno,
                )
            if index_of[sid] >= start:
                supporting.append(index_of[sid] - start)
        examples.append(
            BabiExample(
                story=tuple(statements[start:]),
                question=question,
                answer=answer,
                supporting=tuple(supporting),
                task=task,
                source=where,
            )
        )
    return examples


def read_babi_file(path, task=0, memory_size=50):
    """Reads one bAbI file (UTF-8, optional byte-order mark); see `parse_babi`.

    Raises:
        MissingPathError: the file does not exist.
        DataError: invalid UTF-8 or a malformed line, with file and line.
    """
    path = check_exists(path, "bAbI file")
    lines = (text for _, text in iter_lines(path))  # every line, blank ones too
    return parse_babi(lines, source=path, task=task, memory_size=memory_size)


def find_folder(data, size="1k", language="en"):
    """The `BabiFolder` holding `qa*_train.txt` / `qa*_test.txt` files.

    `data` may be a bAbI root holding `en/`, `en-10k/`, `hn/`, ... (then `language`
    and `size` pick the subfolder), or the folder of task files itself (then its
    name, e.g. `hn-10k`, tells the language and size when it is a folder of the
    bAbI release, and nothing otherwise).

    Raises:
        ConfigError: for a bad `size`.
        MissingPathError: `data` does not exist.
        TaskUnavailableError: no bAbI files in it.
    """
    if size not in ("1k", "10k"):
        raise ConfigError(f"`size` must be '1k' or '10k'. Received: size={size!r}")
    root = pathlib.Path(check_exists(data, "bAbI folder"))
    sub = root / (language if size == "1k" else f"{language}-10k")
    if sub.is_dir():
        return BabiFolder(os.fspath(sub), language, size)
    if root.is_dir() and any(root.glob("qa*_test.txt")):
        named = _RELEASE_FOLDER.match(root.resolve().name)
        if named is None:
            return BabiFolder(os.fspath(root))
        return BabiFolder(
            os.fspath(root), named["language"], "10k" if named["k"] else "1k"
        )
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
    """Shuffles (seeded) and splits off `fraction` of the examples as validation.

    Returns:
        `(train, valid)` lists.
    """
    if not 0.0 <= fraction < 1.0:
        raise ConfigError(
            f"`fraction` must be in [0, 1). Received: fraction={fraction!r}"
        )
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    n_valid = int(round(len(examples) * fraction))
    valid = sorted(order[:n_valid])
    train = sorted(order[n_valid:])
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
    """Reads bAbI tasks: train (minus a validation split) and test.

    Args:
        data: a `BabiFolder`, or a path for `find_folder`.
        tasks: iterable of task numbers (default all 20).
        size: `"1k"` or `"10k"` (with a path).
        language: subfolder prefix (`"en"`, `"hn"`, `"shuffled"`, ...; with a
            path).
        memory_size: statements kept per example.
        validation_fraction: share of train held out as validation (10%).
        seed: seed of the validation split.

    Returns:
        dict task -> `BabiTask`. A task whose train file is missing has
        `train=None` and `missing` set; a missing test file raises.

    Raises:
        TaskUnavailableError: when a test file is missing.
        DataError: malformed lines (with file and line).
        ConfigError: bad task numbers.
    """
    if not isinstance(data, BabiFolder):
        data = find_folder(data, size, language)
    directory = data.path
    tasks = list(range(1, 21)) if tasks is None else list(tasks)
    for task in tasks:
        if task not in TASK_NAMES:
            raise ConfigError(f"bAbI tasks are 1..20. Received: task={task!r}")
    result = {}
    for task in tasks:
        entry = BabiTask(task=task, name=TASK_NAMES[task])
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
        result[task] = entry
    return result


# --- demo sample -----------------------------------------------------------------

_PEOPLE = ("Mary", "John", "Sandra", "Daniel")
_PLACES = ("kitchen", "garden", "office", "hallway", "bathroom", "bedroom")
_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")


def generate_demo_lines(num_stories=300, seed=0):
    """A small bAbI-style sample ("where is X?", one supporting fact), seeded.

    Each story has 2 to 5 rounds of two statements ("Mary moved to the
    kitchen.") followed by a question about a person seen in the story.

    Returns:
        A list of lines in the bAbI format (no line ends).
    """
    rng = random.Random(seed)
    lines = []
    for _ in range(num_stories):
        line_id, where = 0, {}
        for _ in range(rng.randint(2, 5)):
            for _ in range(2):
                line_id += 1
                person, place = rng.choice(_PEOPLE), rng.choice(_PLACES)
                where[person] = (place, line_id)
                lines.append(f"{line_id} {person} {rng.choice(_VERBS)} the {place}.")
            line_id += 1
            person = rng.choice(sorted(where))
            place, support = where[person]
            lines.append(f"{line_id} Where is {person}? \t{place}\t{support}")
    return lines


def load_demo(num_stories=300, test_stories=100, memory_size=50, seed=0):
    """The demo sample as a `{DEMO_TASK: BabiTask}` dict (train/valid/test)."""
    train = parse_babi(
        generate_demo_lines(num_stories, seed), "<demo-train>", DEMO_TASK, memory_size
    )
    test = parse_babi(
        generate_demo_lines(test_stories, seed + 1),
        "<demo-test>",
        DEMO_TASK,
        memory_size,
    )
    train, valid = split_validation(train, 0.1, seed)
    return {DEMO_TASK: BabiTask(DEMO_TASK, "demo-where-is", train, valid, test, None)}
