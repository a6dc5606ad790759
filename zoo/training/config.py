"""`TrainingConfig`, the options of `fit`.

Each field carries its flag's help line in `metadata["help"]` (and `"choices"`,
`"check"`, `"metavar"` where they apply): the recipes' flag system
(`zoo.training.flags`) makes the training flags from them.
Fields with `metadata["resumable"]` may change when a run is resumed (see
`TrainingConfig.identity`).

Stdlib-only on purpose: a recipe's `--help` needs no TensorFlow.
"""

import dataclasses
import math

from zoo.errors import ConfigError

DISTRIBUTE_CHOICES = ("none", "mirrored")
RESUME_CHOICES = ("auto", "force", "never")
MODE_CHOICES = ("auto", "min", "max")
VERBOSE_CHOICES = ("auto", 0, 1, 2)
# What `option` takes besides the default, the help line and the demo's default.
OPTION_KEYS = ("choices", "check", "metavar", "type", "negatable", "resumable")
# A flag's `check`: what a value must satisfy, and the bound its message names.
CHECKS = {
    "positive": (lambda v: v > 0, "> 0"),
    "non_negative": (lambda v: v >= 0, ">= 0"),
    "fraction": (lambda v: 0 <= v <= 1, "in [0, 1]"),
    "open_fraction": (lambda v: 0 <= v < 1, "in [0, 1)"),
    "factor": (lambda v: 0 < v <= 1, "in (0, 1]"),
}


def option(default, help, *, demo=dataclasses.MISSING, **metadata):
    """A recipe option: a dataclass field that `build_parser` turns into a flag.

    Args:
        default: the default value (with `--data`).
        help: the flag's help line (required: every flag says what it does).
        demo: the default on the generated demo corpus (no `--data`), if different.
        choices: the accepted values.
        check: a name of `CHECKS` (`"positive"`, `"non_negative"`, `"fraction"`:
            [0, 1], ...) or a callable that raises `ValueError` for a bad value;
            `None` values are always accepted.
        metavar: the value's name in `--help`.
        type: the parser of the value, when the annotation is not enough.
        negatable: a bool option that defaults to False everywhere still gets
            `--no-FLAG` (as one that defaults to True does).
        resumable: a `TrainingConfig` field that may change when a run is
            resumed (see `TrainingConfig.identity`).
    """
    if not help:
        raise ValueError("every recipe option needs a help line")
    unknown = set(metadata).difference(OPTION_KEYS)
    if unknown:
        raise TypeError(f"option() got unexpected arguments {sorted(unknown)}")
    check = metadata.get("check")
    if isinstance(check, str) and check not in CHECKS:
        raise ValueError(
            f"`check` must be one of {sorted(CHECKS)}. Received: {check!r}"
        )
    metadata = {"help": help, "demo": demo, **metadata}
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass
class TrainingConfig:
    """Options of `fit` (filled from a recipe's training flags, `zoo.training.flags`).

    Attributes:
        epochs: number of epochs.
        time_limit: minutes of training (validation included, and on a resume
            the interrupted run's) after which it stops, the best checkpoint so
            far kept (0: no limit).
        snapshot_minutes: every this many minutes of training the weights (the
            averaged ones with `ema`) go to `run_dir/snapshots/`
            (`zoo.training.callbacks.TimedSnapshots`; 0: off).
        batch_size: global batch size (split across replicas when distributed).
        learning_rate: optimizer learning rate (read by the recipe's `compile`).
        seed: seed of Python, NumPy, TensorFlow and Keras.
        run_dir: folder for backup, best checkpoint, CSV and TensorBoard logs.
        validations_per_epoch: validations per pass over the training data: `fit`
            cuts each pass into this many Keras epochs of equal step counts, so the
            best checkpoint, early stopping and the decay on a plateau see the
            validation metric this often (`patience` and `decay_patience` count
            validations, `epochs` counts passes).
        patience: early-stopping patience in validations (0 disables early
            stopping).
        decay_factor: learning-rate factor on a plateau of `monitor` (1 disables it).
        decay_patience: validations without improvement before the rate is
            multiplied.
        distribute: "none" or "mirrored" (all local GPUs, or CPUs).
        monitor: quantity for the best checkpoint and early stopping.
        mode: "auto", "min" or "max" for `monitor`.
        verbose: Keras' `verbose`: "auto" (the progress bar on a terminal, plain
            lines per epoch otherwise), 0 (silent), 1 (progress bar) or 2 (plain
            lines per epoch).
        tensorboard: whether to write TensorBoard logs.
        ema: momentum of the moving average of the weights that is validated,
            checkpointed and kept (0 disables it; 0.999 averages over about the
            last thousand steps), warmed up: the momentum at step `t` is
            `min(ema, (1 + t) / (10 + t))`, so the average of the first epochs
            is of recent weights, not of the initial ones
            (`zoo.training.weight_averaging`). The model's optimizer must be
            built with `**averaging(cfg)`.
        resume: what `fit` does with a backup in `run_dir`: "auto" resumes it when
            it is a backup of the same run and refuses otherwise
            (`RunMismatchError`), "force" resumes it anyway, "never" deletes it and
            starts afresh.
    """

    # fmt: off
    epochs: int = option(10, "training epochs", resumable=True, check="positive",
        metavar="N")
    time_limit: float = option(0.0, "stop training after MIN minutes in all "
        "(validation and an interrupted run's minutes included; the best checkpoint so "
        "far is kept; 0: no limit)", resumable=True, check="non_negative",
        metavar="MIN")
    snapshot_minutes: float = option(0.0, "every MIN minutes of training, save the "
        "weights (the averaged ones with --ema) to RUN_DIR/snapshots/ (0: off)",
        resumable=True, check="non_negative", metavar="MIN")
    batch_size: int = option(32, "global batch size (split across replicas when "
        "distributed)", check="positive", metavar="N")
    learning_rate: float = option(1e-3, "learning rate", check="positive",
        metavar="RATE")
    seed: int = option(1234, "seed of Python, NumPy, TensorFlow and Keras",
        metavar="N")
    run_dir: str = option("runs/default", "checkpoints, backup (resumption) and logs "
        "go here", resumable=True, metavar="DIR")
    validations_per_epoch: int = option(1, "validate (and choose the best weights, "
        "count patience) N times per pass over the training data", check="positive",
        metavar="N")
    patience: int = option(3, "early-stopping patience in validations, epochs unless "
        "--validations-per-epoch (0 disables it)", resumable=True,
        check="non_negative", metavar="N")
    decay_factor: float = option(1.0, "multiply the learning rate by this after "
        "--decay-patience epochs without a better validation metric (1 disables it)",
        check="factor", metavar="FACTOR")
    decay_patience: int = option(1, "validations without improvement before the "
        "learning rate decays", check="positive", metavar="N")
    distribute: str = option("none", "none, or mirrored (all local GPUs, or CPUs)",
        resumable=True, choices=DISTRIBUTE_CHOICES)
    monitor: str = option("val_loss", "quantity for the best checkpoint and early "
        "stopping")
    mode: str = option("auto", "whether --monitor is better low (min) or high (max); "
        "auto: Keras decides", choices=MODE_CHOICES)
    verbose: object = option("auto", "progress output: auto (a progress bar on a "
        "terminal, plain lines per epoch otherwise), 0 (none), 1 (progress bar), 2 "
        "(plain lines per epoch)", resumable=True, choices=VERBOSE_CHOICES)
    tensorboard: bool = option(True, "write TensorBoard logs (when the tensorboard "
        "package is installed)", resumable=True)
    ema: float = option(0.0, "validate, checkpoint and keep a moving average of the "
        "weights with this momentum, e.g. 0.999, warmed up: "
        "min(MOMENTUM, (1+t)/(10+t)) at step t (0 disables it)",
        check="open_fraction", metavar="MOMENTUM")
    resume: str = option("auto", "with a backup in --run-dir: auto resumes it if it "
        "is a backup of the same run (and refuses otherwise), force resumes it anyway, "
        "never deletes it and starts afresh", resumable=True, choices=RESUME_CHOICES)
    # fmt: on

    def __post_init__(self):
        for field in dataclasses.fields(self):
            name, value, meta = field.name, getattr(self, field.name), field.metadata
            if name in ("run_dir", "monitor"):
                continue
            choices, check = meta.get("choices"), meta.get("check")
            if choices is not None:
                ok, what = value in choices, f"one of {choices}"
            elif field.type is int:
                ok, what = isinstance(value, int), "an int"  # bools: refused below
            elif field.type is float:
                ok = isinstance(value, (int, float)) and math.isfinite(value)
                what = "a finite number"
            else:
                ok, what = isinstance(value, bool), "a bool"
            if ok and check is not None:
                ok, bound = CHECKS[check]
                ok, what = ok(value), f"{what} {bound}"
            if not ok or isinstance(value, bool) != (field.type is bool):
                raise ConfigError(
                    f"`{name}` must be {what}. Received: {name}={value!r}"
                )

    def identity(self):
        """The fields that define what is trained, as a dict: a backup is resumed
        only by a configuration with the same values (see `fit`).

        Left out are the fields marked `resumable`: how long (`epochs`: a run may be
        extended), how patiently, how verbosely, on which devices and where a run
        trains, and `resume` itself.
        """
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if not f.metadata.get("resumable")
        }


RESUMABLE_FIELDS = tuple(
    f.name for f in dataclasses.fields(TrainingConfig) if f.metadata.get("resumable")
)
