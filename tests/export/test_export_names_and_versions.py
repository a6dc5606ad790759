"""Model names and version folders as TF Serving reads them: one name check shared by
export and deploy, hostile folder names kept out of every generated file, version
folders read by TF Serving's own rule (`absl::SimpleAtoi` into an int64: `007` and
` 9` are versions 7 and 9) and `²` skipped with a note, never a traceback."""

import os
import shutil
import subprocess

import pytest

from zoo import cli
from zoo.errors import ConfigError, DataError
from zoo.export import deploy, paths

EVIL = "evil;touch PWNED;#"
GENERATED = (
    "models.config",
    "batching.config",
    "docker-compose.yml",
    "docker-compose.gpu.yml",
    "REQUESTS.md",
    "serve.sh",
)


def _zoo(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "name", [EVIL, "tiny\n", "", ".hidden", "a b", "$(id)", "-rf", "a/b", "caf\u00e9"]
)
def test_the_name_check_refuses(name):
    assert not paths.is_model_name(name)
    with pytest.raises(ConfigError) as refused:
        paths.check_model_name(name)
    assert str(refused.value) == (
        f"`name` must match {paths.MODEL_NAME_RE.pattern}. Received: name={name!r}"
    )


def test_the_name_check_accepts_and_is_the_one_export_uses():
    from zoo.export import export as export_lib

    for name in ("han", "m-1.v2", "A_b", "7"):
        assert paths.check_model_name(name) == name
    assert export_lib.check_model_name is paths.check_model_name


def test_export_refuses_a_name_with_a_trailing_newline(tiny_export, tmp_path):
    import tiny_model

    from zoo.export import export_model

    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    with pytest.raises(ValueError, match=r"Received: name='tiny\\n'"):
        export_model(
            module, "tiny\n", {"serving_default": module.serve}, base_dir=tmp_path
        )
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("folder", "version"),
    [
        ("1", 1),
        ("7", 7),
        ("007", 7),
        ("9223372036854775807", (1 << 63) - 1),
        ("-9223372036854775808", -(1 << 63)),
        ("0", 0),
        ("-3", -3),
        ("+3", 3),
        ("-0", 0),
        (" 9", 9),  # SimpleAtoi strips ASCII whitespace on both sides
        ("9 ", 9),
        ("\t\v\f\r\n 9\n", 9),
        ("\u00b2", None),
        ("\u0663", None),  # ARABIC-INDIC DIGIT THREE: str.isdigit() is True
        ("\u00a09", None),  # NO-BREAK SPACE is not ASCII whitespace
        ("1.5", None),
        ("0x10", None),
        ("1_0", None),  # int() would read it
        ("1 2", None),
        ("+-1", None),
        ("+", None),
        ("-", None),
        (" ", None),
        (".5", None),
        ("9223372036854775808", None),
        ("-9223372036854775809", None),
        ("", None),
    ],
)
def test_parse_version_reads_what_tf_serving_reads(folder, version):
    assert paths.parse_version(folder) == version


def _root_with(tiny_export, tmp_path, *extra):
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    for name in extra:
        shutil.copytree(root / "tiny", root / name)
    return root


def test_deploy_skips_a_hostile_folder_name_in_every_file(tiny_export, tmp_path):
    root = _root_with(tiny_export, tmp_path, EVIL)
    result = deploy.write_deployment(str(root))
    assert result["models"] == ["tiny"]
    assert result["notes"] == [
        f"{root / EVIL}: skipped, not a model name (names match "
        f"{paths.MODEL_NAME_RE.pattern}, as `export_model` requires)"
    ]
    for name in GENERATED:
        text = (root / name).read_text()
        assert "evil" not in text and "PWNED" not in text, name
    # Every shell line of REQUESTS.md, pasted into bash with stand-in commands,
    # creates nothing.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command in ("curl", "zoo"):
        (bin_dir / command).write_text("#!/usr/bin/env bash\nexit 0\n")
        (bin_dir / command).chmod(0o755)
    work = tmp_path / "paste"
    work.mkdir()
    text = (root / "REQUESTS.md").read_text()
    lines = [line for line in text.splitlines() if line.startswith(("curl", "zoo"))]
    assert len(lines) == 3
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for line in lines:
        subprocess.run(["bash", "-c", line], cwd=work, env=env, check=True)
    assert os.listdir(work) == []


def test_deploy_command_notes_skipped_folders(tiny_export, tmp_path, capsys):
    root = _root_with(tiny_export, tmp_path, EVIL)
    code, out, err = _zoo(capsys, "deploy", root)
    assert code == 0
    assert "models: tiny;" in out
    assert err.splitlines() == [
        f"note: {root / EVIL}: skipped, not a model name (names match "
        f"{paths.MODEL_NAME_RE.pattern}, as `export_model` requires)"
    ]


def test_a_skipped_folder_name_is_shown_escaped_not_obeyed(
    tiny_export, tmp_path, capsys
):
    name = "clear\x1b[2Jscreen"  # an escape sequence that clears the terminal
    root = _root_with(tiny_export, tmp_path, name)
    code, out, err = _zoo(capsys, "deploy", root)
    assert code == 0
    assert "\x1b" not in err
    assert err.splitlines() == [
        f"note: {root}/clear\\x1b[2Jscreen: skipped, not a model name (names match "
        f"{paths.MODEL_NAME_RE.pattern}, as `export_model` requires)"
    ]


def test_request_examples_refuse_a_hostile_name(tiny_export, tmp_path):
    root = _root_with(tiny_export, tmp_path, EVIL)
    with pytest.raises(ConfigError, match="Received: name='evil;touch PWNED;#'"):
        deploy.request_examples(str(root), names=[EVIL])


def test_deploy_without_exports_is_one_line_and_status_2(tmp_path, capsys):
    root = tmp_path / "saved_models"
    (root / "not_a_model").mkdir(parents=True)
    (root / "half" / ".tmp-export-0123").mkdir(parents=True)
    (root / "half" / "1").mkdir()  # a version without saved_model.pb
    code, out, err = _zoo(capsys, "deploy", root)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {root}: holds no exports to serve (NAME/VERSION/saved_model.pb): "
        "export a model first\n"
    )
    assert sorted(os.listdir(root)) == ["half", "not_a_model"]
    with pytest.raises(DataError):
        deploy.write_deployment(str(root))


def _odd_versions(tiny_export, tmp_path):
    """`tiny/1`, `tiny/007` (a copy: version 7) and `tiny/²` (not a version)."""
    root = _root_with(tiny_export, tmp_path)
    model_dir = root / "tiny"
    for name in ("007", "\u00b2"):
        shutil.copytree(model_dir / "1", model_dir / name)
        shutil.copy(model_dir / "1.keras", model_dir / f"{name}.keras")
    return root, model_dir


def test_version_folders_and_resolution(tiny_export, tmp_path):
    root, model_dir = _odd_versions(tiny_export, tmp_path)
    (model_dir / "7").mkdir()  # the same version as 007, without a SavedModel
    found, notes = paths.version_folders(model_dir)
    assert found == {1: "1", 7: "7"}
    assert notes == [
        f"{model_dir / '007'}: skipped, the same version as 7 (7)",
        f"{model_dir / chr(0xB2)}: skipped, {paths.NOT_A_VERSION}",
    ]
    # TF Serving keeps `7` (the last name in byte order), which holds no SavedModel.
    assert paths.version_folders(model_dir, complete=True)[0] == {1: "1"}
    shutil.rmtree(model_dir / "7")
    assert sorted(paths.version_folders(model_dir)[0]) == [1, 7]
    assert paths.latest_version(model_dir) == 7
    seen = []
    assert paths.resolve_version_dir(model_dir, note=seen.append) == str(
        model_dir / "007"
    )
    assert seen == [notes[1]]
    with pytest.raises(DataError, match="not a version folder"):
        paths.resolve_version_dir(model_dir / "\u00b2")
    assert paths.version_of(model_dir / "007") == 7


def test_predict_verify_deploy_with_odd_version_folders(tiny_export, tmp_path, capsys):
    root, model_dir = _odd_versions(tiny_export, tmp_path)
    note = f"note: {model_dir / chr(0xB2)}: skipped, {paths.NOT_A_VERSION}"
    code, out, err = _zoo(capsys, "predict", model_dir, "The film was good.")
    assert code == 0, err
    assert '"label": "positive"' in out
    assert err.splitlines() == [note]

    from zoo.serving import SavedModelSession

    with SavedModelSession(model_dir, config=None) as session:
        assert (session.name, session.version) == ("tiny", 7)

    code, out, err = _zoo(capsys, "verify", model_dir)
    assert code == 0, err
    assert f"OK: {model_dir / '007'} verified" in out

    code, out, err = _zoo(capsys, "verify", model_dir / "\u00b2")
    assert code == 2
    assert err == f"error: {model_dir / chr(0xB2)}: {paths.NOT_A_VERSION}\n"

    code, out, err = _zoo(capsys, "deploy", root)
    assert code == 0, err
    assert "models: tiny;" in out
    assert err.splitlines() == [note]


def test_an_incomplete_latest_version_is_named_in_one_line(
    tiny_export, tmp_path, capsys
):
    root = _root_with(tiny_export, tmp_path)
    model_dir = root / "tiny"
    (model_dir / "3").mkdir()  # a half-copied version: TF Serving would load it
    message = (
        f"{model_dir / '3'}: the latest version holds no saved_model.pb (an "
        "interrupted copy?); TF Serving would fail to load it: complete or remove "
        "it, or name a version folder"
    )
    with pytest.raises(paths.IncompleteVersionError) as refused:
        paths.resolve_version_dir(model_dir)
    assert str(refused.value) == message
    for command in ("predict", "verify"):
        argv = [command, model_dir] + (["good"] if command == "predict" else [])
        code, out, err = _zoo(capsys, *argv)
        assert (code, err) == (2, f"error: {message}\n"), command
    assert paths.resolve_version_dir(model_dir / "1") == str(model_dir / "1")
    code, out, err = _zoo(capsys, "deploy", root)
    assert code == 0 and "models: tiny;" in out
    assert err == (
        f"note: {model_dir / '3'}: no saved_model.pb, yet the highest version: TF "
        "Serving would try to load it (and fail); complete or remove it\n"
    )


def test_the_next_export_is_version_1_beside_a_negative_version(tmp_path):
    from zoo.export import export as export_lib

    model_dir = tmp_path / "m"
    (model_dir / "-3").mkdir(parents=True)  # TF Serving reads version -3
    (model_dir / " 0").mkdir()  # and version 0
    assert sorted(paths.version_folders(model_dir)[0]) == [-3, 0]
    staged = tmp_path / "staged"
    staged.mkdir()
    assert export_lib._rename_to_next_version(str(staged), str(model_dir)) == str(
        model_dir / "1"
    )
    assert paths.version_folders(model_dir)[0] == {-3: "-3", 0: " 0", 1: "1"}
