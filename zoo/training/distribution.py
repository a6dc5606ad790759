"""Process setup: seeds, `tf.distribute` strategies, `TF_CONFIG`, per-worker folders.

Distribution uses TensorFlow's own engine: `get_strategy("mirrored")` builds a
`tf.distribute.MirroredStrategy` over all local GPUs (or all logical CPU devices when
there is no GPU); `get_strategy("multi-worker")` builds a
`tf.distribute.MultiWorkerMirroredStrategy` from the `TF_CONFIG` environment variable
(create it at program start, before other TensorFlow work). With several workers,
worker 0 (the chief) writes to `run_dir`, every other worker to
`run_dir/worker-<index>` (`worker_run_dir`), so their checkpoints never collide.
"""

import json
import os

import keras
import tensorflow as tf

from zoo.training.config import DISTRIBUTE_CHOICES


def set_seed(seed):
    """Seeds Python's `random`, NumPy, TensorFlow and Keras (`keras.utils.set_random_seed`)."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"`seed` must be an int. Received: seed={seed!r}")
    keras.utils.set_random_seed(seed)


def parse_tf_config(value=None):
    """Parses and checks `TF_CONFIG` (from the environment when `value` is None).

    Returns:
        The parsed dict: `{"cluster": {"worker": [...], ...}, "task": {"type": ...,
        "index": ...}}`.

    Raises:
        ValueError: when it is missing or malformed, saying what is wrong.
    """
    value = os.environ.get("TF_CONFIG") if value is None else value
    received = f"Received: TF_CONFIG={value!r}"
    example = (
        '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
        '"task": {"type": "worker", "index": 0}}'
    )
    if not value:
        raise ValueError(
            "--distribute multi-worker needs the TF_CONFIG environment variable, e.g. "
            f"TF_CONFIG='{example}'. {received}"
        )
    try:
        config = json.loads(value)
    except json.JSONDecodeError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e}). {received}") from None
    config = config if isinstance(config, dict) else {}
    cluster, task = config.get("cluster"), config.get("task")
    if not isinstance(cluster, dict) or not cluster:
        raise ValueError(f"TF_CONFIG needs a non-empty 'cluster' dict. {received}")
    for role, addresses in cluster.items():
        if not isinstance(addresses, list) or not all(
            isinstance(a, str) and ":" in a for a in addresses
        ):
            raise ValueError(
                f"TF_CONFIG cluster[{role!r}] must be a list of 'host:port' strings. "
                f"Received: {addresses!r}"
            )
    if not isinstance(task, dict) or "type" not in task or "index" not in task:
        raise ValueError(
            f"TF_CONFIG needs 'task': {{'type': ..., 'index': ...}}. {received}"
        )
    role, index = task["type"], task["index"]
    if role not in cluster or not isinstance(index, int):
        raise ValueError(
            f"TF_CONFIG task {task!r} does not name a role of the cluster "
            f"{sorted(cluster)!r} with an int index."
        )
    if not 0 <= index < len(cluster[role]):
        raise ValueError(
            f"TF_CONFIG task index {index} is out of range for "
            f"{len(cluster[role])} {role!r} addresses."
        )
    return config


def get_strategy(distribute="none"):
    """Returns the `tf.distribute.Strategy` named by `distribute`.

    Args:
        distribute: "none" (the default strategy: one device), "mirrored" (all local
            GPUs, or all logical CPU devices when there is no GPU) or "multi-worker"
            (`MultiWorkerMirroredStrategy` from `TF_CONFIG`; create it before any
            other TensorFlow work in the process).

    Raises:
        ValueError: for an unknown name, or a missing/invalid `TF_CONFIG`.
    """
    if distribute == "none":
        return tf.distribute.get_strategy()
    if distribute == "mirrored":
        gpus = tf.config.list_logical_devices("GPU")
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy(devices=[d.name for d in devices])
    if distribute == "multi-worker":
        parse_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(
        f"`distribute` must be one of {DISTRIBUTE_CHOICES}. "
        f"Received: distribute={distribute!r}"
    )


def is_multi_worker(strategy):
    """Whether `strategy` is a `MultiWorkerMirroredStrategy` over more than one
    worker (counted from its cluster: the chief and the workers)."""
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return False
    cluster = strategy.cluster_resolver.cluster_spec().as_dict()
    return len(cluster.get("chief", [])) + len(cluster.get("worker", [])) > 1


def worker_run_dir(run_dir, strategy=None):
    """The folder this process writes to: `run_dir` on the chief (or without
    multi-worker training), `run_dir/worker-<index>` on the other workers."""
    strategy = strategy or tf.distribute.get_strategy()
    if not is_multi_worker(strategy):
        return run_dir
    resolver = strategy.cluster_resolver
    if resolver.task_type in ("chief", None) or (
        resolver.task_type == "worker"
        and resolver.task_id == 0
        and "chief" not in resolver.cluster_spec().as_dict()
    ):
        return run_dir
    return os.path.join(run_dir, f"{resolver.task_type}-{resolver.task_id}")
