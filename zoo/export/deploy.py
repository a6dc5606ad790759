"""TF Serving deployment files for every export under `saved_models/`.

```
python -m zoo.export.deploy [saved_models] [--version-policy latest|all]
```

writes, into the export root:

- `models.config`: a `ModelServerConfig` text proto, one model per `NAME` with
  `base_path: "/models/NAME"` (the root is mounted at `/models` in the container);
- `batching.config`: a `BatchingParameters` text proto for variable-length text
  (`pad_variable_length_inputs: true`: requests of different lengths are padded
  into one batch);
- `serve.sh`: the exact `docker run` of `tensorflow/serving:<TF version>-gpu`;
- `docker-compose.yml`: the same as a compose service.

The image tag follows the installed TensorFlow version, since TF Serving links the
tensorflow-text ops of its own TensorFlow release. Warm-up is on by default in TF
Serving (`--enable_model_warmup=true`), so `assets.extra/tf_serving_warmup_requests` is
replayed at load time.
"""

import argparse
import os
import re
import sys

from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    text_format,
    wrappers_pb2,
)
from tensorflow_serving.config import model_server_config_pb2

from zoo.errors import MissingPathError, ZooError, one_line

GRPC_PORT = 8500
REST_PORT = 8501
CONTAINER_ROOT = "/models"

DEFAULT_BATCHING = {
    "max_batch_size": 32,
    "batch_timeout_micros": 2000,
    "max_enqueued_batches": 100,
    "num_batch_threads": 4,
}


def _batching_parameters_class():
    """`tensorflow.serving.BatchingParameters` (session_bundle_config.proto).

    The tensorflow-serving-api wheel does not ship that proto, so its message is
    described here with the field numbers of TF Serving's
    `tensorflow_serving/servables/tensorflow/session_bundle_config.proto`.
    """
    pool = descriptor_pool.DescriptorPool()
    wrappers = descriptor_pb2.FileDescriptorProto()
    wrappers_pb2.DESCRIPTOR.CopyToProto(wrappers)
    pool.Add(wrappers)
    f = descriptor_pb2.FileDescriptorProto(
        name="zoo/batching_parameters.proto",
        package="tensorflow.serving",
        syntax="proto3",
        dependency=["google/protobuf/wrappers.proto"],
    )
    m = f.message_type.add(name="BatchingParameters")
    F = descriptor_pb2.FieldDescriptorProto
    for number, name, type_name in [
        (1, "max_batch_size", ".google.protobuf.Int64Value"),
        (2, "batch_timeout_micros", ".google.protobuf.Int64Value"),
        (3, "max_enqueued_batches", ".google.protobuf.Int64Value"),
        (4, "num_batch_threads", ".google.protobuf.Int64Value"),
        (5, "thread_pool_name", ".google.protobuf.StringValue"),
    ]:
        m.field.add(
            name=name,
            number=number,
            type=F.TYPE_MESSAGE,
            label=F.LABEL_OPTIONAL,
            type_name=type_name,
        )
    m.field.add(
        name="allowed_batch_sizes", number=6, type=F.TYPE_INT64, label=F.LABEL_REPEATED
    )
    m.field.add(
        name="pad_variable_length_inputs",
        number=7,
        type=F.TYPE_BOOL,
        label=F.LABEL_OPTIONAL,
    )
    pool.Add(f)
    descriptor = pool.FindMessageTypeByName("tensorflow.serving.BatchingParameters")
    return message_factory.GetMessageClass(descriptor)


BatchingParameters = _batching_parameters_class()


def serving_image(tf_version=None):
    """`tensorflow/serving:<major.minor.patch>-gpu` for the installed TensorFlow."""
    if tf_version is None:
        import tensorflow as tf

        tf_version = tf.__version__
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", tf_version)
    if not match:
        raise ValueError(
            f"Cannot derive an image tag. Received: tf_version={tf_version!r}"
        )
    return f"tensorflow/serving:{match.group(0)}-gpu"


def find_models(root):
    """Model names under `root` that hold at least one complete version folder."""
    names = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.startswith(".") or not os.path.isdir(path):
            continue
        if any(
            v.isdigit() and os.path.exists(os.path.join(path, v, "saved_model.pb"))
            for v in os.listdir(path)
        ):
            names.append(name)
    return names


def model_server_config(names, version_policy="latest"):
    """A `ModelServerConfig` serving each name from `/models/NAME`."""
    if version_policy not in ("latest", "all"):
        raise ValueError(
            "`version_policy` must be 'latest' or 'all'. "
            f"Received: version_policy={version_policy!r}"
        )
    config = model_server_config_pb2.ModelServerConfig()
    for name in names:
        entry = config.model_config_list.config.add(
            name=name, base_path=f"{CONTAINER_ROOT}/{name}", model_platform="tensorflow"
        )
        if version_policy == "all":
            entry.model_version_policy.all.SetInParent()
        else:
            entry.model_version_policy.latest.num_versions = 1
    return config


def batching_parameters(**overrides):
    values = {**DEFAULT_BATCHING, **overrides}
    params = BatchingParameters()
    for key, value in values.items():
        getattr(params, key).value = value
    params.pad_variable_length_inputs = True
    return params


def docker_run_command(root, image):
    return [
        "docker",
        "run",
        "--rm",
        "--gpus",
        "all",
        "-p",
        f"{GRPC_PORT}:{GRPC_PORT}",
        "-p",
        f"{REST_PORT}:{REST_PORT}",
        "-v",
        f"{os.path.abspath(root)}:{CONTAINER_ROOT}:ro",
        image,
        *server_flags(),
    ]


def server_flags():
    return [
        f"--port={GRPC_PORT}",
        f"--rest_api_port={REST_PORT}",
        f"--model_config_file={CONTAINER_ROOT}/models.config",
        "--model_config_file_poll_wait_seconds=60",
        "--enable_batching=true",
        f"--batching_parameters_file={CONTAINER_ROOT}/batching.config",
        "--enable_model_warmup=true",
    ]


def _compose(root, image):
    flags = "\n".join(f'      - "{flag}"' for flag in server_flags())
    return f"""# Generated by `python -m zoo.export.deploy`; do not edit.
services:
  tf-serving:
    image: {image}
    command:
{flags}
    ports:
      - "{GRPC_PORT}:{GRPC_PORT}"
      - "{REST_PORT}:{REST_PORT}"
    volumes:
      - "./:{CONTAINER_ROOT}:ro"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""


def _serve_sh(root, image):
    lines = [
        "docker run --rm --gpus all",
        f"-p {GRPC_PORT}:{GRPC_PORT} -p {REST_PORT}:{REST_PORT}",
        f'-v "$ROOT":{CONTAINER_ROOT}:ro',
        image,
        *server_flags(),
    ]
    command = " \\\n  ".join(lines)
    return f"""#!/usr/bin/env bash
# Generated by `python -m zoo.export.deploy`; do not edit.
# Serves every model of this folder with TF Serving on the GPU:
# gRPC on port {GRPC_PORT}, REST on port {REST_PORT}, e.g.
#   curl -d '{{"inputs": {{"text": ["a review"]}}}}' localhost:{REST_PORT}/v1/models/NAME:predict
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
exec {command}
"""


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def write_deployment(root="saved_models", version_policy="latest", image=None):
    """Writes models.config, batching.config, serve.sh and docker-compose.yml.

    Returns:
        `{"models": [names], "files": [paths], "image": str}`.
    """
    root = os.fspath(root)
    if not os.path.isdir(root):
        raise MissingPathError(root, what="export folder")
    image = image or serving_image()
    names = find_models(root)
    files = [
        _write(
            os.path.join(root, "models.config"),
            "# Generated by `python -m zoo.export.deploy`; ModelServerConfig text proto.\n"
            + text_format.MessageToString(model_server_config(names, version_policy)),
        ),
        _write(
            os.path.join(root, "batching.config"),
            "# Generated by `python -m zoo.export.deploy`; BatchingParameters text proto.\n"
            + text_format.MessageToString(batching_parameters()),
        ),
        _write(os.path.join(root, "docker-compose.yml"), _compose(root, image)),
        _write(os.path.join(root, "serve.sh"), _serve_sh(root, image)),
    ]
    os.chmod(files[-1], 0o755)
    return {"models": names, "files": files, "image": image}


def main(argv=None, prog="python -m zoo.export.deploy"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write TF Serving deployment files for every export.",
    )
    parser.add_argument("root", nargs="?", default="saved_models")
    parser.add_argument("--version-policy", choices=["latest", "all"], default="latest")
    args = parser.parse_args(argv)
    try:
        result = write_deployment(args.root, args.version_policy)
    except ZooError as e:
        print(one_line(e), file=sys.stderr)
        return e.exit_code
    print(f"models: {', '.join(result['models']) or '(none)'}; image {result['image']}")
    for path in result["files"]:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
