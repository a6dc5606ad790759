"""`BabiExample`: one bAbI question with its memory, as the MemN2N family reads it."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class BabiExample:
    """One question with its memory.

    `zoo.data.babi` reads them from bAbI files; `MemN2NQuestionAnswererPreprocessor`
    makes them of raw stories; `babi_arrays.vectorize` turns them into word ids.

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
