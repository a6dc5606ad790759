"""The four recipes' exports answer the same through `zoo predict`, locally and from a
running TF Serving over gRPC and REST (`tests.serving.fake_serving.serve_export`
stands in for tensorflow_model_server on 127.0.0.1)."""

import contextlib
import importlib
import io
import json
import math

import pytest

from zoo import cli

pytestmark = pytest.mark.slow

# recipe module, export name, a short demo run, the `zoo predict` arguments per signature
RECIPES = {
    "han_classification": (
        "han",
        ["--epochs", "1", "--demo-size", "120"],
        {
            "serving_default": ["A good film. I liked it.", "Bad. Boring plot."],
            "explain": ["One sentence only"],
        },
    ),
    "self_attentive_embedding": (
        "sentence_embedder",
        ["--epochs", "1", "--demo-size", "200"],
        {
            "serving_default": ["a fine and moving film", ""],
            "embed": ["dull"],
        },
    ),
    "memn2n_babi": (
        "memn2n",
        ["--epochs", "2", "--demo-size", "120"],
        {
            "serving_default": [
                "--story",
                "Mary moved to the bathroom.",
                "--story",
                "John went to the hallway.",
                "--question",
                "Where is Mary?",
            ],
        },
    ),
    "translation": (
        "translation",
        ["--epochs", "1", "--demo-size", "300"],
        {
            "serving_default": ["a red house", "the small dog runs"],
            "translate_greedy": ["a red house"],
        },
    ),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """`{recipe: version_dir}`: each recipe's demo, trained briefly and exported."""
    root = tmp_path_factory.mktemp("recipe_exports")
    found = {}
    for recipe, (_, flags, _) in RECIPES.items():
        main = importlib.import_module(f"zoo.recipes.{recipe}").main
        result = main(
            [
                *flags,
                "--export-dir",
                str(root / "saved_models"),
                "--run-dir",
                str(root / "runs" / recipe),
                "--report-dir",
                str(root / "reports" / recipe),
                "--report-samples",
                "0",
            ]
        )
        found[recipe] = result["export"]
    return found


def _zoo_predict(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["predict", *args])
    assert status in (0, None), status
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _assert_close(a, b, path="output"):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), path
        for key in a:
            _assert_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_local_grpc_and_rest_answers_agree(exports, recipe):
    from tests.serving.fake_serving import serve_export

    export_name, _, requests = RECIPES[recipe]
    version_dir = exports[recipe]
    with serve_export(version_dir) as served:
        assert served.model == export_name
        for signature, args in requests.items():
            local = _zoo_predict(version_dir, "-s", signature, *args)
            rows = 1 if "--question" in args else len(args)
            assert len(local) == rows
            if (recipe, signature) != ("self_attentive_embedding", "serving_default"):
                assert all(any(k.endswith("attention") for k in r) for r in local)
            for protocol in ([], ["--rest"]):
                address = served.rest if protocol else served.grpc
                remote = _zoo_predict(
                    "--server",
                    address,
                    "--model",
                    served.model,
                    *protocol,
                    "-s",
                    signature,
                    *args,
                )
                _assert_close(local, remote, f"{recipe}/{signature}{protocol}")
