"""The recipe steps: flags from the Config dataclass, the run, errors, results."""

import json
import os

import pytest

from tests.recipe import toy_recipe as toy
from zoo.errors import DataError


def _args(tmp_path, *extra):
    return [
        "--run-dir",
        str(tmp_path / "run"),
        "--report-dir",
        str(tmp_path / "report"),
        "--export-dir",
        str(tmp_path / "export"),
        *extra,
    ]


def test_help_lists_every_flag_with_its_default(capsys):
    with pytest.raises(SystemExit) as exit_info:
        toy.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--units",
        "--activation",
        "--data",
        "--run-dir",
        "--max-train-samples",
        "--max-eval-samples",
        "--demo-size",
        "--report-samples",
        "--xla",
        "--epochs",
        "--batch-size",
        "--learning-rate",
        "--seed",
    ):
        assert flag in out, flag
    # The demo's defaults are shown (no --data), and the --data default beside them.
    assert "[with --data: 8; demo: 4]" in " ".join(out.split())
    assert "runs/toy" in out


def test_bool_options_take_both_spellings_with_and_without_data(tmp_path):
    assert toy.parse(_args(tmp_path)).compiled is False
    assert toy.parse(_args(tmp_path, "--compiled")).compiled is True
    assert toy.parse(_args(tmp_path, "--no-compiled")).compiled is False
    real = _args(tmp_path, "--data", str(tmp_path))
    assert toy.parse(real).compiled is True
    assert toy.parse([*real, "--no-compiled"]).compiled is False


def test_demo_and_data_defaults(tmp_path):
    demo = toy.parse(_args(tmp_path))
    assert demo.demo and demo.units == 4
    assert demo.training.epochs == 2 and demo.training.patience == 0
    real = toy.parse(_args(tmp_path, "--data", str(tmp_path)))
    assert not real.demo and real.units == 8
    assert real.training.epochs == 3 and real.training.batch_size == 16
    assert real.training.run_dir == str(tmp_path / "run")


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--units", "0"], "--units: must be > 0, got '0'"),
        (["--units", "two"], "--units: invalid int value: 'two'"),
        (["--activation", "gelu"], "--activation: invalid choice: 'gelu'"),
        (["--learning-rate", "nan"], "must be a finite number: 'nan'"),
        (["--max-train-samples", "-3"], "--max-train-samples: must be > 0"),
        (["--data", "/nonexistent/corpus"], "--data: no such file or folder"),
        (["--epochs", "0"], "epochs"),
        (
            ["--distribute", "multi-worker"],
            "--distribute: invalid choice: 'multi-worker' (choose from",
        ),
    ],
)
def test_bad_values_are_one_line_errors_with_exit_2(tmp_path, capsys, flags, fragment):
    with pytest.raises(SystemExit) as exit_info:
        toy.main(_args(tmp_path, *flags))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err
    assert "Traceback" not in err


def test_user_errors_from_a_stage_are_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        toy.main(_args(tmp_path, "--fail"))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: toy.tsv:7: expected 2 fields, found 3"
    with pytest.raises(DataError):  # --debug: the exception itself
        toy.main(_args(tmp_path, "--fail", "--debug"))


def test_run_trains_evaluates_and_writes_metrics(tmp_path):
    result = toy.main(_args(tmp_path, "--data", str(tmp_path), "--seed", "3"))
    assert result["model"] == "toy_model"
    assert result["metric"] == "accuracy"
    assert result["value"] > 0.9  # well-separated blobs
    assert result["export"] is None
    with open(tmp_path / "report" / "metrics.json") as f:
        metrics = json.load(f)
    assert metrics == {
        "recipe": "toy",
        "data": "toy blobs",
        "accuracy": result["value"],
    }
    assert os.path.exists(tmp_path / "run" / "log.csv")


def test_identity_leaves_out_output_and_duration_fields(tmp_path):
    a = toy.parse(_args(tmp_path, "--data", str(tmp_path)))
    b = toy.parse(
        _args(tmp_path / "other", "--data", str(tmp_path), "--epochs", "9", "--debug")
    )
    assert a.identity() == b.identity()
    c = toy.parse(_args(tmp_path, "--data", str(tmp_path), "--units", "5"))
    assert c.identity()["units"] == 5 and c.identity() != a.identity()
    assert "training" not in a.identity()  # zoo.training.fit records those itself
    assert "run_dir" not in a.identity() and "debug" not in a.identity()


_PARSE_WITHOUT_TENSORFLOW = """
import dataclasses, sys
from zoo.training.flags import RecipeConfig, option, parse_config

@dataclasses.dataclass
class Config(RecipeConfig):
    units: int = option(8, "hidden units", check="positive")

config = parse_config(Config, ["--units", "3", "--epochs", "2"], prog="toy",
                      description="toy", name="toy")
assert config.units == 3 and config.training.epochs == 2, config
heavy = sorted(m for m in ("tensorflow", "keras", "numpy") if m in sys.modules)
print("heavy:", heavy)
"""


def test_parsing_flags_imports_no_tensorflow():
    import subprocess
    import sys

    # `import zoo` registers every model (TensorFlow) unless ZOO_LAZY_IMPORT=1, the
    # switch `python -m zoo.recipes...` amounts to (zoo/__init__.py).
    out = subprocess.run(
        [sys.executable, "-c", _PARSE_WITHOUT_TENSORFLOW],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ZOO_LAZY_IMPORT": "1"},
    ).stdout
    assert "heavy: []" in out, out
