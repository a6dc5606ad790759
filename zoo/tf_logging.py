"""TensorFlow's C++ log lines kept off stderr unless asked for.

TensorFlow's C++ code logs to the process's stderr (file descriptor 2) lines such as
`I0000 ... cudart_stub.cc:31] Could not find cuda drivers on your machine` and, on a
machine without a GPU, `E0000 ... failed call to cuInit: ... UNKNOWN ERROR (303)`, which
read as failures. `TF_CPP_MIN_LOG_LEVEL=3` silences the lines TensorFlow logs after it
has set up its logging; the ones its libraries log while they load (before
`absl::InitializeLog()`, with the notice `WARNING: All log messages before
absl::InitializeLog() is called are written to STDERR`) ignore that setting.

`quiet(debug)`, called by the `zoo` command and the recipes' entry points before
anything imports TensorFlow:

- sets `TF_CPP_MIN_LOG_LEVEL=3` when the user has not set it (child processes inherit
  it), and
- where the level is 3, filters stderr while the `tensorflow` package is first imported:
  the TensorFlow log lines written then are dropped, everything else written to stderr
  meanwhile (Python warnings, errors) is written out after the import.

`--debug` (`quiet(debug=True)`) or a `TF_CPP_MIN_LOG_LEVEL` of 0-2 set by the user leaves
TensorFlow's output as it is. This module imports only the standard library.
"""

import contextlib
import importlib.abc
import importlib.machinery
import os
import re
import sys
import tempfile

ENV_VAR = "TF_CPP_MIN_LOG_LEVEL"
QUIET_LEVEL = "3"

# TensorFlow's (absl's) C++ log line: severity letter, date, time, thread, file:line]
_LOG_LINE = re.compile(rb"^[IWEF]\d{4} [\d:.]+\s+\d+ \S+:\d+\] ")
_NOTICES = (
    b"WARNING: All log messages before absl::InitializeLog() is called are written "
    b"to STDERR",
    # the second line of cpu_feature_guard's message
    b"To enable the following instructions:",
)


def is_tensorflow_log_line(line):
    """Whether `line` (bytes or str) is one of TensorFlow's C++ log lines."""
    if isinstance(line, str):
        line = line.encode("utf-8", "replace")
    return bool(_LOG_LINE.match(line)) or line.startswith(_NOTICES)


def quiet(debug=False):
    """Keeps TensorFlow's C++ log lines off stderr in this process and its children.

    Call it before TensorFlow is imported. Does nothing with `debug=True` or when the
    user set `TF_CPP_MIN_LOG_LEVEL` to another level than 3.

    Returns:
        Whether TensorFlow's output is filtered.
    """
    if debug or os.environ.setdefault(ENV_VAR, QUIET_LEVEL).strip() != QUIET_LEVEL:
        return False
    if "tensorflow" not in sys.modules and not any(
        isinstance(finder, _FilteredImport) for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _FilteredImport())
    return True


@contextlib.contextmanager
def filtered_stderr():
    """Drops TensorFlow's C++ log lines written to file descriptor 2 in the block.

    What the block writes to descriptor 2 is held in a temporary file and written out,
    without TensorFlow's log lines, when the block ends (also when it raises). Where
    descriptor 2 cannot be redirected, the block runs unfiltered.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (AttributeError, OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(AttributeError, OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().splitlines(keepends=True)
            if kept := b"".join(x for x in lines if not is_tensorflow_log_line(x)):
                os.write(2, kept)


class _FilteredImport(importlib.abc.MetaPathFinder):
    """Finds the `tensorflow` package as usual and runs its import in
    `filtered_stderr()`; removes itself when that import starts."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module  # the module keeps the real loader

        def filtered_exec_module(module):
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self)
            with filtered_stderr():
                exec_module(module)

        spec.loader.exec_module = filtered_exec_module
        return spec
