"""bAbI question answering: reader, demo generator, vocabulary and tf.data input.

The standard bAbI format (Weston et al. 2015) holds numbered lines; the numbering
restarts at 1 with every new story. A statement line is `ID text`; a question line is
`ID question<TAB>answer<TAB>supporting ids` (the ids of the statements that answer
it). Every question is one example whose memory is the most recent `memory_size`
(default 50) statements before it, as in the MemN2N paper.

Typical use:

```python
tasks = load_babi("../shared/data/babi", tasks=[1, 2], size="1k")
vocab = build_vocabulary(ex for t in tasks.values() for ex in t.training_examples())
arrays = vectorize(tasks[1].train, vocab, memory_size=50, sentence_length=11)
train_ds = make_dataset(arrays, batch_size=32, shuffle=True, noise_rate=0.1)
```

Text goes through `tokenize` (the zoo's `normalize` + `word_tokenize`, punctuation
tokens dropped) both here and in the exported serving graph (`encode_inputs`), so
training and serving see the same word ids.
"""

import dataclasses
import os
import pathlib
import random
import re

import numpy as np
import tensorflow as tf

from zoo.data.files import check_exists, iter_lines
from zoo.errors import ConfigError, DataError
from zoo.text.preprocessing import normalize, word_tokenize
from zoo.text.vocabulary import Vocabulary

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

MAX_STORY_BYTES = 262144
"""Serving limit: a longer story keeps its last 256 KiB (whole lines)."""

_LINE = re.compile(r"^\s*(\d+) (.*)$")
_PUNCT_TOKEN = r"[\p{P}\p{S}]+"


class TaskUnavailableError(DataError, FileNotFoundError):
    """A bAbI task file is missing (e.g. task 3 train of the 10k set)."""


@dataclasses.dataclass(frozen=True)
class BabiExample:
    """One question with its memory.

    Attributes:
        story: the statements before the question, oldest first, at most
            `memory_size` of them (the most recent ones).
        question: the question text.
        answer: the answer, lower-cased (`"s,e"`-style lists are one answer).
        supporting: indices into `story` of the supporting statements (those
            that fell out of the memory window are left out).
        task: the task number (0 for the demo sample).
        source: `"file:line"` of the question.
    """

    story: tuple
    question: str
    answer: str
    supporting: tuple
    task: int
    source: str


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


def resolve_data_dir(data, size="1k", language="en"):
    """The folder holding `qa*_train.txt` / `qa*_test.txt` files.

    `data` may be that folder itself, or a bAbI root holding `en/`, `en-10k/`, ...
    (then `language` and `size` pick the subfolder).

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
        return sub
    if root.is_dir() and any(root.glob("qa*_test.txt")):
        return root
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
        data: a bAbI folder (see `resolve_data_dir`).
        tasks: iterable of task numbers (default all 20).
        size: `"1k"` or `"10k"`.
        language: subfolder prefix (`"en"`, `"hn"`, `"shuffled"`, ...).
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
    directory = resolve_data_dir(data, size, language)
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


# --- text -> ids (shared by training and serving) --------------------------------


def tokenize(text):
    """Normalized words of each string, punctuation tokens dropped.

    Args:
        text: string tensor (any shape) or ragged tensor of strings, already
            passed through `normalize` (or raw: case and spaces then matter).

    Returns:
        A `tf.RaggedTensor` with one more ragged dimension.
    """
    words = word_tokenize(text)
    keep = tf.logical_not(tf.strings.regex_full_match(words.flat_values, _PUNCT_TOKEN))
    return tf.ragged.boolean_mask(words, words.with_flat_values(keep))


def tokenize_sentences(sentences, batch_size=16384):
    """A list of raw sentences -> a list of word lists (str), via `tokenize`."""
    result = []
    for start in range(0, len(sentences), batch_size):
        chunk = tf.constant(list(sentences[start : start + batch_size]), tf.string)
        words = tokenize(normalize(chunk)).to_list()
        result.extend([[w.decode("utf-8") for w in row] for row in words])
    return result


def build_vocabulary(examples):
    """A `Vocabulary` of every story word, question word and answer."""
    examples = list(examples)
    sentences = sorted(
        {s for ex in examples for s in ex.story} | {ex.question for ex in examples}
    )
    token_lists = tokenize_sentences(sentences)
    token_lists.append([ex.answer for ex in examples])
    return Vocabulary.build(token_lists)


def max_sentence_length(examples):
    """The longest statement or question, in words (after `tokenize`)."""
    examples = list(examples)
    sentences = sorted(
        {s for ex in examples for s in ex.story} | {ex.question for ex in examples}
    )
    if not sentences:
        return 1
    return max(1, max(len(t) for t in tokenize_sentences(sentences)))


def vectorize(examples, vocab, memory_size=50, sentence_length=11):
    """Turns examples into compact int arrays.

    Unique sentences are stored once: `sentences[k]` holds the word ids of sentence
    `k` (row 0 = the empty sentence), and `memory[n, i]` the sentence index of slot
    `i` of example `n`, slot 0 = most recent statement. `make_dataset` gathers the
    dense `(B, memory_size, sentence_length)` stories per batch. Words beyond
    `sentence_length` are cut (the first ones kept), as in `encode_inputs`.

    Returns:
        dict of NumPy arrays: `sentences (U, J)`, `memory (N, M)`, `question
        (N, J)`, `answer (N,)`, all int32.
    """
    examples = list(examples)
    texts = sorted({s for ex in examples for s in ex.story})
    token_lists = tokenize_sentences(texts)
    sentence_rows = [np.zeros(sentence_length, np.int32)]
    index = {}
    for text, tokens in zip(texts, token_lists, strict=True):
        if not tokens:
            continue  # empty statements are dropped, as in serving
        row = np.zeros(sentence_length, np.int32)
        ids = vocab.encode(tokens[:sentence_length])
        row[: len(ids)] = ids
        index[text] = len(sentence_rows)
        sentence_rows.append(row)
    memory = np.zeros((len(examples), memory_size), np.int32)
    question = np.zeros((len(examples), sentence_length), np.int32)
    answer = np.zeros((len(examples),), np.int32)
    question_tokens = tokenize_sentences([ex.question for ex in examples])
    for n, ex in enumerate(examples):
        slots = [index[s] for s in reversed(ex.story) if s in index][:memory_size]
        memory[n, : len(slots)] = slots
        ids = vocab.encode(question_tokens[n][:sentence_length])
        question[n, : len(ids)] = ids
        answer[n] = vocab.token_to_id(ex.answer)
    return {
        "sentences": np.stack(sentence_rows),
        "memory": memory,
        "question": question,
        "answer": answer,
    }


def dense_stories(arrays):
    """The `(N, M, J)` story ids of `vectorize`'s output (NumPy)."""
    return arrays["sentences"][arrays["memory"]]


def random_empty_memories(memory, rate, seed=None):
    """Random noise (RN): inserts empty memory slots at random places.

    Before each slot an empty slot is inserted with probability `rate`; the
    following slots shift towards older positions (the oldest fall out of the
    memory). This breaks the link between a sentence and a fixed temporal slot.

    Args:
        memory: int tensor `(B, M)` of sentence indices (0 = empty).
        rate: float in [0, 1).
        seed: optional int, for `tf.random` stateless draws (a tensor pair).

    Returns:
        int tensor `(B, M)`.
    """
    memory = tf.convert_to_tensor(memory)
    slots = tf.shape(memory)[1]
    if seed is None:
        draw = tf.random.uniform(tf.shape(memory))
    else:
        draw = tf.random.stateless_uniform(tf.shape(memory), seed=seed)
    insert = tf.cast(draw < rate, tf.int32)  # (B, M) 1 = empty slot before this one
    new_position = tf.range(slots)[tf.newaxis, :] + tf.cumsum(insert, axis=1)
    moves = tf.one_hot(new_position, slots, dtype=memory.dtype)  # (B, M, M), 0 if >= M
    return tf.reduce_sum(memory[:, :, tf.newaxis] * moves, axis=1)


def make_dataset(
    arrays,
    batch_size=32,
    shuffle=False,
    seed=0,
    noise_rate=0.0,
    drop_remainder=False,
):
    """A `tf.data.Dataset` of `({"story", "question"}, answer)` batches.

    Args:
        arrays: `vectorize` output.
        batch_size: int.
        shuffle: reshuffle each epoch (seeded).
        seed: shuffle and RN seed (both change every epoch, reproducibly).
        noise_rate: RN rate (0.1 in the paper for training), 0 = off.
        drop_remainder: fixed batch shape (avoids a retrace for the last batch).

    Returns:
        Dataset of `({"story": (B, M, J) int32, "question": (B, J) int32},
        answer (B,) int32)`.
    """
    table = tf.constant(arrays["sentences"])
    ds = tf.data.Dataset.from_tensor_slices(
        (arrays["memory"], arrays["question"], arrays["answer"])
    )
    if shuffle:
        ds = ds.shuffle(len(arrays["answer"]), seed=seed, reshuffle_each_iteration=True)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    # One stateless seed pair per batch from a seeded stream that changes every epoch:
    # the noise differs from epoch to epoch but does not depend on thread timing (a
    # stateful draw inside a parallel map would) or on what ran before in the process.
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
    ds = tf.data.Dataset.zip((ds, seeds))

    def assemble(batch, noise_seed):
        memory, question, answer = batch
        if noise_rate > 0:
            memory = random_empty_memories(memory, noise_rate, seed=noise_seed)
        story = tf.gather(table, memory)  # (B, M, J)
        return {"story": story, "question": question}, answer

    return ds.map(assemble, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)


def encode_inputs(
    story, question, lookup, memory_size, sentence_length, return_sentences=False
):
    """In-graph: raw story/question strings -> the model's int inputs.

    Used by the exported `preprocess` and `serving_default` signatures; the same
    `tokenize` as training. A story is split on "\\n" into sentences; empty
    sentences are dropped; the last `memory_size` are kept, most recent in slot 0;
    each sentence keeps its first `sentence_length` words. A story longer than
    `MAX_STORY_BYTES` keeps its last bytes (whole lines). Unknown words map to
    `[UNK]`; an empty story gives an all-empty memory and an empty question a
    zero query (both give finite, well-defined outputs).

    Args:
        story: string tensor `[B]`, sentences separated by "\\n".
        question: string tensor `[B]`.
        lookup: a `zoo.text.vocabulary.VocabularyLookup`.
        memory_size, sentence_length: ints, the model's input shape.
        return_sentences: also return the memory's sentences as text.

    Returns:
        `(story_ids (B, memory_size, sentence_length), question_ids
        (B, sentence_length))`, int32; with `return_sentences` a third tensor,
        string `(B, memory_size)`: the normalized words of each slot joined by
        spaces (all of them, not only the first `sentence_length`), "" for empty
        slots.
    """
    story = tf.convert_to_tensor(story, tf.string)
    question = tf.convert_to_tensor(question, tf.string)
    length = tf.strings.length(story)
    tail = tf.strings.substr(
        story,
        tf.maximum(length - MAX_STORY_BYTES, 0),
        tf.fill(tf.shape(length), MAX_STORY_BYTES),
    )
    tail = tf.strings.regex_replace(tail, r"^[^\n]*(\n|$)", "")  # drop the cut line
    story = tf.where(length > MAX_STORY_BYTES, tail, story)
    text = normalize(story, max_bytes=None)
    lines = tf.strings.split(text, "\n")  # (B, S)
    words = tokenize(lines)  # (B, S, W)
    words = tf.ragged.boolean_mask(words, words.row_lengths(axis=2) > 0)
    dense = words.to_tensor(default_value="", shape=[None, None, sentence_length])
    recent_first = tf.reverse_sequence(
        dense, tf.cast(words.row_lengths(), tf.int64), seq_axis=1, batch_axis=0
    )
    recent_first = recent_first[:, :memory_size]
    pad = memory_size - tf.shape(recent_first)[1]
    recent_first = tf.pad(recent_first, [[0, 0], [0, pad], [0, 0]], constant_values="")
    recent_first = tf.ensure_shape(recent_first, [None, memory_size, sentence_length])
    if return_sentences:
        joined = tf.strings.reduce_join(words, axis=-1, separator=" ")  # (B, S)
        joined = joined.to_tensor(default_value="")
        joined = tf.reverse_sequence(
            joined, tf.cast(words.row_lengths(), tf.int64), seq_axis=1, batch_axis=0
        )[:, :memory_size]
        joined = tf.pad(joined, [[0, 0], [0, pad]], constant_values="")
        joined = tf.ensure_shape(joined, [None, memory_size])
    question_words = tokenize(normalize(question))
    question_dense = question_words.to_tensor(
        default_value="", shape=[None, sentence_length]
    )
    story_ids = tf.cast(lookup(recent_first), tf.int32)
    question_ids = tf.cast(lookup(question_dense), tf.int32)
    if return_sentences:
        return story_ids, question_ids, joined
    return story_ids, question_ids
