import os
import shutil
import subprocess

import tensorflow as tf
from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

from zoo.export import deploy


def test_deploy_files_parse_with_serving_protos(tiny_export, tmp_path):
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    (root / "not_a_model").mkdir()
    assert deploy.main([str(root), "--version-policy", "all"]) == 0

    config = text_format.Parse(
        (root / "models.config").read_text(),
        model_server_config_pb2.ModelServerConfig(),
    )
    entries = config.model_config_list.config
    assert [(c.name, c.base_path, c.model_platform) for c in entries] == [
        ("tiny", "/models/tiny", "tensorflow")
    ]
    assert entries[0].model_version_policy.HasField("all")

    batching = text_format.Parse(
        (root / "batching.config").read_text(), deploy.BatchingParameters()
    )
    assert batching.pad_variable_length_inputs is True
    assert batching.max_batch_size.value == 32
    assert batching.num_batch_threads.value >= 1

    image = f"tensorflow/serving:{tf.__version__}-gpu"
    serve = (root / "serve.sh").read_text()
    assert os.access(root / "serve.sh", os.X_OK)
    for flag in [
        "--gpus all",
        image,
        "--model_config_file=/models/models.config",
        "--enable_batching=true",
        "--batching_parameters_file=/models/batching.config",
        "-p 8500:8500",
        "-p 8501:8501",
        '"$ROOT":/models:ro',
    ]:
        assert flag in serve
    assert subprocess.run(["bash", "-n", str(root / "serve.sh")]).returncode == 0
    compose = (root / "docker-compose.yml").read_text()
    assert f"image: {image}" in compose and "capabilities: [gpu]" in compose
    try:
        import yaml
    except ImportError:
        return
    service = yaml.safe_load(compose)["services"]["tf-serving"]
    assert "--enable_batching=true" in service["command"]


def test_latest_policy_and_image_tag():
    config = deploy.model_server_config(["a"], "latest")
    assert (
        config.model_config_list.config[0].model_version_policy.latest.num_versions == 1
    )
    assert deploy.serving_image("2.21.0") == "tensorflow/serving:2.21.0-gpu"
    assert deploy.serving_image("2.21.0rc1") == "tensorflow/serving:2.21.0-gpu"
