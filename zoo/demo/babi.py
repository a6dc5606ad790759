"""A small generated bAbI-style task: "where is X?", one supporting fact."""

import random

from zoo.data.babi import BabiTask, parse_babi, split_validation

DEMO_TASK = 0
"""The task number of the generated sample."""

_PEOPLE = ("Mary", "John", "Sandra", "Daniel")
_PLACES = ("kitchen", "garden", "office", "hallway", "bathroom", "bedroom")
_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")


def generate_demo_lines(num_stories=300, seed=0):
    """Seeded stories in bAbI's format (no line ends): 2 to 5 rounds of two
    statements ("Mary moved to the kitchen."), each round followed by a question
    about a person seen in the story."""
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
    """`{DEMO_TASK: BabiTask}`: train (10% of it as valid) and test stories."""

    def read(stories, seed, name):
        return parse_babi(
            generate_demo_lines(stories, seed), name, DEMO_TASK, memory_size
        )

    train, valid = split_validation(read(num_stories, seed, "<demo-train>"), 0.1, seed)
    test = read(test_stories, seed + 1, "<demo-test>")
    return {DEMO_TASK: BabiTask(DEMO_TASK, "demo-where-is", train, valid, test)}
