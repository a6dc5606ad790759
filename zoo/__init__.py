"""attention-zoo: classic NLP attention models as servable Keras 3 software.

`import zoo` registers every layer, model and task with Keras (`package="zoo"`), so
`keras.saving.load_model` reads any `.keras` file the zoo writes with no
`custom_objects`. The layers need only Keras; the models, tasks and preprocessors
need TensorFlow and tensorflow-text (the `train` extra) and are registered when they
are installed. The registration is skipped (each command imports what it uses, so
that `--help` needs no TensorFlow) in the `zoo` command, in the recipes (`recipes/`),
and wherever `ZOO_LAZY_IMPORT=1` is set in the environment. The command and the
recipes run on the TensorFlow backend whatever `KERAS_BACKEND` says.
"""

import os as _os
import sys as _sys

__version__ = "0.2.0"


def _register():
    import importlib.util

    import zoo.layers  # noqa: F401

    if all(importlib.util.find_spec(m) for m in ("tensorflow", "tensorflow_text")):
        import zoo.models  # noqa: F401


def _entry_point():
    """Whether this process is the `zoo` command or a recipe (`python
    recipes/NAME.py`, `python -m zoo.recipes[.NAME]`, `python -m zoo.cli`): they
    import what they use (this package is imported before them)."""
    argv0 = _sys.argv[0] if _sys.argv else ""
    folder = _os.path.basename(_os.path.dirname(_os.path.abspath(argv0)))
    if _os.path.basename(argv0) == "zoo" or folder == "recipes":
        return True
    argv = getattr(_sys, "orig_argv", [])
    for flag, module in zip(argv, argv[1:], strict=False):
        if flag == "-m":
            return module == "zoo.cli" or f"{module}.".startswith("zoo.recipes.")
    return False


if _entry_point():
    # The command and the recipes train, export and serve with TensorFlow, whatever
    # KERAS_BACKEND says in the shell (set before anything imports Keras), and keep
    # TensorFlow's C++ log lines off stderr (`--debug` shows them).
    if "keras" not in _sys.modules:
        _os.environ["KERAS_BACKEND"] = "tensorflow"
    from zoo import tf_logging as _tf_logging

    _tf_logging.quiet(debug="--debug" in _sys.argv[1:])
elif _os.environ.get("ZOO_LAZY_IMPORT") != "1":
    _register()
