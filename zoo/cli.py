"""The `zoo` command: train a recipe, ask an export or a running TF Serving, verify,
deploy.

```
zoo --version
zoo train --list
zoo train RECIPE [FLAGS ...]          # = python -m zoo.recipes.RECIPE FLAGS (new process)
zoo predict EXPORT [--input FILE] [--output FILE] [--signature NAME] [--] [TEXT ...]
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

A problem in what was given (a missing export, a damaged one, an unknown signature, a
malformed or over-long input line, a refused request, a missing `serve` extra) is one
line `error: ...` and exit status 2; `--debug` shows the traceback too. `--input` is
streamed batch by batch, `--output` is written whole or not at all, and `--` ends the
options (`zoo predict --help` says more). The commands run on the TensorFlow backend
whatever `KERAS_BACKEND` says. TensorFlow's C++ log lines (`I0000 ... cudart_stub.cc`, `E0000 ...
failed call to cuInit` on a machine without a GPU) are kept off stderr
(`zoo.tf_logging.quiet`); `--debug` or `TF_CPP_MIN_LOG_LEVEL` set to 0-2 shows them.
This module imports only the standard library, `zoo.errors` and `zoo.tf_logging` at
import time, so `zoo --help` answers at once; TensorFlow is imported by the commands
that run a model.
"""

import argparse
import contextlib
import functools
import os
import sys

from zoo import tf_logging
from zoo.errors import ConfigError, ZooError, one_line, printable

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
        action="version",
        version=_version_text(),
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


def _needs_extra(missing, extra):
    return (
        f"{missing}; this command needs the {extra!r} extra: pip "
        f'install "attention-zoo[{extra}]" (from a checkout: pip install ".[{extra}]")'
    )


def require_extra(extra, modules):
    """Raises a one-line `ConfigError` naming `pip install ".[extra]"` when one of
    `modules` (import names) is not installed."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(_needs_extra(f"{', '.join(missing)} is not installed", extra))


def _recipe_list():
    aliases = {name: f" (alias {alias})" for alias, name in ALIASES.items()}
    width = max(map(len, RECIPES))
    return "\n".join(
        f"  {name:<{width}}  {summary}{aliases.get(name, '')}"
        for name, summary in RECIPES.items()
    )


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
    env = train_environment()  # TF_CPP_MIN_LOG_LEVEL as `tf_logging.quiet` set it
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(command[0], command, env)  # the recipe's exit status is zoo's
    import subprocess

    return subprocess.call(command, env=env)


# --- predict -------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (a `ConfigError`)."""

    def error(self, message):
        if "unrecognized arguments: -" in message:
            message += (
                " (put -- before texts that start with '-': zoo predict EXPORT -- "
                "TEXT ...)"
            )
        raise ConfigError(message)


_PREDICT_EPILOG = """\
texts that start with '-':
  Options end at --: `zoo predict EXPORT -- "-1 star" "--bad"` predicts on those
  texts. Without --, a text such as "-i/etc/hostname" or "-ofile" is refused (it
  reads as an option with its value attached), and option names cannot be
  abbreviated. An option's value that starts with '-' takes '=':
  --question="-why?".

files:
  --input is read as it goes, one batch at a time: a file, - (standard input) or a
  named pipe (a stream: zoo waits for its writer); a device such as /dev/zero is
  refused. A line longer than --max-line-mb (line ending not counted; a csv/tsv
  field too) is an error naming its line: the default is the largest max_*_bytes
  limit of the export's manifest plus 64 KiB for the other fields and the JSON or
  CSV syntax, else 1 MiB. A .gz file is bounded by
  the lines it expands to. --output is written to a temporary file in its folder and
  renamed at the end: a run that stops (a bad input line, a failing server) leaves
  the previous file as it was and says how many rows it had answered; without
  --output, the rows answered before the error are on stdout. --output naming the
  input file is refused.
"""


def _positive_number(text, maximum, unit):
    """An argparse type: a finite number in (0, maximum]."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= maximum:  # False for nan; inf is over the maximum
        raise argparse.ArgumentTypeError(
            f"must be a number of {unit} above 0 and at most {maximum:g}. "
            f"Received: {text!r}"
        )
    return value


_seconds = functools.partial(_positive_number, maximum=86400.0, unit="seconds")
_MAX_LINE_MB = 65536
_megabytes = functools.partial(_positive_number, maximum=_MAX_LINE_MB, unit="MiB")
DEFAULT_MAX_LINE_BYTES = 1 << 20
_LINE_SYNTAX_BYTES = 1 << 16  # room for the other fields and the JSON/CSV syntax
_SHORT_OPTIONS = ("-i", "-o", "-s", "-h")


def _refuse_attached_values(argv):
    """Refuses "-i/etc/hostname" (before any --): argparse reads it as `-i` with the
    value attached, where a text was likely meant."""
    for arg in argv:
        if arg == "--":
            return
        if len(arg) > 2 and arg[:2] in _SHORT_OPTIONS:
            raise ConfigError(
                f"{arg!r} reads as the option {arg[:2]} with the value {arg[2:]!r}: "
                f"give the option apart from its value ({arg[:2]} VALUE), or put -- "
                "before texts that start with '-' (zoo predict EXPORT -- TEXT ...)"
            )


def _predict_parser():
    parser = _Parser(
        prog="zoo predict",
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_PREDICT_EPILOG,
        usage="zoo predict EXPORT [options] [--] [TEXT ...]\n"
        "       zoo predict --server HOST:PORT --model NAME [--rest] [options] [--] "
        "[TEXT ...]",
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
        "--timeout",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="the most a request may take, all told (default: %(default)g)",
    )
    remote.add_argument(
        "--max-answer-mb",
        type=_megabytes,
        metavar="MB",
        help="the largest answer read from the server (default: the client's limit "
        "for the signature and the batch)",
    )
    parser.add_argument(
        "--max-line-mb",
        type=_megabytes,
        metavar="MB",
        help="the longest --input line (default: from the export's manifest, else 1)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _rows(args, texts, input_names, max_line_bytes):
    """The request rows: a list, or for --input an iterator over the file's rows."""
    from zoo.serving import inputs

    fields = {}
    if args.story is not None:
        fields["story"] = "\n".join(args.story)
    if args.question is not None:
        fields["question"] = args.question
    if sum([bool(texts), args.input is not None, bool(fields)]) > 1:
        raise ConfigError(
            "give the inputs one way: TEXT arguments, --input FILE, or --story and "
            "--question"
        )
    if args.input is not None:
        return inputs.iter_rows(args.input, input_names, args.format, max_line_bytes)
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
    _refuse_attached_values(argv)
    return _predict_with(_predict_parser().parse_intermixed_args(argv))


def _check_output(output, source):
    """Refuses an --output that is a folder, in a missing folder, or the input."""
    folder = os.path.dirname(os.path.abspath(output))
    if os.path.isdir(output):
        raise ConfigError(f"--output {output} is a folder; name a file")
    if not os.path.isdir(folder):
        raise ConfigError(f"--output {output}: no such folder {folder}")
    same = False
    with contextlib.suppress(OSError, ValueError, TypeError):  # no input, no stdin
        read = os.fstat(sys.stdin.fileno()) if source == "-" else os.stat(source)
        same = os.path.samestat(read, os.stat(output))  # links to it too
    if same:
        raise ConfigError(
            f"--output {output} is the input file; write the answers to another file"
        )


@contextlib.contextmanager
def _output(path):
    """Yields the file the answers go to: stdout, or a temporary file next to `path`
    renamed onto it at the end (an existing device or pipe, e.g. /dev/null, is
    written as it is). A `ZooError` raised inside says how many rows were answered
    and what became of `path`, once `progress["rows"]` counts (from 0)."""
    progress = {"rows": None}
    try:
        with contextlib.ExitStack() as stack:
            if path is None and sys.stdout is None:  # started with it closed
                raise ConfigError("stdout is closed; give --output FILE")
            if path is None:
                out, where = sys.stdout, "on stdout above"
            elif os.path.exists(path) and not os.path.isfile(path):
                out, where = stack.enter_context(open(path, "w", encoding="utf-8")), ""
            else:
                from zoo.io import atomic_write

                exists = os.path.exists(path)
                where = f"{path} {'is left as it was' if exists else 'was not written'}"
                try:
                    out = stack.enter_context(atomic_write(path))
                except OSError as e:
                    reason = e.strerror or type(e).__name__
                    raise ConfigError(
                        f"--output {path}: cannot write there ({reason})"
                    ) from None
            try:
                yield out, progress
            except ZooError as e:
                rows = progress["rows"]
                if rows is None or (rows == 0 and path is None):
                    raise  # nothing was answered, nothing written
                note = f"stopped after {rows} row{'s' if rows != 1 else ''} answered"
                if where:
                    note += f" ({where})"
                stopped = ZooError(f"{e}; {note}")
                stopped.exit_code = e.exit_code
                raise stopped from e
    except OSError as e:  # a full disk, /dev/full (not a closed pipe)
        if isinstance(e, BrokenPipeError):
            raise
        reason = e.strerror or type(e).__name__
        target = "stdout" if path is None else f"--output {path}"
        raise ConfigError(f"{target}: cannot write the answers ({reason})") from None


def _predict_with(args):
    from zoo.serving.inputs import unicode_problem

    # Refused before anything is loaded or read.
    given = [("--story", s) for s in args.story or ()] + [("--question", args.question)]
    for flag, value in given:
        problem = value is not None and unicode_problem(value)
        if problem:
            raise ConfigError(f"{flag} {problem}")
    if args.question is not None and not args.question.strip():
        raise ConfigError("--question is empty; give the question to answer")
    if args.output is not None:
        _check_output(args.output, args.input)
    positional = list(args.args)
    remote_only = {
        "--model": args.model,
        "--version": args.model_version,
        "--rest": args.rest or None,
        "--max-answer-mb": args.max_answer_mb,
    }
    if args.server is None:
        given = [flag for flag, value in remote_only.items() if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} needs --server HOST:PORT")
        if not positional:
            raise ConfigError("give the export folder: zoo predict EXPORT [TEXT ...]")
        from zoo.export.paths import resolve_version_dir

        version_dir = resolve_version_dir(positional.pop(0))  # before TensorFlow
        limit, line_limit = _local_limits(version_dir, args.signature)
    else:
        if not args.model:
            raise ConfigError("--server needs --model NAME (the served model name)")
        limit, line_limit = None, DEFAULT_MAX_LINE_BYTES
    if args.max_line_mb is not None:
        line_limit = int(args.max_line_mb * 2**20)
    batch_size = args.batch_size
    if batch_size is None:
        batch_size = min(DEFAULT_BATCH_SIZE, limit or DEFAULT_BATCH_SIZE)
    if batch_size < 1 or (limit and batch_size > limit):
        raise ConfigError(
            f"--batch-size must be between 1 and {limit or 'the server limit'}. "
            f"Received: {batch_size}"
        )
    if args.server is not None:
        from zoo.serving import grpc_client, rest_client

        client_class = rest_client.RestClient if args.rest else grpc_client.GrpcClient
        mb = args.max_answer_mb
        answer_bytes = None if mb is None else int(mb * 2**20)
        client = client_class(
            args.server, args.model, args.model_version, args.timeout, answer_bytes
        )
    else:
        from zoo.serving.saved_model_session import SavedModelSession

        client = SavedModelSession(version_dir)
    from zoo.serving import inputs, outputs

    with client, _output(args.output) as (out, progress):
        spec = client.signature_spec(args.signature)
        input_names = sorted(spec["inputs"])
        rows = _rows(args, positional, input_names, line_limit)
        progress["rows"] = 0
        for batch in inputs.batches(rows, batch_size):
            answer = client.predict(inputs.columns(batch, input_names), args.signature)
            rows_out = outputs.output_rows(answer, len(batch))
            out.write("".join(outputs.json_line(r) + "\n" for r in rows_out))
            out.flush()
            progress["rows"] += len(batch)
    return 0


def _local_limits(version_dir, signature):
    """`(max_batch_size, longest --input line)` as the export's manifest records
    them (`zoo.export.manifest`): the signature's `max_batch_size` or None, and the
    largest `max_*_bytes` limit plus room for the syntax, else
    `DEFAULT_MAX_LINE_BYTES`."""
    from zoo.export import manifest as manifest_lib

    try:
        manifest = manifest_lib.load_manifest(version_dir)
    except manifest_lib.MissingManifestError:
        manifest = {}
    limits = manifest_lib.batch_limits(manifest, version_dir)
    if signature not in limits:  # not listed: the export-wide limit
        listed = {**manifest, "signatures": {signature: {}}}
        limits = manifest_lib.batch_limits(listed, version_dir)
    found = manifest_lib.byte_limits(manifest, version_dir).values()
    line = max(found) + _LINE_SYNTAX_BYTES if found else DEFAULT_MAX_LINE_BYTES
    return limits[signature], min(line, _MAX_LINE_MB << 20)  # as --max-line-mb


# --- verify, deploy ------------------------------------------------------------------


def _export_command(name, argv):
    """`zoo verify` / `zoo deploy`: `zoo.export.verify.main` / `.deploy.main`."""
    import importlib

    return importlib.import_module(f"zoo.export.{name}").main(argv, prog=f"zoo {name}")


# --- entry point ---------------------------------------------------------------------


def _pop_debug(argv):
    """Whether `--debug` is given before any `--`, and `argv` without it."""
    end = argv.index("--") if "--" in argv else len(argv)
    kept = [a for a in argv[:end] if a != "--debug"] + argv[end:]
    return len(kept) < len(argv), kept


# import name -> what `pip install` brings it
_DISTRIBUTIONS = {
    "tensorflow": "tensorflow",
    "tensorflow_text": "tensorflow-text",
    "tensorflow_serving": "tensorflow-serving-api",
    "grpc": "grpcio",
    "google": "protobuf",
}


def _run(debug, fn, *args, extra=None):
    """Runs a command; a `ZooError` becomes one line and its exit status, and so does
    a module missing from `extra` (the `pip install` that brings it)."""
    try:
        return fn(*args)
    except (ModuleNotFoundError, ZooError) as e:
        root = (getattr(e, "name", None) or "").split(".")[0]
        if isinstance(e, ZooError):
            message = one_line(e)
        elif extra is not None and root in _DISTRIBUTIONS:
            missing = f"{_DISTRIBUTIONS[root]} is not installed (no module {e.name!r})"
            message = f"error: {_needs_extra(missing, extra)}"
        else:
            raise
        if debug:
            import traceback

            traceback.print_exc()
        # what a server or a file said, its control characters shown, not obeyed
        message = printable(message)
        print(message, file=sys.stderr)
        return getattr(e, "exit_code", 2)
    except BrokenPipeError:  # e.g. `zoo predict ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


def main(argv=None):
    """Runs `zoo ARGV`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    i = next((i for i, arg in enumerate(argv) if arg != "--debug"), len(argv))
    debug = i > 0  # --debug before the command
    if i < len(argv) and argv[i] in COMMANDS:
        command, rest = argv[i], argv[i + 1 :]
        if command != "train" and "keras" not in sys.modules:
            os.environ["KERAS_BACKEND"] = "tensorflow"  # exports run on TensorFlow
        if debug and command != "train":
            rest = ["--debug", *rest]  # before any "--"
        elif debug and rest and not rest[0].startswith("-"):
            rest = [*rest, "--debug"]  # a recipe takes --debug too
        # --debug given before any "--": TensorFlow's C++ log level, also for a
        # recipe's process, and (but for train) the traceback of an error
        shown, kept = _pop_debug(rest[1:] if command == "train" else rest)
        tf_logging.quiet(shown)
        if command == "train":
            return _run(debug, _train, rest)
        if command == "predict":  # its parser takes --debug
            return _run(shown, _predict, rest, extra="serve")
        return _run(shown, _export_command, command, kept, extra="serve")
    parser = _top_parser()
    args = parser.parse_args(argv)  # --help, --version, or an unknown command
    if args.command is None:
        parser.print_help()
        return 2
    parser.error(f"unknown command {args.command!r}")  # exits with status 2


def run():
    """The console script: `main()`, then the exit. Once TensorFlow is loaded, the
    process ends with `os._exit` after its output is flushed: the interpreter's
    teardown of TensorFlow takes about a second and does nothing a finished command
    needs (its files are closed, its sessions too)."""
    status = main()
    if "tensorflow" not in sys.modules:
        return status
    try:
        if sys.stdout is not None:  # None: started with it closed
            sys.stdout.flush()
    except BrokenPipeError:  # e.g. `zoo predict ... | head`
        pass
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    os._exit(status if isinstance(status, int) else 1)


if __name__ == "__main__":
    sys.exit(run())
