"""What a run folder is a run of, and whether its backup may be resumed.

`fit` writes `run_dir/run.json` when a run starts afresh: the run's identity, made of

- `training`: the fields of the `TrainingConfig` that define what is trained
  (`TrainingConfig.identity()`: learning rate, batch size, seed, decay, averaging,
  monitor; not the number of epochs, which a resume may raise, nor patience,
  verbosity, devices or folders);
- `model`: the number of parameters and a fingerprint of the weights' shapes and
  dtypes;
- the caller's `run_identity` (a recipe passes its name, its configuration and a
  fingerprint of its data and vocabularies, made with `fingerprint`).

When `run_dir` holds a backup, the run's identity is compared with `run.json`. The
same identity resumes (and says so: `resuming <run_dir> from epoch N (of M)`); a
different one raises `RunMismatchError` naming the keys that differ, unless
`cfg.resume` is "force" (resume anyway, with a warning) or "never" (delete the backup
and start afresh). A fresh start also deletes what `fit` wrote for an earlier run in
that folder (`best.keras`, `log.csv`, `training_curve.png`, `tensorboard/`), so the
folder holds one run.

A training that finished inside `zoo.training.run_folder.keep_final_backups` (a
recipe's run, until its export is written) leaves its final weights as the backup;
the same run started again loads them and does not train again (it says so:
`resuming <run_dir>: its training finished after N epochs; ...`).
"""

import hashlib
import json
import math
import os
import shutil
import sys

from zoo.errors import ConfigError
from zoo.io import atomic_write

RUN_FILE = "run.json"
CURVE_FILE = "training_curve.png"
# What `fit` writes in a run folder (besides the backup and run.json).
RUN_OUTPUTS = ("best.keras", "log.csv", CURVE_FILE, "tensorboard")

_HOW_TO_PROCEED = (
    "pass --resume never to start afresh in that folder, another --run-dir to keep "
    "it, or --resume force to resume it anyway"
)


class RunMismatchError(ConfigError):
    """A run folder holds a backup of a different run than the one asked for.

    Attributes:
        run_dir: the run folder.
        differences: `(key, recorded value, new value)` triples; the keys are
            dotted paths into the run's identity (e.g. `training.learning_rate`).
    """

    def __init__(self, message, run_dir=None, differences=()):
        super().__init__(message)
        self.run_dir = run_dir
        self.differences = list(differences)


def fingerprint(*parts, length=12):
    """A short hex digest (SHA-256) of `parts`, for a run's identity.

    Each part is hashed by what it is:

    - a `pathlib.Path` (any `os.PathLike`): the file's bytes, or for a folder the
      names and bytes of every file below it (sorted);
    - `str` / `bytes`: the text / the bytes themselves (a `str` is never read as a
      path: wrap paths in `pathlib.Path`);
    - arrays and tensors (anything with `__array__`): dtype, shape and values;
    - lists, tuples, dicts: their items (dicts by sorted key); numbers, bools, None.

    Every part is framed with its type and length, so `("ab", "c")` and `("a", "bc")`
    differ. Hashing reads whole files: for corpora of many gigabytes, pass their
    sizes and modification times as strings instead.

    Raises:
        zoo.errors.MissingPathError: for a path that does not exist.
        zoo.errors.DataError: for a named pipe or a device (in a folder too).
        TypeError: for a part of another type.
    """
    digest = hashlib.sha256()
    for part in parts:
        _feed(digest, part)
    return digest.hexdigest()[:length]


def _frame(digest, tag, payload):
    digest.update(tag + len(payload).to_bytes(8, "little") + payload)


def _feed(digest, part):
    if isinstance(part, os.PathLike):
        _feed_path(digest, os.fspath(part))
    elif isinstance(part, str):
        _frame(digest, b"s", part.encode("utf-8"))
    elif isinstance(part, (bytes, bytearray, memoryview)):
        _frame(digest, b"b", bytes(part))
    elif part is None or isinstance(part, (bool, int, float)):
        _frame(digest, b"n", repr(part).encode())
    elif isinstance(part, dict):
        _frame(digest, b"d", str(len(part)).encode())
        for key in sorted(part, key=str):
            _feed(digest, str(key))
            _feed(digest, part[key])
    elif isinstance(part, (list, tuple)):
        _frame(digest, b"l", str(len(part)).encode())
        for item in part:
            _feed(digest, item)
    elif hasattr(part, "__array__"):
        import numpy as np

        array = np.asarray(part)
        _frame(digest, b"a", f"{array.dtype.str}{array.shape}".encode())
        if array.dtype == object:  # strings of a tf.string tensor, Python objects
            for item in array.ravel().tolist():
                _feed(digest, item)
        else:
            _frame(digest, b"v", np.ascontiguousarray(array).tobytes())
    else:
        raise TypeError(
            "fingerprint() takes paths (pathlib.Path), strings, bytes, numbers, "
            f"arrays, lists and dicts. Received: {type(part).__name__}"
        )


def _feed_path(digest, path):
    from zoo.data.files import check_exists

    check_exists(path)  # a pipe or a device is refused, never read
    if os.path.isdir(path):
        _frame(digest, b"D", b"")
        for root, folders, files in os.walk(path):
            folders.sort()
            for name in sorted(files):
                full = check_exists(os.path.join(root, name), "file")
                _frame(digest, b"f", os.path.relpath(full, path).encode("utf-8"))
                _feed_file(digest, full)
    else:
        _feed_file(digest, path)


def _feed_file(digest, path):
    digest.update(b"F" + os.path.getsize(path).to_bytes(8, "little"))
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)


def model_signature(model):
    """`"<N> parameters in <K> arrays (<fingerprint>)"`: the model's size and a
    fingerprint of its weights' shapes and dtypes (not of their names, which Keras
    numbers per process, nor of their values)."""
    shapes = [(tuple(int(d) for d in w.shape), str(w.dtype)) for w in model.weights]
    count = sum(math.prod(shape) for shape, _ in shapes)
    return f"{count:,} parameters in {len(shapes)} arrays ({fingerprint(shapes)})"


def run_identity_of(cfg, model, run_identity=None):
    """The identity `fit` records for a run: `training`, `model` (its size),
    `model_class` (the object fit: a backup of another class's weights does not load
    into it) and the caller's `run_identity` keys, as JSON would read it back (tuples
    become lists)."""
    identity = {
        "training": cfg.identity(),
        "model": model_signature(model),
        "model_class": type(model).__name__,
    }
    if run_identity is not None:
        if not isinstance(run_identity, dict):
            raise TypeError(
                "`run_identity` must be a JSON-able dict. "
                f"Received: {type(run_identity).__name__}"
            )
        clash = sorted(set(identity) & set(run_identity))
        if clash:
            raise ValueError(
                f"`run_identity` keys {clash} are recorded by `fit` itself; "
                "choose other names."
            )
        identity.update(run_identity)
    try:
        return json.loads(json.dumps(identity, sort_keys=True))
    except (TypeError, ValueError) as e:
        raise TypeError(f"`run_identity` must be a JSON-able dict ({e})") from None


def differences(recorded, identity, prefix=""):
    """`(dotted key, recorded value, new value)` of every leaf that differs (a key
    present on one side only has `None` on the other)."""
    found = []
    for key in sorted(set(recorded) | set(identity), key=str):
        old, new = recorded.get(key), identity.get(key)
        name = f"{prefix}{key}"
        if isinstance(old, dict) and isinstance(new, dict):
            found += differences(old, new, prefix=f"{name}.")
        elif old != new:
            found.append((name, old, new))
    return found


def describe(found):
    """`key: old -> new, ...` for the message of a `RunMismatchError` (each value
    as JSON, cut at 60 characters)."""

    def show(value):
        text = json.dumps(value, sort_keys=True)
        return text if len(text) <= 60 else text[:57] + "..."

    return ", ".join(f"{key}: {show(old)} -> {show(new)}" for key, old, new in found)


def read_record(run_dir):
    """The `run.json` of `run_dir` as a dict, or None when there is none."""
    path = os.path.join(run_dir, RUN_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError:
        return {}  # unreadable: compared as an empty identity
    return record if isinstance(record, dict) else {}


def write_record(run_dir, record):
    with atomic_write(os.path.join(run_dir, RUN_FILE)) as f:
        json.dump(record, f, indent=2, sort_keys=True)
        f.write("\n")


def start_fresh(run_dir, backup, identity, epochs):
    """Deletes the backup and what `fit` wrote for an earlier run in `run_dir`,
    and records `identity` in `run.json`."""
    backup.remove()
    for name in RUN_OUTPUTS:
        path = os.path.join(run_dir, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    write_record(run_dir, {"identity": identity, "epochs": epochs})


def trim_log(csv_path, completed):
    """Keeps the header and the rows of the first `completed` epochs of `log.csv`
    (Keras' `CSVLogger` writes one line per epoch, in order): a run killed after
    logging an epoch but before backing it up trains that epoch again."""
    if os.path.exists(csv_path):
        with open(csv_path, newline="") as f:
            lines = f.readlines()
        if len(lines) > completed + 1:
            with atomic_write(csv_path, newline="") as f:
                f.writelines(lines[: completed + 1])


def start_or_resume(run_dir, cfg, identity, backup, csv_path):
    """Decides whether `fit` resumes the backup in `run_dir`.

    Returns:
        `(initial_epoch, backup_path)`: the epoch to start at (the number of
        completed epochs when resuming, 0 for a fresh start) and the backup to load
        (None for a fresh start). When the folder holds the final weights of a
        finished training (`Backup.final`, kept until the caller's run completed),
        `backup_path` is that file and training is not to be repeated
        (`backup.is_final(backup_path)`).

    Raises:
        RunMismatchError: when the backup is of a different run (or of an unknown
            one) and `cfg.resume` is "auto", or when it holds more completed epochs
            than `cfg.epochs`.
        zoo.training.checkpoints.UnreadableBackupError: when the backup to resume
            cannot be read (a truncated file); nothing in `run_dir` is changed.
    """
    finished, final_path = backup.final()
    completed, path = (finished, final_path) if final_path else backup.latest()
    if path is None or cfg.resume == "never":
        start_fresh(run_dir, backup, identity, cfg.epochs)
        return 0, None
    record = read_record(run_dir)
    found = differences((record or {}).get("identity", {}), identity)
    problem = f"{run_dir} holds a backup of a different run ({describe(found)})"
    if record is None:
        problem = (
            f"{run_dir} holds a backup but no {RUN_FILE} saying what it is a run of"
        )
        found = []
    mismatch = record is None or found
    if mismatch and cfg.resume != "force":
        raise RunMismatchError(
            f"{problem}: {_HOW_TO_PROCEED}", run_dir=run_dir, differences=found
        )
    # With validation rounds (`cfg.validations_per_epoch`), the backup counts rounds
    # and the messages count passes over the data (1.5 = the middle of pass 2).
    rounds = cfg.validations_per_epoch
    passes = completed / rounds
    if completed > cfg.epochs * rounds and final_path is None:
        raise RunMismatchError(
            f"{run_dir} holds a backup after {passes:g} epochs, more than the "
            f"{cfg.epochs} asked for: pass --epochs {math.ceil(passes)} or more to "
            "resume it, or --resume never to start afresh in that folder",
            run_dir=run_dir,
        )
    # Before the record is written: a backup that cannot be read leaves the folder
    # as it was, so the same command says the same.
    backup.check(path, passes)
    forced = list((record or {}).get("forced", []))
    if mismatch:
        print(
            f"warning: {problem}; resuming it anyway (--resume force)", file=sys.stderr
        )
        forced.append({"after_epoch": completed, "differences": describe(found)})
    new_record = {"identity": identity, "epochs": cfg.epochs}
    write_record(run_dir, {**new_record, "forced": forced} if forced else new_record)
    trim_log(csv_path, completed)
    if final_path is not None:
        print(
            f"resuming {run_dir}: its training finished after {passes:g} epochs; "
            "loading the trained weights instead of training again (--resume never "
            "trains afresh)"
        )
    elif completed >= cfg.epochs * rounds:
        print(f"resuming {run_dir}: all {cfg.epochs} epochs were done")
    elif rounds == 1:
        print(f"resuming {run_dir} from epoch {completed + 1} (of {cfg.epochs})")
    else:
        print(
            f"resuming {run_dir} after epoch {passes:g} (of {cfg.epochs}), from "
            f"validation round {completed + 1}/{cfg.epochs * rounds}"
        )
    sys.stdout.flush()
    return completed, path
