"""The flags of `zoo.recipes.memn2n_babi`: its `Config` and training defaults."""

import dataclasses
import os

from zoo.training.flags import RecipeConfig, option

# The paper's schedule: batches of 32, no early stopping. Epochs None: linear start
# plus 100 (joint: 60); learning rate None: 0.005, 0.01 with --no-ls (`validate`).
TRAINING = dict(epochs=None, learning_rate=None, patience=0)
DEMO_TRAINING = dict(epochs=15)


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


@dataclasses.dataclass
class Config(RecipeConfig):
    """The recipe's options (the command-line flags)."""

    # How `validate` sets a training default of None (shown in --help).
    DERIVED = {
        "epochs": "--ls-epochs + 60 (--no-joint: + 100), the paper's",
        "learning_rate": "0.005, or 0.01 with --no-ls, the paper's",
    }

    tasks: str = option("1-20", "bAbI tasks, e.g. 1-20 or 1,2,5", check=parse_tasks)
    joint: bool = option(
        True, "one model for all tasks (--no-joint: one model per task)", demo=False
    )
    size: str = option("1k", "training set size", choices=("1k", "10k"))
    language: str = option("en", "bAbI subfolder prefix: en, hn, shuffled")
    memory_size: int = option(50, "memory slots", check="positive")
    embedding_dim: int = option(None, "size d [None: 20, joint 50]", check="positive")
    hops: int = option(3, "memory hops K", check="positive")
    tying: str = option("adjacent", "weight tying", choices=("adjacent", "layerwise"))
    no_pe: bool = option(False, "bag of words instead of position encoding")
    no_te: bool = option(False, "no temporal encoding")
    no_ls: bool = option(False, "no linear start")
    ls_epochs: int = option(
        None,
        "linear start for exactly N epochs [None: 20, joint 30, demo 0]; 0 = until "
        "validation loss stops falling",
        check="non_negative",
    )
    ls_patience: int = option(
        1, "with --ls-epochs 0: epochs without a lower val. loss", check="positive"
    )
    empty_slots: str = option(
        "nil", "empty slots: nil memories in the softmax, or masked",
        choices=("nil", "mask"),
    )  # fmt: skip
    random_noise: float = option(0.1, "RN rate, 0 = off", check="open_fraction")
    clipnorm: float = option(40.0, "gradient norm clip per weight", check="positive")
    decay_every: int = option(
        None, "halve lr every N [None: 25, joint 15]", check="positive"
    )
    restarts: int = option(1, "keep the lowest train error of N", check="positive")
    demo_size: int = option(400, "stories of the generated demo", check="positive")
    report_samples: int = option(2, "attention PNGs per task", check="non_negative")
    warmup_stories: str = option(
        None,
        "a file of stories and questions in bAbI's format: the export's warm-up "
        "requests and the example of REQUESTS.md (default: 4 test questions)",
        metavar="FILE",
    )
    xla: bool = option(True, "compile the training step with XLA", demo=False)

    def validate(self):
        """Derives the defaults that are None (the paper's) and checks them."""
        from zoo.errors import ConfigError

        self.embedding_dim = self.embedding_dim or (50 if self.joint else 20)
        self.decay_every = self.decay_every or (15 if self.joint else 25)
        if self.ls_epochs is None:
            self.ls_epochs = 0 if self.demo or self.no_ls else 30 if self.joint else 20
        training = self.training
        if training.epochs is None:
            training.epochs = (60 if self.joint else 100) + self.ls_epochs
        if training.learning_rate is None:
            training.learning_rate = 0.01 if self.no_ls else 0.005
        epochs = training.epochs
        if not self.no_ls and self.ls_epochs >= epochs:
            raise ConfigError(
                f"--ls-epochs ({self.ls_epochs}) must be smaller than --epochs "
                f"({epochs}), or the softmax never comes back (--ls-epochs 0 ends "
                "linear start when validation loss stops falling)"
            )
        self.warmup_examples()  # a bad file is an error now, not after training

    def warmup_examples(self):
        """The questions of `--warmup-stories` (at most 4), or None without it."""
        if self.warmup_stories is None:
            return None
        from zoo.data.babi import read_babi_file
        from zoo.errors import ConfigError, DataError

        if not os.path.isfile(self.warmup_stories):
            raise ConfigError(f"--warmup-stories: no such file: {self.warmup_stories}")
        examples = read_babi_file(self.warmup_stories, memory_size=self.memory_size)
        if not examples:
            raise DataError("no question in the file", path=self.warmup_stories)
        return examples[:4]

    @property
    def task_list(self):
        return (0,) if self.demo else parse_tasks(self.tasks)
