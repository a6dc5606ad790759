"""The `zoo` command: train a recipe, ask an export or a running TF Serving, verify,
deploy.

```
zoo --version
zoo train --list
zoo train RECIPE [FLAGS ...]          # = python -m zoo.recipes.RECIPE FLAGS (new process)
zoo predict EXPORT [TEXT ...] [--input FILE] [--signature NAME]
zoo predict EXPORT --story LINE [--story LINE ...] --question TEXT   # MemN2N
zoo predict --server HOST:PORT --model NAME [--rest] [TEXT ... | --input FILE]
zoo verify EXPORT
zoo deploy [saved_models] [--device cpu|gpu]
```

`zoo predict` writes one JSON line per input row with every output of the signature
(attention included). Locally it loads the export the way TF Serving does
(`zoo.serving.SavedModelSession`); with `--server` it asks a running TF Serving over
gRPC (TF Serving's `--port`, 8500 in `zoo deploy`'s files) or, with `--rest`, over its
REST API (`--rest_api_port`, 8501).

A problem in what was given (a missing export, an unknown signature, a malformed input
line, a refused request) is one line `error: ...` and exit status 2; `--debug` shows
the traceback too. TensorFlow's C++ log lines (`I0000 ... cudart_stub.cc`, `E0000 ...
failed call to cuInit` on a machine without a GPU) are kept off stderr
(`zoo.tf_logging.quiet`); `--debug` or `TF_CPP_MIN_LOG_LEVEL` set to 0-2 shows them.
This module imports only the standard library, `zoo.errors` and `zoo.tf_logging` at
import time, so `zoo --help` answers at once; TensorFlow is imported by the commands
that run a model.
"""

import argparse
import contextlib
import os
import sys

from zoo import tf_logging
from zoo.errors import ConfigError, ZooError, one_line

RECIPES = {
    "translation": "Bahdanau / Luong attention translation (BLEU)",
    "han_classification": "Hierarchical Attention Network document classifier",
    "self_attentive_embedding": "self-attentive sentence embedding classifier",
    "memn2n_babi": "end-to-end memory network on bAbI question answering",
}
ALIASES = {
    "han": "han_classification",
    "embedder": "self_attentive_embedding",
    "memn2n": "memn2n_babi",
}
COMMANDS = ("train", "predict", "verify", "deploy")
DEFAULT_BATCH_SIZE = 64


def _version_text():
    from importlib import metadata

    import zoo

    parts = []
    for dist in ("tensorflow", "tensorflow-text", "keras"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return f"zoo {zoo.__version__} ({', '.join(parts)})"


class _VersionAction(argparse.Action):
    """`--version`, computed only when asked (package metadata takes a moment)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version_text())
        parser.exit()


def _top_parser():
    parser = argparse.ArgumentParser(
        prog="zoo",
        description="Classic NLP attention models as servable software: train a "
        "recipe, ask an export or a running TF Serving, verify and deploy exports.",
        epilog="Run `zoo COMMAND --help` for a command's options; `zoo train --list` "
        "for the recipes.",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        nargs=0,
        help="show the versions of zoo, TensorFlow and Keras and exit",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks of errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("train", help="train a recipe: zoo train RECIPE [FLAGS]")
    sub.add_parser("predict", help="answers from an export or a running TF Serving")
    sub.add_parser("verify", help="verify an export the way TF Serving loads it")
    sub.add_parser("deploy", help="write TF Serving deployment files for the exports")
    return parser


# --- train ---------------------------------------------------------------------------


def resolve_recipe(name):
    """A recipe name or alias (`han`, `han-classification`) -> its module name.

    Raises:
        zoo.errors.ConfigError: for an unknown recipe.
    """
    key = name.replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in RECIPES:
        raise ConfigError(
            f"unknown recipe {name!r}; recipes: {', '.join(RECIPES)} (aliases: "
            + ", ".join(f"{a}={r}" for a, r in ALIASES.items())
            + ")"
        )
    return key


def train_command(recipe, flags=()):
    """The command `zoo train RECIPE FLAGS` runs: `python -m zoo.recipes.RECIPE FLAGS`
    with this interpreter (`zoo.recipes` is the checkout's `recipes/` folder)."""
    module = f"zoo.recipes.{resolve_recipe(recipe)}"
    return [sys.executable, "-m", module, *flags]


def train_environment(environ=None):
    """The recipe's environment: the TensorFlow backend whatever `KERAS_BACKEND`
    says (the recipes train and export with TensorFlow), TensorFlow's C++ log level
    as `zoo.tf_logging.quiet` left it, and `import zoo` registering no models until
    the recipe has quieted TensorFlow's logging."""
    env = dict(os.environ if environ is None else environ)
    env["KERAS_BACKEND"] = "tensorflow"
    env["ZOO_LAZY_IMPORT"] = "1"
    return env


def require_extra(extra, modules):
    """Raises a one-line `ConfigError` naming `pip install ".[extra]"` when one of
    `modules` (import names) is not installed."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(
            f"{', '.join(missing)} is not installed; this command needs the "
            f'{extra!r} extra: pip install "attention-zoo[{extra}]" (from a checkout: '
            f'pip install ".[{extra}]")'
        )


def _recipe_list():
    aliases = {v: k for k, v in ALIASES.items()}
    width = max(map(len, RECIPES))
    lines = []
    for name, summary in RECIPES.items():
        alias = f" (alias {aliases[name]})" if name in aliases else ""
        lines.append(f"  {name:<{width}}  {summary}{alias}")
    return "\n".join(lines)


_TRAIN_USAGE = """\
usage: zoo train RECIPE [FLAGS ...]
       zoo train --list

Runs `python -m zoo.recipes.RECIPE FLAGS` (the script recipes/RECIPE.py) with this
Python in a new process, on the TensorFlow backend whatever KERAS_BACKEND says; FLAGS
are the recipe's own (`zoo train RECIPE --help` lists them). TensorFlow's C++ log lines
are kept off stderr unless --debug is given or TF_CPP_MIN_LOG_LEVEL is set (0-2).

recipes:
{recipes}
"""


def _train(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(_TRAIN_USAGE.format(recipes=_recipe_list()), end="")
        return 0
    if argv[0] == "--list":
        print(_recipe_list())
        return 0
    command = train_command(argv[0], argv[1:])
    if not {"-h", "--help"} & set(argv[1:]):
        require_extra("train", ("tensorflow", "tensorflow_text"))
    tf_logging.quiet("--debug" in argv[1:])  # sets TF_CPP_MIN_LOG_LEVEL for the child
    env = train_environment()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(command[0], command, env)  # the recipe's exit status is zoo's
    import subprocess

    return subprocess.call(command, env=env)


# --- predict -------------------------------------------------------------------------


def _predict_parser():
    parser = argparse.ArgumentParser(
        prog="zoo predict",
        usage="zoo predict EXPORT [TEXT ...] [options]\n"
        "       zoo predict --server HOST:PORT --model NAME [--rest] [TEXT ...] "
        "[options]",
        description="One JSON line per input row with every output of the signature "
        "(attention included). Inputs: TEXT arguments (a signature with one input), "
        "--input FILE (txt: one text per line; jsonl: one object per line keyed by "
        "the input names; csv/tsv: a header naming the inputs), or --story/--question "
        "(MemN2N).",
    )
    parser.add_argument(
        "args",
        nargs="*",
        metavar="EXPORT/TEXT",
        help="saved_models/NAME[/VERSION] (latest version by default), then the texts; "
        "with --server, only texts",
    )
    parser.add_argument("--input", "-i", metavar="FILE", help="input file ('-': stdin)")
    parser.add_argument(
        "--format",
        choices=("txt", "jsonl", "csv", "tsv"),
        help="format of --input (default: from the extension, else txt)",
    )
    parser.add_argument(
        "--signature", "-s", default="serving_default", help="(default: %(default)s)"
    )
    parser.add_argument(
        "--story",
        action="append",
        metavar="LINE",
        help="one line of a MemN2N story (repeat for each line)",
    )
    parser.add_argument("--question", metavar="TEXT", help="the MemN2N question")
    parser.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help=f"rows per request (default {DEFAULT_BATCH_SIZE}, at most the export's "
        "max_batch_size)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="(default: stdout)")
    remote = parser.add_argument_group("a running TF Serving")
    remote.add_argument("--server", metavar="HOST:PORT", help="ask this server")
    remote.add_argument("--model", metavar="NAME", help="the served model name")
    remote.add_argument(
        "--version",
        dest="model_version",
        type=int,
        metavar="V",
        help="model version (default: the latest)",
    )
    remote.add_argument(
        "--rest",
        action="store_true",
        help="use the REST API (HOST:PORT is then the REST port, 8501 by default)",
    )
    remote.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per request"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _rows(args, texts, input_names):
    from zoo.serving import inputs

    fields = {}
    if args.story is not None:
        fields["story"] = "\n".join(args.story)
    if args.question is not None:
        fields["question"] = args.question
    sources = [bool(texts), args.input is not None, bool(fields)]
    if sum(sources) > 1:
        raise ConfigError(
            "give the inputs one way: TEXT arguments, --input FILE, or --story and "
            "--question"
        )
    if args.input is not None:
        return inputs.read_rows(args.input, input_names, args.format)
    if fields:
        if set(fields) != set(input_names):
            raise ConfigError(
                f"the signature takes {', '.join(sorted(input_names))}; given: "
                f"{', '.join('--' + k for k in sorted(fields))}"
            )
        return [fields]
    if texts:
        return inputs.rows_from_texts(texts, input_names)
    raise ConfigError(
        "nothing to predict: give TEXT arguments, --input FILE, or --story and "
        "--question"
    )


def _predict(argv):
    parser = _predict_parser()
    args = parser.parse_intermixed_args(argv)
    tf_logging.quiet(args.debug)
    return _run(args.debug, _predict_with, args)


def _predict_with(args):
    positional = list(args.args)
    remote_only = {
        "--model": args.model,
        "--version": args.model_version,
        "--rest": args.rest or None,
    }
    if args.server is None:
        given = [flag for flag, value in remote_only.items() if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} needs --server HOST:PORT")
        if not positional:
            raise ConfigError("give the export folder: zoo predict EXPORT [TEXT ...]")
        from zoo.export.paths import resolve_version_dir

        version_dir = resolve_version_dir(positional.pop(0))  # before TensorFlow
        client = _local_client(version_dir)
        limit = _local_batch_limit(version_dir, args.signature)
    else:
        if not args.model:
            raise ConfigError("--server needs --model NAME (the served model name)")
        client = _remote_client(args)
        limit = None
    batch_size = args.batch_size or (
        min(DEFAULT_BATCH_SIZE, limit) if limit else DEFAULT_BATCH_SIZE
    )
    if batch_size < 1 or (limit and batch_size > limit):
        raise ConfigError(
            f"--batch-size must be between 1 and {limit or 'the server limit'}. "
            f"Received: {batch_size}"
        )
    from zoo.serving import inputs, outputs

    with client:
        spec = client.signature_spec(args.signature)
        input_names = sorted(spec["inputs"])
        rows = _rows(args, positional, input_names)
        out = (
            sys.stdout
            if args.output is None
            else open(args.output, "w", encoding="utf-8")
        )
        try:
            for batch in inputs.batches(rows, batch_size):
                answer = client.predict(
                    inputs.columns(batch, input_names), args.signature
                )
                for row in outputs.output_rows(answer, len(batch)):
                    out.write(outputs.json_line(row) + "\n")
                out.flush()
        finally:
            if out is not sys.stdout:
                out.close()
    return 0


def _local_client(version_dir):
    from zoo.serving.saved_model_session import SavedModelSession

    return SavedModelSession(version_dir)


def _local_batch_limit(version_dir, signature):
    """The signature's `max_batch_size` from the export's manifest, or None."""
    import json

    path = os.path.join(version_dir, "assets.extra", "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    info = (manifest.get("signatures") or {}).get(signature) or {}
    limit = info.get("max_batch_size") or (manifest.get("limits") or {}).get(
        "max_batch_size"
    )
    return int(limit) if limit else None


def _remote_client(args):
    if args.rest:
        from zoo.serving.rest_client import RestClient

        return RestClient(
            args.server, args.model, version=args.model_version, timeout=args.timeout
        )
    from zoo.serving.grpc_client import GrpcClient

    return GrpcClient(
        args.server, args.model, version=args.model_version, timeout=args.timeout
    )


# --- verify, deploy ------------------------------------------------------------------


def _verify(argv):
    debug, argv = _pop_debug(argv)
    tf_logging.quiet(debug)

    def run(argv):
        from zoo.export.verify import main

        return main(argv, prog="zoo verify")

    return _run(debug, run, argv)


def _deploy(argv):
    debug, argv = _pop_debug(argv)
    tf_logging.quiet(debug)

    def run(argv):
        from zoo.export.deploy import main

        return main(argv, prog="zoo deploy")

    return _run(debug, run, argv)


# --- entry point ---------------------------------------------------------------------


def _pop_debug(argv):
    return "--debug" in argv, [a for a in argv if a != "--debug"]


def _run(debug, fn, *args):
    """Runs a command; a `ZooError` becomes one line and its exit status."""
    try:
        return fn(*args)
    except ZooError as e:
        if debug:
            import traceback

            traceback.print_exc()
        print(one_line(e), file=sys.stderr)
        return e.exit_code
    except BrokenPipeError:  # e.g. `zoo predict ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


def main(argv=None):
    """Runs `zoo ARGV`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = False
    i = 0
    while i < len(argv) and argv[i] == "--debug":
        debug, i = True, i + 1
    if i < len(argv) and argv[i] in COMMANDS:
        command, rest = argv[i], argv[i + 1 :]
        if debug and (command != "train" or (rest and not rest[0].startswith("-"))):
            rest = [*rest, "--debug"]  # a recipe takes --debug too
        if command == "train":
            return _run(debug, _train, rest)
        return {"predict": _predict, "verify": _verify, "deploy": _deploy}[command](
            rest
        )
    parser = _top_parser()
    args = parser.parse_args(argv)  # --help, --version, or an unknown command
    if args.command is None:
        parser.print_help()
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2


def run():
    """The console script: `main()`, then the exit. Once TensorFlow is loaded, the
    process ends with `os._exit` after its output is flushed: the interpreter's
    teardown of TensorFlow takes about a second and does nothing a finished command
    needs (its files are closed, its sessions too)."""
    status = main()
    if "tensorflow" not in sys.modules:
        return status
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `zoo predict ... | head`
        pass
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(status if isinstance(status, int) else 1)


if __name__ == "__main__":
    sys.exit(run())
