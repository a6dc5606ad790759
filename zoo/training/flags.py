"""Recipe configuration: one dataclass per recipe, its fields are the command line.

A recipe declares its options as a dataclass that extends `RecipeConfig`, each field
made with `option()`:

```python
@dataclasses.dataclass
class Config(RecipeConfig):
    max_words: int = option(50, "words kept per sentence", demo=16, check="positive")
    pooling: str = option("attention", "pooling", choices=("attention", "mean"))
```

`build_parser` turns the fields into flags (`max_words` -> `--max-words`), every flag with
its help line and its default shown by `--help`; `demo=` gives the default used when
`--data` is absent (the generated demo corpus), shown as `[demo: X]`. The nested
`training` field (`zoo.training.TrainingConfig`) contributes the training flags
(`--epochs`, `--batch-size`, `--learning-rate`, ...) from its own fields' metadata, with
per-recipe defaults. A value that fails its `check` or its choices is an argparse error
(one line, exit status 2) that names the flag and the value.

A flag that sets a model's argument takes its default from the model's constructor
(`default_of`), so the recipe with `--data` trains the model its constructor builds.
"""

import argparse
import dataclasses
import math
import os
import sys
import typing

from zoo.errors import ConfigError

# `option` is re-exported: a recipe declares its options with it.
from zoo.training.config import CHECKS, TrainingConfig, option  # noqa: F401

MISSING = dataclasses.MISSING

# Recipe fields that never change what is trained.
OUTPUT_FIELDS = ("data", "run_dir", "report_dir", "export_dir", "no_export", "debug")
OUTPUT_FIELDS += ("report_samples", "training", "warmup_texts", "warmup_stories")


def default_of(constructor, argument):
    """The default of `argument` in the signature of `constructor` (a class or a
    function): a recipe's flag takes its default from the model's constructor, so the
    recipe with `--data` and a model built with its defaults are the same model.

    Raises:
        ValueError: `constructor` has no such argument, or it has no default.
    """
    import inspect

    parameter = inspect.signature(constructor).parameters.get(argument)
    if parameter is None or parameter.default is inspect.Parameter.empty:
        raise ValueError(
            f"{constructor.__qualname__} has no argument {argument!r} with a default"
        )
    return parameter.default


@dataclasses.dataclass
class RecipeConfig:
    """The options every recipe has (recipes extend it with their own).

    Attributes:
        data: the training data (a file or folder); `None` runs on the generated demo
            corpus.
        run_dir: checkpoints, backup and logs (`runs/<recipe>` by default). A run
            folder holds one run: it is locked while the run lasts (another process
            is refused, naming its pid), and a run of another configuration is
            refused while the folder holds a backup (`--resume never` replaces it);
            give each configuration that runs side by side its own `--run-dir`.
        report_dir: metrics, attention maps and reports (`reports/<recipe>`).
        export_dir: the TF Serving base folder; exports go to `DIR/NAME/VERSION/`.
        no_export: skip the SavedModel export.
        max_train_samples: train on a seeded sample of at most this many examples.
        max_eval_samples: validate and test on seeded samples of at most this many.
        demo_size: size of the generated demo corpus.
        report_samples: test examples drawn in the attention report.
        xla: compile the training step with XLA (`jit_compile`).
        debug: show tracebacks instead of one-line errors.
        training: the options of `zoo.training.fit` (epochs, batch size, ...).
    """

    # fmt: off
    data: str = option(None, "training data: a file or folder (formats below); "
        "absent: the generated demo corpus", metavar="PATH")
    run_dir: str = option(None, "checkpoints, backup (resumption) and logs; one run "
        "at a time (locked while it runs; another configuration is refused while a "
        "backup is there: give it its own folder)", metavar="DIR")
    report_dir: str = option(None, "metrics, attention maps and reports",
        metavar="DIR")
    export_dir: str = option("saved_models", "TF Serving base folder: exports go to "
        "DIR/NAME/VERSION/")
    no_export: bool = option(False, "skip the SavedModel export")
    max_train_samples: int = option(None, "train on a seeded sample of at most N "
        "examples", check="positive", metavar="N")
    max_eval_samples: int = option(None, "validate and test on seeded samples of at "
        "most N examples each", check="positive", metavar="N")
    demo_size: int = option(1000, "examples in the generated demo corpus",
        check="positive", metavar="N")
    report_samples: int = option(8, "test examples drawn in the attention report",
        check="non_negative", metavar="N")
    xla: bool = option(False, "compile the training step with XLA (jit_compile)")
    debug: bool = option(False, "show tracebacks instead of one-line errors")
    # fmt: on
    training: typing.Any = dataclasses.field(default_factory=TrainingConfig)

    @property
    def demo(self):
        """True on the generated demo corpus (no `--data`)."""
        return self.data is None

    def validate(self):
        """Checks that span several options; raises `zoo.errors.ConfigError`."""

    def data_paths(self):
        """`(flag, path)` of every input path the options name (checked to exist)."""
        return [] if self.data is None else [("--data", self.data)]

    def identity(self):
        """What this configuration trains (its own fields), as a JSON-able dict.

        The fields that only say where output goes (`OUTPUT_FIELDS`) are left out, and
        so are the training options: `zoo.training.fit` records those itself, less the
        ones a resumed run may change (`zoo.training.config.RESUMABLE_FIELDS`).
        """
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in OUTPUT_FIELDS
        }


# --- Parser ---------------------------------------------------------------------------


def _base_type(annotation):
    """`int` for `int`, `Optional[int]`, `int | None`; `str` for anything unknown."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    kind = args[0] if len(args) == 1 else annotation
    return kind if kind in (int, float, str, bool) else str


def _converter(parse, check):
    """An argparse `type` that parses, then checks, naming the flag and the value."""

    def convert(text):
        try:
            value = parse(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(
                f"invalid {parse.__name__} value: {text!r}"
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
        if isinstance(check, str) and not CHECKS[check][0](value):
            raise argparse.ArgumentTypeError(
                f"must be {CHECKS[check][1]}, got {text!r}"
            )
        if callable(check):
            try:
                check(value)
            except ValueError as e:
                raise argparse.ArgumentTypeError(f"{e}, got {text!r}") from None
        return value

    convert.__name__ = parse.__name__
    return convert


def _verbosity(text):
    return int(text) if text.lstrip("-").isdigit() else text


def _add_field(group, name, meta, annotation, default, demo_default, demo):
    help_text = meta["help"]
    kind = meta.get("type") or _base_type(annotation)
    shown = demo_default if demo and demo_default is not MISSING else default
    if demo_default is not MISSING and demo_default != default:
        help_text += f" [with --data: {default!r}; demo: {demo_default!r}]"
    flag = "--" + name.replace("_", "-")
    if kind is bool:
        # --flag/--no-flag whenever either default is True, so both spellings work
        # with and without --data.
        either = shown or default or (demo_default is not MISSING and demo_default)
        action = "store_true"
        if either or meta.get("negatable"):
            action = argparse.BooleanOptionalAction
        group.add_argument(flag, action=action, default=shown, help=help_text)
        return
    group.add_argument(
        flag,
        type=_converter(_verbosity if name == "verbose" else kind, meta.get("check")),
        default=shown,
        choices=meta.get("choices"),
        metavar=meta.get("metavar"),
        help=help_text,
    )


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    """Shows every default and keeps the description's line breaks."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text:  # the help line already says what the default is
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An `ArgumentParser` whose errors are one line: `PROG: error: MESSAGE`.

    The usage block is left out (`--help` shows it); the exit status stays 2.
    """

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(
    config_class,
    prog,
    description,
    name,
    training_defaults=None,
    demo_training_defaults=None,
    demo=False,
):
    """The `argparse.ArgumentParser` of a recipe's `config_class`.

    Args:
        config_class: a dataclass extending `RecipeConfig`.
        prog: the program name shown in usage lines.
        description: the recipe's description (its module docstring).
        name: the recipe's name (`runs/<name>`, `reports/<name>`).
        training_defaults: defaults of the training flags with `--data`.
        demo_training_defaults: defaults of the training flags on the demo corpus.
        demo: whether the defaults shown are the demo's.
    """
    parser = Parser(prog=prog, description=description, formatter_class=_Formatter)
    groups = {
        "recipe": parser.add_argument_group("recipe"),
        "common": parser.add_argument_group("data and output"),
        "training": parser.add_argument_group("training"),
    }
    common = {f.name for f in dataclasses.fields(RecipeConfig)}
    folders = {"run_dir": f"runs/{name}", "report_dir": f"reports/{name}"}
    hints = typing.get_type_hints(config_class)
    for field in dataclasses.fields(config_class):
        if field.name == "training":
            continue
        default = field.default
        if default is None:
            default = folders.get(field.name)
        group = groups["common" if field.name in common else "recipe"]
        demo_default = field.metadata.get("demo", MISSING)
        args = (field.metadata, hints[field.name], default, demo_default, demo)
        _add_field(group, field.name, *args)

    hints = typing.get_type_hints(TrainingConfig)
    derived = getattr(config_class, "DERIVED", {})
    for field in dataclasses.fields(TrainingConfig):
        if field.name == "run_dir":
            continue  # the recipe's --run-dir
        default = (training_defaults or {}).get(field.name, field.default)
        demo_default = (demo_training_defaults or {}).get(field.name, MISSING)
        meta = dict(field.metadata)
        if default is None:  # resolved by the recipe's `Config.validate`
            rule = derived.get(field.name, "derived from other flags")
            meta["help"] += f" (None: {rule})"
        args = (meta, hints[field.name], default, demo_default, demo)
        _add_field(groups["training"], field.name, *args)
    return parser


def parse_config(config_class, argv=None, **parser_args):
    """Parses `argv` into a `config_class` instance (argparse errors exit with 2);
    `parser_args` are `build_parser`'s: `prog`, `description`, `name` and the
    training defaults."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--data", default=None)
    demo = pre.parse_known_args(argv)[0].data is None
    parser = build_parser(config_class, **parser_args, demo=demo)
    args = vars(parser.parse_args(argv))
    # The recipe's --run-dir is the training's `run_dir` too.
    training = {f.name: args.get(f.name) for f in dataclasses.fields(TrainingConfig)}
    # A training default of None is derived from other flags by `validate()`.
    given = {k: v for k, v in training.items() if v is not None}
    derived = [k for k in training if k not in given]
    own = [f.name for f in dataclasses.fields(config_class) if f.name != "training"]
    try:
        options = {k: args[k] for k in own}
        config = config_class(training=TrainingConfig(**given), **options)
        for key in derived:
            setattr(config.training, key, None)
        config.validate()
        if derived:  # the derived values pass the checks the given ones do
            config.training = dataclasses.replace(config.training)
    except (ValueError, ConfigError) as e:
        parser.error(str(e))
    for flag, path in config.data_paths():
        if not os.path.exists(path):
            parser.error(f"{flag}: no such file or folder: {path}")
    return config
