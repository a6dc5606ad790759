"""The verifier checks what TF Serving would accept: the batch limit the manifest
records is enforced by the graph (one row more is refused, naming that limit), a
malformed limit is one line and exit status 2, the Keras comparison runs whenever a
`.keras` model is present, and symbolic links out of the export are reported."""

import json
import os
import shutil

import pytest

from zoo import cli
from zoo.export import manifest as manifest_lib
from zoo.export.verify import main as verify_main
from zoo.export.verify import verify_export

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


def test_batch_limits_are_read_from_the_manifest(tiny_export):
    version_dir = tiny_export["version_dir"]
    manifest = manifest_lib.load_manifest(version_dir)
    assert manifest_lib.batch_limits(manifest, version_dir) == {
        "preprocess": 256,
        "serving_default": 256,
    }
    manifest["signatures"]["preprocess"]["max_batch_size"] = None
    del manifest["signatures"]["serving_default"]["max_batch_size"]
    manifest["limits"]["max_batch_size"] = 9
    assert manifest_lib.batch_limits(manifest, version_dir) == {
        "preprocess": None,
        "serving_default": 9,
    }


def test_the_limit_of_a_reader_export_is_checked(tmp_path):
    from tests.serving.tiny_exports import export_reader

    version_dir = export_reader(tmp_path, max_batch_size=5)
    report = verify_export(version_dir)
    assert report["ok"], report["errors"]
    assert report["batch_limit"] == {"serving_default": "refuses 6 rows"}


def test_an_untouched_copy_verifies(copied):
    report = verify_export(copied)
    assert report["ok"], report["errors"]
    assert report["batch_limit"] == {
        "preprocess": "refuses 257 rows",
        "serving_default": "refuses 257 rows",
    }
    assert report["symlinks"] == {}


def test_a_manifest_without_the_batch_limit_checks_none(copied):
    def drop(manifest):
        for info in manifest["signatures"].values():
            info.pop("max_batch_size")
        manifest.pop("limits")

    _edit_manifest(copied, drop)
    report = verify_export(copied)
    assert report["ok"], report["errors"]
    assert report["batch_limit"] == {
        "preprocess": "not enforced",
        "serving_default": "not enforced",
    }


def test_a_manifest_with_another_batch_limit_fails(copied):
    def raise_limit(manifest):
        manifest["signatures"]["serving_default"]["max_batch_size"] = 1000
        manifest["signatures"]["preprocess"]["max_batch_size"] = 100

    _edit_manifest(copied, raise_limit)
    report = verify_export(copied)
    assert report["ok"] is False
    assert report["batch_limit"] == {
        "preprocess": "failed",
        "serving_default": "failed",
    }
    over, under = report["errors"]
    assert over == (
        "batch limit: 'preprocess' accepted 101 rows, over the manifest's "
        "max_batch_size=100"
    )
    # The graph refuses 1001 rows, naming its own limit, not the manifest's.
    assert under.startswith(
        "batch limit: 'serving_default' failed on 1001 rows without naming the "
        "manifest's max_batch_size=1000: INVALID_ARGUMENT: "
    )
    assert "rows exceeds max_batch_size=256" in under


@pytest.mark.parametrize(
    ("edit", "field", "value"),
    [
        (
            lambda m: m["signatures"]["serving_default"].update(max_batch_size="abc"),
            "signatures.serving_default.max_batch_size",
            "'abc'",
        ),
        (
            lambda m: m["limits"].update(max_batch_size=0),
            "limits.max_batch_size",
            "0",
        ),
        (
            lambda m: m["signatures"]["preprocess"].update(max_batch_size=True),
            "signatures.preprocess.max_batch_size",
            "True",
        ),
    ],
)
def test_a_malformed_limit_is_one_line_and_status_2(copied, capsys, edit, field, value):
    _edit_manifest(copied, edit)
    message = (
        f"{copied / MANIFEST}: {field} must be a positive integer or null. "
        f"Received: {value}"
    )
    assert verify_export(copied)["errors"] == [message]
    assert cli.main(["verify", str(copied)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"error: {message}\n")
    # zoo deploy reads the same limit for batching.config.
    assert cli.main(["deploy", str(copied.parent.parent)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"error: {message}\n")


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


def test_a_limit_past_int64_is_one_line_and_status_2(copied, capsys):
    _edit_manifest(copied, lambda m: m["limits"].update(max_batch_size=2**63))
    message = (
        f"{copied / MANIFEST}: limits.max_batch_size is over 2**63 - 1. "
        f"Received: {2**63}"
    )
    assert verify_export(copied)["errors"] == [message]
    # batching.config holds an int64: deploy refuses it in one line
    assert cli.main(["deploy", str(copied.parent.parent)]) == 2
    assert capsys.readouterr() == ("", f"error: {message}\n")
