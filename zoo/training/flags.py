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
import copy
import dataclasses
import math
import os
import sys
import typing

MISSING = dataclasses.MISSING

# Recipe fields that never change what is trained.
OUTPUT_FIELDS = (
    "data",
    "run_dir",
    "report_dir",
    "export_dir",
    "no_export",
    "report_samples",
    "debug",
    "training",
    "warmup_texts",
    "warmup_stories",
)


def _positive(value):
    if not value > 0:
        raise ValueError("must be > 0")


def _non_negative(value):
    if not value >= 0:
        raise ValueError("must be >= 0")


def _fraction(value):
    if not 0 <= value <= 1:
        raise ValueError("must be in [0, 1]")


def _open_fraction(value):
    if not 0 <= value < 1:
        raise ValueError("must be in [0, 1)")


CHECKS = {
    "positive": _positive,
    "non_negative": _non_negative,
    "fraction": _fraction,
    "open_fraction": _open_fraction,
}


def option(
    default,
    help,
    *,
    demo=MISSING,
    choices=None,
    check=None,
    metavar=None,
    type=None,
    negatable=False,
):
    """A recipe option: a dataclass field that `build_parser` turns into a flag.

    Args:
        default: the default value (with `--data`).
        help: the flag's help line (required: every flag says what it does).
        demo: the default on the generated demo corpus (no `--data`), if different.
        choices: the accepted values.
        check: `"positive"`, `"non_negative"`, `"fraction"` ([0, 1]),
            `"open_fraction"` ([0, 1)) or a callable that raises `ValueError` for a
            bad value; `None` values are always accepted.
        metavar: the value's name in `--help`.
        type: the parser of the value, when the annotation is not enough.
        negatable: a bool option that defaults to False everywhere still gets
            `--no-FLAG` (as one that defaults to True does).
    """
    if not help:
        raise ValueError("every recipe option needs a help line")
    if isinstance(check, str) and check not in CHECKS:
        raise ValueError(
            f"`check` must be one of {sorted(CHECKS)}. Received: {check!r}"
        )
    metadata = {
        "help": help,
        "demo": demo,
        "choices": choices,
        "check": check,
        "metavar": metavar,
        "type": type,
        "negatable": negatable,
    }
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(
            default_factory=lambda: copy.deepcopy(default), metadata=metadata
        )
    return dataclasses.field(default=default, metadata=metadata)


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


def _training_config_class():
    from zoo.training import TrainingConfig

    return TrainingConfig


def _default_training():
    return _training_config_class()()


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

    data: str = option(
        None,
        "training data: a file or folder (formats below); absent: the generated "
        "demo corpus",
        metavar="PATH",
    )
    run_dir: str = option(
        None,
        "checkpoints, backup (resumption) and logs; one run at a time (locked "
        "while it runs; another configuration is refused while a backup is there: "
        "give it its own folder)",
        metavar="DIR",
    )
    report_dir: str = option(
        None,
        "metrics, attention maps and reports",
        metavar="DIR",
    )
    export_dir: str = option(
        "saved_models", "TF Serving base folder: exports go to DIR/NAME/VERSION/"
    )
    no_export: bool = option(False, "skip the SavedModel export")
    max_train_samples: int = option(
        None,
        "train on a seeded sample of at most N examples",
        check="positive",
        metavar="N",
    )
    max_eval_samples: int = option(
        None,
        "validate and test on seeded samples of at most N examples each",
        check="positive",
        metavar="N",
    )
    demo_size: int = option(
        1000, "examples in the generated demo corpus", check="positive", metavar="N"
    )
    report_samples: int = option(
        8,
        "test examples drawn in the attention report",
        check="non_negative",
        metavar="N",
    )
    xla: bool = option(False, "compile the training step with XLA (jit_compile)")
    debug: bool = option(False, "show tracebacks instead of one-line errors")
    training: typing.Any = dataclasses.field(default_factory=_default_training)

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
        ones a resumed run may change (`zoo.training.RESUMABLE_FIELDS`).
        """
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in OUTPUT_FIELDS
        }


# --- Parser -----------------------------------------------------------------------------


def _flag(name):
    return "--" + name.replace("_", "-")


def _base_type(annotation):
    """`int` for `int`, `Optional[int]`, `int | None`; `str` for anything unknown."""
    if annotation in (int, float, str, bool):
        return annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if len(args) == 1 and args[0] in (int, float, str, bool):
        return args[0]
    return str


def _verbosity(text):
    return int(text) if text.lstrip("-").isdigit() else text


def _converter(parse, check):
    """An argparse `type` that parses, then checks, naming the flag and the value."""

    def convert(text):
        try:
            value = parse(text)
        except (TypeError, ValueError):
            name = getattr(parse, "__name__", "value")
            raise argparse.ArgumentTypeError(
                f"invalid {name} value: {text!r}"
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
        if check is not None:
            fn = CHECKS[check] if isinstance(check, str) else check
            try:
                fn(value)
            except ValueError as e:
                raise argparse.ArgumentTypeError(f"{e}, got {text!r}") from None
        return value

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def _add_field(group, field, annotation, default, demo_default, demo):
    meta = field.metadata
    help_text = meta.get("help")
    if not help_text:
        raise ValueError(f"option {field.name!r} has no help line")
    flag = _flag(field.name)
    kind = meta.get("type") or _base_type(annotation)
    shown = demo_default if demo and demo_default is not MISSING else default
    if demo_default is not MISSING and demo_default != default:
        help_text += f" [with --data: {default!r}; demo: {demo_default!r}]"
    if kind is bool:
        # --flag/--no-flag whenever either default is True, so both spellings work
        # with and without --data.
        either = shown or default or (demo_default is not MISSING and demo_default)
        if either or meta.get("negatable"):
            group.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=shown,
                help=help_text,
            )
        else:
            group.add_argument(flag, action="store_true", default=shown, help=help_text)
        return
    if field.name == "verbose":
        kind = _verbosity
    choices = meta.get("choices")
    group.add_argument(
        flag,
        type=_converter(kind, meta.get("check")),
        default=shown,
        choices=choices,
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


def demo_requested(argv):
    """True when `argv` has no `--data` (the demo corpus will be used)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--data", default=None)
    return pre.parse_known_args(argv)[0].data is None


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
    hints = typing.get_type_hints(config_class)
    recipe_group = parser.add_argument_group("recipe")
    common_group = parser.add_argument_group("data and output")
    common = {f.name for f in dataclasses.fields(RecipeConfig)}
    for field in dataclasses.fields(config_class):
        if field.name == "training":
            continue
        default = field.default
        if default is MISSING and field.default_factory is not MISSING:
            default = field.default_factory()
        if field.name == "run_dir" and default is None:
            default = f"runs/{name}"
        if field.name == "report_dir" and default is None:
            default = f"reports/{name}"
        group = common_group if field.name in common else recipe_group
        _add_field(
            group,
            field,
            hints.get(field.name),
            default,
            field.metadata.get("demo", MISSING),
            demo,
        )

    training_class = _training_config_class()
    training_hints = typing.get_type_hints(training_class)
    training_group = parser.add_argument_group("training")
    training_defaults = dict(training_defaults or {})
    demo_training_defaults = dict(demo_training_defaults or {})
    for field in dataclasses.fields(training_class):
        if field.name == "run_dir":
            continue  # the recipe's --run-dir
        default = training_defaults.get(field.name, field.default)
        demo_default = demo_training_defaults.get(field.name, MISSING)
        meta = dict(field.metadata)
        meta.setdefault("help", field.name.replace("_", " "))
        if default is None:  # resolved by the recipe's `Config.validate`
            rule = getattr(config_class, "DERIVED", {}).get(field.name)
            meta["help"] += f" (None: {rule or 'derived from other flags'})"
        shim = dataclasses.field(metadata=meta)
        shim.name = field.name
        _add_field(
            training_group,
            shim,
            training_hints.get(field.name),
            default,
            demo_default,
            demo,
        )
    return parser


def parse_config(
    config_class,
    argv=None,
    *,
    prog,
    description,
    name,
    training_defaults=None,
    demo_training_defaults=None,
):
    """Parses `argv` into a `config_class` instance (argparse errors exit with 2)."""
    from zoo.errors import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    demo = demo_requested(argv)
    parser = build_parser(
        config_class,
        prog,
        description,
        name,
        training_defaults,
        demo_training_defaults,
        demo,
    )
    args = vars(parser.parse_args(argv))
    training_class = _training_config_class()
    training_names = {f.name for f in dataclasses.fields(training_class)}
    recipe_names = {f.name for f in dataclasses.fields(config_class)} - {"training"}
    training_values = {k: args[k] for k in training_names if k in args}
    training_values["run_dir"] = args["run_dir"]
    # A training default of None is derived from other flags by `validate()`.
    derived = [k for k, v in training_values.items() if v is None]
    try:
        training = training_class(
            **{k: v for k, v in training_values.items() if k not in derived}
        )
        for name in derived:
            setattr(training, name, None)
        config = config_class(
            training=training, **{k: args[k] for k in recipe_names if k in args}
        )
        config.validate()
        if derived:  # the derived values pass the checks the given ones do
            config.training = dataclasses.replace(config.training)
    except (ValueError, ConfigError) as e:
        parser.error(str(e))
    for flag, path in config.data_paths():
        if not os.path.exists(path):
            parser.error(f"{flag}: no such file or folder: {path}")
    return config
