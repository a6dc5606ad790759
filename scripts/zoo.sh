#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash scripts/zoo.sh demo   install everything, train every recipe on its demo data,
#                              export, verify the exports, write the deployment files
#   bash scripts/zoo.sh test   install everything and run the test suite, then the
#                              layer tests under JAX without TensorFlow (.venv-jax)
#   bash scripts/zoo.sh test-jax   only the JAX check
# The environments live in .venv and .venv-jax inside the checkout (git-ignored);
# pip's cache is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
VENV="$ROOT/.venv"
VENV_JAX="$ROOT/.venv-jax"
PY="${PYTHON:-python3}"
# jax and jaxlib for the JAX check (CPU wheels); keras, numpy, pytest and pytest-xdist
# there are the versions installed in .venv, so both runs test the same Keras.
JAX_VERSION="0.10.2"
# The extras the demo and the tests need (pyproject.toml: the core install is keras and
# numpy; train, serve and dev add TensorFlow, TF Serving's client and the test tools).
EXTRAS="train,serve,dev"

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        echo "[zoo] creating virtual environment in .venv"
        "$PY" -m venv "$VENV"
    fi
    # Reinstall only when the dependency list or the extras changed.
    local want
    want="$( (echo "$EXTRAS"; cat pyproject.toml) | sha256sum | cut -d' ' -f1)"
    if [ ! -f "$VENV/.zoo-env-stamp" ] || [ "$(cat "$VENV/.zoo-env-stamp")" != "$want" ]; then
        echo "[zoo] installing attention-zoo and its dependencies (first run downloads TensorFlow)"
        "$VENV/bin/python" -m pip install --upgrade pip >/dev/null
        "$VENV/bin/python" -m pip install -e ".[$EXTRAS]"
        echo "$want" > "$VENV/.zoo-env-stamp"
    fi
    "$VENV/bin/python" -c "import tensorflow, tensorflow_text, keras, zoo" >/dev/null 2>&1 || {
        echo "[zoo] environment check failed: cannot import tensorflow/tensorflow_text/keras/zoo" >&2
        exit 1
    }
}

setup_jax() {
    local requirements want
    requirements="jax[cpu]==$JAX_VERSION $("$VENV/bin/python" -c '
from importlib.metadata import version
print(" ".join(f"{name}=={version(name)}" for name in ("keras", "numpy", "pytest", "pytest-xdist")))
')" || return 1
    # (called as `test_jax || ...` or in the background: each step checks its status)
    if [ ! -x "$VENV_JAX/bin/python" ]; then
        echo "[zoo] creating the JAX check environment in .venv-jax"
        "$PY" -m venv "$VENV_JAX" || return 1
    fi
    # Reinstall only when the requirement list or the project's metadata changed. The
    # project is installed with its own (core) dependencies, as `pip install .` does:
    # if they pulled TensorFlow in, the check below fails.
    want="$( (echo "$requirements"; cat pyproject.toml) | sha256sum | cut -d' ' -f1)"
    if [ ! -f "$VENV_JAX/.zoo-env-stamp" ] || [ "$(cat "$VENV_JAX/.zoo-env-stamp")" != "$want" ]; then
        echo "[zoo] installing $requirements into .venv-jax"
        local log="$VENV_JAX/install.log"
        # shellcheck disable=SC2086  # the list is split into its requirements
        if ! { "$VENV_JAX/bin/python" -m pip install --upgrade pip \
            && "$VENV_JAX/bin/python" -m pip install $requirements \
            && "$VENV_JAX/bin/python" -m pip install -e .; } >"$log" 2>&1; then
            cat "$log" >&2
            echo "[zoo] installing into .venv-jax failed (log above, in .venv-jax/install.log)" >&2
            return 1
        fi
        echo "$want" > "$VENV_JAX/.zoo-env-stamp"
    fi
    if "$VENV_JAX/bin/python" -c "import tensorflow" >/dev/null 2>&1; then
        echo "[zoo] .venv-jax can import tensorflow; the JAX check needs an environment without it" >&2
        return 1
    fi
}

# The core install on JAX with no TensorFlow installed: the layers must use keras.ops
# only, and `import zoo.layers` must load no TensorFlow (tests/test_packaging.py).
test_jax() {
    setup_jax || return 1
    run_jax
}

run_jax() {
    echo "[zoo] tests/layers and the core install with KERAS_BACKEND=jax (.venv-jax, no TensorFlow)"
    KERAS_BACKEND=jax "$VENV_JAX/bin/python" -m pytest tests/layers tests/test_packaging.py \
        -p no:cacheprovider -q -n auto --maxprocesses 4 --dist loadfile
}

# The HTML reports are checked in headless Chromium (Debian's `chromium`); where it is
# missing and apt-get can install it, it is installed, else those checks are skipped.
ensure_chromium() {
    if command -v chromium >/dev/null 2>&1; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "[zoo] installing chromium (apt-get) for the HTML report checks"
        if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends chromium; } >/tmp/zoo-chromium.log 2>&1; then
            return 0
        fi
        echo "[zoo] could not install chromium (see /tmp/zoo-chromium.log): the browser checks are skipped" >&2
    else
        echo "[zoo] chromium not found: the browser checks of the HTML reports are skipped" >&2
    fi
}

export KERAS_BACKEND=tensorflow
# TensorFlow's C++ log lines: the recipes and the zoo command keep them off stderr
# unless TF_CPP_MIN_LOG_LEVEL is set (tests/conftest.py sets 2 for the tests)

cmd="${1:-}"
shift || true
case "$cmd" in
    demo)
        setup
        exec "$VENV/bin/python" -m zoo.recipes "$@"
        ;;
    test)
        setup
        ensure_chromium || true
        # The JAX check's environment installs while the main suite runs (pip mostly
        # unpacks wheels); its output is shown when the suite ends.
        jax_setup_log="$(mktemp)"
        setup_jax >"$jax_setup_log" 2>&1 &
        jax_setup=$!
        # an interrupted run stops the install too (a background job ignores Ctrl-C)
        trap 'kill "$jax_setup" 2>/dev/null || true; rm -f "$jax_setup_log"' EXIT
        status=0
        # One worker per core (at most 4), each test file on one worker: the suite
        # spends much of its time in single-threaded tracing and fresh processes.
        "$VENV/bin/python" -m pytest -n auto --maxprocesses 4 --dist loadfile "$@" \
            || status=$?
        jax_status=0
        if wait "$jax_setup"; then
            cat "$jax_setup_log"
            run_jax || jax_status=$?
        else
            cat "$jax_setup_log" >&2
            jax_status=1
        fi
        rm -f "$jax_setup_log"
        if [ "$jax_status" -ne 0 ]; then
            echo "[zoo] the JAX check failed (exit status $jax_status)" >&2
        fi
        if [ "$status" -ne 0 ]; then
            exit "$status"
        fi
        exit "$jax_status"
        ;;
    test-jax)
        setup
        test_jax
        ;;
    setup)
        setup
        ;;
    *)
        echo "usage: bash scripts/zoo.sh demo|test|test-jax|setup [args...]" >&2
        exit 2
        ;;
esac
