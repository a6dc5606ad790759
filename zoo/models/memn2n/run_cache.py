"""`RunCache`: a finished training run kept in its folder, reused by a rerun."""

import hashlib
import json
import os
import sys

from zoo import __version__
from zoo.io import atomic_path, atomic_write


def run_key(*parts):
    """A short hash of `parts` (JSON-able) and of the library's version.

    The version is part of the key: a run finished by another version of the
    library is trained again rather than reused.
    """
    text = json.dumps([list(parts), __version__], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RunCache:
    """The model and result of a finished run: `final.keras` and `result.json`.

    `result.json` records the run's key (`run_key` of what was trained); `load`
    returns the run only when the key matches, so a rerun of the same command
    reuses it and a changed configuration trains again. Both files are written to
    a temporary name and renamed, `result.json` last: a run killed while saving is
    not reused, and a `final.keras` that cannot be read (a damaged file) is
    trained again, with a warning naming it. A full disk is a one-line
    `zoo.errors.DiskFullError`. The bAbI recipe keeps its trained
    `MemN2NQuestionAnswerer` there (its vocabulary inside), the model it evaluates
    and exports.

    Args:
        run_dir: the run's folder.
        key: the run's key (`run_key(...)`).
    """

    def __init__(self, run_dir, key):
        self.run_dir = os.fspath(run_dir)
        self.key = key
        self.model_path = os.path.join(self.run_dir, "final.keras")
        self.result_path = os.path.join(self.run_dir, "result.json")

    def load(self):
        """`(model, result)` of the finished run with this key, else None."""
        import keras

        try:  # no result (yet): None
            with open(self.result_path, encoding="utf-8") as f:
                saved = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(saved, dict) or saved.get("fingerprint") != self.key:
            return None
        result = {k: v for k, v in saved.items() if k != "fingerprint"}
        try:
            model = keras.saving.load_model(self.model_path)
        except Exception as e:  # a truncated zip, damaged weights: train again
            reason = " ".join(str(e).split())[:160] or type(e).__name__
            print(
                f"warning: {self.model_path} cannot be read ({reason}); the run is "
                "trained again",
                file=sys.stderr,
                flush=True,
            )
            return None
        return model, result

    def save(self, model, result):
        """Writes `model` (a Keras model) and `result` (a JSON-able dict)."""
        os.makedirs(self.run_dir, exist_ok=True)
        if os.path.exists(self.result_path):  # it does not describe the new model
            os.remove(self.result_path)
        with atomic_path(self.model_path) as tmp:
            model.save(tmp)
        with atomic_write(self.result_path) as f:
            json.dump({"fingerprint": self.key, **result}, f)
