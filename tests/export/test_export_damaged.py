"""Damaged exports and odd version folders under `zoo deploy` and `zoo verify`: one
line and exit status 2 for a file TF Serving could not load, the versions TF Serving
will serve named by deploy, a warm-up text that starts with "-" kept a text."""

import os
import shlex
import shutil

import pytest

from zoo import cli
from zoo.export import deploy

VERSION = os.path.join("tiny", "1")
DATA = os.path.join("variables", "variables.data-00000-of-00001")
WARMUP = os.path.join("assets.extra", "tf_serving_warmup_requests")


def _zoo(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def root(tiny_export, tmp_path):
    """A copy of the tiny export root (`tiny/1`), safe to damage."""
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    return root


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def _garbage(path):
    path.write_bytes(bytes(range(256)) * 8)


DAMAGES = {
    "truncated variables": (
        lambda v: _truncate(v / DATA),
        "variables",
        "the variables do not read back (Read less bytes than requested); export "
        "it again",
    ),
    "missing index": (
        lambda v: os.remove(v / "variables" / "variables.index"),
        os.path.join("variables", "variables.index"),
        "missing, yet the graph has variables: TF Serving would restore none; "
        "export it again",
    ),
    "garbage saved_model.pb": (
        lambda v: _garbage(v / "saved_model.pb"),
        "saved_model.pb",
        "does not parse as a SavedModel (Error parsing message with type "
        "'tensorflow.SavedModel': Wire format was corrupt); export it again",
    ),
    "garbage warm-up file": (
        lambda v: _garbage(v / WARMUP),
        WARMUP,
        "record 0: not a TFRecord of PredictionLog warm-up requests (corrupted "
        "record at 0 (Is this even a TFRecord file?)); TF Serving would fail to "
        "load this version",
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_export_is_one_line_and_status_2(root, capsys, damage):
    spoil, file, message = DAMAGES[damage]
    version_dir = root / VERSION
    spoil(version_dir)
    where = version_dir / file

    code, out, err = _zoo(capsys, "verify", root / "tiny")
    assert (code, out, err) == (2, "", f"error: {where}: {message}\n")

    code, out, err = _zoo(capsys, "deploy", root)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {where}: version 1 of tiny, which TF Serving would load "
        f"(--version-policy latest): {message}\n"
    )
    assert sorted(os.listdir(root)) == ["tiny"]  # nothing written


def test_json_out_into_a_missing_folder_is_refused_before_the_work(root, capsys):
    target = root / "no" / "report.json"
    code, out, err = _zoo(capsys, "verify", root / "tiny", "--json-out", target)
    assert (code, out) == (2, "")
    assert err == f"error: {target.parent}: no such folder for --json-out\n"

    code, out, err = _zoo(capsys, "verify", root / "tiny", "--json-out", root)
    assert (code, out) == (2, "")
    assert err == f"error: --json-out names a folder. Received: {str(root)!r}\n"


def _copy_version(root, folder):
    shutil.copytree(root / VERSION, root / "tiny" / folder)


def test_deploy_serves_the_version_tf_serving_reads(root, capsys):
    _copy_version(root, "007")
    _copy_version(root, " 9")  # TF Serving reads version 9
    code, out, err = _zoo(capsys, "deploy", root)
    assert (code, err) == (0, "")
    line = "tiny: TF Serving serves version 9 (folder ' 9')"
    assert line in out.splitlines()
    assert f"# {line}\n" in (root / "models.config").read_text()
    assert (
        "TF Serving serves version 9 (folder ' 9').\n"
        in (root / "REQUESTS.md").read_text()
    )

    result = deploy.write_deployment(str(root), version_policy="all")
    assert result["served"] == {"tiny": {1: "1", 7: "007", 9: " 9"}}
    code, out, err = _zoo(capsys, "deploy", root, "--version-policy", "all")
    assert code == 0
    assert (
        "tiny: TF Serving serves versions 1 (folder '1'), 7 (folder '007'), "
        "9 (folder ' 9')"
    ) in out.splitlines()


def test_all_versions_name_a_broken_version_1(root, capsys):
    _copy_version(root, "2")
    os.remove(root / VERSION / "saved_model.pb")
    code, out, err = _zoo(capsys, "deploy", root, "--version-policy", "all")
    assert code == 0
    assert err == (
        f"note: {root / VERSION}: no saved_model.pb: TF Serving would try to load "
        "version 1 (--version-policy all) and fail; complete or remove it\n"
    )
    assert "tiny: TF Serving serves versions 1 (folder '1'), 2 (folder '2')" in out
    # The latest policy serves version 2 only: nothing to say of version 1.
    code, out, err = _zoo(capsys, "deploy", root)
    assert (code, err) == (0, "")
    assert "tiny: TF Serving serves version 2 (folder '2')" in out.splitlines()

    shutil.rmtree(root / VERSION)
    shutil.copytree(root / "tiny" / "2", root / VERSION)
    _truncate(root / VERSION / DATA)
    code, out, err = _zoo(capsys, "deploy", root, "--version-policy", "all")
    assert (code, out) == (2, "")
    assert err == (
        f"error: {root / VERSION / 'variables'}: version 1 of tiny, which TF Serving "
        "would load (--version-policy all): the variables do not read back (Read "
        "less bytes than requested); export it again\n"
    )
    assert _zoo(capsys, "deploy", root)[0] == 0  # latest: version 2 is sound


def test_requests_md_puts_texts_after_double_dash(root, capsys):
    import tensorflow as tf

    from tests.serving.fake_serving import serve_export
    from zoo.export.warmup import build_requests, write_warmup

    text = "-i/etc/hostname"
    logs = build_requests(
        "tiny",
        {"serving_default": {"text": [text]}},
        {"serving_default": {"text": tf.string}},
    )
    write_warmup(str(root / VERSION / WARMUP), logs)
    examples = deploy.request_examples(str(root))
    argv = shlex.split(examples["tiny"]["grpc"])
    assert argv[-2:] == ["--", text]
    assert (
        f"-- {shlex.quote(text)}"
        in deploy.write_deployment(str(root))["examples"]["tiny"]["rest"]
    )
    assert (
        "A story line or a question is given attached"
        in (root / "REQUESTS.md").read_text()
    )
    with serve_export(root / "tiny") as served:
        argv[3] = served.grpc
        assert cli.main(argv[1:]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and '"label"' in out
