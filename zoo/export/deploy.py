"""TF Serving deployment files for every export under `saved_models/`.

```
zoo deploy [saved_models] [--device cpu|gpu] [--version-policy latest|all]
python -m zoo.export.deploy ...          (the same)
```

writes, into the export root:

- `models.config`: a `ModelServerConfig` text proto, one model per `NAME` with
  `base_path: "/models/NAME"` (the root is mounted at `/models` in the container);
- `batching.config`: a `BatchingParameters` text proto for variable-length text
  (`pad_variable_length_inputs: true`: requests of different lengths are padded
  into one batch). Its `max_batch_size` is the largest `limits.max_batch_size` of the
  exports' manifests (the documented rows per request, 256 by default): TF Serving's
  batching refuses a request of more rows than that ("Task size ... is larger than
  maximum input batch size"), so a smaller value would cut the documented limit;
- `serve.sh [cpu|gpu]`: the exact `docker run` of TF Serving's CPU image
  `tensorflow/serving:<TF version>` or GPU image `tensorflow/serving:<TF version>-gpu`
  (`--gpus all`); the default is `--device`;
- `docker-compose.yml` (CPU image) and `docker-compose.gpu.yml` (GPU image, with the
  NVIDIA device reservation): `docker compose up` or
  `docker compose -f docker-compose.gpu.yml up`;
- `REQUESTS.md`: per model, a REST `curl` request and the `zoo predict --server`
  lines (gRPC and REST) built from the signature's own input names (read from the
  SignatureDef in `saved_model.pb`) and a warm-up example.

Only folders whose name passes `zoo.export.paths.MODEL_NAME_RE` (the check
`export_model` applies) are deployed; any other folder holding an export is skipped
with a note, so no generated file holds a name a shell, a URL or a text proto would
read otherwise. Version folders are read by TF Serving's own rule
(`zoo.export.paths.version_folders`: ` 9` is version 9), and the versions TF Serving
will load under `--version-policy` are checked (`saved_model.pb` parses, the variables
read back whole, the warm-up file parses) and named: one line per model on standard
output, in `models.config` (comments) and in `REQUESTS.md`. A damaged version that
would be loaded, a malformed manifest or a root with no export is one line `error:`
and exit status 2; a served version without `saved_model.pb` (a copy in progress?)
is a note.

The image tag follows the installed TensorFlow version (read from the package
metadata), since TF Serving links the tensorflow-text ops of its own TensorFlow
release. Warm-up is on by default in TF Serving (`--enable_model_warmup=true`), so
`assets.extra/tf_serving_warmup_requests` is replayed at load time.
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

from zoo.errors import ConfigError, DataError, MissingPathError, ZooError, one_line
from zoo.export.paths import (
    MODEL_NAME_RE,
    check_model_name,
    incomplete_latest,
    is_model_name,
    latest_version_dir,
    version_folders,
)

GRPC_PORT = 8500
REST_PORT = 8501
CONTAINER_ROOT = "/models"

DEFAULT_BATCHING = {
    "max_batch_size": 256,
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


DEVICES = ("cpu", "gpu")
EXAMPLE_CHARS = 200  # example texts in REQUESTS.md are cut to this length
_GENERATED = "Generated by `zoo deploy` (python -m zoo.export.deploy); do not edit."


def tensorflow_version():
    """The installed TensorFlow's version, from the package metadata (no import)."""
    from importlib import metadata

    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    import tensorflow as tf

    return tf.__version__


def serving_image(tf_version=None, device="cpu"):
    """`tensorflow/serving:<major.minor.patch>` (CPU) or `...-gpu` for a TensorFlow
    version (the installed one by default)."""
    if device not in DEVICES:
        raise ConfigError(f"`device` must be cpu or gpu. Received: device={device!r}")
    tf_version = tf_version or tensorflow_version()
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", tf_version)
    if not match:
        raise ValueError(
            f"Cannot derive an image tag. Received: tf_version={tf_version!r}"
        )
    suffix = "-gpu" if device == "gpu" else ""
    return f"tensorflow/serving:{match.group(0)}{suffix}"


def find_models(root):
    """Model names under `root` that hold at least one complete version folder."""
    return scan_models(root)[0]


def scan_models(root):
    """`(names, notes)`: the model folders under `root` holding at least one complete
    version folder, and a note for each folder skipped (a name that fails
    `zoo.export.paths.MODEL_NAME_RE`, a version folder TF Serving would not read).

    Hidden folders (`.tmp-export-*` staging folders) and folders without a
    `saved_model.pb` version are left out without a note.
    """
    names, notes = [], []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.startswith(".") or not os.path.isdir(path):
            continue
        found, version_notes = version_folders(path, complete=True)
        if not found:
            continue
        if not is_model_name(name):
            notes.append(
                f"{path}: skipped, not a model name (names match "
                f"{MODEL_NAME_RE.pattern}, as `export_model` requires)"
            )
            continue
        names.append(name)
        notes.extend(version_notes)
        incomplete = incomplete_latest(path)
        if incomplete is not None:
            notes.append(
                f"{incomplete}: no saved_model.pb, yet the highest version: TF "
                "Serving would try to load it (and fail); complete or remove it"
            )
    return names, notes


def _latest_complete(model_dir):
    return latest_version_dir(model_dir, complete=True)


def served_versions(model_dir, version_policy="latest"):
    """`({version: folder}, notes)`: the versions TF Serving loads from `model_dir`
    under `version_policy` (`latest`: the highest; `all`: every one), read by its
    own rule (`zoo.export.paths.version_folders`), and a note for each of them
    without a `saved_model.pb` below the highest (`scan_models` notes the highest).

    Raises:
        zoo.errors.DataError: a version TF Serving would load whose files are
            damaged (`saved_model.pb`, the variables, the warm-up file), one line
            naming the file, the version and the problem.
    """
    from zoo.export.manifest import WARMUP_PATH, check_saved_model
    from zoo.export.warmup import read_warmup

    found, _ = version_folders(model_dir)
    if version_policy == "latest":
        found = {max(found): found[max(found)]} if found else {}
    notes = []
    for version, folder in sorted(found.items()):
        version_dir = os.path.join(model_dir, folder)
        if not os.path.isfile(os.path.join(version_dir, "saved_model.pb")):
            if version != max(found):
                notes.append(
                    f"{version_dir}: no saved_model.pb: TF Serving would try to load "
                    f"version {version} (--version-policy {version_policy}) and "
                    "fail; complete or remove it"
                )
            continue
        try:
            check_saved_model(version_dir)
            warmup = os.path.join(version_dir, WARMUP_PATH)
            if os.path.exists(warmup):
                for _ in read_warmup(warmup):
                    pass
        except DataError as e:
            raise DataError(
                f"version {version} of {os.path.basename(model_dir)}, which TF "
                f"Serving would load (--version-policy {version_policy}): "
                f"{e.message}",
                path=e.path,
            ) from None
    return found, notes


def served_line(name, found):
    """`tiny: TF Serving serves version 7 (folder '007')`."""
    if not found:
        return f"{name}: TF Serving finds no version to serve"
    listed = ", ".join(f"{v} (folder {f!r})" for v, f in sorted(found.items()))
    plural = "s" if len(found) > 1 else ""
    return f"{name}: TF Serving serves version{plural} {listed}"


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


def max_request_batch(version_dirs):
    """The largest `max_batch_size` among the exports' manifests (the default
    per-request limit of `ServingModule` when none records one).

    Raises:
        zoo.errors.DataError: a manifest whose limit is not a positive integer.
    """
    from zoo.export.manifest import MissingManifestError, batch_limits, load_manifest
    from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE

    limits = []
    for version_dir in version_dirs:
        try:
            manifest = load_manifest(version_dir)
        except MissingManifestError:
            continue
        limits.extend(batch_limits(manifest, version_dir).values())
        top = (manifest.get("limits") or {}).get("max_batch_size")
        limits.append(top)
    limits = [limit for limit in limits if limit]
    return max(limits) if limits else DEFAULT_MAX_BATCH_SIZE


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


def docker_run_command(root, image, device="cpu"):
    return [
        "docker",
        "run",
        "--rm",
        *(["--gpus", "all"] if device == "gpu" else []),
        "-p",
        f"{GRPC_PORT}:{GRPC_PORT}",
        "-p",
        f"{REST_PORT}:{REST_PORT}",
        "-v",
        f"{os.path.abspath(root)}:{CONTAINER_ROOT}:ro",
        image,
        *server_flags(),
    ]


def _compose(image, device):
    flags = "\n".join(f'      - "{flag}"' for flag in server_flags())
    gpu = (
        """
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]"""
        if device == "gpu"
        else ""
    )
    return f"""# {_GENERATED}
# TF Serving on the {device.upper()}: gRPC on port {GRPC_PORT}, REST on port {REST_PORT}.
services:
  tf-serving:
    image: {image}
    command:
{flags}
    ports:
      - "{GRPC_PORT}:{GRPC_PORT}"
      - "{REST_PORT}:{REST_PORT}"
    volumes:
      - "./:{CONTAINER_ROOT}:ro"{gpu}
"""


def _serve_sh(images, device):
    flags = " \\\n  ".join(server_flags())
    return f"""#!/usr/bin/env bash
# {_GENERATED}
# Serves every model of this folder with TF Serving: gRPC on port {GRPC_PORT}, REST on
# port {REST_PORT}.
#   ./serve.sh        {device.upper()} image ({images[device]}; the default)
#   ./serve.sh cpu    {images["cpu"]}
#   ./serve.sh gpu    {images["gpu"]} (needs the NVIDIA container toolkit)
# Requests for each model: REQUESTS.md.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
DEVICE="${{1:-{device}}}"
case "$DEVICE" in
  cpu) IMAGE="{images["cpu"]}"; GPU_FLAGS=() ;;
  gpu) IMAGE="{images["gpu"]}"; GPU_FLAGS=(--gpus all) ;;
  *) echo "usage: $0 [cpu|gpu]" >&2; exit 2 ;;
esac
exec docker run --rm ${{GPU_FLAGS[@]+"${{GPU_FLAGS[@]}}"}} \\
  -p {GRPC_PORT}:{GRPC_PORT} -p {REST_PORT}:{REST_PORT} \\
  -v "$ROOT":{CONTAINER_ROOT}:ro \\
  "$IMAGE" \\
  {flags}
"""


def _example_values(version_dir, signature, input_names):
    """One warm-up row of `signature` as text, cut to `EXAMPLE_CHARS`; a placeholder
    per input when the export has no warm-up request for it."""
    from zoo.export.manifest import WARMUP_PATH

    values = {name: f"your {name} here" for name in input_names}
    path = os.path.join(version_dir, WARMUP_PATH)
    if os.path.exists(path):
        from zoo.export.warmup import read_warmup

        for sig, inputs in read_warmup(path):
            if sig != signature or set(inputs) != set(input_names):
                continue
            for name, array in inputs.items():
                if array.size == 0:
                    break
                value = array.reshape(-1)[0]
                if isinstance(value, bytes):
                    value = value.decode("utf-8", errors="replace")
                values[name] = _cut(str(value))
            break
    return values


def _cut(text):
    if len(text) <= EXAMPLE_CHARS:
        return text
    cut = text[:EXAMPLE_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def request_examples(root, names=None, host="localhost", signature="serving_default"):
    """Request examples per model that match the signature's input names.

    Returns:
        `{name: {"inputs": {input: dtype}, "curl": str, "grpc": str, "rest": str}}`:
        a `curl` to the REST predict API and the `zoo predict --server` lines for
        gRPC and REST, with an example row from the export's warm-up requests.
    """
    import json
    import shlex

    from zoo.export.manifest import read_signatures

    examples = {}
    for name in names if names is not None else find_models(root):
        check_model_name(name)
        version_dir = _latest_complete(os.path.join(root, name))
        signatures = read_signatures(version_dir)
        if signature not in signatures:
            continue
        spec = signatures[signature]["inputs"]
        inputs = sorted(spec)
        values = _example_values(version_dir, signature, inputs)
        body = {
            "signature_name": signature,
            "inputs": {k: [values[k]] for k in inputs},
        }
        quoted = shlex.quote(name)  # the name check already keeps it shell-safe
        curl = " ".join(
            [
                "curl -s -X POST",
                shlex.quote(f"http://{host}:{REST_PORT}/v1/models/{name}:predict"),
                "-d",
                shlex.quote(json.dumps(body, ensure_ascii=False)),
            ]
        )
        if len(inputs) == 1:
            args = "-- " + shlex.quote(values[inputs[0]])  # a text may start with "-"
        elif set(inputs) == {"story", "question"}:  # attached: "-..." stays a value
            lines = values["story"].split("\n")
            args = " ".join(f"--story={shlex.quote(line)}" for line in lines)
            args += f" --question={shlex.quote(values['question'])}"
        else:
            row = shlex.quote(json.dumps({k: values[k] for k in inputs}))
            args = f"--input - --format jsonl <<< {row}"
        examples[name] = {
            "inputs": {k: spec[k]["dtype"] for k in inputs},
            "curl": curl,
            "grpc": (
                f"zoo predict --server {host}:{GRPC_PORT} --model {quoted} {args}"
            ),
            "rest": (
                f"zoo predict --server {host}:{REST_PORT} --rest --model {quoted} "
                f"{args}"
            ),
        }
    return examples


def _requests_md(examples, served):
    lines = [
        "# Requests",
        "",
        f"<!-- {_GENERATED} -->",
        "",
        f"With `./serve.sh` running (gRPC on port {GRPC_PORT}, REST on port "
        f"{REST_PORT}), one request per model to its `serving_default` signature. "
        "Answers hold every output of the signature, attention included.",
        "",
        "Texts go after `--`, which ends the options, so a text that starts with "
        '"-" stays a text: `zoo predict --server HOST:PORT --model NAME -- "-5 '
        'stars"`. A story line or a question is given attached to its option: '
        '`--story="-..."`, `--question="-..."`.',
    ]
    for name, example in examples.items():
        inputs = ", ".join(f"`{k}` ({v})" for k, v in example["inputs"].items())
        lines += [
            "",
            f"## {name}",
            "",
            served_line(name, served.get(name, {})).split(": ", 1)[1] + ".",
            "",
            f"Inputs: {inputs}.",
            "",
            "```bash",
            example["curl"],
            example["grpc"],
            example["rest"],
            "```",
        ]
    return "\n".join(lines) + "\n"


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def write_deployment(root="saved_models", version_policy="latest", device="cpu"):
    """Writes models.config, batching.config, docker-compose.yml (CPU),
    docker-compose.gpu.yml, serve.sh and REQUESTS.md into `root`.

    Args:
        root: the export root (`saved_models`).
        version_policy: `latest` (serve the newest version) or `all`.
        device: `cpu` or `gpu`: the image `serve.sh` runs without an argument.

    Returns:
        `{"models": [names], "files": [paths], "image": str (the `device` one),
        "images": {"cpu": str, "gpu": str}, "max_batch_size": int,
        "examples": request_examples(root), "served": {name: {version: folder}}
        (what TF Serving loads under `version_policy`, see `served_versions`),
        "notes": [folders skipped, versions TF Serving would fail to load]}`.

    Raises:
        zoo.errors.MissingPathError: `root` does not exist.
        zoo.errors.DataError: `root` holds no complete export with a model name,
            or a version TF Serving would load is damaged or has a malformed
            manifest.
    """
    root = os.fspath(root)
    if not os.path.isdir(root):
        raise MissingPathError(root, what="export folder")
    images = {d: serving_image(device=d) for d in DEVICES}
    if device not in DEVICES:
        raise ConfigError(f"`device` must be cpu or gpu. Received: device={device!r}")
    names, notes = scan_models(root)
    if not names:
        raise DataError(
            "holds no exports to serve (NAME/VERSION/saved_model.pb): export a model "
            "first",
            path=root,
        )
    served, version_dirs = {}, []
    for name in names:
        model_dir = os.path.join(root, name)
        served[name], more = served_versions(model_dir, version_policy)
        notes.extend(more)
        version_dirs += [os.path.join(model_dir, f) for f in served[name].values()]
        version_dirs.append(_latest_complete(model_dir))
    max_batch = max_request_batch(
        [d for d in dict.fromkeys(version_dirs) if os.path.isdir(d)]
    )
    examples = request_examples(root, names)
    served_lines = "".join(f"# {served_line(n, served[n])}\n" for n in names)
    files = [
        _write(
            os.path.join(root, "models.config"),
            f"# {_GENERATED} ModelServerConfig text proto.\n{served_lines}"
            + text_format.MessageToString(model_server_config(names, version_policy)),
        ),
        _write(
            os.path.join(root, "batching.config"),
            f"# {_GENERATED} BatchingParameters text proto.\n"
            + text_format.MessageToString(
                batching_parameters(max_batch_size=max_batch)
            ),
        ),
        _write(
            os.path.join(root, "docker-compose.yml"), _compose(images["cpu"], "cpu")
        ),
        _write(
            os.path.join(root, "docker-compose.gpu.yml"), _compose(images["gpu"], "gpu")
        ),
        _write(os.path.join(root, "REQUESTS.md"), _requests_md(examples, served)),
        _write(os.path.join(root, "serve.sh"), _serve_sh(images, device)),
    ]
    os.chmod(files[-1], 0o755)
    return {
        "models": names,
        "files": files,
        "image": images[device],
        "images": images,
        "max_batch_size": max_batch,
        "examples": examples,
        "served": served,
        "notes": notes,
    }


def main(argv=None, prog="python -m zoo.export.deploy"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write TF Serving deployment files (CPU and GPU images) and "
        "request examples for every export.",
    )
    parser.add_argument("root", nargs="?", default="saved_models")
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="cpu",
        help="the image serve.sh runs by default (default: %(default)s; both are "
        "written)",
    )
    parser.add_argument("--version-policy", choices=["latest", "all"], default="latest")
    args = parser.parse_args(argv)
    try:
        result = write_deployment(args.root, args.version_policy, args.device)
    except ZooError as e:
        print(one_line(e), file=sys.stderr)
        return e.exit_code
    for note in result["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"models: {', '.join(result['models'])}; images "
        f"{result['images']['cpu']} (CPU), {result['images']['gpu']} (GPU); "
        f"max {result['max_batch_size']} rows per request"
    )
    for name in result["models"]:
        print(served_line(name, result["served"][name]))
    for path in result["files"]:
        print(f"wrote {path}")
    root = os.path.abspath(args.root)
    print(f"serve: {os.path.join(root, 'serve.sh')} [cpu|gpu]")
    for name, example in result["examples"].items():
        print(f"{name}: {example['grpc']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
