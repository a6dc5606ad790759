#!/usr/bin/env bash
# One entry point for a fresh machine:
#   bash scripts/zoo.sh demo   install everything, train every recipe on its demo data,
#                              export, verify the exports, write the deployment files
#   bash scripts/zoo.sh test   install everything and run the test suite
# The environment lives in .venv inside the checkout (git-ignored); pip's cache is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        echo "[zoo] creating virtual environment in .venv"
        "$PY" -m venv "$VENV"
    fi
    # Reinstall only when the dependency list changed.
    local want
    want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
    if [ ! -f "$VENV/.zoo-env-stamp" ] || [ "$(cat "$VENV/.zoo-env-stamp")" != "$want" ]; then
        echo "[zoo] installing attention-zoo and its dependencies (first run downloads TensorFlow)"
        "$VENV/bin/python" -m pip install --upgrade pip >/dev/null
        "$VENV/bin/python" -m pip install -e ".[dev]"
        echo "$want" > "$VENV/.zoo-env-stamp"
    fi
    "$VENV/bin/python" -c "import tensorflow, tensorflow_text, keras, zoo" >/dev/null 2>&1 || {
        echo "[zoo] environment check failed: cannot import tensorflow/tensorflow_text/keras/zoo" >&2
        exit 1
    }
}

export KERAS_BACKEND=tensorflow
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"

cmd="${1:-}"
shift || true
case "$cmd" in
    demo)
        setup
        exec "$VENV/bin/python" -m recipes "$@"
        ;;
    test)
        setup
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    setup)
        setup
        ;;
    *)
        echo "usage: bash scripts/zoo.sh demo|test|setup [args...]" >&2
        exit 2
        ;;
esac
