import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import SCRIPT
from zoo import training
from zoo.training.distribution import is_multi_worker


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "needs the TF_CONFIG"),
        ("{not json", "not valid JSON"),
        ('{"cluster": {"worker": ["a:1"]}}', "needs 'task'"),
        (
            '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}',
            "out of range",
        ),
    ],
)
def test_multi_worker_needs_valid_tf_config(monkeypatch, value, message):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    if value is not None:
        monkeypatch.setenv("TF_CONFIG", value)
    with pytest.raises(ValueError, match=message):
        training.get_strategy("multi-worker")


def test_get_strategy_names():
    assert training.get_strategy("none") is tf.distribute.get_strategy()
    mirrored = training.get_strategy("mirrored")
    assert isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync == len(tf.config.list_logical_devices("CPU"))
    assert not is_multi_worker(mirrored)
    assert training.worker_run_dir("runs/x", mirrored) == "runs/x"
    with pytest.raises(ValueError, match="distribute='tpu'"):
        training.get_strategy("tpu")


def test_set_seed_checks_its_argument():
    with pytest.raises(ValueError, match="seed='1'"):
        training.set_seed("1")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_multi_worker_two_local_processes(tmp_path):
    ports = [_free_port(), _free_port()]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for index in range(2):
        env = {
            **os.environ,
            "TF_CONFIG": json.dumps(
                {"cluster": cluster, "task": {"type": "worker", "index": index}}
            ),
        }
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    SCRIPT,
                    str(tmp_path / f"out{index}.json"),
                    "--run-dir",
                    str(tmp_path / "run"),
                    "--distribute",
                    "multi-worker",
                    "--epochs",
                    "2",
                    "--patience",
                    "0",
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        results = [p.communicate(timeout=150) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err[-3000:]
    data = [json.load(open(tmp_path / f"out{i}.json")) for i in range(2)]
    assert [d["replicas"] for d in data] == [2, 2]
    np.testing.assert_allclose(data[0]["weights"], data[1]["weights"], rtol=1e-5)
    assert (tmp_path / "run" / "log.csv").exists()
    assert (tmp_path / "run" / "run.json").exists()
    assert (tmp_path / "run" / "worker-1" / "log.csv").exists()
