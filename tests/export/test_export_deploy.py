import json
import os
import shlex
import shutil
import subprocess

import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

from zoo.export import deploy

TF = tf.__version__
CPU_IMAGE = f"tensorflow/serving:{TF}"
GPU_IMAGE = f"tensorflow/serving:{TF}-gpu"


@pytest.fixture(scope="module")
def deployed(tiny_export, tmp_path_factory):
    """An export root with the tiny classifier (one `text` input) and a two-input
    export shaped like MemN2N (`story`, `question`), deployed."""
    from tests.serving.tiny_exports import export_reader

    root = tmp_path_factory.mktemp("deploy") / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    export_reader(root, max_batch_size=300)
    (root / "not_a_model").mkdir()
    assert deploy.main([str(root), "--version-policy", "all", "--device", "gpu"]) == 0
    return root


def test_configs_parse_with_serving_protos(deployed):
    config = text_format.Parse(
        (deployed / "models.config").read_text(),
        model_server_config_pb2.ModelServerConfig(),
    )
    entries = config.model_config_list.config
    assert [(c.name, c.base_path, c.model_platform) for c in entries] == [
        ("reader", "/models/reader", "tensorflow"),
        ("tiny", "/models/tiny", "tensorflow"),
    ]
    assert all(e.model_version_policy.HasField("all") for e in entries)

    batching = text_format.Parse(
        (deployed / "batching.config").read_text(), deploy.BatchingParameters()
    )
    assert batching.pad_variable_length_inputs is True
    # TF Serving refuses a request larger than max_batch_size: it must be the largest
    # documented per-request limit (the reader's 300, the classifier's 256).
    assert batching.max_batch_size.value == 300
    assert batching.num_batch_threads.value >= 1


def _fake_docker(tmp_path):
    """A `docker` on PATH that records its arguments, one per line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.args"
    script = bin_dir / "docker"
    script.write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$@" > {log}\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return env, log


def test_serve_sh_runs_the_cpu_or_the_gpu_image(deployed, tmp_path):
    serve = deployed / "serve.sh"
    assert os.access(serve, os.X_OK)
    assert subprocess.run(["bash", "-n", str(serve)]).returncode == 0
    env, log = _fake_docker(tmp_path)
    runs = {}
    for args in ([], ["cpu"], ["gpu"]):
        proc = subprocess.run(["bash", str(serve), *args], env=env, timeout=30)
        assert proc.returncode == 0
        runs[tuple(args)] = log.read_text().splitlines()
    flags = [
        "--port=8500",
        "--rest_api_port=8501",
        "--model_config_file=/models/models.config",
        "--enable_batching=true",
        "--batching_parameters_file=/models/batching.config",
        "--enable_model_warmup=true",
    ]
    mount = f"{deployed}:/models:ro"
    assert runs[("cpu",)][:8] == [
        "run",
        "--rm",
        "-p",
        "8500:8500",
        "-p",
        "8501:8501",
        "-v",
        mount,
    ]
    assert runs[("cpu",)][8] == CPU_IMAGE
    assert runs[("gpu",)][:4] == ["run", "--rm", "--gpus", "all"]
    assert runs[("gpu",)][10] == GPU_IMAGE
    assert runs[()] == runs[("gpu",)]  # --device gpu: the default of serve.sh
    for run in runs.values():
        assert [f for f in flags if f not in run] == []
    bad = subprocess.run(["bash", str(serve), "tpu"], env=env, capture_output=True)
    assert bad.returncode == 2 and b"usage:" in bad.stderr


def test_compose_files_for_both_images(deployed):
    cpu = (deployed / "docker-compose.yml").read_text()
    gpu = (deployed / "docker-compose.gpu.yml").read_text()
    assert f"image: {CPU_IMAGE}\n" in cpu and "nvidia" not in cpu
    assert f"image: {GPU_IMAGE}\n" in gpu and "capabilities: [gpu]" in gpu
    for text in (cpu, gpu):
        assert '- "--enable_batching=true"' in text
        assert '- "./:/models:ro"' in text
    try:
        import yaml
    except ImportError:
        return
    assert yaml.safe_load(gpu)["services"]["tf-serving"]["image"] == GPU_IMAGE


def test_request_examples_match_the_signatures_and_work(deployed, capsys):
    from tests.serving.fake_serving import serve_export
    from zoo import cli

    examples = deploy.request_examples(str(deployed))
    assert examples["reader"]["inputs"] == {"question": "string", "story": "string"}
    assert examples["tiny"]["inputs"] == {"text": "string"}
    assert (
        "--story='Mary moved to the bathroom.' --story='John went"
        in (examples["reader"]["grpc"])
    )
    text = (deployed / "REQUESTS.md").read_text()
    for example in examples.values():
        assert example["curl"] in text and example["grpc"] in text

    for name, example in examples.items():
        curl = shlex.split(example["curl"])
        body = json.loads(curl[curl.index("-d") + 1])
        assert sorted(body["inputs"]) == sorted(example["inputs"])
        with serve_export(deployed / name) as served:
            # The curl example, sent to the REST stand-in.
            url = curl[4].replace("localhost:8501", served.rest)
            assert url == f"http://{served.rest}/v1/models/{name}:predict"
            if shutil.which("curl"):
                proc = subprocess.run(
                    ["curl", "-s", "-X", "POST", url, "-d", json.dumps(body)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                answer = json.loads(proc.stdout)
                assert sorted(answer["outputs"]) == sorted(
                    served.session.signature_spec()["outputs"]
                )
            # The zoo predict lines, through the gRPC and REST stand-ins.
            answers = []
            for protocol, port in (("grpc", "8500"), ("rest", "8501")):
                argv = shlex.split(example[protocol])
                assert argv[:4] == ["zoo", "predict", "--server", f"localhost:{port}"]
                argv[3] = getattr(served, protocol)
                assert cli.main(argv[1:]) == 0
                answers.append(capsys.readouterr().out)
            assert answers[0] == answers[1] and len(answers[0].splitlines()) == 1
            assert sorted(json.loads(answers[0])) == sorted(
                served.session.signature_spec()["outputs"]
            )


def test_images_and_policies():
    config = deploy.model_server_config(["a"], "latest")
    assert (
        config.model_config_list.config[0].model_version_policy.latest.num_versions == 1
    )
    assert deploy.serving_image("2.21.0", "gpu") == "tensorflow/serving:2.21.0-gpu"
    assert deploy.serving_image("2.21.0rc1") == "tensorflow/serving:2.21.0"
    assert deploy.serving_image() == CPU_IMAGE
    with pytest.raises(ValueError, match="cpu or gpu"):
        deploy.serving_image("2.21.0", "tpu")


def test_files_that_cannot_be_written_and_usage_errors_are_one_line(
    tiny_export, tmp_path, capsys
):
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    (root / "models.config").mkdir()  # a folder where a file goes
    assert deploy.main([str(root)]) == 2
    assert capsys.readouterr().err == (
        f"error: {root / 'models.config'}: cannot write it (Is a directory); 0 of "
        "the 6 deployment files were written before it\n"
    )
    assert sorted(os.listdir(root)) == ["models.config", "tiny"]
    a_file = root / "tiny" / "1" / "saved_model.pb"
    assert deploy.main([str(a_file)]) == 2
    assert capsys.readouterr().err == (
        f"error: {a_file}: is a file; give the folder of the exports\n"
    )
    assert deploy.main([str(root), "--device", "tpu"]) == 2
    assert capsys.readouterr().err == (
        "error: argument --device: invalid choice: 'tpu' (choose from 'cpu', 'gpu')\n"
    )


def test_a_named_pipe_in_an_export_is_one_line_not_a_hang(
    tiny_export, tmp_path, capsys
):
    root = tmp_path / "saved_models"
    shutil.copytree(tiny_export["base_dir"], root)
    index = root / "tiny" / "1" / "variables" / "variables.index"
    index.unlink()
    os.mkfifo(index)  # reading it would wait for a writer forever
    assert deploy.main([str(root)]) == 2
    assert capsys.readouterr().err == (
        f"error: {index}: version 1 of tiny, which TF Serving would load "
        "(--version-policy latest): is a named pipe or a device, not a file: loading "
        "the export would never end; export it again\n"
    )
