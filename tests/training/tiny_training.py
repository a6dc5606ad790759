"""A tiny training run driven by zoo.training, executed in child processes by the tests.

Usage: python tiny_training.py OUT_JSON [--kill-epoch N] [--kill-in-save WHAT]
       [--logical-cpus N] [--validations-per-epoch N] [--shuffle]
       [training flags: --run-dir --epochs --distribute ...]

`--kill-epoch N` exits the process in the middle of epoch N (0-based) the first time.
`--kill-in-save backup|best` truncates the file being saved at the end of epoch
`--kill-epoch` to half its size and kills the process with SIGKILL before the save
returns: a process killed while the file was half written.
"""

import argparse
import json
import os
import signal
import sys
import types

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _killed_halfway(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_json")
    parser.add_argument("--kill-epoch", type=int, default=-1)
    parser.add_argument("--kill-in-save", choices=("backup", "best"), default=None)
    parser.add_argument("--logical-cpus", type=int, default=0)
    parser.add_argument("--verbose", default="auto")
    parser.add_argument("--validations-per-epoch", type=int, default=1)
    parser.add_argument(
        "--shuffle", action="store_true", help="reshuffle the training data"
    )
    # the training options the tests set (TrainingConfig's other defaults hold)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--run-dir", default="runs/tiny")
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--distribute", default="none")
    parser.add_argument("--resume", default="auto")
    args = parser.parse_args()
    import tensorflow as tf

    from zoo.training import TrainingConfig

    if args.logical_cpus:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * args.logical_cpus
        )
    import keras
    import numpy as np

    from zoo.training import fit, get_strategy, set_seed

    verbose = int(args.verbose) if args.verbose.isdigit() else args.verbose
    cfg = TrainingConfig(
        **{
            name: getattr(args, name)
            for name in ("epochs", "batch_size", "learning_rate", "seed", "run_dir")
            + ("patience", "distribute", "resume", "validations_per_epoch")
        },
        tensorboard=False,
        verbose=verbose,
    )
    strategy = get_strategy(cfg.distribute)
    set_seed(cfg.seed)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], "float32"))[:, None]
    train = tf.data.Dataset.from_tensor_slices((x, y))
    if args.shuffle:
        train = train.shuffle(64, seed=7, reshuffle_each_iteration=True)
    train = train.batch(cfg.batch_size)
    val = tf.data.Dataset.from_tensor_slices((x[:16], y[:16])).batch(cfg.batch_size)

    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(cfg.learning_rate), "mse")

    seen_path = args.out_json + ".epochs"
    marker = args.out_json + ".killed"
    state = {"epoch": -1}

    def first_time():
        if os.path.exists(marker):
            return False
        open(marker, "w").close()
        return True

    if args.kill_in_save == "backup":
        from zoo.training import checkpoints

        write_bytes = checkpoints._write_bytes

        def killing_write_bytes(path, data):
            write_bytes(path, data)
            if state["epoch"] == args.kill_epoch and first_time():
                _killed_halfway(path)

        checkpoints._write_bytes = killing_write_bytes
    if args.kill_in_save == "best":
        save = model.save

        def killing_save(self, filepath, *a, **kw):
            save(filepath, *a, **kw)
            if state["epoch"] == args.kill_epoch and first_time():
                _killed_halfway(filepath)

        model.save = types.MethodType(killing_save, model)

    class Recorder(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            state["epoch"] = epoch
            with open(seen_path, "a") as f:
                f.write(f"{epoch}\n")

        def on_train_batch_end(self, batch, logs=None):
            if (
                args.kill_in_save is None
                and state["epoch"] == args.kill_epoch
                and batch == 1
                and first_time()
            ):
                sys.stdout.flush()
                os._exit(3)  # simulates a kill in the middle of an epoch

    history = fit(model, train, val, cfg, callbacks=[Recorder()])
    with open(args.out_json, "w") as f:
        json.dump(
            {
                "replicas": strategy.num_replicas_in_sync,
                "epochs": history.epoch,
                "loss": history.history["loss"],
                "weights": [float(v) for v in np.ravel(model.layers[0].kernel.numpy())],
            },
            f,
        )


if __name__ == "__main__":
    main()
