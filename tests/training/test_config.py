import dataclasses
import os
import subprocess
import sys

import pytest

from tests.recipe import toy_recipe as toy
from zoo.errors import ConfigError
from zoo.training import TrainingConfig
from zoo.training.config import RESUMABLE_FIELDS

# The training flags come from TrainingConfig's fields through the recipes' flag
# system (zoo.training.flags); the toy recipe of tests/recipe is parsed here.


def test_flags_and_config():
    flags = ["--run-dir", "r", "--distribute", "mirrored", "--epochs", "7"]
    cfg = toy.parse([*flags, "--batch-size", "8", "--learning-rate", "0.1"]).training
    assert (cfg.epochs, cfg.batch_size, cfg.learning_rate) == (7, 8, 0.1)
    assert (cfg.run_dir, cfg.distribute, cfg.seed, cfg.resume) == (
        "r",
        "mirrored",
        1234,
        "auto",
    )
    assert cfg.patience == toy.DEMO_TRAINING["patience"]  # the recipe's demo default
    with pytest.raises(ConfigError, match="distribute='gpu'"):
        TrainingConfig(distribute="gpu")
    with pytest.raises(ValueError, match="epochs=0"):  # ConfigError is a ValueError
        TrainingConfig(epochs=0)


def test_resume_flag_and_bad_values():
    assert toy.parse([]).training.resume == "auto"
    for value in ("force", "never"):
        assert toy.parse(["--resume", value]).training.resume == value
    with pytest.raises(SystemExit):
        toy.parse(["--resume", "maybe"])
    with pytest.raises(ConfigError, match="resume='maybe'"):
        TrainingConfig(resume="maybe")
    with pytest.raises(ConfigError, match="mode='up'"):
        TrainingConfig(mode="up")
    with pytest.raises(ConfigError, match="verbose=3"):
        TrainingConfig(verbose=3)
    with pytest.raises(ConfigError, match="seed='7'"):
        TrainingConfig(seed="7")


def test_every_field_has_help_and_the_choices_fields_name_them():
    fields = {f.name: f for f in dataclasses.fields(TrainingConfig)}
    for name, field in fields.items():
        assert len(field.metadata.get("help", "")) > 10, name
    assert fields["distribute"].metadata["choices"] == ("none", "mirrored")
    assert fields["resume"].metadata["choices"] == ("auto", "force", "never")
    # the recipes' training flags carry the fields' help
    from zoo.training.flags import build_parser

    parser = build_parser(toy.ToyConfig, "toy", "toy", "toy")
    helps = {a.dest: a.help for a in parser._actions}
    for name in ("epochs", "learning_rate", "ema", "resume", "distribute"):
        assert helps[name].startswith(fields[name].metadata["help"])


def test_identity_leaves_out_what_may_change_on_a_resume():
    assert set(RESUMABLE_FIELDS) == {
        "epochs",
        "time_limit",
        "snapshot_minutes",
        "run_dir",
        "patience",
        "distribute",
        "verbose",
        "tensorboard",
        "resume",
    }
    identity = TrainingConfig(learning_rate=0.05, seed=7).identity()
    assert identity["learning_rate"] == 0.05 and identity["seed"] == 7
    assert not set(identity) & set(RESUMABLE_FIELDS)
    longer = TrainingConfig(epochs=20, patience=9, verbose=0, run_dir="elsewhere")
    assert longer.identity() == TrainingConfig().identity()


def test_decay_flags_and_bad_values():
    cfg = toy.parse(["--decay-factor", "0.5", "--decay-patience", "2"]).training
    assert (cfg.decay_factor, cfg.decay_patience) == (0.5, 2)
    assert TrainingConfig().decay_factor == 1.0  # off unless asked for
    with pytest.raises(ValueError, match="decay_factor=1.5"):
        TrainingConfig(decay_factor=1.5)
    with pytest.raises(ValueError, match="decay_factor=0"):
        TrainingConfig(decay_factor=0)
    with pytest.raises(ValueError, match="decay_patience=0"):
        TrainingConfig(decay_patience=0)


def test_importing_the_config_needs_no_tensorflow():
    code = (
        "import sys; from zoo.training import TrainingConfig; "
        "TrainingConfig(); "
        "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))"
    )
    # `import zoo` registers every model (TensorFlow) unless ZOO_LAZY_IMPORT=1, the
    # switch of the processes that import what they use (the recipes' entry points).
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ZOO_LAZY_IMPORT": "1"},
    )
    assert out.stdout.strip() == "[]"
