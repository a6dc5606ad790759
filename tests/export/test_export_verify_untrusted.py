"""The verifier checks what TF Serving would accept without trusting the manifest:
the batch limit comes from the graph, the Keras comparison runs whenever a `.keras`
model is present, and symbolic links out of the export are reported."""

import json
import os
import shutil

import pytest

from zoo.export.verify import graph_batch_limits, verify_export
from zoo.export.verify import main as verify_main

MANIFEST = os.path.join("assets.extra", "manifest.json")


@pytest.fixture
def copied(tiny_export, tmp_path):
    """A copy of the tiny export (`tiny/1`, `tiny/1.keras`) safe to tamper with."""
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    return root / "tiny" / "1"


def _edit_manifest(version_dir, edit):
    path = version_dir / MANIFEST
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))


def test_graph_batch_limits_read_the_enforced_comparison(tiny_export):
    from zoo.serving import SavedModelSession

    with SavedModelSession(tiny_export["version_dir"]) as session:
        limits = graph_batch_limits(
            session.meta_graph.graph_def, session.signature_defs
        )
    assert limits == {"preprocess": 256, "serving_default": 256}


def test_graph_limit_of_a_reader_export(tmp_path):
    from tests.serving.tiny_exports import export_reader
    from zoo.serving import SavedModelSession

    version_dir = export_reader(tmp_path, max_batch_size=5)
    with SavedModelSession(version_dir) as session:
        limits = graph_batch_limits(
            session.meta_graph.graph_def, session.signature_defs
        )
    assert limits == {"serving_default": 5}
    report = verify_export(version_dir)
    assert report["batch_limit"] == {"serving_default": "refuses 6 rows"}


def test_an_untouched_copy_verifies(copied):
    report = verify_export(copied)
    assert report["ok"], report["errors"]
    assert report["batch_limit"] == {
        "preprocess": "refuses 257 rows",
        "serving_default": "refuses 257 rows",
    }
    assert report["symlinks"] == {}


def test_a_manifest_without_the_batch_limit_fails(copied):
    def drop(manifest):
        for info in manifest["signatures"].values():
            info.pop("max_batch_size")
        manifest.pop("limits")

    _edit_manifest(copied, drop)
    report = verify_export(copied)
    assert report["ok"] is False
    assert report["errors"] == [
        "batch limit: the manifest records max_batch_size=None for 'preprocess', "
        "its graph enforces 256",
        "batch limit: the manifest records max_batch_size=None for "
        "'serving_default', its graph enforces 256",
    ]
    # The graph's limit is still checked.
    assert report["batch_limit"]["serving_default"] == "refuses 257 rows"


def test_a_manifest_with_another_batch_limit_fails(copied):
    def raise_limit(manifest):
        manifest["signatures"]["serving_default"]["max_batch_size"] = 100000

    _edit_manifest(copied, raise_limit)
    report = verify_export(copied)
    assert report["errors"] == [
        "batch limit: the manifest records max_batch_size=100000 for "
        "'serving_default', its graph enforces 256"
    ]


def test_a_skipped_keras_check_still_compares_the_keras_model(
    copied, tiny_export, capsys
):
    import keras
    import tiny_model

    from zoo.text.vocabulary import Vocabulary

    def skip(manifest):
        manifest["keras_check"] = {"skipped": "trust me"}

    _edit_manifest(copied, skip)
    report = verify_export(copied)
    assert report["ok"], report["errors"]
    assert report["keras_check"]["manifest_skipped"] == "trust me"
    assert report["keras_check"]["compared"]["probabilities"]["ok"] is True

    # Another model as 1.keras: the comparison that the manifest skips fails.
    vocab = Vocabulary.load(os.path.join(tiny_export["work"], "vocab.txt"))
    keras.utils.set_random_seed(7)
    tiny_model.build_model(len(vocab)).save(str(copied) + ".keras")
    assert verify_main([str(copied)]) == 1
    err = capsys.readouterr().err
    assert "keras check: 'probabilities' differs from the Keras model" in err

    # Without a .keras model there is nothing to compare: skipped as recorded.
    os.remove(str(copied) + ".keras")
    report = verify_export(copied)
    assert report["ok"], report["errors"]
    assert report["keras_check"] == {"skipped": "trust me"}


def test_symlinks_out_of_the_export_are_errors(copied, tmp_path):
    outside = tmp_path / "elsewhere"
    shutil.move(copied / "variables", outside)
    os.symlink(outside, copied / "variables")
    os.symlink(os.path.join("..", "saved_model.pb"), copied / "assets.extra" / "pb")
    report = verify_export(copied)
    assert report["symlinks"] == {
        os.path.join("assets.extra", "pb"): os.path.join("..", "saved_model.pb"),
        "variables": str(outside),
    }
    assert report["ok"] is False
    assert report["errors"] == [
        f"{copied / 'variables'}: a symbolic link to {outside}, outside the export "
        "(TF Serving's container sees only the export root; copy the file in)"
    ]
